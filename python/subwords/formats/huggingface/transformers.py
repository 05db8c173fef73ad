"""The hand-off to 🤗 transformers: a subwords model as a ``PreTrainedTokenizerFast``, built
from the same ``tokenizer.json`` document :func:`..write.tokenizer_json` writes, with the
special-token roles set (``tokenizer.unk_token``, ``bos_token``, ... and their ids).

Which special row plays which role, first match wins:

1. the training options' ``<role>_token`` (``bos_token``, ``eos_token``, ``pad_token``,
   ``unk_token``, ``cls_token``, ``sep_token``, ``mask_token``) when the model file has them;
2. a BERT template's ``[CLS]``/``[SEP]`` (cls, sep);
3. the surface of a special row, as the usual recipes spell them: ``[UNK]``/``<unk>`` (unk),
   ``[CLS]`` (cls), ``[SEP]`` (sep), ``[PAD]``/``<pad>`` (pad), ``[MASK]``/``<mask>`` (mask),
   ``<s>``/``<|begin_of_text|>`` (bos), ``</s>``/``<|endoftext|>``/``<|end_of_text|>`` (eos).

transformers is an optional dependency (``pip install 'subwords[transformers]'``) and needs no
torch for tokenizers.
"""

from __future__ import annotations

import json
from typing import Any

from ...errors import SubwordsError
from .write import _doc_of, tokenizer_json

ROLES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")

BY_SURFACE = {
    "[UNK]": "unk_token", "<unk>": "unk_token",
    "[CLS]": "cls_token", "[SEP]": "sep_token",
    "[PAD]": "pad_token", "<pad>": "pad_token",
    "[MASK]": "mask_token", "<mask>": "mask_token",
    "<s>": "bos_token", "<|begin_of_text|>": "bos_token",
    "</s>": "eos_token", "<|endoftext|>": "eos_token", "<|end_of_text|>": "eos_token",
}


def special_roles_of(tokenizer: object) -> dict[str, str]:
    """Role (``"bos_token"``, ...) -> the special row that plays it (see the module's rules)."""
    doc = _doc_of(tokenizer)
    specials = [p for p, k in doc["rows"] if k == "special"]
    roles: dict[str, str] = {}
    options = doc.get("options") or {}
    for role in ROLES:
        value = options.get(role)
        if isinstance(value, str) and value in specials:
            roles[role] = value
    template = doc.get("template")
    if template:
        roles.setdefault("cls_token", template["cls"])
        roles.setdefault("sep_token", template["sep"])
    for piece in specials:
        found = BY_SURFACE.get(piece)
        if found is not None and found not in roles:
            roles[found] = piece
    return roles


def to_transformers(tokenizer: object) -> Any:
    """``tokenizer`` (a subwords model) as a ``transformers.PreTrainedTokenizerFast``."""
    try:
        from tokenizers import Tokenizer as HfTokenizer
        from transformers import PreTrainedTokenizerFast
    except ImportError:
        raise SubwordsError("to_transformers() needs transformers: pip install 'subwords[transformers]' "
                            "(it needs no torch)") from None
    doc = tokenizer_json(tokenizer)
    inner = HfTokenizer.from_str(json.dumps(doc, ensure_ascii=False))
    return PreTrainedTokenizerFast(tokenizer_object=inner, **special_roles_of(tokenizer))
