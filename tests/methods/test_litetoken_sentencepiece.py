"""LiteToken (arXiv 2602.04706) on SentencePiece ``.model`` files: a BPE model is cut and written
back as a ``.model`` that the real ``sentencepiece`` loads; Unigram and WordPiece vocabularies are
refused with the reason.

The measure is the paper's: ``F1(t)`` counts ``t`` in the final encoding, ``F2(t)`` counts ``t``
made by a merge and merged on; ``t`` is a residue when ``R(t) = F1 / (F1 + F2)`` is below the
threshold. SentencePiece BPE joins the adjacent pair whose joined piece has the highest score (the
leftmost on a tie): a rank rule, ranks by score."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
import sentencepiece as spm

import peers
import subwords
from subwords import _core, trim
from subwords.errors import OptionError

NORMAL, UNKNOWN, CONTROL = 1, 2, 3


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "subwords", *args], capture_output=True, text=True, encoding="utf-8")


def tiny_bpe(path, learned: list[tuple[str, float]]):
    """A SentencePiece BPE .model: <unk> <s> </s>, the letters a b c (score -10), then ``learned``
    (piece, score); no dummy prefix, so "abc" is the symbols a b c."""
    pieces = [("<unk>", 0.0, UNKNOWN), ("<s>", 0.0, CONTROL), ("</s>", 0.0, CONTROL)]
    pieces += [(c, -10.0, NORMAL) for c in "abc"] + [(p, s, NORMAL) for p, s in learned]
    data = _core.sp_model_bytes("bpe", pieces, False, " \u2047 ", [], False, True, True, None)
    path.write_bytes(data)
    return path


# -- the hand-worked case ----------------------------------------------------------------------
#
# Corpus: "abc" 9 times and "ab" once. Scores: ab 0 > abc -1 > bc -2.
#   each "abc": pairs ab (0), bc (-2): ab first; then ab + c -> abc (-1). ab is made and merged on
#   (F2 += 1), abc is final (F1 += 1).   the "ab" line: a b -> ab, final (F1 += 1).
# F1(ab) = 1, F2(ab) = 9, R(ab) = 0.1 < 0.2: a residue. F1(abc) = 9, R = 1.

def test_score_rule_by_hand(tmp_path):
    corpus = ["abc"] * 9 + ["ab"]
    # without bc, abc has one split into two pieces, ab + c: ab is protected and nothing goes
    tok = subwords.load(tiny_bpe(tmp_path / "a.model", [("ab", 0.0), ("abc", -1.0)]))
    t = trim(tok, corpus, litetoken=True, threshold=0.2)
    assert t.litetoken.residues == [] and t.litetoken.protected == [(6, "ab", 1, 9)]
    assert (t.old_size, t.new_size) == (8, 8)
    # with bc, abc is still made as a + bc: ab goes, and the ids after it move down by one
    path = tiny_bpe(tmp_path / "b.model", [("ab", 0.0), ("abc", -1.0), ("bc", -2.0)])
    out = tmp_path / "cut.model"
    t = trim(subwords.load(path), corpus, litetoken=True, threshold=0.2, output=out)
    assert t.litetoken.residues == [(6, "ab", 1, 9)] and t.litetoken.format == "sentencepiece"
    assert t.id_map == [0, 1, 2, 3, 4, 5, None, 6, 7]
    assert t.litetoken.lines_changed == 1  # "ab" is a b now; "abc" is abc at its new id
    sp = spm.SentencePieceProcessor(model_file=str(out))
    assert sp.vocab_size() == 8 and sp.encode("abc", out_type=str) == ["abc"]
    assert sp.encode("ab", out_type=str) == ["a", "b"]
    assert json.loads((tmp_path / "cut.model.ids.json").read_text())["old_to_new"] == t.id_map


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return [t for t in peers.multilingual_texts(limit_bytes=1_500_000) if t.strip()]


def spm_train(texts: list[str], **kw) -> bytes:
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(texts), model_writer=buf, vocab_size=3000,
                                   character_coverage=0.995, minloglevel=2, num_threads=1, **kw)
    return buf.getvalue()


@pytest.mark.parametrize("extra", [dict(model_type="bpe"), dict(model_type="bpe", byte_fallback=True)])
def test_sentencepiece_loads_the_cut_model(tmp_path, texts, extra):
    train, corpus, check = texts[:6000], texts[6000:9000], texts[9000:10500]
    assert len(check) >= 1000
    src = tmp_path / "m.model"
    src.write_bytes(spm_train(train, **extra))
    out = tmp_path / "cut.model"
    r = run("trim", "--litetoken", str(src), *_write(tmp_path, corpus), "--threshold", "0.3", "-o", str(out))
    assert r.returncode == 0, r.stderr
    t = json.loads((tmp_path / "cut.model.ids.json").read_text(encoding="utf-8"))
    assert t["new_size"] < t["old_size"], "nothing was removed: the test checks nothing"
    old = spm.SentencePieceProcessor(model_file=str(src))
    new = spm.SentencePieceProcessor(model_file=str(out))
    assert new.vocab_size() == t["new_size"]
    ours = subwords.load(out)
    id_map = t["old_to_new"]
    changed = 0
    for line in check:
        ids = new.encode(line)
        # the real library and ours give the same pieces and ids on the cut model
        assert ours.encode_pieces(line) == new.encode(line, out_type=str), line
        assert ours.encode(line) == ids, line
        # the text comes back as the uncut model gives it back (SentencePiece normalizes)
        assert new.decode(ids) == old.decode(old.encode(line)), line
        changed += [id_map[i] for i in old.encode(line)] != ids
    # the removed pieces are gone from the cut model, and the kept ones kept their pieces
    kept = [i for i, j in enumerate(id_map) if j is not None]
    assert [new.id_to_piece(id_map[i]) for i in kept] == [old.id_to_piece(i) for i in kept]
    assert changed < len(check)


def _write(tmp_path, lines: list[str]) -> list[str]:
    p = tmp_path / "corpus.txt"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [str(p)]


def test_unigram_and_wordpiece_are_refused(tmp_path, texts):
    uni = tmp_path / "u.model"
    uni.write_bytes(spm_train(texts[:3000], model_type="unigram"))
    out = tmp_path / "cut.model"
    with pytest.raises(OptionError, match="Unigram, which has no merges"):
        trim(str(uni), texts[:50], litetoken=True, output=out)
    with pytest.raises(OptionError, match="Unigram, which has no merges"):
        trim(subwords.load(uni), texts[:50], litetoken=True, output=out)
    assert not out.exists() and not (tmp_path / "cut.model.ids.json").exists()
    r = run("trim", "--litetoken", str(uni), *_write(tmp_path, texts[:50]), "-o", str(out))
    assert r.returncode != 0 and "Unigram" in r.stderr and not out.exists(), r.stderr
    # a Unigram tokenizer.json
    ours_uni = subwords.train(texts[:2000], vocab_size=600, model="unigram", spelling="front")
    from subwords.formats._dispatch import export

    export(ours_uni, tmp_path / "uni.json", "hf")
    with pytest.raises(OptionError, match="'Unigram', which has none"):
        trim(str(tmp_path / "uni.json"), texts[:50], litetoken=True, output=tmp_path / "uni-cut.json")
    assert not (tmp_path / "uni-cut.json").exists()
    # WordPiece: ours, and a vocab.txt
    wp = subwords.train(texts[:2000], vocab_size=600, model="wordpiece", spelling="continuation")
    with pytest.raises(OptionError, match="longest match"):
        trim(wp, texts[:50], litetoken=True, output=tmp_path / "wp.json")
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[UNK]\n[CLS]\n[SEP]\na\nb\n##b\n", encoding="utf-8")
    with pytest.raises(OptionError, match="longest match"):
        trim(str(vocab), ["ab"], litetoken=True, output=tmp_path / "wp.txt")
    assert not (tmp_path / "wp.json").exists() and not (tmp_path / "wp.txt").exists()
