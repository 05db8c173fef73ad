#!/usr/bin/env python3
"""Build the benchmark corpora from Debian packages and the Python standard library.

    python benchmarks/corpora.py [--out benchmarks/corpora] [--only english,code] [--force]

Nothing third-party is committed: the text is rebuilt on demand from

* Debian packages, fetched with ``apt-get download`` and unpacked with ``dpkg-deb -x``
  into a temporary folder (nothing is installed), and
* the ``.py`` files of the running interpreter's standard library
  (``sysconfig.get_paths()["stdlib"]``, without ``site-packages``).

Outputs (plain UTF-8, ``\\n`` line ends, every line right-stripped, no control characters
other than tab and newline; one blank line between documents):

* ``english.txt``      King James Bible (``bible-kjv-text``, one verse a line, with its
                       reference) + the English fortunes (``fortunes``, ``fortunes-min``).
* ``multilingual.txt`` the non-English fortunes: de, es, it, pl, cs/sk, pt (``fortunes-br``),
                       ru, zh, bg, eo, ga.
* ``code.txt``         every UTF-8 ``.py`` file of the standard library, sorted by path.
* ``large.txt``        english + multilingual + code, then documentation text: the Python
                       HTML documentation (text of the page body), Perl's POD pages and its
                       module man pages (markup stripped), the Linux kernel's Documentation
                       tree (reStructuredText and plain text, light markup stripping), the
                       GCIDE dictionary and the Jargon File.  No source is repeated.
* ``heldout.txt``      ~1 MB of whole documents from all of the above, *removed* from every
                       other file (so it is disjoint from ``large.txt``).  A document goes to
                       the held-out split when the first 8 hex digits of the sha256 of its
                       cleaned text, read as an integer, are divisible by ``HELDOUT_MODULUS``;
                       selection is by content, so identical documents land on the same side.

A *document* is a Bible chapter, one fortune cookie, one source file, one documentation page,
one dictionary entry, or ~4 KB of paragraphs of a single-file source.

The sizes, line counts, distinct whitespace-separated words and sha256 of every file, plus
the package versions and the Python version used, are recorded in ``benchmarks/corpora.json``.
A second run with the same inputs skips the build when every file is present with the
recorded hash.  A different Debian package version or Python version gives different text:
the script then says which hashes changed and records the new ones (``--check`` makes that
an error instead).
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import html
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "corpora"
DEFAULT_MANIFEST = HERE / "corpora.json"
MANIFEST_FORMAT = 1
HELDOUT_MODULUS = 128
CHUNK_TARGET = 4096  # bytes of paragraphs per document for single-file sources

# Debian package names.  A name ending in "*" is a meta package resolved to the versioned
# package it depends on (python3-doc -> python3.11-doc, linux-doc -> linux-doc-6.1).
ENGLISH_PACKAGES = ["bible-kjv-text", "bible-kjv", "fortunes", "fortunes-min"]
MULTILINGUAL_PACKAGES = [
    # (package, language)
    ("fortunes-de", "de"),
    ("fortunes-es", "es"),
    ("fortunes-it", "it"),
    ("fortunes-pl", "pl"),
    ("fortunes-cs", "cs/sk"),
    ("fortunes-br", "pt"),
    ("fortunes-ru", "ru"),
    ("fortunes-zh", "zh"),
    ("fortunes-bg", "bg"),
    ("fortunes-eo", "eo"),
    ("fortunes-ga", "ga"),
]
DOC_PACKAGES = ["python3-doc*", "perl-doc", "linux-doc*", "dict-gcide", "jargon-text"]

CORPUS_NAMES = ["english", "multilingual", "code", "large", "heldout"]


class CorpusError(RuntimeError):
    """A corpus could not be built; the message says why and what to do."""


# --------------------------------------------------------------------------------------
# what the benchmarks share (``import corpora`` from a script in this folder)


def stdlib_lines(mb: float) -> list[str]:
    """About ``mb`` megabytes of lines (right-stripped of CR) of the standard library's UTF-8
    ``.py`` files, in path order: a corpus every machine has."""
    root = Path(sysconfig.get_paths()["stdlib"])
    out: list[str] = []
    size = 0
    for p in sorted(root.rglob("*.py")):
        if "site-packages" in p.parts:
            continue
        try:
            text = p.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for line in text.split("\n"):
            out.append(line.rstrip("\r"))
            size += len(line) + 1
        if size >= mb * 1e6:
            break
    return out


def corpus_lines(name: str) -> list[str]:
    """The non-blank lines of a built corpus (``english``, ...) or of a ``.txt`` file."""
    p = Path(name) if name.endswith(".txt") else DEFAULT_OUT / f"{name}.txt"
    if not p.exists():
        raise SystemExit(f"no {p}: run python benchmarks/corpora.py first")
    return [l for l in p.read_text(encoding="utf-8").split("\n") if l.strip()]


def line_chunks(text: str, size: int) -> list[str]:
    """``text`` cut after the first line end past every ``size`` characters (a batch's texts)."""
    return _gather(text.splitlines(keepends=True), size, len, "")


def best(f, repeat: int, clock=time.perf_counter) -> float:
    """The shortest of ``repeat`` runs of ``f()`` on ``clock``."""
    times = []
    for _ in range(repeat):
        t = clock()
        f()
        times.append(clock() - t)
    return min(times)


# --------------------------------------------------------------------------------------
# text cleaning


_OVERSTRIKE = re.compile(r"[^\x08]\x08")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ufeff]")


