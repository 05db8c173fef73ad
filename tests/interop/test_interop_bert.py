"""A BERT vocab.txt used as it is: subwords.bert against tokenizers' own BERT pipeline.

The vocabulary is trained by tokenizers' BertWordPieceTokenizer on text built here (the Python
standard library's sources, plus sentences in several scripts made from Unicode character
names), then both libraries encode the same held-out lines and must give identical ids.
"""

from __future__ import annotations

import random
import sysconfig
import unicodedata
from pathlib import Path

import pytest

import subwords
from subwords import ModelFileError

import tokenizers


def _scripts(rnd: random.Random, n: int) -> list[str]:
    """Sentences in Greek, Cyrillic, accented Latin, CJK and Hangul, with punctuation."""
    ranges = [(0x3B1, 0x3C9), (0x430, 0x44F), (0xE0, 0xFF), (0x4E00, 0x4E80), (0xAC00, 0xAC40), (0x41, 0x5A)]
    out = []
    for _ in range(n):
        words = []
        for _ in range(rnd.randint(3, 12)):
            lo, hi = rnd.choice(ranges)
            w = "".join(chr(rnd.randint(lo, hi)) for _ in range(rnd.randint(1, 8)))
            words.append(unicodedata.normalize(rnd.choice(["NFC", "NFD"]), w))
        out.append(" ".join(words) + rnd.choice([".", "!", "?", ",", " --", "…"]))
    return out


@pytest.fixture(scope="module")
def corpus() -> tuple[list[str], list[str]]:
    root = Path(sysconfig.get_paths()["stdlib"])
    lines: list[str] = []
    for f in sorted(root.glob("*.py"))[:60]:
        lines += [l for l in f.read_text(encoding="utf-8", errors="replace").splitlines() if l.strip()]
    rnd = random.Random(5)
    lines += _scripts(rnd, 3000)
    rnd.shuffle(lines)
    return lines[: len(lines) * 9 // 10], lines[len(lines) * 9 // 10 :]


@pytest.mark.parametrize("lowercase", [True, False], ids=["uncased", "cased"])
def test_same_ids_as_tokenizers_bert(tmp_path: Path, corpus, lowercase: bool):
    train, held = corpus
    hf = tokenizers.BertWordPieceTokenizer(lowercase=lowercase)
    hf.train_from_iterator(train, vocab_size=3000, show_progress=False)
    hf.save_model(str(tmp_path))
    vocab = tmp_path / "vocab.txt"
    ours = subwords.bert(vocab, lowercase=lowercase)
    theirs = tokenizers.BertWordPieceTokenizer(str(vocab), lowercase=lowercase)
    for text in held:
        assert ours.encode(text) == theirs.encode(text).ids, text
    for text in held[::5]:
        assert ours.encode_pieces(text) == theirs.encode(text).tokens, text  # the pieces too
    pairs = list(zip(held[::2], held[1::2]))[:200]
    for a, b in pairs:
        assert ours.encode(a, pair=b) == theirs.encode(a, b).ids
    assert ours.encode_batch(held[:100]) == [e.ids for e in theirs.encode_batch(held[:100])]


def test_offsets_point_into_the_original_text(tmp_path: Path):
    (tmp_path / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "cafe", "##s", "la", ".", "é"]) + "\n",
                                        encoding="utf-8")
    tok = subwords.bert(tmp_path / "vocab.txt")
    text = "  CAFÉS  là."
    trip = tok.encode_with_offsets(text)
    assert [tok.id_to_piece(i) for i, _, _ in trip] == ["cafe", "##s", "la", "."]
    assert [text[s:e] for _, s, e in trip] == ["CAFÉ", "S", "là", "."]


@pytest.mark.parametrize("content, message", [
    ("", "empty"),
    ("[UNK]\n[CLS]\n", "[SEP]"),
    ("[UNK]\n[CLS]\n[SEP]\nhas space\n", "line 4"),
    ("[UNK]\n[CLS]\n[SEP]\n\nx\n", "line 4"),
    ("[UNK]\n[CLS]\n[SEP]\nx\nx\n", "twice"),
    # whitespace that str.isspace knows and a plain split does not cut at, and an empty last line
    ("[UNK]\n[CLS]\n[SEP]\nx\u2028y\n", "line 4"),
    ("[UNK]\n[CLS]\n[SEP]\nx\x1fy\n", "line 4"),
    ("[UNK]\n[CLS]\n[SEP]\nx\n\n", "line 5"),
    ("\n", "line 1"),
])
def test_bad_vocab_files_are_refused(tmp_path: Path, content: str, message: str):
    (tmp_path / "vocab.txt").write_text(content, encoding="utf-8")
    with pytest.raises(ModelFileError, match=message.replace("[", r"\[").replace("]", r"\]")):
        subwords.bert(tmp_path / "vocab.txt")


