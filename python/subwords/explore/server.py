"""The explorer's local server: one page and a small JSON API over ``widgets.py``.

Why the standard library's ``http.server.ThreadingHTTPServer``: the API is four routes of JSON
on 127.0.0.1 for one person's browser; it needs no routing library, no async framework and no
dependency, so ``subwords explore`` works in the core install. Its weak points for this use are
covered here: request bodies are read only up to a stated bound (``Content-Length`` required),
sockets time out, every handler error becomes a JSON error response, and the work a request can
cause is bounded -- the built-in corpora are small by construction and every control is a finite
choice validated before anything runs, while computations on a user's corpus run in a worker
process that is killed after ``WORK_SECONDS`` (the Rust trainer cannot be interrupted mid-call).

Routes:

* ``GET /`` the page; ``GET /app.js``, ``GET /app.css`` its code and style (package data);
* ``GET /api/widgets`` the widget declarations;
* ``GET /api/progress`` what the worker is doing on a user's corpus (the library's progress line);
* ``POST /api/compute`` ``{"widget": id, "state": {...}}`` -> the widget's result;
* ``POST /api/compare`` ``{"text": "..."}`` -> the text under every model given on the command line;
* ``POST /api/corpus?name=NAME`` a UTF-8 text body (one text per line) -> registers a corpus;
* ``POST /api/model?name=NAME.json|.model|.tiktoken`` a model file's bytes -> registers a model.

POSTs must carry ``X-Subwords: 1`` (a cross-site page cannot send that header without a CORS
preflight, which this server never grants), and the ``Host`` header must name the address the
server is bound to (no DNS rebinding). Nothing is read from disk on a request except the package's
own three static files, by fixed name.
"""

from __future__ import annotations

import ipaddress
import json
import multiprocessing
import re
import sys
import threading
import time
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional
from urllib.parse import parse_qs, urlsplit

from . import corpora as C
from . import widgets as W
from .page import catalogue, render, static_text

MAX_BODY = 64 * 1024  # a widget request: a few control values
MAX_UPLOAD = 10 * 1024 * 1024  # a user corpus
MAX_CORPORA = 8
MAX_MODELS = 8
MODEL_SUFFIXES = (".json", ".model", ".tiktoken")
WORK_SECONDS = 60.0  # the longest a computation on a user corpus may run
SOCKET_SECONDS = 30.0
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def split_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


# ------------------------------------------------------------------------------------------------
# The worker process for user corpora


class _ProgressSink:
    """The worker's stderr: keeps the library's own progress line (``train(progress=True)``
    draws it with carriage returns) in shared memory, where the server reads it for the page."""

    def __init__(self, shared: Any) -> None:
        self.shared = shared

    def write(self, text: str) -> int:
        # the last line drawn stays until the next fit draws one (a short fit clears its line
        # before anybody could read it)
        line = text.rsplit("\r", 1)[-1].strip()
        if line.startswith("training:"):
            self.set(true_denominator(line))
        return len(text)

    def set(self, line: str) -> None:
        data = line.encode("utf-8")[: len(self.shared) - 1]
        with self.shared.get_lock():
            self.shared.value = data

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def true_denominator(line: str) -> str:
    """A fit asked for "as many rows as it can learn" asks the library for ``W.BIG`` rows; its
    progress line would read 92,761/67,108,669 rows. Say what the bound is instead, without a bar."""
    m = re.search(r"/([\d,]+) rows", line)
    if not m or int(m.group(1).replace(",", "")) < W.BIG // 2:  # a size really asked for: a true denominator
        return line
    return re.sub(r"\[[# ]*\] ", "", line).replace(m.group(0), " rows so far (asked: as many as the corpus gives)")


def _worker_main(conn: Any, shared: Any) -> None:  # pragma: no cover - runs in the child process
    import sys

    from . import widgets

    sink = _ProgressSink(shared)
    sys.stderr = sink
    widgets.SHOW_PROGRESS = True
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        kind = msg[0]
        try:
            if kind == "corpus":
                widgets.USER_CORPORA[msg[1]] = msg[2]
                conn.send(("ok", None))
            elif kind == "compute":
                sink.set("")
                conn.send(("ok", widgets.compute(msg[1], msg[2])))
        except widgets.ExploreError as e:
            conn.send(("error", str(e)))
        except Exception as e:  # the parent turns this into a 500 with the message
            conn.send(("error", f"internal error in the worker: {type(e).__name__}: {e}"))