def clean(text: str) -> str:
    """Normalise one document: LF line ends, no control characters, right-stripped lines,
    no leading/trailing blank lines."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x08" in text:
        text = _OVERSTRIKE.sub("", text)  # nroff/fortune overstrike: "_\bX" -> "X"
    text = _CONTROL.sub("", text)
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def _gather(parts: list[str], target: int, size_of, sep: str) -> list[str]:
    """``parts`` joined by ``sep`` into groups, a group closed once its size reaches ``target``."""
    out, cur, size = [], [], 0
    for part in parts:
        cur.append(part)
        size += size_of(part)
        if size >= target:
            out.append(sep.join(cur))
            cur, size = [], 0
    if cur:
        out.append(sep.join(cur))
    return out


def chunk_paragraphs(text: str, target: int = CHUNK_TARGET) -> list[str]:
    """Cut a long single-file source into documents of about `target` bytes at blank lines."""
    return _gather(re.split(r"\n\s*\n", text), target, lambda p: len(p.encode("utf-8")), "\n\n")


def is_heldout(doc: str) -> bool:
    h = hashlib.sha256(doc.encode("utf-8")).hexdigest()
    return int(h[:8], 16) % HELDOUT_MODULUS == 0


# --------------------------------------------------------------------------------------
# Debian packages


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def check_tools() -> None:
    missing = [t for t in ("apt-get", "apt-cache", "dpkg-deb") if shutil.which(t) is None]
    if missing:
        raise CorpusError(
            f"missing {', '.join(missing)}: the corpora are built from Debian packages, "
            "so this script needs a Debian or Ubuntu system (apt-get, apt-cache, dpkg-deb)"
        )


def resolve_package(name: str) -> str:
    """`python3-doc*` -> the versioned package the meta package depends on."""
    if not name.endswith("*"):
        return name
    meta = name[:-1]
    r = _run(["apt-cache", "depends", meta])
    if r.returncode != 0:
        raise CorpusError(
            f"apt-cache does not know {meta!r}: run `apt-get update` first "
            f"({r.stderr.strip() or 'no output'})"
        )
    prefix = meta.replace("3-doc", "3.") if meta == "python3-doc" else meta + "-"
    for line in r.stdout.splitlines():
        line = line.strip()
        if line.startswith("Depends:"):
            dep = line.split(":", 1)[1].strip().strip("<>")
            if dep.startswith(prefix):
                return dep
    raise CorpusError(f"could not resolve the meta package {meta!r} to a versioned package:\n{r.stdout}")


def download_and_extract(packages: list[str], workdir: Path, cache: Path | None) -> dict[str, tuple[str, Path]]:
    """apt-get download each package and dpkg-deb -x it; returns {name: (version, root)}."""
    debdir = cache if cache is not None else workdir / "debs"
    debdir.mkdir(parents=True, exist_ok=True)
    out: dict[str, tuple[str, Path]] = {}
    for name in packages:
        r = _run(["apt-cache", "policy", name])
        cand = ""
        for line in r.stdout.splitlines():
            if line.strip().startswith("Candidate:"):
                cand = line.split(":", 1)[1].strip()
        if not cand or cand == "(none)":
            raise CorpusError(
                f"Debian package {name!r} is not available (apt-cache policy: candidate "
                f"{cand or 'unknown'}). Run `apt-get update`; if it still is missing, this "
                "Debian release does not ship it: edit the package lists at the top of "
                "benchmarks/corpora.py."
            )
        epochless = cand.split(":", 1)[-1]
        debs = sorted(debdir.glob(f"{name}_*.deb"))
        debs = [d for d in debs if _deb_version(d) == cand]
        if not debs:
            r = _run(["apt-get", "download", f"{name}={cand}"], cwd=debdir)
            debs = sorted(d for d in debdir.glob(f"{name}_*.deb") if _deb_version(d) == cand)
            if r.returncode != 0 or not debs:
                raise CorpusError(
                    f"`apt-get download {name}={cand}` failed (exit {r.returncode}):\n"
                    f"{r.stderr.strip()}\nRun `apt-get update` and check the network/proxy."
                )
        root = workdir / "x" / name
        root.mkdir(parents=True, exist_ok=True)
        r = _run(["dpkg-deb", "-x", str(debs[0]), str(root)])
        if r.returncode != 0:
            raise CorpusError(f"dpkg-deb -x {debs[0].name} failed: {r.stderr.strip()}")
        print(f"  {name} {epochless}", file=sys.stderr)
        out[name] = (cand, root)
    return out


def _deb_version(deb: Path) -> str:
    r = _run(["dpkg-deb", "-f", str(deb), "Version"])
    return r.stdout.strip()


# --------------------------------------------------------------------------------------
# sources -> lists of cleaned documents


def bible_docs(pkgs) -> list[str]:
    """The KJV text ships compressed in its own format; the `bible` program of the
    bible-kjv package (run from the unpacked package, not installed) prints it."""
    _, prog_root = pkgs["bible-kjv"]
    _, text_root = pkgs["bible-kjv-text"]
    prog = prog_root / "usr" / "bin" / "bible"
    data = text_root / "usr" / "lib" / "bible.data"
    if not prog.exists() or not data.exists():
        raise CorpusError(f"bible-kjv package layout changed: expected {prog} and {data}")
    r = subprocess.run(
        [str(prog), "-f", "-p", str(data.parent), "-d", "bible.data", "Gen1:1-Rev22:21"],
        capture_output=True, stdin=subprocess.DEVNULL,
    )
    if r.returncode != 0 or not r.stdout:
        raise CorpusError(
            f"running the unpacked `bible` program failed (exit {r.returncode}): "
            f"{r.stderr.decode(errors='replace').strip()}  (it needs libreadline8)"
        )
    verses = r.stdout.decode("utf-8").splitlines()
    if len(verses) != 31102:
        raise CorpusError(f"expected the 31102 verses of the KJV, got {len(verses)}")
    docs, cur, key = [], [], None
    for v in verses:
        k = v.split(":", 1)[0]  # "Ge1"
        if k != key and cur:
            docs.append(clean("\n".join(cur)))
            cur = []
        key = k
        cur.append(v)
    docs.append(clean("\n".join(cur)))
    return docs


def fortune_docs(root: Path, stats: dict) -> list[str]:
    base = root / "usr" / "share" / "games" / "fortunes"
    if not base.is_dir():
        raise CorpusError(f"no fortunes folder in the unpacked package at {root}")
    docs = []
    for path in sorted(base.rglob("*")):
        if path.is_symlink() or not path.is_file() or path.suffix in (".dat",) or path.stat().st_size == 0:
            continue
        raw = path.read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            stats["skipped_not_utf8"].append(str(path.relative_to(root)))
            continue
        for cookie in re.split(r"^%[ \t]*\r?$\n?", text, flags=re.M):
            c = clean(cookie)
            if c:
                docs.append(c)
    return docs


def code_docs(stats: dict) -> list[str]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = []
    for dirpath, dirnames, filenames in os.walk(stdlib):
        dirnames[:] = [d for d in dirnames if d not in ("site-packages", "dist-packages", "__pycache__")]
        for f in filenames:
            if f.endswith(".py"):
                files.append(Path(dirpath, f))
    files.sort(key=lambda p: p.relative_to(stdlib).as_posix())
    docs = []
    for path in files:
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            stats["skipped_not_utf8"].append("stdlib/" + path.relative_to(stdlib).as_posix())
            continue
        d = clean(text)
        if d:
            docs.append(d)
    stats["code_files"] = len(docs)
    return docs


class _SphinxBody(html.parser.HTMLParser):
    """Text of the `<div role="main">` of a Sphinx page: one line per block, whitespace
    collapsed outside <pre>, header links (¶) and scripts dropped."""

    BLOCK = {
        "p", "div", "section", "li", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "tr",
        "br", "pre", "table", "ul", "ol", "dl", "blockquote", "caption", "figcaption", "hr",
    }

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth = 0  # div nesting inside the main body; 0 = outside
        self.skip = 0  # nesting depth of the element being dropped
        self.skip_tag = ""
        self.pre = 0
        self.buf: list[str] = []
        self.out: list[str] = []

    def flush(self):
        text = "".join(self.buf)
        self.buf = []
        if self.pre:
            self.out.extend(text.split("\n"))
        else:
            t = " ".join(text.split())
            if t:
                self.out.append(t)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if self.depth == 0:
            if tag == "div" and a.get("role") == "main":
                self.depth = 1
            return
        if tag == "div":
            self.depth += 1
        if self.skip:
            if tag == self.skip_tag:
                self.skip += 1
            return
        if tag in ("script", "style") or (tag == "a" and "headerlink" in (a.get("class") or "")):
            self.skip, self.skip_tag = 1, tag
            return
        if tag in self.BLOCK:
            self.flush()
            if tag == "pre":
                self.pre += 1

    def handle_endtag(self, tag):
        if self.depth == 0:
            return
        if self.skip:
            if tag == self.skip_tag:
                self.skip -= 1
            return
        if tag in self.BLOCK:
            self.flush()
            if tag == "pre" and self.pre:
                self.pre -= 1
                self.out.append("")
            if tag in ("p", "h1", "h2", "h3", "h4", "h5", "h6", "dl", "table"):
                self.out.append("")
        if tag == "div":
            self.depth -= 1

    def handle_data(self, data):
        if self.depth and not self.skip:
            self.buf.append(data)


def python_html_docs(root: Path, stats: dict) -> list[str]:
    htmls = sorted(root.rglob("*.html"))
    if not htmls:
        raise CorpusError(f"no HTML pages in the unpacked Python documentation at {root}")
    bases = [p.parent for p in htmls if p.name == "index.html" and (p.parent / "library").is_dir()]
    if not bases:
        raise CorpusError(f"no Sphinx index.html beside a library/ folder under {root}")
    base = bases[0]
    skip_names = re.compile(r"^(genindex.*|contents|search|py-modindex)\.html$")
    docs = []
    for path in sorted(htmls, key=lambda p: p.relative_to(base).as_posix()):
        rel = path.relative_to(base)
        if rel.parts[0].startswith("_") or skip_names.match(path.name):
            continue
        p = _SphinxBody()
        p.feed(path.read_text(encoding="utf-8"))
        p.close()
        p.flush()
        d = clean(re.sub(r"\n{3,}", "\n\n", "\n".join(p.out)))
        if d:
            docs.append(d)
    stats["python_html_pages"] = len(docs)
    return docs


_POD_CODE = re.compile(r"([BCEFILSXZ])<(?:<+\s(.*?)\s>+|([^<>]*))>", re.S)
_POD_ENT = {"lt": "<", "gt": ">", "verbar": "|", "sol": "/", "quot": '"', "amp": "&", "apos": "'"}


def _pod_inline(text: str) -> str:
    def sub(m):
        code, body = m.group(1), m.group(2) if m.group(2) is not None else m.group(3)
        if code in "XZ":
            return ""
        if code == "E":
            if body.isdigit():
                return chr(int(body))
            if body.lower().startswith("0x"):
                return chr(int(body, 16))
            return _POD_ENT.get(body, html.unescape(f"&{body};"))
        if code == "L":
            if "|" in body:
                return body.split("|", 1)[0]
            return body.replace('"', "")
        return body

    for _ in range(8):  # nested codes: innermost first
        new = _POD_CODE.sub(sub, text)
        if new == text:
            break
        text = new
    return text


def pod_to_text(pod: str) -> str:
    out, skip_until = [], None
    for para in re.split(r"\n[ \t]*\n", pod):
        if skip_until:
            if para.startswith("=end") and para.split()[1:2] == [skip_until]:
                skip_until = None
            continue
        if para.startswith("="):
            cmd, _, rest = para.partition(" ")
            cmd = cmd.split("\n")[0]
            if cmd == "=begin":
                skip_until = (rest.split() or [""])[0]
                continue
            if cmd in ("=head1", "=head2", "=head3", "=head4", "=item"):
                rest = rest.strip()
                if cmd == "=item" and rest in ("*", ""):
                    continue
                if cmd == "=item" and rest.startswith("* "):
                    rest = rest[2:]
                out.append(_pod_inline(rest))
            continue  # =over =back =cut =pod =for =encoding ...
        if para[:1] in (" ", "\t"):
            out.append(para)  # verbatim
        else:
            out.append(_pod_inline(para))
    return "\n\n".join(out)


_ROFF_CHARS = {
    "bu": "•", "em": "—", "en": "–", "aq": "'", "dq": '"', "co": "©", "rg": "®", "hy": "-",
    "mi": "-", "lq": "“", "rq": "”", "oq": "‘", "cq": "’", "ga": "`", "ti": "~", "ha": "^",
    "pl": "+", "eq": "=", "sl": "/", "rs": "\\", "mu": "×", "de": "°", "tm": "™", "->": "→",
}
_ROFF_STRINGS = {"L\"": '"', "R\"": '"', "C`": "", "C'": "", "--": "--", "Aq": "'", "PI": "π", "Tr": ""}
_ROFF_ESC = re.compile(
    r"\\(?:f(?:\(..|\[[^]]*\]|.)|s[-+]?\d|\*\((..)|\*\[([^]]*)\]|\*(.)|\((..)|\[([^]]*)\]|(.))"
)


def _roff_inline(s: str) -> str:
    def sub(m):
        full = m.group(0)
        if full.startswith("\\f") or full.startswith("\\s"):
            return ""
        if m.group(1) is not None or m.group(2) is not None or m.group(3) is not None:
            key = m.group(1) or m.group(2) or m.group(3)
            return _ROFF_STRINGS.get(key, "")
        if m.group(4) is not None or m.group(5) is not None:
            return _ROFF_CHARS.get(m.group(4) or m.group(5), "")
        c = m.group(6)
        return {"-": "-", "e": "\\", "\\": "\\", " ": " ", "0": " ", "~": " ", "'": "'", "`": "`", ".": "."}.get(c, "")

    return _ROFF_ESC.sub(sub, s)


def man_to_text(roff: str) -> str:
    lines = roff.split("\n")
    start = next((i for i, l in enumerate(lines) if l.startswith(".TH")), 0)
    out: list[str] = []
    skip_block = 0
    for line in lines[start + 1:]:
        if skip_block:
            skip_block += line.count("\\{") - line.count("\\}")
            continue
        if line.startswith((".\\\"", "'\\\"", '.\\"')):
            continue
        if line.startswith((".", "'")):
            parts = line[1:].strip().split(None, 1)
            if not parts:
                continue
            req, arg = parts[0], (parts[1] if len(parts) > 1 else "")
            if req in ("if", "ie", "el") and "\\{" in line:
                skip_block = line.count("\\{") - line.count("\\}")
                continue
            if req in ("SH", "SS"):
                out.append("")
                out.append(_roff_inline(arg.replace('"', "")))
            elif req in ("IP", "TP", "Ip", "Sh", "Sp"):
                out.append("")
                if req == "IP" and arg:
                    m = re.match(r'"((?:[^"]|"")*)"|(\S+)', arg)
                    if m:
                        item = (m.group(1) or m.group(2) or "").replace('""', '"')
                        if item not in ("\\(bu", "\\\\(bu", "*", "\\(bu"):
                            out.append(_roff_inline(item))
            elif req in ("PP", "LP", "P", "Vb", "Ve", "RS", "RE", "br", "sp"):
                out.append("")
            elif req in ("B", "I", "BR", "IR", "RB", "RI", "BI", "IB", "SM", "SB"):
                out.append(_roff_inline(arg.replace('"', "")))
            continue  # IX, de, ds, nr, tr, nh, ad, ... and everything unknown
        out.append(_roff_inline(line))
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text)


def perl_docs(root: Path, stats: dict) -> list[str]:
    pods = sorted(root.glob("usr/share/perl/*/pod/*.pod"))
    mans = sorted(root.glob("usr/share/man/man3/*.gz"))
    if not pods:
        raise CorpusError(f"no .pod files in the unpacked perl-doc at {root}")
    docs = []
    for p in pods:  # man1 holds these same pages rendered: not used
        d = clean(pod_to_text(p.read_text(encoding="utf-8", errors="strict")))
        if d:
            docs.append(d)
    for m in mans:  # man3: the core modules' documentation
        raw = gzip.decompress(m.read_bytes())
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            stats["skipped_not_utf8"].append(str(m.relative_to(root)))
            continue
        d = clean(man_to_text(text))
        if d:
            docs.append(d)
    stats["perl_pods"], stats["perl_man3"] = len(pods), len(mans)
    return docs


_RST_UNDERLINE = re.compile(r"^([=\-~^*#+\"'`.:_])\1{2,}$")
_RST_ROLE = re.compile(r":[\w:.+-]+:`([^`]*)`")
_RST_REF = re.compile(r"`([^`<]*?)\s*<[^>`]*>`_{1,2}")
_RST_LIT = re.compile(r"``([^`]+)``")
_RST_LINK = re.compile(r"`([^`]+)`_{1,2}")
_RST_BOLD = re.compile(r"\*\*([^*\n]+)\*\*")


def rst_to_text(text: str) -> str:
    out = []
    for line in text.split("\n"):
        s = line.strip()
        if _RST_UNDERLINE.match(s):
            continue
        if line.startswith(".. "):  # directive, comment or link target at column 0
            continue
        line = _RST_ROLE.sub(lambda m: re.sub(r"\s*<[^>]*>$", "", m.group(1)), line)
        line = _RST_REF.sub(r"\1", line)
        line = _RST_LIT.sub(r"\1", line)
        line = _RST_LINK.sub(r"\1", line)
        line = _RST_BOLD.sub(r"\1", line)
        if line.endswith("::"):
            line = line[:-1]
        out.append(line)
    return "\n".join(out)


def linux_docs(root: Path, stats: dict) -> list[str]:
    base = next(root.glob("usr/share/doc/linux-doc-*/Documentation"), None)
    if base is None:
        raise CorpusError(f"no Documentation folder in the unpacked linux-doc at {root}")
    files = sorted(base.rglob("*.gz"), key=lambda p: p.relative_to(base).as_posix())
    docs = []
    used = 0
    for path in files:
        inner = path.name[:-3]
        ext = inner.rsplit(".", 1)[1] if "." in inner else ""
        if ext not in ("rst", "txt", ""):
            continue  # yaml bindings, images, scripts, ...
        raw = gzip.decompress(path.read_bytes())
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            stats["skipped_not_utf8"].append(str(path.relative_to(root)))
            continue
        if "\x00" in text:
            continue
        used += 1
        d = clean(rst_to_text(text) if ext == "rst" else text)
        if d:
            docs.append(d)
    stats["linux_doc_files"] = used
    return docs


_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _b64num(s: str) -> int:
    n = 0
    for c in s:
        n = n * 64 + _B64.index(c)
    return n


def gcide_docs(root: Path, stats: dict) -> list[str]:
    d = root / "usr" / "share" / "dictd"
    dz, index = d / "gcide.dict.dz", d / "gcide.index"
    if not dz.exists() or not index.exists():
        raise CorpusError(f"dict-gcide layout changed: expected {dz} and {index}")
    data = gzip.decompress(dz.read_bytes())  # dictzip is gzip-compatible
    spans = set()
    for line in index.read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and not parts[0].startswith("00-database"):
            spans.add((_b64num(parts[1]), _b64num(parts[2])))
    docs, repaired = [], 0
    for off, length in sorted(spans):
        raw = data[off:off + length]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("cp1252", errors="replace")
            repaired += 1
        text = text.replace("{", "").replace("}", "")
        c = clean(text)
        if c:
            docs.append(c)
    stats["gcide_entries"] = len(docs)
    stats["gcide_entries_decoded_as_cp1252"] = repaired
    return docs


def jargon_docs(root: Path) -> list[str]:
    path = next(root.glob("usr/share/doc/jargon-text/jargon.txt.gz"), None)
    if path is None:
        raise CorpusError(f"no jargon.txt.gz in the unpacked jargon-text at {root}")
    text = clean(gzip.decompress(path.read_bytes()).decode("utf-8"))
    return [c for c in (clean(x) for x in chunk_paragraphs(text)) if c]


# --------------------------------------------------------------------------------------
# building and recording


def file_facts(path: Path) -> dict:
    h = hashlib.sha256()
    size = lines = 0
    words: set[bytes] = set()
    with open(path, "rb") as f:
        for line in f:
            h.update(line)
            size += len(line)
            lines += 1
            words.update(line.split())
    return {"bytes": size, "lines": lines, "distinct_words": len(words), "sha256": h.hexdigest()}


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_atomic(path: Path, docs: list[str]) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        for i, d in enumerate(docs):
            if i:
                f.write("\n")
            f.write(d)
            f.write("\n")
    os.replace(tmp, path)


def load_manifest(path: Path) -> dict:
    if path.exists():
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise CorpusError(f"{path} is not valid JSON ({e}); delete it to rebuild") from None
    return {}


def up_to_date(out: Path, manifest: dict, names: list[str]) -> bool:
    recorded = manifest.get("corpora", {})
    for n in names:
        f = out / f"{n}.txt"
        rec = recorded.get(f"{n}.txt")
        if not rec or not f.exists() or f.stat().st_size != rec["bytes"] or sha256_file(f) != rec["sha256"]:
            return False
    return True


def build(out: Path, names: list[str], cache: Path | None) -> tuple[dict, dict, dict]:
    check_tools()
    stats: dict = {"skipped_not_utf8": []}
    need_debs = set(names) & {"english", "multilingual", "large", "heldout"}
    want = list(ENGLISH_PACKAGES) if need_debs & {"english", "large", "heldout"} else []
    if need_debs & {"multilingual", "large", "heldout"}:
        want += [p for p, _ in MULTILINGUAL_PACKAGES]
    if need_debs & {"large", "heldout"}:
        want += DOC_PACKAGES
    sources: dict[str, list[str]] = {}
    versions: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="subwords-corpora-") as tmp:
        resolved = [resolve_package(p) for p in want]
        print(f"fetching {len(resolved)} Debian packages", file=sys.stderr)
        pkgs = download_and_extract(resolved, Path(tmp), cache)
        versions = {k: v for k, (v, _) in pkgs.items()}
        if want and "bible-kjv-text" in pkgs:
            print("extracting: bible", file=sys.stderr)
            sources["bible"] = bible_docs(pkgs)
            en = []
            for p in ("fortunes", "fortunes-min"):
                en += fortune_docs(pkgs[p][1], stats)
            sources["fortunes-en"] = en
        if any(p in pkgs for p, _ in MULTILINGUAL_PACKAGES):
            print("extracting: fortunes", file=sys.stderr)
            for p, lang in MULTILINGUAL_PACKAGES:
                sources[f"fortunes-{lang}"] = fortune_docs(pkgs[p][1], stats)
        if set(names) & {"code", "large", "heldout"}:
            print("extracting: stdlib", file=sys.stderr)
            sources["code"] = code_docs(stats)
        if need_debs & {"large", "heldout"}:
            by = {resolve_package(p): p for p in DOC_PACKAGES}
            roots = {by[k]: r for k, (_, r) in pkgs.items() if k in by}
            print("extracting: python docs", file=sys.stderr)
            sources["python-doc"] = python_html_docs(roots["python3-doc*"], stats)
            print("extracting: perl docs", file=sys.stderr)
            sources["perl-doc"] = perl_docs(roots["perl-doc"], stats)
            print("extracting: linux docs", file=sys.stderr)
            sources["linux-doc"] = linux_docs(roots["linux-doc*"], stats)
            print("extracting: gcide", file=sys.stderr)
            sources["gcide"] = gcide_docs(roots["dict-gcide"], stats)
            sources["jargon"] = jargon_docs(roots["jargon-text"])

    english_src = ["bible", "fortunes-en"]
    multi_src = [f"fortunes-{lang}" for _, lang in MULTILINGUAL_PACKAGES]
    code_src = ["code"]
    doc_src = ["python-doc", "perl-doc", "linux-doc", "gcide", "jargon"]
    plan = {
        "english": english_src,
        "multilingual": multi_src,
        "code": code_src,
        "large": english_src + multi_src + code_src + doc_src,
        "heldout": english_src + multi_src + code_src + doc_src,
    }
    out.mkdir(parents=True, exist_ok=True)
    source_facts = {}
    for s, docs in sources.items():
        kept = [d for d in docs if not is_heldout(d)]
        source_facts[s] = {
            "documents": len(docs),
            "heldout_documents": len(docs) - len(kept),
            "bytes": sum(len(d.encode("utf-8")) + 1 for d in kept),
        }
    facts = {}
    for n in names:
        if n == "heldout":
            docs = [d for s in plan[n] for d in sources[s] if is_heldout(d)]
        else:
            docs = [d for s in plan[n] for d in sources[s] if not is_heldout(d)]
        path = out / f"{n}.txt"
        print(f"writing {path.name}", file=sys.stderr)
        write_atomic(path, docs)
        facts[f"{n}.txt"] = dict(file_facts(path), documents=len(docs), sources=plan[n])
    return facts, versions, dict(stats, sources=source_facts)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default: benchmarks/corpora)")
    ap.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST, help="facts file (default: benchmarks/corpora.json)")
    ap.add_argument("--only", default=",".join(CORPUS_NAMES), help=f"comma list of {','.join(CORPUS_NAMES)}")
    ap.add_argument("--force", action="store_true", help="rebuild even when the files match the manifest")
    ap.add_argument("--check", action="store_true", help="fail if a rebuilt file's hash differs from the manifest")
    ap.add_argument("--cache", type=Path, default=None, help="keep downloaded .deb files in this folder")
    args = ap.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    bad = [n for n in names if n not in CORPUS_NAMES]
    if bad:
        ap.error(f"unknown corpus {bad}; choose from {CORPUS_NAMES}")
    try:
        manifest = load_manifest(args.manifest)
        if not args.force and up_to_date(args.out, manifest, names):
            print(f"corpora up to date in {args.out} (hashes match {args.manifest.name})", file=sys.stderr)
            return 0
        facts, versions, stats = build(args.out, names, args.cache)
    except CorpusError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    old = manifest.get("corpora", {})
    changed = [k for k, v in facts.items() if k in old and old[k]["sha256"] != v["sha256"]]
    if changed:
        print("note: these files differ from the recorded manifest: " + ", ".join(changed), file=sys.stderr)
        print("      (package versions then/now: see 'packages' in the manifest)", file=sys.stderr)
        if args.check:
            return 1
    new = {
        "format": MANIFEST_FORMAT,
        "built_with": {
            "python": sys.version.split()[0],
            "heldout_modulus": HELDOUT_MODULUS,
        },
        "packages": dict(sorted({**manifest.get("packages", {}), **versions}.items())),
        "corpora": {**old, **facts},
        "stats": {**manifest.get("stats", {}), **stats},
    }
    new["corpora"] = {k: new["corpora"][k] for k in sorted(new["corpora"], key=lambda k: CORPUS_NAMES.index(k[:-4]) if k[:-4] in CORPUS_NAMES else 99)}
    tmp = args.manifest.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(new, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, args.manifest)
    for k, v in facts.items():
        print(f"{k:18} {v['bytes'] / 1e6:8.2f} MB {v['lines']:>10,} lines {v['distinct_words']:>10,} words  {v['sha256'][:16]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
