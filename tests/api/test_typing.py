"""The package is typed: ``mypy --strict`` is clean on it and on a user's script, and the stubs
of the Rust binding (``_core.pyi``) match the built module (``mypy.stubtest``).

mypy runs with ``--cache-dir`` set to the null device, so nothing is written outside ``tmp_path``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# What a user writes: train (with TrainOptions and with keywords), save, load, encode every way,
# then export and read back, using the Tokenizer protocol for both. Every value is used so that a
# wrong type anywhere would be an error.
USER_SCRIPT = '''
from __future__ import annotations

import sys
from pathlib import Path

import subwords
import subwords.formats


def ids_of(tok: subwords.Tokenizer, text: str) -> list[int]:
    # any tokenizer, ours or a loaded file, through the protocol alone
    ids: list[int] = tok.encode(text, allowed_special="all", add_special_tokens=False)
    assert tok.encode_batch([text], threads=1, add_special_tokens=False) == [ids]
    pieces: list[str] = tok.encode_pieces(text, add_special_tokens=False)
    spans: list[tuple[int, int, int]] = tok.encode_with_offsets(text)
    back: str = tok.decode_pieces(pieces)
    assert tok.decode(ids) == back and len(spans) == len(ids)
    assert [tok.piece_to_id(tok.id_to_piece(i)) for i in ids] == ids and tok.vocab_size > max(ids)
    specials: dict[str, int] = tok.special_tokens
    return ids + sorted(specials.values())[:0]


def main(folder: Path) -> None:
    texts = ["low lower newest widest", "the lowest of the new", "widest newer lower"]
    options = subwords.TrainOptions(vocab_size=40, model="bpe", spelling="end")
    tok: subwords.SubwordsTokenizer = subwords.train(texts, options)
    same = subwords.train(texts, vocab_size=40)
    saved = tok.train_options
    assert same == tok and saved is not None and saved.vocab_size == 40
    path = folder / "model.json"
    tok.save(path)
    again: subwords.Tokenizer = subwords.load(path)
    ids: list[int] = again.encode("lowest newer")
    batch: list[list[int]] = again.encode_batch(texts, threads=2)
    text: str = again.decode(ids)
    offsets: list[tuple[int, int, int]] = again.encode_with_offsets("lowest newer")
    starts = [start for _, start, _ in offsets]
    pieces: list[str] = again.encode_pieces("lowest")
    subwords.formats.export(tok, folder / "tokenizer.json", "hf")
    foreign: subwords.Tokenizer = subwords.load(folder / "tokenizer.json")
    other: list[int] = ids_of(foreign, "lowest newer")
    unigram = subwords.train(texts, model="unigram", vocab_size=30)
    best: list[tuple[list[str], float]] = unigram.nbest("lowest", 2) if isinstance(unigram, subwords.UnigramTokenizer) else []
    try:
        subwords.load(folder / "missing.json")
    except subwords.FileError as e:
        missing: OSError = e
    print(len(ids), len(batch), text.upper(), sum(starts), pieces, other == ids, foreign.vocab_size + 1,
          ids_of(again, "lowest") == ids_of(tok, "lowest"), len(best), missing.errno)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
'''


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def mypy(*args: str, cwd: Path) -> None:
    r = run("-m", "mypy", "--strict", "--cache-dir", os.devnull, *args, cwd=cwd)
    if r.returncode != 0:
        pytest.fail(f"mypy --strict {' '.join(args)} (exit {r.returncode}):\n{r.stdout}{r.stderr}", pytrace=False)


def test_package_is_strictly_typed(tmp_path: Path) -> None:
    # from the repository, so pyproject.toml's [tool.mypy] applies (files, python_version)
    mypy("--config-file", str(ROOT / "pyproject.toml"), cwd=ROOT)


def test_user_script_is_strictly_typed(tmp_path: Path) -> None:
    script = tmp_path / "user.py"
    script.write_text(textwrap.dedent(USER_SCRIPT), encoding="utf-8")
    # the script runs (so what it checks is a real use) ...
    r = run(str(script), str(tmp_path), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "LOWEST NEWER" in r.stdout
    # ... and type-checks as the installed package (py.typed), not as the source tree
    mypy(str(script), cwd=tmp_path)


def test_core_stubs_match_the_module(tmp_path: Path) -> None:
    r = run("-m", "mypy.stubtest", "subwords._core", "--mypy-config-file", str(ROOT / "pyproject.toml"),
            cwd=tmp_path)
    if r.returncode != 0:
        pytest.fail(f"stubtest subwords._core (exit {r.returncode}):\n{r.stdout}{r.stderr}", pytrace=False)
