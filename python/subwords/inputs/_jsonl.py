"""JSON lines: one JSON object per line, the text at a dotted path (``meta.text`` is
``record["meta"]["text"]``). A blank line is no record; a line that is not JSON, lacks the
field, or holds something other than a string there is a bad record, named by file and line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Optional

from ._records import Records, Tally, lines


def parse_path(field: str) -> list[str]:
    """``"meta.text"`` -> ``["meta", "text"]``; an empty part is refused by the caller."""
    return field.split(".")


def lookup(record: Any, path: list[str]) -> tuple[Optional[str], str]:
    """The string at ``path`` in ``record``, or None and why not."""
    value = record
    for k, key in enumerate(path):
        if not isinstance(value, dict):
            where = ".".join(path[:k]) or "the record"
            return None, f"{where} is a JSON {_kind(value)}, not an object with the field {'.'.join(path)!r}"
        if key not in value:
            shown = ", ".join(sorted(map(repr, value))[:10]) or "none"
            where = f"{'.'.join(path[:k])!r}" if k else "the record"
            return None, f"no field {'.'.join(path)!r} ({where} has the fields {shown}); name the text's field with text_field= (CLI: --text-field)"
        value = value[key]
    if not isinstance(value, str):
        return None, f"the field {'.'.join(path)!r} holds a JSON {_kind(value)}, not a string"
    return value, ""


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def _has_surrogate(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def records(path: str, compression: Optional[str], errors: str, field: list[str], tally: Tally) -> Iterator[Records]:
    # json.loads is most of the time here: its raw_decode is called directly (loads wraps it in
    # two regex matches per line), falling back to loads for its exact message on anything odd
    raw, loads = json.JSONDecoder().raw_decode, json.loads
    single = field[0] if len(field) == 1 else None
    for first, chunk in lines(path, compression, errors):
        out: Records = []
        for k, line in enumerate(chunk):
            try:
                record, end = raw(line)
                if end != len(line) and not line[end:].isspace():
                    raise ValueError("extra data")
            except ValueError:
                if not line.strip():
                    out.append(None)  # no record (encode writes no line for it), though it has a position
                    continue
                try:
                    record = loads(line)
                except ValueError as e:
                    tally.bad(f"{path}: line {first + k}", f"not JSON ({e})")
                    out.append(None)
                    continue
                except RecursionError:
                    tally.bad(f"{path}: line {first + k}", "JSON nested too deep to read")
                    out.append(None)
                    continue
            except RecursionError:
                tally.bad(f"{path}: line {first + k}", "JSON nested too deep to read")
                out.append(None)
                continue
            text = record.get(single) if single is not None and type(record) is dict else None
            why = ""
            if type(text) is not str:
                text, why = lookup(record, field)
            # a JSON escape (\ud800) can spell a lone surrogate, which is no text
            if text is not None and "\\u" in line and _has_surrogate(text):
                text, why = None, "the text holds a lone surrogate (a \\uD800-\\uDFFF escape), which is not text"
            if text is None:
                tally.bad(f"{path}: line {first + k}", why)
            out.append(text)
        yield out