class Worker:
    """One child process holding the user corpora and their cache; killed and restarted when a
    computation takes longer than ``timeout`` seconds."""

    def __init__(self, timeout: float = WORK_SECONDS) -> None:
        self.timeout = timeout
        self.lock = threading.Lock()
        self.corpora: dict[str, list[str]] = {}
        self.proc: Optional[Any] = None
        self.conn: Any = None
        self.shared: Any = None
        self.started: Optional[float] = None  # when the running computation began

    def progress(self) -> dict[str, Any]:
        """What the worker is doing: the seconds since the running request began and the
        library's progress line of the fit under way (empty between fits)."""
        started, shared = self.started, self.shared
        if started is None or shared is None:
            return {"running": False}
        with shared.get_lock():
            line = shared.value.decode("utf-8", "replace")
        return {"running": True, "seconds": round(time.monotonic() - started, 1), "line": line}

    def _start(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        self.shared = ctx.Array("c", 256)
        self.proc = ctx.Process(target=_worker_main, args=(child, self.shared), daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent
        for name, lines in self.corpora.items():
            self._call(("corpus", name, lines), restart=False)

    def _kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.join(5)
        self.proc = None

    def _call(self, msg: Any, restart: bool = True) -> Any:
        if self.proc is None or not self.proc.is_alive():
            self._start()
        self.conn.send(msg)
        self.started = time.monotonic()
        try:
            answered = self.conn.poll(self.timeout)
        finally:
            self.started = None
        if not answered:
            self._kill()
            raise W.ExploreError(f"this took longer than {self.timeout:g} s on your corpus and was stopped; "
                                 "choose a smaller size or give a smaller corpus")
        status, value = self.conn.recv()
        if status == "error":
            raise W.ExploreError(value)
        return value

    def add_corpus(self, name: str, lines: list[str]) -> None:
        with self.lock:
            self.corpora[name] = lines
            if self.proc is not None:
                self._call(("corpus", name, lines))

    def compute(self, widget_id: str, state: Any, corpora: dict[str, list[str]]) -> Any:
        """``corpora``: every user corpus the server holds (from the command line or uploads);
        any the worker lacks is sent first."""
        with self.lock:
            for name, lines in corpora.items():
                if self.corpora.get(name) is not lines:
                    self.corpora[name] = lines
                    if self.proc is not None and self.proc.is_alive():
                        self._call(("corpus", name, lines))
            return self._call(("compute", widget_id, state))

    def close(self) -> None:
        with self.lock:
            self._kill()


# ------------------------------------------------------------------------------------------------
# HTTP


class _Refusal(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Handler(BaseHTTPRequestHandler):
    server: "ExplorerServer"
    timeout = SOCKET_SECONDS
    protocol_version = "HTTP/1.1"
    server_version = "subwords-explore"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    # -- responses

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy",
                         "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                         "script-src 'self' 'unsafe-inline'; connect-src 'self'")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8"),
                   "application/json; charset=utf-8")

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message})

    def send_error(self, code: int, message: Optional[str] = None, explain: Optional[str] = None) -> None:
        # http.server's own refusals (bad request line, header too long, unknown method) as JSON
        try:
            self.close_connection = True
            self._error(code, message or HTTPStatus(code).phrase)
        except OSError:
            pass

    # -- checks

    def _check_host(self) -> None:
        if self.server.allowed_hosts is None:  # bound to another address on purpose (--host, warned)
            return
        host = (self.headers.get("Host") or "").strip().lower()
        if host not in self.server.allowed_hosts:
            raise _Refusal(403, f"refusing a request for host {host[:100]!r}: open the explorer at {self.server.url}")

    def _body(self, limit: int) -> bytes:
        if self.headers.get("Transfer-Encoding"):
            raise _Refusal(411, "send the body with a Content-Length, not chunked")
        length = self.headers.get("Content-Length")
        if length is None:
            raise _Refusal(411, "a Content-Length header is required")
        if not length.isdigit() or len(length) > 12:
            raise _Refusal(400, f"Content-Length must be a whole number, got {length[:40]!r}")
        n = int(length)
        if n > limit:
            self.close_connection = True
            raise _Refusal(413, f"the body is {n} bytes, more than the {limit} this route takes")
        data = self.rfile.read(n)
        if len(data) < n:
            raise _Refusal(400, "the body ended before its Content-Length")
        return data

    def _dispatch(self, fn: Any) -> None:
        try:
            self._check_host()
            fn()
        except _Refusal as e:
            self._error(e.status, str(e))
        except W.ExploreError as e:
            self._error(400, str(e))
        except (ConnectionError, TimeoutError):
            self.close_connection = True
        except Exception as e:  # never crash the server: the message goes to the page
            if self.server.verbose:
                traceback.print_exc()
            self._error(500, f"internal error: {type(e).__name__}: {e}")

    # -- routes

    def do_GET(self) -> None:
        self._dispatch(self._get)

    def do_HEAD(self) -> None:
        self._dispatch(self._get)

    def do_POST(self) -> None:
        self._dispatch(self._post)

    def _get(self) -> None:
        path = urlsplit(self.path).path
        if path in ("/", "/index.html"):
            self._send(200, self.server.page.encode("utf-8"), "text/html; charset=utf-8")
        elif path == "/app.js":
            self._send(200, static_text("app.js").encode("utf-8"), "text/javascript; charset=utf-8")
        elif path == "/app.css":
            self._send(200, static_text("app.css").encode("utf-8"), "text/css; charset=utf-8")
        elif path == "/api/widgets":
            self._json(200, catalogue())
        elif path == "/api/progress":
            self._json(200, self.server.worker.progress())
        else:
            raise _Refusal(404, f"no such page: {path[:200]!r}")

    def _post(self) -> None:
        url = urlsplit(self.path)
        if self.headers.get("X-Subwords") != "1":
            raise _Refusal(403, "API requests must carry the header X-Subwords: 1")
        if url.path == "/api/compute":
            data = self._body(MAX_BODY)
            try:
                req = json.loads(data.decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError) as e:
                raise _Refusal(400, f"the body is not JSON: {str(e)[:200]}") from None
            if not isinstance(req, dict) or set(req) - {"widget", "state"}:
                raise _Refusal(400, 'send {"widget": "<id>", "state": {...}}')
            self._json(200, self.server.compute(req.get("widget"), req.get("state")))
        elif url.path == "/api/compare":
            data = self._body(MAX_BODY)
            try:
                req = json.loads(data.decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError) as e:
                raise _Refusal(400, f"the body is not JSON: {str(e)[:200]}") from None
            if not isinstance(req, dict) or set(req) != {"text"}:
                raise _Refusal(400, 'send {"text": "..."}')
            self._json(200, self.server.compare(req["text"]))
        elif url.path == "/api/corpus":
            names = parse_qs(url.query).get("name", [""])
            name = names[0]
            if not _NAME.match(name) or name in W.USER_MODELS or name in _RESERVED:
                raise _Refusal(400, "name the corpus with ?name=NAME: letters, digits, '.', '_' or '-', up to 64 "
                                    "characters, not the name of a built-in corpus")
            data = self._body(MAX_UPLOAD)
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as e:
                raise _Refusal(400, f"the corpus is not UTF-8 (byte {e.start}): save it as UTF-8 and upload it again") from None
            lines = split_lines(text)
            if not lines:
                raise _Refusal(400, "the corpus is empty: give one text per line")
            self._json(200, self.server.add_corpus(name, lines))
        elif url.path == "/api/model":
            name = parse_qs(url.query).get("name", [""])[0]
            if not _NAME.match(name) or not name.endswith(MODEL_SUFFIXES) or name in W.USER_CORPORA or name in _RESERVED:
                raise _Refusal(400, "name the model with ?name=NAME ending in .json, .model or .tiktoken (a .tiktoken "
                                    "file's name says its pattern, as gpt2.tiktoken or cl100k_base.tiktoken): letters, "
                                    "digits, '.', '_' or '-', up to 64 characters, not a corpus's name")
            data = self._body(MAX_UPLOAD)
            if not data:
                raise _Refusal(400, "the model file is empty")
            self._json(200, self.server.add_model(name, data))
        else:
            raise _Refusal(404, f"no such route: {url.path[:200]!r}")


