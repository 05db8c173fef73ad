#!/usr/bin/env python3
"""How fast the explorer answers: every state of every widget on the built-in corpora, through
the HTTP API of a fresh server, the way the page asks (the goal: on the built-in corpora every
interaction answers in under 100 ms, and typing in under 50 ms).

    python benchmarks/bench_explore.py            # after the server's warm-up (the page's case)
    python benchmarks/bench_explore.py --cold     # without waiting for the warm-up
    python benchmarks/bench_explore.py --corpus FILE [--head BYTES] [--limit SECONDS]
    python benchmarks/bench_explore.py --typing   # the text box: every widget that cuts it, key by key
    python benchmarks/bench_explore.py --typing --corpus FILE [--head BYTES]   # ... with FILE opening the
                                                  # large-corpus widgets (their fits made first, not timed)
    python benchmarks/bench_explore.py --typing --model FILE   # FILE in every fitted-vocabulary widget and
                                                  # in the model comparison, key by key

With ``--corpus`` it times instead the 14 large-corpus widgets in their opening state on that
file as a user's corpus, through the server's worker and its time limit (60 s unless
``--limit``), and says which corpus each worked on (all of it, or the evenly spaced sample a
widget that fits many times takes of a large one); ``--head`` keeps the file's first BYTES bytes
(whole lines). Each widget's first answer is timed, then the cached one.

Each state is asked twice: the first answer may compute (the fits a state needs are cached by
the widgets), the second is the cache. Prints, per widget, the states, the median and the worst
first answer, and how many first answers took 100 ms or more.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import threading
import time

from subwords.explore import widgets as W
from subwords.explore.server import ExplorerServer


def ask(port: int, widget: str, state: dict) -> float:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    body = json.dumps({"widget": widget, "state": state})
    start = time.perf_counter()
    conn.request("POST", "/api/compute", body, {"X-Subwords": "1", "Content-Type": "application/json"})
    reply = conn.getresponse()
    reply.read()
    took = time.perf_counter() - start
    conn.close()
    if reply.status not in (200, 400):
        raise SystemExit(f"{widget} {state}: HTTP {reply.status}")
    return took


def ask_json(port: int, widget: str, state: dict) -> tuple[float, int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
    body = json.dumps({"widget": widget, "state": state})
    start = time.perf_counter()
    conn.request("POST", "/api/compute", body, {"X-Subwords": "1", "Content-Type": "application/json"})
    reply = conn.getresponse()
    text = reply.read().decode("utf-8", "replace")
    took = time.perf_counter() - start
    conn.close()
    return took, reply.status, text


def read_corpus(path: str, head: int) -> list[str]:
    from pathlib import Path

    from subwords.explore.server import split_lines

    raw = Path(path).read_bytes()
    if head:
        raw = raw[:head]
        raw = raw[: raw.rfind(b"\n") + 1] or raw
    return split_lines(raw.decode("utf-8"))


def user_corpus(path: str, head: int, limit: float) -> None:
    lines = read_corpus(path, head)
    raw = "\n".join(lines).encode("utf-8")
    srv = ExplorerServer("127.0.0.1", 0, timeout=limit)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    port = srv.server_address[1]
    srv.warm.join()
    srv.add_corpus("yours", lines)
    print(f"corpus: {len(raw)} bytes, {len(lines)} lines; worker limit {limit:.0f} s")
    print(f"{'widget':12} {'first s':>8} {'status':>6} {'cached s':>9}  answer")
    for wid in (w.id for w in W.WIDGETS.values() if w.large):
        took, status, text = ask_json(port, wid, {"corpus": "yours"})
        again, _, _ = ask_json(port, wid, {"corpus": "yours"}) if status == 200 else (float("nan"), 0, "")
        if status == 200:  # the corpus the widget worked on: all of it, or a sample it names
            note = json.loads(text).get("note", "")
            answer = "ok, " + (note.split("Corpus:", 1)[-1].split(")", 1)[0].strip() + ")" if "every" in note else "all of it")
        else:
            answer = json.loads(text).get("error", text)[:90]
        print(f"{wid:12} {took:8.2f} {status:6} {again:9.3f}  {answer}")
    srv.shutdown()
    srv.server_close()


# What --typing types: a sentence of our own, one key at a time (every prefix is one request per
# widget, as the page asks after each pause), then café and a CJK line of our own.
TYPED = "The lower cost of the new analysis was not expected."
OTHER_TEXTS = ("café", "学生研究生命的起源")


def typing(corpus: str = "", head: int = 0, limit: float = 60.0) -> None:
    srv = ExplorerServer("127.0.0.1", 0, timeout=limit)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    port = srv.server_address[1]
    srv.warm.join()
    texts = [TYPED[:k] for k in range(1, len(TYPED) + 1)] + list(OTHER_TEXTS)
    widgets = [w for w in W.WIDGETS.values() if w.text]
    where = "built-in corpora"
    if corpus:  # the corpus opens every large-corpus widget, as `subwords explore FILE` does
        lines = read_corpus(corpus, head)
        srv.add_corpus("yours", lines)
        W.OPENING_CORPUS = "yours"
        where = f"the large-corpus widgets on {corpus} ({sum(len(l) + 1 for l in lines):,} characters, {len(lines):,} lines)"
        for w in widgets:  # the fits, made once (not what typing waits for)
            took, status, text = ask_json(port, w.id, {})
            print(f"  fit for {w.id}: {took:.1f} s, {'ok' if status == 200 else text[:120]}")
    print(f"{len(widgets)} widgets cut the text box; {len(texts)} texts each (every prefix of a typed sentence, "
          f"café, a CJK line), opening states, {where}")
    print(f"{'widget':16} {'median ms':>10} {'worst ms':>9} {'>=50 ms':>8}")
    everything: list[float] = []
    for w in widgets:
        times = [ask(port, w.id, {"text": t}) for t in texts]
        everything += times
        print(f"{w.id:16} {1000 * statistics.median(times):10.1f} {1000 * max(times):9.1f} {sum(t >= 0.05 for t in times):8}")
    # the page asks every widget at once after a pause in typing: the slowest of one round is what is seen
    rounds = []
    for t in texts:
        started = time.perf_counter()
        threads = [threading.Thread(target=ask, args=(port, w.id, {"text": t + " "})) for w in widgets]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        rounds.append(time.perf_counter() - started)
    print(f"one request: median {1000 * statistics.median(everything):.1f} ms, worst {1000 * max(everything):.1f} ms, "
          f"{sum(t >= 0.05 for t in everything)} of {len(everything)} at 50 ms or more")
    print(f"all {len(widgets)} widgets at once (what one pause in typing asks): median {1000 * statistics.median(rounds):.1f} ms, "
          f"worst {1000 * max(rounds):.1f} ms")
    srv.shutdown()
    srv.server_close()


def typing_model(path: str) -> None:
    """The text box's text under a model of the command line's, key by key: in every
    fitted-vocabulary widget (the model opens them, as ``subwords explore MODEL`` does) and in the
    side-by-side comparison (``POST /api/compare``)."""
    from subwords import formats

    started = time.perf_counter()
    W.USER_MODELS["model"] = formats.load(path)
    W.OPENING_MODEL = "model"
    print(f"model loaded in {time.perf_counter() - started:.1f} s")
    srv = ExplorerServer("127.0.0.1", 0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    port = srv.server_address[1]
    srv.warm.join()
    texts = [TYPED[:k] for k in range(1, len(TYPED) + 1)] + list(OTHER_TEXTS)
    fitted = [w for w in W.WIDGETS.values() if w.fitted]
    print(f"{'widget':16} {'first ms':>9} {'median ms':>10} {'worst ms':>9} {'>=200 ms':>9}")
    everything: list[float] = []
    for w in fitted:
        first = ask(port, w.id, {})  # the model's rows read once per model (the widgets that list rows)
        times = [ask(port, w.id, {"text": t}) for t in texts]
        everything += times
        print(f"{w.id:16} {1000 * first:9.1f} {1000 * statistics.median(times):10.1f} {1000 * max(times):9.1f} "
              f"{sum(t >= 0.2 for t in times):9}")
    print(f"{len(fitted)} fitted-vocabulary widgets on the model: median {1000 * statistics.median(everything):.1f} ms, "
          f"worst {1000 * max(everything):.1f} ms, {sum(t >= 0.2 for t in everything)} of {len(everything)} at 200 ms or more")
    times = []
    for t in texts:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        start = time.perf_counter()
        conn.request("POST", "/api/compare", json.dumps({"text": t}), {"X-Subwords": "1", "Content-Type": "application/json"})
        reply = conn.getresponse()
        reply.read()
        times.append(time.perf_counter() - start)
        conn.close()
        if reply.status != 200:
            raise SystemExit(f"{t!r}: HTTP {reply.status}")
    rows = W.USER_MODELS["model"].vocab_size
    print(f"model {path} ({rows:,} rows): {len(texts)} texts through POST /api/compare (the model and our fit on "
          f"the opening corpus): median {1000 * statistics.median(times):.1f} ms, worst {1000 * max(times):.1f} ms, "
          f"{sum(t >= 0.2 for t in times)} at 200 ms or more")
    srv.shutdown()
    srv.server_close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cold", action="store_true", help="do not wait for the server's warm-up")
    ap.add_argument("--corpus", help="time the curve widgets on this file as a user's corpus")
    ap.add_argument("--head", type=int, default=0, help="with --corpus: keep the first BYTES bytes (whole lines)")
    ap.add_argument("--limit", type=float, default=60.0, help="with --corpus: the worker's time limit in seconds")
    ap.add_argument("--typing", action="store_true", help="time the widgets that cut the text box, key by key")
    ap.add_argument("--model", help="with --typing: time the model comparison with this model file loaded")
    a = ap.parse_args()
    if a.typing and a.model:
        typing_model(a.model)
        return
    if a.typing:
        typing(a.corpus or "", a.head, a.limit)
        return
    if a.corpus:
        user_corpus(a.corpus, a.head, a.limit)
        return
    t0 = time.perf_counter()
    srv = ExplorerServer("127.0.0.1", 0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    port = srv.server_address[1]
    if not a.cold:
        srv.warm.join()
        print(f"warm-up (every widget's opening state): {time.perf_counter() - t0:.2f} s")
    slow_total = states_total = 0
    print(f"{'widget':16} {'states':>6} {'median ms':>10} {'worst ms':>9} {'>=100 ms':>9} {'cached ms':>10}")
    for w in W.WIDGETS.values():
        states = W.all_states(w)
        first = [ask(port, w.id, s) for s in states]
        again = [ask(port, w.id, s) for s in states]
        slow = sum(t >= 0.1 for t in first)
        slow_total += slow
        states_total += len(states)
        print(f"{w.id:16} {len(states):6} {1000 * statistics.median(first):10.1f} {1000 * max(first):9.1f} "
              f"{slow:9} {1000 * max(again):10.1f}")
    print(f"{states_total} states; {slow_total} first answers took 100 ms or more")
    srv.shutdown()
    srv.server_close()


if __name__ == "__main__":
    main()
