"""tiktoken's public API on subwords' rank-BPE engine: change ``import tiktoken`` to

>>> import subwords.compat.tiktoken as tiktoken                       # doctest: +SKIP
>>> enc = tiktoken.get_encoding("cl100k_base")                       # doctest: +SKIP
>>> enc.encode("hello world")                                         # doctest: +SKIP
[15339, 1917]

and the rest of the code stays as it is. Ids, bytes, offsets and the errors tiktoken's own tests
expect are tiktoken's (``tests/compat/test_tiktoken_suite.py`` runs tiktoken's test files,
unmodified, against this module).

**Rank files are never downloaded.** ``get_encoding(name)`` looks for OpenAI's file, in order:

1. in each folder of ``$SUBWORDS_TIKTOKEN_DIR`` (folders separated by ``os.pathsep``), under
   the file's own name: ``r50k_base.tiktoken``, ``p50k_base.tiktoken``,
   ``cl100k_base.tiktoken``, ``o200k_base.tiktoken``, and for ``gpt2`` GPT-2's ``vocab.bpe``
   (with ``encoder.json`` beside it, checked when present);
2. in tiktoken's own cache, where tiktoken keeps what it downloaded: the folder
   ``$TIKTOKEN_CACHE_DIR``, else ``$DATA_GYM_CACHE_DIR``, else ``data-gym-cache`` in the
   system's temporary folder (an empty ``$TIKTOKEN_CACHE_DIR`` means no cache), under the
   SHA-1 (hex) of the file's URL.

A file is used only if its SHA-256 is the one tiktoken expects. A missing file is a
``MissingFileError`` (a ``FileNotFoundError``) naming the URL and both places to put it.

Pre-split patterns: OpenAI's patterns (r50k/gpt2, cl100k, o200k) run on hand-written scanners
proven equal to the regexes; any other ``pat_str`` runs on fancy-regex, as tiktoken runs it
(matches are chunks; text between matches is dropped, as tiktoken drops it).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import tempfile
import threading
from bisect import bisect_left
from typing import AbstractSet, Any, Collection, Iterable, Literal, NoReturn, Optional, Sequence, Union

from .. import _core
from .._api import gc_paused
from ..errors import InputError, MissingFileError, ModelFileError, OptionError, TextTypeError, UnknownPieceError
from ..formats.tiktoken.read import BYTE_TO_CHAR, ENDOFTEXT, O200K_PATTERN, PATTERNS, R50K_PATTERN, _read

__all__ = ["Encoding", "get_encoding", "encoding_for_model", "encoding_name_for_model", "list_encoding_names",
           "load_tiktoken_bpe", "data_gym_to_mergeable_bpe_ranks", "MODEL_TO_ENCODING", "MODEL_PREFIX_TO_ENCODING"]

#: The tiktoken release whose API (names, arguments, errors) this module follows.
__version__ = "0.14.0"

FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

_BLOBS = "https://openaipublic.blob.core.windows.net/"

# A rank file OpenAI publishes: the name it is kept under, its URL, its SHA-256 (the hashes
# tiktoken checks, tiktoken_ext/openai_public.py).
_RankFile = tuple[str, str, str]
_R50K: _RankFile = ("r50k_base.tiktoken", _BLOBS + "encodings/r50k_base.tiktoken",
                    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930")
_P50K: _RankFile = ("p50k_base.tiktoken", _BLOBS + "encodings/p50k_base.tiktoken",
                    "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069")
_CL100K: _RankFile = ("cl100k_base.tiktoken", _BLOBS + "encodings/cl100k_base.tiktoken",
                      "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7")
_O200K: _RankFile = ("o200k_base.tiktoken", _BLOBS + "encodings/o200k_base.tiktoken",
                     "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d")
_GPT2_VOCAB: _RankFile = ("vocab.bpe", _BLOBS + "gpt-2/encodings/main/vocab.bpe",
                          "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5")
_GPT2_ENCODER = ("encoder.json", _BLOBS + "gpt-2/encodings/main/encoder.json")

_HARMONY = {
    "<|startoftext|>": 199998, ENDOFTEXT: 199999, "<|reserved_200000|>": 200000, "<|reserved_200001|>": 200001,
    "<|return|>": 200002, "<|constrain|>": 200003, "<|reserved_200004|>": 200004, "<|channel|>": 200005,
    "<|start|>": 200006, "<|end|>": 200007, "<|message|>": 200008, "<|reserved_200009|>": 200009,
    "<|reserved_200010|>": 200010, "<|reserved_200011|>": 200011, "<|call|>": 200012, ENDOFPROMPT: 200018,
}

# encoding name -> (rank file, core pattern name, pattern string, special tokens, explicit n_vocab)
_OPENAI: dict[str, tuple[_RankFile, str, str, dict[str, int], Optional[int]]] = {
    "gpt2": (_GPT2_VOCAB, "r50k", R50K_PATTERN, {ENDOFTEXT: 50256}, 50257),
    "r50k_base": (_R50K, "r50k", R50K_PATTERN, {ENDOFTEXT: 50256}, 50257),
    "p50k_base": (_P50K, "r50k", R50K_PATTERN, {ENDOFTEXT: 50256}, 50281),
    "p50k_edit": (_P50K, "r50k", R50K_PATTERN,
                  {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283}, None),
    "cl100k_base": (_CL100K, "cl100k", PATTERNS["cl100k"][0],
                    {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260,
                     ENDOFPROMPT: 100276}, None),
    "o200k_base": (_O200K, "o200k", O200K_PATTERN, {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}, None),
    "o200k_harmony": (_O200K, "o200k", O200K_PATTERN,
                      {**_HARMONY, **{f"<|reserved_{i}|>": i for i in range(200013, 201088) if i != 200018}}, None),
}

# model name -> encoding, and model-name prefix -> encoding (tiktoken/model.py's tables)
MODEL_TO_ENCODING: dict[str, str] = {
    **dict.fromkeys(["o1", "o3", "o4-mini", "gpt-5", "gpt-4.1", "gpt-4o"], "o200k_base"),
    **dict.fromkeys(["gpt-4", "gpt-3.5-turbo", "gpt-3.5", "gpt-35-turbo", "davinci-002", "babbage-002",
                     "text-embedding-ada-002", "text-embedding-3-small", "text-embedding-3-large"], "cl100k_base"),
    **dict.fromkeys(["text-davinci-003", "text-davinci-002", "code-davinci-002", "code-davinci-001",
                     "code-cushman-002", "code-cushman-001", "davinci-codex", "cushman-codex"], "p50k_base"),
    **dict.fromkeys(["text-davinci-001", "text-curie-001", "text-babbage-001", "text-ada-001", "davinci", "curie",
                     "babbage", "ada", "text-similarity-davinci-001", "text-similarity-curie-001",
                     "text-similarity-babbage-001", "text-similarity-ada-001", "text-search-davinci-doc-001",
                     "text-search-curie-doc-001", "text-search-babbage-doc-001", "text-search-ada-doc-001",
                     "code-search-babbage-code-001", "code-search-ada-code-001"], "r50k_base"),
    **dict.fromkeys(["text-davinci-edit-001", "code-davinci-edit-001"], "p50k_edit"),
    **dict.fromkeys(["gpt2", "gpt-2"], "gpt2"),
}
MODEL_PREFIX_TO_ENCODING: dict[str, str] = {
    **dict.fromkeys(["o1-", "o3-", "o4-mini-", "gpt-5", "gpt-4.5-", "gpt-4.1-", "chatgpt-4o-", "gpt-4o-"],
                    "o200k_base"),
    **dict.fromkeys(["gpt-4-", "gpt-3.5-turbo-", "gpt-35-turbo-"], "cl100k_base"),
    "gpt-oss-": "o200k_harmony",
    "ft:gpt-4o": "o200k_base",
    **dict.fromkeys(["ft:gpt-4", "ft:gpt-3.5-turbo", "ft:davinci-002", "ft:babbage-002"], "cl100k_base"),
}

_MAX_FILE_BYTES = 256 << 20


# ====================
# Finding rank files
# ====================

def _cache_dir() -> Optional[str]:
    """tiktoken's cache folder, or None when ``$TIKTOKEN_CACHE_DIR`` is empty (no cache)."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return os.environ[var] or None
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _places(filename: str, url: str) -> list[str]:
    """Where a published file may be, in the order looked at."""
    out = [os.path.join(d, filename) for d in os.environ.get("SUBWORDS_TIKTOKEN_DIR", "").split(os.pathsep) if d]
    cache = _cache_dir()
    if cache is not None:
        out.append(os.path.join(cache, hashlib.sha1(url.encode()).hexdigest()))
    return out