_RESERVED = {"four", "marking", "stand_in", "ab", "docstrings", "eighteen"}


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


MAX_CONNECTIONS = 32  # connections served at once; one more is told to come back (503)
_BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"
         b"Connection: close\r\nContent-Length: 74\r\n\r\n"
         b'{"error": "the explorer is serving too many connections; try again soon"}\n')


class ExplorerServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 16
    _slots: threading.BoundedSemaphore

    def process_request(self, request: Any, client_address: Any) -> None:
        # a thread per connection, but not without bound: idle or slow connections cannot pile up
        if not self._slots.acquire(blocking=False):
            try:
                request.sendall(_BUSY)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, verbose: bool = False,
                 timeout: float = WORK_SECONDS) -> None:
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__((host, port), Handler)
        self.verbose = verbose
        self.worker = Worker(timeout)
        real_port = self.server_address[1]
        shown = host if ":" not in host else f"[{host}]"
        self.url = f"http://{shown}:{real_port}/"
        # On the loopback address only names of this machine may be asked for (no DNS rebinding);
        # bound elsewhere (--host, with a warning) the machine is reached by names we cannot list.
        self.allowed_hosts: Optional[set[str]] = None
        if _loopback(host):
            self.allowed_hosts = {f"{shown}:{real_port}".lower(), f"localhost:{real_port}",
                                  f"127.0.0.1:{real_port}", f"[::1]:{real_port}"}

        self.page = render(static=False)
        # Fill the cache with every widget's opening state on the built-in corpora, then with
        # every other state, so that no interaction waits for a fit (the larger stand-in's curves
        # take a second or two; all states about ten seconds on two cores).
        self._stopping = threading.Event()
        self.warm = threading.Thread(target=self._warm_up, name="explore-warm-up", daemon=True)
        self.warm.start()

    def _warm_up(self) -> None:
        todo: list[tuple[str, dict[str, Any]]] = [(w.id, {}) for w in W.WIDGETS.values()]
        todo += [(w.id, s) for w in W.WIDGETS.values() for s in W.all_states(w)]
        for wid, state in todo:
            if self._stopping.is_set():
                return
            try:
                W.compute(wid, state)
            except Exception:  # a failure here is reported when the page asks for it
                pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a browser that goes away mid-request (a page reloaded) is not an error
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return
        print(f"subwords explore: error while answering {client_address[0]}: {type(exc).__name__}: {exc}",
              file=sys.stderr)

    def compute(self, widget_id: Any, state: Any) -> Any:
        w = W.get(widget_id)
        if w.large:
            full = W.validate(w, state)  # refuse a bad state here, before the worker sees it
            if full["corpus"] in W.USER_CORPORA:  # asked for, or the opening corpus given on the command line
                return self.worker.compute(w.id, full, W.USER_CORPORA)
        return W.compute(widget_id, state)

    def compare(self, text: Any) -> Any:
        """The text under every model given, after our own fit on the opening corpus (the
        fitted-vocabulary widget's cut, through the worker on a user's corpus)."""
        text = W.check_text(text)
        corpus = W.OPENING_CORPUS if W.OPENING_CORPUS in W.USER_CORPORA else C.OURS
        fitted = self.compute("bpe-fit", {"text": text, "corpus": corpus})
        ours = next(s for s in fitted["pieces"] if s.get("text"))
        corpus = {C.DOCSTRINGS: "the docstrings", C.OURS: "our eighteen sentences"}.get(corpus, corpus)
        ours = dict(ours, label=f"ours: BPE fitted to {corpus} ({ours['total']} pieces)",
                    exact=dict(fitted["numbers"]).get("glued back exactly", ""))
        return W.compare(text, ours)

    def add_corpus(self, name: str, lines: list[str]) -> dict[str, Any]:
        if name not in W.USER_CORPORA and len(W.USER_CORPORA) >= MAX_CORPORA:
            raise _Refusal(400, f"at most {MAX_CORPORA} corpora can be loaded; restart the explorer for more")
        started = time.monotonic()
        W.USER_CORPORA[name] = lines
        self.worker.add_corpus(name, lines)
        return {"name": name, "lines": len(lines), "words": sum(len(l.split()) for l in lines),
                "seconds": round(time.monotonic() - started, 3)}

    def add_model(self, name: str, data: bytes) -> dict[str, Any]:
        """A model file uploaded in the page, read by ``subwords.formats.load`` (the format found
        from the file itself) from a private temporary folder, which is removed at once."""
        import tempfile
        from pathlib import Path

        from .. import formats
        from ..errors import SubwordsError

        if name not in W.USER_MODELS and len(W.USER_MODELS) >= MAX_MODELS:
            raise _Refusal(400, f"at most {MAX_MODELS} models can be loaded; restart the explorer for more")
        with tempfile.TemporaryDirectory(prefix="subwords-explore-") as folder:
            path = Path(folder) / name
            path.write_bytes(data)
            try:
                model = formats.load(path)
            except SubwordsError as e:
                raise _Refusal(400, f"subwords cannot read {name} as a model: {str(e).replace(folder + '/', '')}") from None
        W.USER_MODELS[name] = model
        return {"name": name, "rows": model.vocab_size}

    def server_close(self) -> None:
        self._stopping.set()
        super().server_close()
        self.worker.close()