def test_non_utf8_vocab_is_refused(tmp_path: Path):
    (tmp_path / "vocab.txt").write_bytes(b"[UNK]\n[CLS]\n[SEP]\n\xff\n")
    with pytest.raises(ModelFileError, match="UTF-8"):
        subwords.bert(tmp_path / "vocab.txt")


def test_bert_preset_trains_a_wordpiece_model_that_round_trips_its_file(tmp_path: Path, corpus):
    train, held = corpus
    tok = subwords.train(train, preset="bert", vocab_size=2000)
    assert tok.model == "wordpiece" and tok.spelling["lowercase"] and tok.spelling["pre_split"] == "bert"
    tok.save(tmp_path / "m.json")
    back = subwords.load(tmp_path / "m.json")
    assert all(back.encode(t) == tok.encode(t) for t in held[:200])
    # "Dr." is cut at the full stop and lower-cased; decoding gives the normalized text
    assert tok.normalize("Dr. Alvarez didn't") == "dr . alvarez didn ' t"



def test_exported_bert_cleans_text_as_tokenizers_on_every_code_point(tmp_path: Path):
    """Our BERT spelling's clean_text drops what tokenizers' BertNormalizer drops (NUL, U+FFFD,
    control, format and private-use characters by its own older tables) and keeps the rest,
    unassigned code points included. For "a" + each code point + "a" (surrogates aside), our
    tokenizer and tokenizers reading its export must agree on what became of the code point:
    dropped ("a" "##a"), a space ("a" "a"), or kept (anything else). (Kept code points can
    still get other ids: tokenizers' punctuation, CJK and combining-mark tables are older
    than ours, which the pre-split and strip_accents read; clean_text is what this checks.)"""
    from subwords.formats import export

    (tmp_path / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "##a"]) + "\n",
                                        encoding="utf-8")
    ours = subwords.bert(tmp_path / "vocab.txt", lowercase=False)
    export(ours, tmp_path / "tokenizer.json", "hf")
    theirs = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    dropped, space = [2, 5, 6, 3], [2, 5, 5, 3]

    def fate(ids: list[int]) -> str:
        return "dropped" if ids == dropped else "space" if ids == space else "kept"

    differ, fates = [], {}
    for lo in range(0, 0x110000, 8192):
        texts = ["a" + chr(c) + "a" for c in range(lo, min(lo + 8192, 0x110000)) if not 0xD800 <= c < 0xE000]
        want = [fate(e.ids) for e in theirs.encode_batch(texts)]
        got = [fate(ids) for ids in ours.encode_batch(texts, add_special_tokens=True)]
        differ += [f"U+{ord(t[1]):04X}" for t, w, g in zip(texts, want, got) if w != g]
        fates.update((t[1], g) for t, g in zip(texts, got) if t[1] in "\x00\ufffd\x07\u200b\ue000\u0378\U000e0000\u3000\t")
    assert differ == [], (differ[:20], len(differ))
    # by hand from tokenizers' bert.rs: NUL, U+FFFD, a control (BEL), a format character (ZWSP)
    # and a private-use one go; unassigned U+0378 and U+E0000 stay; U+3000 and tab are spaces
    assert fates == {"\x00": "dropped", "\ufffd": "dropped", "\x07": "dropped", "\u200b": "dropped",
                     "\ue000": "dropped", "\u0378": "kept", "\U000e0000": "kept", "\u3000": "space", "\t": "space"}


@pytest.mark.parametrize("content", [
    "[UNK]\n[CLS]\n[SEP]\n[X]\n[a-b]\n[]\n[_]\nfoo\n##bar\n",
    "[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\nx\r\r\n##y\r\n",
])
def test_the_core_reads_a_vocab_as_its_rows_build_it(tmp_path: Path, content: str):
    """A vocab.txt is read in the core (``_core.Tokenizer.from_vocab_txt``); the model is the one its rows
    give through ``from_parts``: rows, kinds and template alike. The kinds by hand, from the rule
    in read.py's docstring (``[`` letters, digits or ``_`` ``]`` is special): ``[X]`` and ``[_]``
    special, ``[a-b]`` and ``[]`` pieces; a line's trailing ``\\r``s are not part of it."""
    from subwords._api import from_parts

    (tmp_path / "vocab.txt").write_bytes(content.encode())
    pieces = [line.rstrip("\r") for line in content.split("\n")[:-1]]
    special = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[X]", "[_]"}
    rows = [(p, "special" if p in special else "piece") for p in pieces]
    spelling = {"scheme": "continuation", "mark": "##", "pre_split": "bert", "clean_text": True,
                "strip_accents": True, "lowercase": True}
    want = from_parts("wordpiece", spelling, rows, template=("[CLS]", "[SEP]"))
    got = subwords.bert(tmp_path / "vocab.txt")
    assert got.to_json() == want.to_json()
    assert [r for r, _ in rows if _ == "special"] == [p for p in pieces if p in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[X]", "[_]")]