def _where_to_put(filename: str, url: str) -> str:
    cache = _cache_dir()
    key = hashlib.sha1(url.encode()).hexdigest()
    cache_hint = (f"or at {os.path.join(cache, key)} (tiktoken's cache: the SHA-1 of the URL, in "
                  "$TIKTOKEN_CACHE_DIR, else $DATA_GYM_CACHE_DIR, else data-gym-cache in the temporary folder)"
                  if cache is not None else "($TIKTOKEN_CACHE_DIR is empty: tiktoken's cache is off)")
    return (f"subwords never downloads: fetch {url} where the network allows and put it in a folder named by "
            f"$SUBWORDS_TIKTOKEN_DIR as {filename}, {cache_hint}; a run of the real tiktoken that "
            "downloaded it leaves it in that cache")


def _find(file: _RankFile, why: str) -> bytes:
    """The bytes of a published rank file from the first place that holds it with the right hash."""
    filename, url, sha256 = file
    wrong = []
    for path in _places(filename, url):
        if os.path.isfile(path):
            data = _read(path)
            got = hashlib.sha256(data).hexdigest()
            if got == sha256:
                return data
            wrong.append(f"{path} (sha256 {got})")
    found = f"; found only files with another content: {', '.join(wrong)}, not sha256 {sha256}" if wrong else ""
    raise MissingFileError(f"{why} needs OpenAI's {filename}{found}. {_where_to_put(filename, url)}")


