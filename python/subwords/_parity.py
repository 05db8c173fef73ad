"""Parity-aware BPE's input (docs/METHODS.md): one input per language, or JSON lines whose
records name their language, counted language by language and trained together by the core
(``learners/merge/parity.rs``)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Optional

from . import _core
from ._options import TrainOptions, resolved
from .errors import InputError, OptionError


def train_parity(data: Any, options: TrainOptions, languages: Optional[Mapping[str, Any]],
                 feed: Callable[..., None], threads: Callable[[Optional[int]], int]) -> Any:
    """The core's model trained from ``languages`` (name -> any input ``train`` takes) or from
    ``data``'s JSON lines split by ``options.language_field``; ``feed`` and ``threads`` are
    ``train``'s own (feeding an input to a trainer, the thread count). Everything is checked
    before any text is counted."""
    if not options.parity:
        raise OptionError("languages= gives parity-aware BPE its inputs: add parity=True (CLI: --parity)")
    if options.counts:
        raise OptionError("parity does not take counts=True yet: give each language's texts")
    if options.joints is not None:
        raise OptionError("parity does not take joints yet: they cut units after counting, outside the languages' tables")
    field = options.language_field
    if languages is not None and field is not None:
        raise OptionError("give the languages one way: languages= (one input each) or language_field= (JSON lines), not both")
    if languages is None and field is None:
        raise OptionError("parity=True needs one input per language: languages={'en': ..., 'de': ...} "
                          "(CLI: --language en=FILE, repeated), or JSON lines with language_field= (CLI: --language-field)")
    if languages is not None:
        if data is not None:
            raise OptionError("with languages=, the texts are its values: leave the first argument out (or None)")
        if not isinstance(languages, Mapping):
            raise OptionError(f"languages must be a mapping name -> input, got {type(languages).__name__}")
        named = dict(languages)
    else:
        if not isinstance(field, str) or not field:
            raise OptionError(f"language_field must be a non-empty field name, got {field!r}")
        named = _split_jsonl(data, field)
    for name in named:
        if not isinstance(name, str) or not name or name.strip() != name:
            raise OptionError(f"a language name is a non-empty str without surrounding spaces, got {name!r}")
    if len(named) < 2:
        raise OptionError(f"parity-aware BPE balances languages against each other: give two or more, got {len(named)} "
                          f"({', '.join(map(repr, named)) or 'none'})")
    for name, value in named.items():
        if value is None or isinstance(value, (str, bytes)):
            raise OptionError(f"languages[{name!r}]: give texts, a pathlib.Path or a list of them, not {type(value).__name__}")
        for p in ([value] if isinstance(value, os.PathLike) else value if isinstance(value, (list, tuple)) else []):
            if isinstance(p, os.PathLike):
                if not os.path.isfile(p):
                    raise OptionError(f"languages[{name!r}]: {os.fspath(p)}: no such file")
                if os.path.getsize(p) == 0:
                    raise OptionError(f"languages[{name!r}]: {os.fspath(p)} is empty: every language needs text to measure")
    core = resolved(options, list(named))
    n_threads = threads(options.threads)
    trainers = []
    for name, value in named.items():
        t = _core.Trainer(core, n_threads)
        feed(t, value, counts=False, input_errors=options.input_errors)
        trainers.append((name, t))
    return _core.parity_train(trainers)


def _split_jsonl(data: Any, field: str) -> dict[str, list[str]]:
    """The texts of JSON lines files (``text`` field) by their ``field``, languages in order met."""
    paths = [data] if isinstance(data, (os.PathLike, str)) else list(data) if isinstance(data, Iterable) else None
    if not paths or not all(isinstance(p, (os.PathLike, str)) for p in paths):
        raise OptionError("language_field reads JSON lines files: give their paths as the first argument")
    out: dict[str, list[str]] = {}
    for p in paths:
        path = os.fspath(p)
        if not os.path.isfile(path):
            raise OptionError(f"{path}: no such file")
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as e:
                    raise InputError(f"{path}:{n}: not JSON ({e.msg})") from None
                if not isinstance(record, dict) or field not in record:
                    shown = ", ".join(sorted(map(repr, record))[:10]) if isinstance(record, dict) else "none"
                    raise OptionError(f"{path}:{n}: no field {field!r} naming the language (the record has the fields {shown}); "
                                      "name it with language_field= (CLI: --language-field)")
                lang, text = record[field], record.get("text")
                if not isinstance(lang, str) or not lang:
                    raise InputError(f"{path}:{n}: the field {field!r} holds {lang!r}, not a language name")
                if not isinstance(text, str):
                    raise InputError(f"{path}:{n}: no string field 'text' to learn from")
                out.setdefault(lang, []).append(text)
    return out
