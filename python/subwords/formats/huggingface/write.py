"""Writing a subwords model as a Hugging Face ``tokenizer.json`` (or ``vocab.json`` +
``merges.txt``) that ``tokenizers`` encodes exactly as subwords does.

What maps, and how (ids are subwords' row numbers):

* BPE on ``bytes`` with ``pre_split="gpt2"`` -> byte-level BPE as GPT-2: ``ByteLevel``
  pre-tokenizer (no prefix space) and decoder. Also the only model ``vocab-merges`` can hold.
* BPE on ``front`` (with or without byte fallback) -> normalizer ``Strip`` + ``Replace(\\s+ -> ▁)``
  + ``Prepend(▁)``, ``Metaspace`` split (``split_at_marks``) or none, ``byte_fallback`` with the
  ``<0xNN>`` rows, decoder ``Replace``/``ByteFallback``/``Fuse``/``Strip`` as Llama's.
* BPE on ``end`` (no byte fallback) -> ``end_of_word_suffix``, ``WhitespaceSplit``, ``BPEDecoder``.
* BPE on ``continuation`` (no byte fallback) -> ``continuing_subword_prefix``, ``WhitespaceSplit``,
  ``WordPiece`` decoder without cleanup.
* WordPiece on ``continuation`` (trained, or ``subwords.bert``) -> ``WordPiece`` with
  ``WhitespaceSplit`` (or ``BertNormalizer`` + ``BertPreTokenizer`` for the BERT spelling), the
  ``[CLS] $A [SEP]`` template when the model has one.

* Unigram on ``front`` -> tokenizers' ``Unigram`` (scores = log-probabilities, ``unk_id``,
  ``byte_fallback``) with front BPE's normalizer, pre-tokenizer and decoder (``_unigram_json``).

Refused (``InputError`` naming the feature): word models, Unigram off ``front``, stream (superword)
merges, joints, ``bytes`` without the GPT-2 pre-split, byte fallback on ``end``/``continuation``,
WordPiece on ``end`` or with ``unknown`` other than ``"word"``, pieces whose printed forms clash.

Special rows (a WordPiece vocabulary's ``[CLS]``, ``[SEP]``, ``[PAD]``, ``[MASK]``, and the
``special_tokens`` a model was trained with) become special added tokens (user symbols: added
tokens with ``special: false``); the roles named by ``bos_token``/``eos_token``/``pad_token``
go to a ``tokenizer_config.json`` beside a file named ``tokenizer.json`` (:func:`special_roles`).
``tokenizers`` skips special added tokens when decoding; ``[UNK]`` stays a plain vocabulary
entry, so both libraries print it when decoding. Known differences, all from text that contains
a special surface: ``tokenizers`` always matches added tokens (subwords spells them as text by
default), and a whitespace-separated word ``[UNK]`` is the vocabulary entry ``[UNK]`` for
``tokenizers``' WordPiece but ordinary text for subwords.

Why the merge order carries over: ``tokenizers`` merges one pair at a time (lowest rank,
leftmost), subwords merges every occurrence of the lowest-ranked pair at once. The two agree
whenever a pair created by a merge never ranks below that merge, which holds for every model the
subwords trainer makes (a merge only joins rows made by earlier merges).
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..._io import PathLike, write_atomic
from ...errors import InputError

MARK_RUNS = {"Regex": "\\s+"}


def _refuse(feature: str) -> InputError:
    return InputError(f"cannot export to tokenizer.json: {feature}")


def _doc_of(tokenizer: object) -> dict[str, Any]:
    to_json = getattr(tokenizer, "to_json", None)
    if to_json is None:
        raise InputError(f"export takes a subwords Tokenizer, got {type(tokenizer).__name__}")
    doc: dict[str, Any] = json.loads(to_json())
    return doc


def _vocab(rows: list[list[str]]) -> dict[str, int]:
    vocab: dict[str, int] = {}
    for i, (piece, _kind) in enumerate(rows):
        if piece in vocab:
            raise _refuse(f"rows {vocab[piece]} and {i} both print as {piece!r}; a tokenizer.json vocab "
                          f"needs distinct tokens")
        vocab[piece] = i
    return vocab


def _bpe_model(doc: dict[str, Any], vocab: dict[str, int], **extra: Any) -> dict[str, Any]:
    model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
             "vocab": vocab, "merges": [[a, b] for a, b in doc["merges"]]}
    model.update(extra)
    return model


def _added_tokens(doc: dict[str, Any], specials: list[tuple[str, int]]) -> list[dict[str, Any]]:
    """The special rows as ``added_tokens``: special tokens (and a BERT vocabulary's ``[CLS]``
    ...) with ``special: true``; user symbols with ``special: false``. ``[UNK]`` stays a plain
    vocabulary entry."""
    user = set((doc.get("options") or {}).get("user_symbols") or ())
    return [{"id": i, "content": p, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": p not in user} for p, i in specials if p != "[UNK]"]


ROLES = ("bos_token", "eos_token", "pad_token", "unk_token")


def special_roles(tokenizer: object) -> dict[str, str]:
    """Which special token plays which role (``bos_token``, ``eos_token``, ``pad_token``,
    ``unk_token``), as the training options named them; ``unk_token`` is ``[UNK]`` whenever the
    model has that row. transformers reads these from ``tokenizer_config.json``."""
    doc = _doc_of(tokenizer)
    options = doc.get("options") or {}
    roles = {r: options[r] for r in ROLES if options.get(r)}
    if any(p == "[UNK]" and k == "special" for p, k in doc["rows"]):
        roles["unk_token"] = "[UNK]"
    return roles


def _front_pipeline(out: dict[str, Any], sp: dict[str, Any], mark: str) -> None:
    """The front mark's normalizer (strip, whitespace runs to the mark, the mark first),
    Metaspace split and decoder, shared by front BPE and Unigram."""
    out["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "Strip", "strip_left": True, "strip_right": True},
        {"type": "Replace", "pattern": MARK_RUNS, "content": mark},
        {"type": "Prepend", "prepend": mark}]}
    if sp.get("split_at_marks", True):
        out["pre_tokenizer"] = {"type": "Metaspace", "replacement": mark, "prepend_scheme": "never", "split": True}
    out["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": mark}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}


#: ``normalize=`` forms tokenizers has a normalizer for (``nmt_nfkc`` needs sentencepiece's
#: compiled charsmap, which subwords does not ship)
UNICODE_FORMS = ("nfc", "nfkc", "nfd", "nfkd")


def _check_portable_spelling(sp: dict[str, Any], kind: str) -> None:
    """Refuses the spelling options tokenizer.json cannot carry: ``nmt_nfkc`` and a pattern
    pre-split other than on byte-level BPE."""
    form = sp.get("normalize")
    if form not in (None, "none", *UNICODE_FORMS):
        raise _refuse(f"normalize={form!r} (tokenizers has no such normalizer without sentencepiece's compiled "
                      f"charsmap; train with normalize='nfkc' to export)")
    if sp.get("pattern") is not None and not (kind == "bpe" and sp["scheme"] == "bytes"):
        raise _refuse("a pattern pre-split outside byte-level BPE")


def _unicode_first(out: dict[str, Any], sp: dict[str, Any]) -> None:
    """Puts the model's Unicode normalization (``normalize=``) before every other normalizer,
    where subwords applies it."""
    form = sp.get("normalize")
    if form is None or form == "none":
        return
    first = {"type": str(form).upper()}
    current = out.get("normalizer")
    if current is None:
        out["normalizer"] = first
    elif current.get("type") == "Sequence":
        current["normalizers"].insert(0, first)
    else:
        out["normalizer"] = {"type": "Sequence", "normalizers": [first, current]}


def _onig_pattern(pattern: str) -> str:
    """``pattern`` as tokenizers' regex engine (Oniguruma, Ruby syntax) reads it the way
    fancy-regex does. The one difference these patterns meet: Ruby reads ``X{n,m}+`` as ``X{n,m}``
    repeated, not as a possessive interval (tiktoken's cl100k and o200k write ``\\p{N}{1,3}+``).
    At the end of a top-level alternative nothing follows that could backtrack into the interval,
    so there the ``+`` is dropped; anywhere else the pattern is refused."""
    out: list[str] = []
    depth, i, n = 0, 0, len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\":
            end = i + 2
            if pattern[i + 1:i + 3] in ("p{", "P{"):  # a property \p{L}: its braces are no interval
                close = pattern.find("}", i)
                end = n if close < 0 else close + 1
            out.append(pattern[i:end])
            i = end
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "}" and i + 1 < n and pattern[i + 1] == "+":
            after = pattern[i + 2:i + 3]
            if depth == 0 and after in ("", "|"):
                out.append(c)
                i += 2
                continue
            raise _refuse(f"the pattern's possessive interval at position {i + 1} (tokenizers' regex engine "
                          "reads `{n,m}+` as a repetition); write it without the `+`")
        out.append(c)
        i += 1
    return "".join(out)


#: GPT-2's pre-split expression, as tokenizers' ByteLevel runs it (subwords' scanner,
#: ``spelling/gpt2.rs``, is tested equal to it)
GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


def _digits_after(out: dict[str, Any], sp: dict[str, Any]) -> None:
    """``split_digits``: tokenizers' ``Digits`` (single digits) or a ``Split`` on ``\\p{N}{1,3}``
    (runs of up to three from the left), after the model's own pre-split and before
    ``ByteLevel``; both count a digit as ``char::is_numeric`` does, as subwords does."""
    n = sp.get("split_digits")
    if not n:
        return
    digits = ({"type": "Digits", "individual_digits": True} if n == 1 else
              {"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "Isolated", "invert": False})
    current = out.get("pre_tokenizer")
    if current is None:
        out["pre_tokenizer"] = digits
        return
    if current.get("type") == "ByteLevel" and current.get("use_regex"):
        # GPT-2's split first, then the digits, then the byte mapping (after it a digit outside
        # ASCII is no longer a digit): the split as its own step, ByteLevel without its regex
        current = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": GPT2_PATTERN}, "behavior": "Isolated", "invert": False},
            {**current, "use_regex": False}]}
    steps = current["pretokenizers"] if current.get("type") == "Sequence" else [current]
    at = len(steps) - 1 if steps[-1].get("type") == "ByteLevel" else len(steps)
    out["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [*steps[:at], digits, *steps[at:]]}


def tokenizer_json(tokenizer: object) -> dict[str, Any]:
    """The ``tokenizer.json`` document of a subwords model (refuses what it cannot express)."""
    doc = _doc_of(tokenizer)
    kind = doc["model"]
    sp = doc["spelling"]
    scheme = sp["scheme"]
    if kind not in ("bpe", "wordpiece", "unigram"):
        raise _refuse(f"a {kind} model (BPE, WordPiece and Unigram export)")
    _check_portable_spelling(sp, kind)
    out = _unigram_json(doc) if kind == "unigram" else _merge_model_json(doc)
    _unicode_first(out, sp)
    _digits_after(out, sp)
    return out


def _merge_model_json(doc: dict[str, Any]) -> dict[str, Any]:
    """``tokenizer_json`` for BPE and WordPiece."""
    kind = doc["model"]
    sp = doc["spelling"]
    scheme = sp["scheme"]
    if doc.get("stream_merges_from") is not None:
        raise _refuse("stream (superword) merges: tokenizers merges within pre-tokenized words only")
    if doc.get("joints"):
        raise _refuse("pre-split joints")
    rows = doc["rows"]
    for i, row in enumerate(rows):
        if len(row) == 3:  # ["##word", "learned", "word_start"]: see docs/FORMAT.md
            raise _refuse(
                f"the row {row[0]!r} (id {i}) starts a word although it begins with {sp.get('mark')!r}; "
                "tokenizers' vocab is keyed by the string, and its WordPiece model and decoder read every "
                f"token that begins with {sp.get('mark')!r} as a continuation, so this row cannot be written. "
                "Train with pre_split='bert' (punctuation stands alone) or another mark="
            )
    vocab = _vocab(rows)
    specials = [(p, i) for i, (p, k) in enumerate(rows) if k == "special"]
    out: dict[str, Any] = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
                           "normalizer": None, "pre_tokenizer": None, "post_processor": None, "decoder": None}
    mark = sp.get("mark") or ""
    if kind == "bpe":
        if sp.get("clean_text") or sp.get("lowercase") or sp.get("strip_accents"):
            raise _refuse("BPE with text normalization")
        if scheme == "bytes":
            if sp.get("pattern") is not None:
                # every match and every stretch between matches is a unit: Split's Isolated
                out["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
                    {"type": "Split", "pattern": {"Regex": _onig_pattern(sp["pattern"])}, "behavior": "Isolated",
                     "invert": False},
                    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
            elif sp.get("pre_split") != "gpt2":
                raise _refuse("the bytes spelling without pre_split='gpt2' or a pattern (tokenizers has no such "
                              "pre-tokenizer)")
            else:
                out["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                        "use_regex": True}
            out["decoder"] = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
            out["model"] = _bpe_model(doc, vocab)
        elif scheme == "front":
            _front_pipeline(out, sp, mark)
            out["model"] = _bpe_model(doc, vocab, unk_token="[UNK]", byte_fallback=bool(sp.get("byte_fallback")))
        elif scheme in ("end", "continuation"):
            if sp.get("byte_fallback"):
                raise _refuse(f"byte fallback on the {scheme} spelling (tokenizers would spell the mark in bytes too)")
            if sp.get("pre_split") is not None:
                raise _refuse(f"pre_split={sp.get('pre_split')!r} on BPE")
            out["pre_tokenizer"] = {"type": "WhitespaceSplit"}
            if scheme == "end":
                out["model"] = _bpe_model(doc, vocab, unk_token="[UNK]", end_of_word_suffix=mark)
                out["decoder"] = {"type": "BPEDecoder", "suffix": mark}
            else:
                out["model"] = _bpe_model(doc, vocab, unk_token="[UNK]", continuing_subword_prefix=mark)
                out["decoder"] = {"type": "WordPiece", "prefix": mark, "cleanup": False}
        else:
            raise _refuse(f"the {scheme} spelling")
        out["added_tokens"] = _added_tokens(doc, specials)
        return out
    # WordPiece
    if scheme != "continuation":
        raise _refuse(f"WordPiece on the {scheme} spelling (tokenizers' WordPiece marks continuations)")
    if sp.get("byte_fallback"):
        raise _refuse("WordPiece with byte fallback")
    options = doc.get("options") or {}
    unknown = options.get("unknown") or "word"
    if unknown != "word":
        raise _refuse(f"unknown={unknown!r} (tokenizers turns an unfinishable word into one [UNK])")
    if options:
        most = options.get("max_word_length")
        most = 1 << 40 if most is None else most
    else:
        most = 100
    if "[UNK]" not in vocab:
        raise _refuse("a WordPiece model without an [UNK] row")
    if sp.get("pre_split") == "bert":
        out["normalizer"] = {"type": "BertNormalizer", "clean_text": bool(sp.get("clean_text")),
                             "handle_chinese_chars": True, "strip_accents": bool(sp.get("strip_accents")),
                             "lowercase": bool(sp.get("lowercase"))}
        out["pre_tokenizer"] = {"type": "BertPreTokenizer"}
    elif sp.get("pre_split") is None and not (sp.get("clean_text") or sp.get("lowercase") or sp.get("strip_accents")):
        out["pre_tokenizer"] = {"type": "WhitespaceSplit"}
    else:
        raise _refuse("WordPiece with normalization but no BERT pre-split")
    out["model"] = {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": mark,
                    "max_input_chars_per_word": most, "vocab": vocab}
    out["decoder"] = {"type": "WordPiece", "prefix": mark, "cleanup": False}
    out["added_tokens"] = _added_tokens(doc, specials)
    template = doc.get("template")
    if template:
        cls, sep = template["cls"], template["sep"]
        out["post_processor"] = {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": cls, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": sep, "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": cls, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": sep, "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": sep, "type_id": 1}}],
            "special_tokens": {t: {"id": t, "ids": [vocab[t]], "tokens": [t]} for t in (cls, sep)}}
    return out


# tokenizers scores an unknown character as its lowest score minus 10, and sums scores in float
# from the left: a symbol EM left with a log-probability like -8e29 would make every sum after
# an unknown character that large, and the pieces after it would all tie. No spelling picks a
# piece this unlikely over another, so it is written as this score instead.
LOWEST_SCORE = -1e6


def _unigram_json(doc: dict[str, Any]) -> dict[str, Any]:
    """A Unigram model on the ``front`` spelling as tokenizers' ``Unigram`` model: the same
    normalizer, ``Metaspace`` split and decoder as front BPE (above), every row's natural-log
    probability as its score, ``unk_id`` the ``[UNK]`` row, ``byte_fallback`` with the
    ``<0xNN>`` rows.

    Log-probabilities below ``LOWEST_SCORE`` are written as it. Rows without a probability
    (``[UNK]``, the byte rows, other special rows) get a score far
    below every piece's (the lowest probability minus 1000), so that ``tokenizers``' Viterbi,
    which puts every vocabulary entry in its trie, never prefers them to real pieces for text
    that spells ``<0x41>``; it never uses such a score otherwise (a byte row or ``[UNK]`` is only
    reached through an unknown character, whose lattice node is the only path through it). The
    special rows, ``[UNK]`` included, are special added tokens, as a converted T5 or Llama file
    has them.

    Where the two can differ (docs/HANDOFF.md): ``tokenizers`` fuses a run of unknown characters
    into one ``[UNK]`` (subwords gives one per character; with byte fallback both give the
    bytes), and it breaks exact Viterbi ties its own way (forward: the first best path into each
    position wins, so the same pieces can come in another order), where subwords breaks ties by
    fewer pieces then the longer piece first (DESIGN §2)."""
    sp = doc["spelling"]
    if sp["scheme"] != "front":
        raise _refuse(f"a Unigram model on the {sp['scheme']} spelling (tokenizers' Unigram files use the front "
                      "mark, as SentencePiece does)")
    if sp.get("clean_text") or sp.get("lowercase") or sp.get("strip_accents") or sp.get("pre_split") is not None:
        raise _refuse("Unigram with text normalization or a pre-split")
    rows = doc["rows"]
    vocab = _vocab(rows)
    if "[UNK]" not in vocab:
        raise _refuse("a Unigram model without an [UNK] row")
    log_probs = doc.get("log_probs") or []
    known = [max(float(lp), LOWEST_SCORE) for lp in log_probs if lp is not None]
    floor = (min(known) if known else 0.0) - 1000.0
    scores = [floor if i >= len(log_probs) or log_probs[i] is None else max(float(log_probs[i]), LOWEST_SCORE)
              for i in range(len(rows))]
    mark = sp.get("mark") or ""
    out: dict[str, Any] = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
                           "normalizer": None, "pre_tokenizer": None, "post_processor": None, "decoder": None}
    _front_pipeline(out, sp, mark)
    out["model"] = {"type": "Unigram", "unk_id": vocab["[UNK]"], "byte_fallback": bool(sp.get("byte_fallback")),
                    "vocab": [[p, sc] for (p, _k), sc in zip(rows, scores)]}
    out["added_tokens"] = [{"id": i, "content": p, "single_word": False, "lstrip": False, "rstrip": False,
                            "normalized": False, "special": True} for i, (p, k) in enumerate(rows) if k == "special"]
    return out


def export(tokenizer: object, path: PathLike, format: str = "hf") -> None:
    """``format="hf"``: ``path`` is the ``tokenizer.json`` to write (a folder gets
    ``tokenizer.json`` inside). ``format="vocab-merges"``: ``path`` is a folder (created if
    needed) that gets ``vocab.json`` and ``merges.txt``; only byte-level GPT-2 style BPE fits."""
    p = os.fspath(path)
    doc = tokenizer_json(tokenizer)
    if format == "hf":
        if os.path.isdir(p):
            p = os.path.join(p, "tokenizer.json")
        options = _doc_of(tokenizer).get("options") or {}
        roles = special_roles(tokenizer) if any(options.get(r) for r in ROLES) else {}
        write_atomic(p, json.dumps(doc, ensure_ascii=False, indent=2), "tokenizer.json")
        if roles and os.path.basename(p) == "tokenizer.json":
            # the roles have no place in tokenizer.json; transformers reads them from here
            config = {"tokenizer_class": "PreTrainedTokenizerFast", **roles}
            write_atomic(os.path.join(os.path.dirname(p), "tokenizer_config.json"),
                         json.dumps(config, ensure_ascii=False, indent=2), "tokenizer_config.json")
        return
    if format != "vocab-merges":
        raise InputError(f"format={format!r}: this module writes 'hf' and 'vocab-merges'")
    if (doc.get("pre_tokenizer") or {}).get("type") != "ByteLevel":
        raise _refuse("vocab.json + merges.txt hold byte-level BPE only (train with spelling='bytes', "
                      "pre_split='gpt2'); use format='hf'")
    os.makedirs(p, exist_ok=True)
    model = doc["model"]
    write_atomic(os.path.join(p, "vocab.json"), json.dumps(model["vocab"], ensure_ascii=False), "vocab.json")
    write_atomic(os.path.join(p, "merges.txt"), "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in model["merges"]), "merges.txt")