def _read_blob(blobpath: str, expected_hash: Optional[str]) -> bytes:
    """A local path, or a URL looked up in ``$SUBWORDS_TIKTOKEN_DIR`` and tiktoken's cache."""
    if "://" not in blobpath:
        data = _read(blobpath)
        if expected_hash and hashlib.sha256(data).hexdigest() != expected_hash:
            raise ModelFileError(f"{blobpath}: its sha256 is {hashlib.sha256(data).hexdigest()}, not {expected_hash}")
        return data
    filename = blobpath.rstrip("/").rsplit("/", 1)[-1]
    if expected_hash:
        return _find((filename, blobpath, expected_hash), blobpath)
    for path in _places(filename, blobpath):
        if os.path.isfile(path):
            return _read(path)
    raise MissingFileError(f"{blobpath} is not on this machine. {_where_to_put(filename, blobpath)}")


def load_tiktoken_bpe(tiktoken_bpe_file: str, expected_hash: Optional[str] = None) -> dict[bytes, int]:
    """tiktoken's ``load_tiktoken_bpe``: the ranks of a ``.tiktoken`` file (a path, or a URL
    found in ``$SUBWORDS_TIKTOKEN_DIR`` or tiktoken's cache; never downloaded)."""
    data = _read_blob(tiktoken_bpe_file, expected_hash)
    try:
        core = _core.RankBpe.from_rank_file(data, "r50k", [])
    except ModelFileError as e:
        raise ModelFileError(f"{tiktoken_bpe_file}: {e}") from None
    return dict(core.tokens())


def _data_gym_ranks(vocab_bpe: bytes, encoder_json: Optional[bytes], where: str) -> dict[bytes, int]:
    """GPT-2's ranks from its merges file: the 256 bytes first, printable ones (GPT-2's byte
    table maps them to themselves) in byte order, then the others in byte order; then one rank per
    merge line, the two parts' bytes joined. ``encoder.json``, when given, must agree."""
    char_to_byte = {c: b for b, c in enumerate(BYTE_TO_CHAR)}
    ranks = {bytes([b]): r for r, b in enumerate(sorted(range(256), key=lambda b: ord(BYTE_TO_CHAR[b])))}
    try:
        lines = vocab_bpe.decode("utf-8").split("\n")[1:-1]
        for line in lines:
            first, second = line.split()
            ranks[bytes(char_to_byte[c] for c in first + second)] = len(ranks)
    except (UnicodeDecodeError, ValueError, KeyError):
        raise ModelFileError(f"{where}: not GPT-2's vocab.bpe (a version line, then one 'a b' merge per line)") from None
    if encoder_json is not None:
        try:
            table = {bytes(char_to_byte[c] for c in k): v for k, v in json.loads(encoder_json).items()}
        except (ValueError, KeyError, TypeError, AttributeError):
            raise ModelFileError(f"{where}: encoder.json is not GPT-2's token table") from None
        table.pop(ENDOFTEXT.encode(), None)
        table.pop(b"<|startoftext|>", None)
        if table != ranks:
            raise ModelFileError(f"{where}: encoder.json does not match vocab.bpe's merges")
    return ranks


def data_gym_to_mergeable_bpe_ranks(vocab_bpe_file: str, encoder_json_file: str,
                                    vocab_bpe_hash: Optional[str] = None,
                                    encoder_json_hash: Optional[str] = None) -> dict[bytes, int]:
    """tiktoken's ``data_gym_to_mergeable_bpe_ranks``: GPT-2-style ranks from ``vocab.bpe`` and
    ``encoder.json`` (paths, or URLs found offline as :func:`load_tiktoken_bpe` finds them)."""
    return _data_gym_ranks(_read_blob(vocab_bpe_file, vocab_bpe_hash),
                           _read_blob(encoder_json_file, encoder_json_hash), vocab_bpe_file)


