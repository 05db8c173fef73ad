"""Writing a subwords BPE model (``end`` spelling) as a subword-nmt codes file (the reading side
is ``read.py``; the module docstring there says what apply_bpe does)."""

from __future__ import annotations

from typing import Any

from ..._io import write_atomic
from ...errors import InputError
from .._foreign import PathLike

#: subword-nmt's end-of-word mark, fixed
END = "</w>"


def codes_text(pairs: list[tuple[str, str]], version: tuple[int, int] = (0, 2)) -> str:
    """A codes file's text: the version line, then one merge per line."""
    return f"#version: {version[0]}.{version[1]}\n" + "".join(f"{a} {b}\n" for a, b in pairs)


def export(tokenizer: Any, path: PathLike, format: str = "subword-nmt") -> None:
    """Writes a subwords BPE model on the ``end`` spelling as a version-0.2 codes file that
    ``apply_bpe`` reads and segments as subwords does (on text whose words are separated by
    single spaces; subword-nmt splits on nothing else). A :class:`SubwordNmt` writes its codes.

    Refused (InputError naming the feature): other models and spellings, another end mark than
    ``</w>``, byte fallback, two-stage (stream) merges, joints, lowercasing/accent stripping/text
    cleaning, and a model with no merges (subword-nmt refuses an empty codes file)."""
    if format != "subword-nmt":
        raise InputError(f"subword_nmt.export writes format='subword-nmt', not {format!r}")
    from ..._api import SubwordsTokenizer

    if getattr(tokenizer, "format", None) == "subword-nmt":  # codes read by read.SubwordNmt
        tokenizer.save_codes(path)
        return
    if not isinstance(tokenizer, SubwordsTokenizer):
        raise InputError(f"export to subword-nmt takes a subwords Tokenizer (BPE, end spelling), got {type(tokenizer).__name__}")
    _check_exportable(tokenizer)
    write_atomic(path, codes_text(list(tokenizer.merges)), "subword-nmt codes file")


def _check_exportable(tok: Any) -> None:
    def refuse(feature: str) -> None:
        raise InputError(f"cannot write this model as subword-nmt codes: {feature}")

    if tok.model != "bpe":
        refuse(f"it is a {tok.model} model; codes files hold BPE merges only")
    s = tok.spelling
    if s.get("scheme") != "end":
        refuse(f"it uses the {s.get('scheme')} spelling; subword-nmt marks word ends with </w> (train with spelling='end')")
    if s.get("mark") != END:
        refuse(f"its end mark is {s.get('mark')!r}; subword-nmt's is fixed to '</w>'")
    if s.get("byte_fallback"):
        refuse("byte fallback; subword-nmt has no byte rows")
    for flag in ("lowercase", "strip_accents", "clean_text"):
        if s.get(flag):
            refuse(f"{flag}=True; subword-nmt applies merges to the text as it is")
    if s.get("pre_split"):
        refuse(f"pre_split={s.get('pre_split')!r}; subword-nmt splits on spaces only")
    extra = [p for p, k in zip(tok.rows, tok.kinds) if k == "special" and p != "[UNK]"]
    if extra:
        refuse(f"it has {len(extra)} special token(s) ({extra[0]!r}, ...); a codes file holds merges only, "
               "with no place for special tokens. Export to tokenizer.json or vocab-txt instead")
    doc_text = tok.to_json()
    import json

    doc = json.loads(doc_text)
    stream = doc.get("stream_merges_from")
    if stream is not None and stream < len(doc.get("merges", [])):
        refuse("two-stage (superword) merges across words; subword-nmt merges within words only")
    if doc.get("joints"):
        refuse("joints (words cut into parts before merging); subword-nmt has none")
    if not tok.merges:
        refuse("it has no merges, and subword-nmt refuses a codes file without merges")
    for a, b in tok.merges:
        for part in (a, b):
            if " " in part or "\n" in part or "\r" in part:
                refuse(f"the piece {part!r} holds a space or line break, which a codes line cannot")
