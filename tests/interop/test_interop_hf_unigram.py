"""Unigram ``tokenizer.json`` files against ``tokenizers``: the same ids and decoded text.

Pipelines are built and trained here by ``tokenizers`` itself (nothing committed): a Unigram
trained by its ``UnigramTrainer`` behind ``Metaspace``, with and without NFKC; and the shape of the
converted SentencePiece models (T5, ALBERT, XLM-R): the ``Precompiled`` normalizer with
SentencePiece's own ``nmt_nfkc`` map (shipped in the ``sentencepiece`` wheel), runs of spaces
folded, ``Metaspace``, and the pieces and scores of a Unigram model trained by sentencepiece, with
and without byte fallback.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import subwords.formats as formats
from subwords import _core

import peers

import tokenizers
import sentencepiece as spm

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers  # noqa: E402

EDGE = ["", " ", "  Hello   world  ", "\tTab\nnew", "ｱｲｳ ＡＢＣ ① ﬁ", "e\u0301 é", "👍🏽 emoji ⚡", "<unk> </s>",
        "x" * 500, "数字 12345 ４５", "Ăh4Ţ×˛ćçKSSd˝", "\u200b\u200d\ufeff", "ﾊﾟﾋﾟ", "Å Å"]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return list(peers.multilingual_texts(limit_bytes=600_000)) + EDGE


def nmt_nfkc() -> bytes:
    path = Path(spm.__file__).parent / "package_data" / "nmt_nfkc.bin"
    return path.read_bytes()


def check(tok: Tokenizer, tmp_path: Path, texts: list[str]) -> None:
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    # load time: the [piece, score] list is read from the file's bytes by the core,
    # as Python's json reads it (ids are the places)
    raw = path.read_bytes()
    got = _core.HfTables.split(raw)
    assert got is not None, "a Unigram file tokenizers wrote was not read by the core"
    rest, tables = got
    doc = json.loads(raw)
    assert json.loads(rest)["model"]["vocab"] == []
    assert tables.pairs() == [(p, i) for i, (p, _) in enumerate(doc["model"]["vocab"])]
    ours = formats.load(path)
    want = [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]
    got = ours.encode_batch(texts, allowed_special="all")
    bad = [t for t, w, g in zip(texts, want, got) if w != g]
    assert not bad, f"{len(bad)} texts differ, first {bad[0][:80]!r}"
    for ids in want[::7]:
        assert ours.decode(ids) == tok.decode(ids)
    # the pieces are tokenizers' tokens (for an unknown id, the text it covers, as
    # sentencepiece gives it), and they decode as tokenizers' decoder decodes them
    for t in texts[::11]:
        e = tok.encode(t, add_special_tokens=False)
        assert ours.encode_pieces(t, allowed_special="all") == e.tokens, t
        assert ours.decode_pieces(e.tokens, skip_special_tokens=False) == tok.decoder.decode(e.tokens), t


@pytest.mark.parametrize("nfkc", [False, True])
def test_trained_unigram_behind_metaspace(tmp_path, texts, nfkc):
    tok = Tokenizer(models.Unigram())
    if nfkc:
        tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=1500, unk_token="<unk>", special_tokens=["<unk>", "</s>"])
    tok.train_from_iterator(texts[:4000], trainer)
    check(tok, tmp_path, texts)


@pytest.mark.parametrize("byte_fallback", [False, True])
def test_converted_sentencepiece_shape(tmp_path, texts, byte_fallback):
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(texts[:5000]), model_writer=buf, vocab_size=1500,
                                   model_type="unigram", byte_fallback=byte_fallback, minloglevel=2, num_threads=2)
    sp = spm.SentencePieceProcessor(model_proto=buf.getvalue())
    vocab = [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]
    tok = Tokenizer(models.Unigram(vocab, unk_id=sp.unk_id(), byte_fallback=byte_fallback))
    tok.normalizer = normalizers.Sequence([normalizers.Precompiled(nmt_nfkc()), normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    check(tok, tmp_path, texts)


def test_unigram_files_we_cannot_reproduce_are_refused(tmp_path):
    import json

    from subwords.errors import ModelFileError

    tok = Tokenizer(models.Unigram([("<unk>", 0.0), ("a", -1.0), ("b", -2.0)], unk_id=0))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    good = json.loads(path.read_text(encoding="utf-8"))
    assert formats.load(path).encode("ab ba", allowed_special="all") == [e for e in tok.encode("ab ba").ids]

    def variant(change) -> Path:
        doc = json.loads(json.dumps(good))
        change(doc)
        p = tmp_path / "bad.json"
        p.write_text(json.dumps(doc), encoding="utf-8")
        return p

    cases = [
        (lambda d: d["model"].update(unk_id=None), "without unk_id"),
        (lambda d: d["model"].update(unk_id=7), "outside the vocab"),
        (lambda d: d["model"]["vocab"].append(["a", -3.0]), "appears twice"),
        (lambda d: d["model"]["vocab"].append(["c", "x"]), "finite score"),
        # an integer past a float's range (json reads it, float() cannot: it was an OverflowError)
        (lambda d: d["model"]["vocab"].append(["c", 10 ** 400]), "finite score"),
        (lambda d: d["model"]["vocab"].append(["c", True]), "finite score"),
        (lambda d: d.update(normalizer={"type": "Precompiled", "precompiled_charsmap": "not base64!"}), "base64"),
        (lambda d: d.update(normalizer={"type": "Precompiled", "precompiled_charsmap": "AAAA"}), "precompiled_charsmap"),
        (lambda d: d.update(normalizer={"type": "Replace", "pattern": {"Regex": "a+"}, "content": "b"}), "Regex"),
    ]
    for change, msg in cases:
        with pytest.raises(ModelFileError, match=msg):
            formats.load(variant(change))