def _gpt2_ranks() -> dict[bytes, int]:
    vocab = _find(_GPT2_VOCAB, "get_encoding('gpt2')")
    filename, url = _GPT2_ENCODER
    encoder = next((_read(p) for p in _places(filename, url) if os.path.isfile(p)), None)
    return _data_gym_ranks(vocab, encoder, "gpt2")


# ====================
# The encoding
# ====================

def _splitter(pat_str: str) -> tuple[str, Optional[str]]:
    """(core pattern name, regex or None): a scanner for OpenAI's patterns, else fancy-regex."""
    for name, strings in PATTERNS.items():
        if pat_str in strings:
            return name, None
    return "regex", pat_str


@functools.lru_cache(maxsize=128)
def _special_search(tokens: frozenset[str]) -> tuple[str, re.Pattern[str]]:
    """(a prefix every token starts with, a regex finding the tokens), as tiktoken searches."""
    prefix = os.path.commonprefix(list(tokens))
    return prefix, re.compile("(" + "|".join(re.escape(t) for t in tokens) + ")")


def raise_disallowed_special_token(token: str) -> NoReturn:
    """tiktoken's error for a special token's text where it is not allowed."""
    raise ValueError(
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        "If you want this text to be encoded as a special token, "
        f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
        "If you want this text to be encoded as normal text, disable the check for this token "
        f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n")


def _check_disallowed(text: str, disallowed: frozenset[str]) -> None:
    if not isinstance(text, str):
        raise TextTypeError(f"text must be str, got {type(text).__name__}")
    prefix, regex = _special_search(disallowed)
    if prefix and prefix not in text:  # str search, far faster than the regex
        return
    m = regex.search(text)
    if m:
        raise_disallowed_special_token(m.group())


def _no_surrogates(text: str) -> str:
    """tiktoken's repair of text UTF-8 cannot hold: pairs join, lone surrogates become U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _is_white_space(c: str) -> bool:
    """Unicode's White_Space property (Rust's ``char::is_whitespace``): ``str.isspace`` less the
    information separators U+001C..U+001F."""
    return c.isspace() and not "\x1c" <= c <= "\x1f"


def _last_char(data: bytes) -> tuple[Optional[str], int]:
    """The last UTF-8 character of ``data`` and its length, or (None, 1) if the end is not one."""
    for k in range(1, min(4, len(data)) + 1):
        if not 0x80 <= data[-k] < 0xC0:
            try:
                return data[-k:].decode("utf-8"), k
            except UnicodeDecodeError:
                return None, 1
    return None, 1


_EMPTY: frozenset[str] = frozenset()
_Specials = Union[Literal["all"], AbstractSet[str]]
_Disallowed = Union[Literal["all"], Collection[str]]


class Encoding:
    """tiktoken's ``Encoding``: ids of text and text of ids under a rank file, a pre-split
    pattern and special tokens.

    >>> enc = Encoding("toy", pat_str=r"\\S+|\\s+", special_tokens={"<|end|>": 260},
    ...                mergeable_ranks={**{bytes([b]): b for b in range(256)}, b"ab": 256, b"abc": 257})
    >>> enc.encode("abc ab ba<|end|>", allowed_special="all")
    [257, 32, 256, 32, 98, 97, 260]
    >>> enc.decode([257, 32, 256])
    'abc ab'
    """

    def __init__(self, name: str, *, pat_str: str, mergeable_ranks: dict[bytes, int],
                 special_tokens: dict[str, int], explicit_n_vocab: Optional[int] = None) -> None:
        if not isinstance(pat_str, str):
            raise InputError(f"pat_str must be a str (a regular expression), got {type(pat_str).__name__}")
        if not isinstance(special_tokens, dict):
            raise InputError(f"special_tokens must be a dict of str -> int, got {type(special_tokens).__name__}")
        if not isinstance(mergeable_ranks, dict):
            raise InputError(f"mergeable_ranks must be a dict of bytes -> int, got {type(mergeable_ranks).__name__}")
        tokens = list(mergeable_ranks.items())
        if not tokens:
            raise InputError("mergeable_ranks is empty; a rank file ranks at least the 256 single bytes")
        pattern_name, regex = _splitter(pat_str)
        try:
            core = _core.RankBpe.from_ranks(tokens, pattern_name, sorted(special_tokens.items(), key=lambda kv: kv[1]),
                                            regex=regex)
        except (TypeError, OverflowError) as e:
            raise InputError(f"mergeable_ranks must map bytes -> int and special_tokens str -> int "
                             f"(non-negative, below 2**32 - 1): {e}") from None
        self._setup(name, pat_str, special_tokens, core, explicit_n_vocab)
        self.__dict__["_mergeable_ranks"] = mergeable_ranks

    def _setup(self, name: str, pat_str: str, special_tokens: dict[str, int], core: _core.RankBpe,
               explicit_n_vocab: Optional[int]) -> None:
        self.name = name
        self._pat_str = pat_str
        self._special_tokens = special_tokens
        self._core = core
        self.max_token_value = core.vocab_size() - 1
        if explicit_n_vocab:
            count = core.rank_count() + len(special_tokens)
            if count != explicit_n_vocab or self.max_token_value != explicit_n_vocab - 1:
                raise ModelFileError(f"{name}: explicit_n_vocab={explicit_n_vocab}, but there are {count} tokens "
                                     f"and the largest id is {self.max_token_value}")
        self._special_token_values = set(special_tokens.values())
        self._enc = core.encoder()
        self._special_ids = dict(core.specials())
        self._all_specials = frozenset(special_tokens)
        self._guard = _special_search(self._all_specials) if special_tokens else None
        # the engine's call on one text: it hands back (None) a text holding the specials' common
        # prefix, or any of them when they share none, for the search below
        if self._guard is not None:
            self._enc = self._enc.with_guard([self._guard[0]] if self._guard[0] else sorted(self._all_specials))
        self._plain = self._enc.encode_plain
        # ``encode(text)`` and ``encode_ordinary(text)`` as one native call with no Python frame,
        # while the class's own methods are what they stand for: any other call goes to them
        cls = type(self)
        for name, guarded in (("encode", True), ("encode_ordinary", False)):
            self.__dict__.pop(name, None)
            method = getattr(Encoding, name)
            if getattr(cls, name) is method:
                self.__dict__[name] = _core.FaceCall.tiktoken(self._enc, guarded, method.__get__(self, cls))

    @classmethod
    def _from_core(cls, name: str, pat_str: str, special_tokens: dict[str, int], core: _core.RankBpe,
                   explicit_n_vocab: Optional[int]) -> Encoding:
        self = cls.__new__(cls)
        self._setup(name, pat_str, special_tokens, core, explicit_n_vocab)
        return self

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    @functools.cached_property
    def _mergeable_ranks(self) -> dict[bytes, int]:
        """Token bytes -> rank (built from the engine on first use for a loaded encoding)."""
        return dict(self._core.tokens())

    # ====================
    # Encoding
    # ====================

    def _allowed(self, allowed_special: AbstractSet[str]) -> list[int]:
        ids = self._special_ids
        return [ids[s] for s in allowed_special if s in ids]

    def _resolve(self, allowed_special: _Specials,
                 disallowed_special: _Disallowed) -> tuple[AbstractSet[str], frozenset[str]]:
        if allowed_special == "all":
            allowed_special = self.special_tokens_set
        if disallowed_special == "all":
            disallowed_special = self._all_specials - allowed_special
        if not isinstance(disallowed_special, frozenset):
            disallowed_special = frozenset(disallowed_special)
        return allowed_special, disallowed_special

    def encode_ordinary(self, text: str) -> list[int]:
        """Ids of ``text`` with special tokens' text read as ordinary text (tiktoken's
        ``encode(text, disallowed_special=())``)."""
        got = self._plain(text, False)
        if got is not None:
            return got
        try:
            return self._enc.encode(text, None, [])
        except UnicodeEncodeError:
            return self._enc.encode(_no_surrogates(text), None, [])

    def encode(self, text: str, *, allowed_special: _Specials = _EMPTY,
               disallowed_special: _Disallowed = "all") -> list[int]:
        """Ids of ``text``. A special token's text becomes its id when allowed
        (``allowed_special="all"`` or a set); where it is disallowed (by default every special
        not allowed) it raises tiktoken's ``ValueError``; ``disallowed_special=()`` reads it as
        ordinary text."""
        if allowed_special is _EMPTY and disallowed_special == "all":
            # the default call, on a text without the specials' prefix: the engine alone
            got = self._plain(text)
            if got is not None:
                return got
        if not allowed_special and disallowed_special == "all":
            # the default call: every special disallowed, found by a precomputed search
            guard = self._guard
            if guard is not None:
                if not isinstance(text, str):
                    raise TextTypeError(f"text must be str, got {type(text).__name__}")
                if not guard[0] or guard[0] in text:
                    m = guard[1].search(text)
                    if m:
                        raise_disallowed_special_token(m.group())
            allowed: list[int] = []
        else:
            allowed_set, disallowed = self._resolve(allowed_special, disallowed_special)
            if disallowed:
                _check_disallowed(text, disallowed)
            allowed = self._allowed(allowed_set)
        try:
            return self._enc.encode(text, None, allowed)
        except UnicodeEncodeError:
            return self._enc.encode(_no_surrogates(text), None, allowed)

    def encode_to_numpy(self, text: str, *, allowed_special: _Specials = _EMPTY,
                        disallowed_special: _Disallowed = "all") -> Any:
        """:meth:`encode` as a numpy ``uint32`` array."""
        import numpy as np

        return np.array(self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special),
                        dtype=np.uint32)

    @staticmethod
    def _threads(num_threads: int) -> int:
        if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 1:
            raise OptionError(f"num_threads must be a whole number of at least 1, got {num_threads!r}")
        return min(num_threads, os.cpu_count() or 1)

    def _batch(self, texts: list[str], allowed: list[int], num_threads: int) -> list[list[int]]:
        n = self._threads(num_threads)
        # no cyclic collection while the result lists are made: they count toward its thresholds
        with gc_paused():
            try:
                return self._enc.encode_batch(texts, n, allowed)
            except UnicodeEncodeError:
                return self._enc.encode_batch([_no_surrogates(t) for t in texts], n, allowed)

    def encode_ordinary_batch(self, text: Sequence[str], *, num_threads: int = 8) -> list[list[int]]:
        """:meth:`encode_ordinary` of every text, on up to ``num_threads`` threads (at most one
        per core); the ids do not depend on the thread count."""
        if isinstance(text, str):
            raise InputError("encode_ordinary_batch takes a list of texts, not one str")
        return self._batch(text if type(text) is list else list(text), [], num_threads)

    def encode_batch(self, text: Sequence[str], *, num_threads: int = 8, allowed_special: _Specials = _EMPTY,
                     disallowed_special: _Disallowed = "all") -> list[list[int]]:
        """:meth:`encode` of every text, on up to ``num_threads`` threads (at most one per core)."""
        if isinstance(text, str):
            raise InputError("encode_batch takes a list of texts, not one str")
        texts = text if type(text) is list else list(text)
        allowed_set, disallowed = self._resolve(allowed_special, disallowed_special)
        if disallowed:
            for t in texts:
                _check_disallowed(t, disallowed)
        return self._batch(texts, self._allowed(allowed_set), num_threads)

    def _last_piece(self, text: str, allowed: list[int]) -> tuple[list[int], int]:
        """The ids of ``text`` and how many of them came from its last chunk (0 after a special
        token): tiktoken's bookkeeping for the tokens that more text could change."""
        tokens = self._enc.encode(text, None, allowed)
        # the text after the last allowed special token, found as the engine finds them
        chosen = set(allowed)
        surfaces = [s for s, i in self._special_ids.items() if i in chosen]
        pos = 0
        while surfaces:
            hits = [(at, -len(s)) for s in surfaces if (at := text.find(s, pos)) >= 0]
            if not hits:
                break
            at, neg = min(hits)
            pos = at - neg
        chunks = self._core.split(text[pos:])
        if not chunks:
            return tokens, 0
        return tokens, len(self._core.encode_piece(chunks[-1].encode("utf-8")))

    def _widen_to_spaces(self, tokens: list[int], n: int) -> int:
        """tiktoken's widening of the unstable tail over trailing whitespace tokens: a split in
        ``\\s*[\\r\\n]+`` may vanish when more text comes."""
        def all_space(i: int) -> bool:
            b = self._core.token(i)
            return b is not None and i not in self._special_token_values and all(c in b" \n\t" for c in b)

        if n > 0 and all_space(tokens[len(tokens) - n]):
            while n < len(tokens) and all_space(tokens[len(tokens) - n - 1]):
                n += 1
        return n

    @functools.cached_property
    def _sorted_token_bytes(self) -> list[bytes]:
        return sorted(b for b, _ in self._core.tokens())

    def encode_with_unstable(self, text: str, *, allowed_special: _Specials = _EMPTY,
                             disallowed_special: _Disallowed = "all") -> tuple[list[int], list[list[int]]]:
        """The stable ids of ``text`` and every id sequence that may complete its unstable tail
        (the last chunk, which more text could merge differently), as tiktoken defines them.
        The completions come in no particular order."""
        allowed_set, disallowed = self._resolve(allowed_special, disallowed_special)
        if disallowed:
            _check_disallowed(text, disallowed)
        tokens, n = self._last_piece(text, self._allowed(allowed_set))
        if n == 0:
            return tokens, []
        n = self._widen_to_spaces(tokens, n)
        unstable = self._core.decode_bytes(tokens[len(tokens) - n:])
        del tokens[len(tokens) - n:]
        completions: set[tuple[int, ...]] = set()
        if not unstable:
            return tokens, []
        sorted_bytes = self._sorted_token_bytes
        ranks = self._mergeable_ranks
        at = bisect_left(sorted_bytes, unstable)
        while at < len(sorted_bytes) and sorted_bytes[at].startswith(unstable):
            completions.add((ranks[sorted_bytes[at]],))
            at += 1
        for i in range(1, len(unstable)):
            prefix, suffix = unstable[:i], unstable[i:]
            at = bisect_left(sorted_bytes, suffix)
            while at < len(sorted_bytes) and sorted_bytes[at].startswith(suffix):
                possibility = prefix + sorted_bytes[at]
                try:
                    encoded = self.encode_ordinary(possibility.decode("utf-8"))
                except UnicodeDecodeError:
                    encoded = self._core.encode_piece(possibility)
                seq: list[int] = []
                length = 0
                for t in encoded:
                    seq.append(t)
                    length += len(self.decode_single_token_bytes(t))
                    if length >= len(unstable):
                        break
                completions.add(tuple(seq))
                at += 1
        if len(unstable) > 1:
            c, k = _last_char(unstable)
            if c is not None and len(unstable) > k and _is_white_space(c):
                completions.add(tuple(self._core.encode_piece(unstable[:-k]) + self._core.encode_piece(unstable[-k:])))
        return tokens, [list(s) for s in completions]

    def encode_single_token(self, text_or_bytes: Union[str, bytes]) -> int:
        """The id of one token's text or bytes (special tokens included); ``KeyError`` if it is
        not a token."""
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        r = self._core.rank(text_or_bytes)
        if r is not None:
            return r
        try:
            return self._special_tokens[text_or_bytes.decode("utf-8")]
        except (UnicodeDecodeError, KeyError):
            raise UnknownPieceError(text_or_bytes) from None

    def encode_single_piece(self, text_or_bytes: Union[str, bytes]) -> list[int]:
        """The ids of one chunk with no pre-split and no special tokens: its rank if it is a
        token, else its bytes merged by rank."""
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        return self._core.encode_piece(text_or_bytes)

    _encode_single_piece = encode_single_piece

    def _encode_only_native_bpe(self, text: str) -> list[int]:
        """tiktoken's check of its own split: the pattern's chunks, each through
        :meth:`encode_single_piece` (the same ids as :meth:`encode_ordinary`)."""
        return [i for chunk in self._core.split(text) for i in self._core.encode_piece(chunk.encode("utf-8"))]

    def _encode_bytes(self, text: bytes) -> list[int]:
        """Ids of bytes that may not be UTF-8: the valid prefix is encoded as text, and its last
        chunk is merged again with the bytes after it (as tiktoken does)."""
        try:
            return self.encode_ordinary(text.decode("utf-8"))
        except UnicodeDecodeError as e:
            valid = e.start
        tokens, n = self._last_piece(text[:valid].decode("utf-8"), [])
        n = self._widen_to_spaces(tokens, n)
        if tokens and n > 0:
            unstable = self._core.decode_bytes(tokens[len(tokens) - n:]) + text[valid:]
            del tokens[len(tokens) - n:]
        else:
            unstable = text[valid:]
        if unstable:
            tokens.extend(self._core.encode_piece(unstable))
        return tokens

    # ====================
    # Decoding
    # ====================

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The tokens' bytes joined (special tokens as their text)."""
        ids = tokens if type(tokens) is list else list(tokens)
        try:
            return self._core.decode_bytes(ids)
        except UnknownPieceError:
            bad = next(t for t in ids if self._core.token(t) is None)
            raise UnknownPieceError(f"Invalid token for decoding: {bad}") from None

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """The text of ``tokens``; bytes that are not UTF-8 are handled by ``errors`` (as in
        ``bytes.decode``: by default each becomes U+FFFD)."""
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one id (a special token's text included); ``KeyError`` if no token has it."""
        b = self._core.token(token)
        if b is None:
            raise UnknownPieceError(str(token))
        return b

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each id."""
        return [self.decode_single_token_bytes(t) for t in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The text and, per token, the index of the character where it starts: a token that
        starts inside a character (a UTF-8 continuation byte first) starts at that character.
        Bytes that are not UTF-8 raise ``UnicodeDecodeError``."""
        parts = self.decode_tokens_bytes(tokens)
        offsets = []
        chars = 0  # characters started so far: bytes that are not continuation bytes
        for b in parts:
            offsets.append(max(0, chars - (0x80 <= b[0] < 0xC0)) if b else chars)
            chars += sum(1 for c in b if not 0x80 <= c < 0xC0)
        return b"".join(parts).decode("utf-8", errors="strict"), offsets

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace",
                     num_threads: int = 8) -> list[str]:
        """:meth:`decode` of every list of ids."""
        self._threads(num_threads)
        return [self.decode(ids, errors=errors) for ids in batch]

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> list[bytes]:
        """:meth:`decode_bytes` of every list of ids."""
        self._threads(num_threads)
        return [self.decode_bytes(ids) for ids in batch]

    # ====================
    # Miscellaneous
    # ====================

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every ranked token (special tokens excluded), sorted."""
        return list(self._sorted_token_bytes)

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>`` (``KeyError`` if the encoding has none)."""
        return self._special_tokens[ENDOFTEXT]

    @functools.cached_property
    def special_tokens_set(self) -> set[str]:
        return set(self._special_tokens)

    def is_special_token(self, token: int) -> bool:
        if isinstance(token, bool) or not isinstance(token, int):
            raise InputError(f"is_special_token takes an int id, got {type(token).__name__}")
        return token in self._special_token_values

    @property
    def n_vocab(self) -> int:
        """One more than the largest id."""
        return self.max_token_value + 1

    # ====================
    # Pickling
    # ====================

    def __getstate__(self) -> object:
        # an encoding from get_encoding is pickled by name, as tiktoken does
        if self is _ENCODINGS.get(self.name):
            return self.name
        return {"name": self.name, "pat_str": self._pat_str, "mergeable_ranks": self._mergeable_ranks,
                "special_tokens": self._special_tokens}

    def __setstate__(self, value: object) -> None:
        if isinstance(value, str):
            self.__dict__ = get_encoding(value).__dict__
            return
        if not isinstance(value, dict):
            raise InputError(f"not a pickled Encoding: {type(value).__name__}")
        self.__init__(**value)  # type: ignore[misc]


# ====================
# The registry
# ====================

_lock = threading.RLock()
_ENCODINGS: dict[str, Encoding] = {}


def _load(name: str) -> Encoding:
    file, pattern_name, pat_str, specials, n_vocab = _OPENAI[name]
    ordered = sorted(specials.items(), key=lambda kv: kv[1])
    why = f"get_encoding({name!r})"
    if name == "gpt2":
        core = _core.RankBpe.from_ranks(list(_gpt2_ranks().items()), pattern_name, ordered)
    else:
        try:
            core = _core.RankBpe.from_rank_file(_find(file, why), pattern_name, ordered)
        except ModelFileError as e:
            raise ModelFileError(f"{file[0]}: {e}") from None
    return Encoding._from_core(name, pat_str, dict(specials), core, n_vocab)


def get_encoding(encoding_name: str) -> Encoding:
    """One of OpenAI's encodings by name (see :func:`list_encoding_names`), loaded once per
    process from a rank file on this machine (the module's docstring says where)."""
    if not isinstance(encoding_name, str):
        raise ValueError(f"Expected a string in get_encoding, got {type(encoding_name)}")
    enc = _ENCODINGS.get(encoding_name)
    if enc is not None:
        return enc
    with _lock:
        if encoding_name not in _ENCODINGS:
            if encoding_name not in _OPENAI:
                raise ValueError(f"Unknown encoding {encoding_name}.\nKnown encodings: {', '.join(_OPENAI)}")
            _ENCODINGS[encoding_name] = _load(encoding_name)
        return _ENCODINGS[encoding_name]


def list_encoding_names() -> list[str]:
    """The names :func:`get_encoding` knows."""
    return list(_OPENAI)


def encoding_name_for_model(model_name: str) -> str:
    """The encoding of an OpenAI model, by its name or a known prefix; ``KeyError`` otherwise."""
    if model_name in MODEL_TO_ENCODING:
        return MODEL_TO_ENCODING[model_name]
    for prefix, name in MODEL_PREFIX_TO_ENCODING.items():
        if model_name.startswith(prefix):
            return name
    raise KeyError(f"Could not automatically map {model_name} to a tokeniser. "
                   "Please use `tiktoken.get_encoding` to explicitly get the tokeniser you expect.") from None


def encoding_for_model(model_name: str) -> Encoding:
    """:func:`get_encoding` of :func:`encoding_name_for_model`."""
    return get_encoding(encoding_name_for_model(model_name))
