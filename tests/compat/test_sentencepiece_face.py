"""``subwords.compat.sentencepiece`` on small hand-made models, where the right answers are worked
by hand: the sampling distribution, the entropy, the n-best list, SampleEncodeAndScore, BPE-dropout,
SetVocabulary, and the refusals (sentencepiece's own suite, run by test_sentencepiece_suite.py,
checks the rest and the real files)."""

from __future__ import annotations

import math
import pickle

import pytest

from subwords import _core
from subwords.compat import sentencepiece as spm
from subwords.errors import OptionError, SubwordsError

UNK, NORMAL, CONTROL = 2, 1, 3


def unigram(pieces, add_dummy_prefix=False):
    """A Unigram model of (piece, score) pairs after <unk> (id 0), <s> (1) and </s> (2)."""
    rows = [("<unk>", 0.0, UNK), ("<s>", 0.0, CONTROL), ("</s>", 0.0, CONTROL)] + [(p, s, NORMAL) for p, s in pieces]
    data = _core.sp_model_bytes("unigram", rows, False, " ? ", [], add_dummy_prefix, True, True,
                                [("bos", 1), ("eos", 2)])
    return spm.SentencePieceProcessor(model_proto=data)


# "ab" has two segmentations: [ab] scoring -1.5 and [a, b] scoring -1 + -1 = -2.
AB = [("a", -1.0), ("b", -1.0), ("ab", -1.5)]


def p_whole(theta):
    """P([ab]) under the distribution ∝ exp(theta · score): 1 / (1 + exp(-0.5 theta))."""
    return 1.0 / (1.0 + math.exp(-0.5 * theta))


def test_viterbi_and_nbest_list_every_segmentation_best_first():
    sp = unigram(AB)
    assert sp.encode("ab", out_type=str) == ["ab"]
    assert sp.NBestEncodeAsPieces("ab", 5) == [["ab"], ["a", "b"]]  # only two exist
    assert sp.NBestEncodeAsIds("ab", 1) == [[5]]
    blob = sp.nbest_encode("ab", nbest_size=2, out_type="serialized_proto")
    assert isinstance(blob, bytes) and blob


@pytest.mark.parametrize("theta", [1.0, 0.5])
def test_sampling_follows_the_scaled_distribution(theta):
    sp = unigram(AB)
    spm.SetRandomGeneratorSeed(12345)
    n = 4000
    whole = sum(sp.SampleEncodeAsPieces("ab", -1, theta) == ["ab"] for _ in range(n))
    # binomial standard deviation at n = 4000 is under 0.008; 0.03 is about four of them
    assert abs(whole / n - p_whole(theta)) < 0.03, (whole / n, p_whole(theta))
    # drawing among the 2 best is the same distribution here (there are only two)
    whole2 = sum(sp.SampleEncodeAsPieces("ab", 2, theta) == ["ab"] for _ in range(n))
    assert abs(whole2 / n - p_whole(theta)) < 0.03


def test_the_seed_fixes_the_draws():
    sp = unigram(AB)
    spm.SetRandomGeneratorSeed(7)
    a = [tuple(sp.encode("abab", out_type=str, enable_sampling=True, alpha=1.0)) for _ in range(50)]
    spm.set_random_generator_seed(7)
    b = [tuple(sp.encode("abab", out_type=str, enable_sampling=True, alpha=1.0)) for _ in range(50)]
    assert a == b and len(set(a)) > 1


def test_nbest_size_one_or_zero_is_the_best_segmentation():
    sp = unigram(AB)
    for k in (0, 1):
        assert {tuple(sp.SampleEncodeAsPieces("ab", k, 1.0)) for _ in range(30)} == {("ab",)}


def test_entropy_is_the_entropy_of_the_two_segmentations():
    sp = unigram(AB)
    for theta in (1.0, 0.3):
        p = p_whole(theta)
        want = -(p * math.log(p) + (1 - p) * math.log(1 - p))
        assert sp.CalculateEntropy("ab", theta) == pytest.approx(want, rel=1e-12)
    # one segmentation only: no uncertainty
    assert sp.CalculateEntropy("a", 1.0) == pytest.approx(0.0, abs=1e-12)
    assert sp.CalculateEntropy(["ab", "a"], 1.0) == pytest.approx([sp.CalculateEntropy("ab", 1.0), 0.0])


def test_sample_and_score_without_replacement_gives_each_segmentation_once_with_its_log_probability():
    sp = unigram(AB)
    got = sp.SampleEncodeAndScoreAsPieces("ab", num_samples=5, alpha=1.0, wor=True, include_best=True)
    assert [pieces for pieces, _ in got] == [["ab"], ["a", "b"]]
    p = p_whole(1.0)
    assert [score for _, score in got] == pytest.approx([math.log(p), math.log(1 - p)], rel=1e-12)
    with pytest.raises(OptionError, match="include_best"):
        sp.SampleEncodeAndScoreAsIds("ab", num_samples=2, alpha=1.0, include_best=True)


def test_set_vocabulary_treats_the_other_pieces_as_unused_and_survives_pickling():
    sp = unigram(AB)
    sp.SetVocabulary(["a", "b"])
    assert sp.encode("ab", out_type=str) == ["a", "b"]
    again = pickle.loads(pickle.dumps(sp))
    assert again.encode("ab", out_type=str) == ["a", "b"]
    again.ResetVocabulary()
    assert again.encode("ab", out_type=str) == ["ab"]
    sp.ResetVocabulary()
    assert sp.encode("ab", out_type=str) == ["ab"]


def test_extra_options_add_bos_eos_and_reverse():
    sp = unigram(AB)
    sp.SetEncodeExtraOptions("bos:eos")
    assert sp.encode("ab") == [1, 5, 2]
    sp.SetEncodeExtraOptions("reverse")
    assert sp.encode("aab", out_type=str) == ["ab", "a"]
    sp.SetEncodeExtraOptions("")
    with pytest.raises(OptionError, match="unknown encode extra option"):
        sp.SetEncodeExtraOptions("sideways")


def test_encode_on_one_text_is_a_native_call_with_the_methods_whole_behaviour():
    """``Encode(text)`` on a processor without options is ``_core.FaceCall`` (no Python frame);
    every other call, and a processor whose options add anything, gets the Python method's
    answer. Ids by hand: <unk> 0, <s> 1, </s> 2, a 3, b 4, ab 5."""
    import gc
    import inspect
    import weakref

    sp = unigram(AB)
    for name in ("Encode", "encode", "Tokenize", "tokenize"):
        assert type(getattr(sp, name)) is _core.FaceCall
    assert sp.Encode("ab") == [5]
    assert sp.encode("ab", out_type=str) == ["ab"]
    assert sp.Encode("ab", out_type=int) == [5]
    assert sp.Encode(["ab", "a"]) == [[5], [3]]
    assert sp.Encode("ab", add_bos=True, add_eos=True) == [1, 5, 2]
    assert sp.Encode(input="ab") == [5]
    assert spm.SentencePieceProcessor.Encode(sp, "ab") == [5]

    class Text(str):
        pass

    assert sp.Encode(Text("ab")) == [5]  # not exactly a str: the Python method's path
    assert "add_bos" in inspect.signature(sp.Encode).parameters

    sp.SetEncodeExtraOptions("bos")
    assert "Encode" not in vars(sp) and sp.Encode("ab") == [1, 5]
    sp.SetEncodeExtraOptions("")
    assert type(sp.Encode) is _core.FaceCall and sp.Encode("ab") == [5]
    assert pickle.loads(pickle.dumps(sp)).Encode("ab") == [5]

    pieces = spm.SentencePieceProcessor(model_proto=sp.serialized_model_proto(), out_type=str)
    assert pieces.Encode("ab") == ["ab"] and pieces.Encode("ab", out_type=int) == [5]

    # the call holds its processor, as a bound method does
    encode = spm.SentencePieceProcessor(model_proto=sp.serialized_model_proto()).encode
    assert encode(["ab"], add_eos=True) == [[5, 2]]

    class Mine(spm.SentencePieceProcessor):
        def Encode(self, input, **kwargs):  # noqa: N802 (sentencepiece's name)
            return "mine"

    mine = Mine(model_proto=sp.serialized_model_proto())
    assert mine.Encode("ab") == "mine" and "Encode" not in vars(mine)

    # the call refers back to its processor (a cycle); the collector frees the two
    ref = weakref.ref(sp)
    del sp
    gc.collect()
    assert ref() is None



def bpe():
    rows = [("<unk>", 0.0, UNK), ("a", -10.0, NORMAL), ("b", -10.0, NORMAL), ("ab", -1.0, NORMAL)]
    return spm.SentencePieceProcessor(model_proto=_core.sp_model_bytes("bpe", rows, False, " ? ", [], False, True,
                                                                         True, None))


def test_bpe_dropout_drops_every_join_at_one_and_none_at_zero():
    sp = bpe()
    assert sp.encode("abab", out_type=str) == ["ab", "ab"]
    assert sp.encode("abab", out_type=str, enable_sampling=True, alpha=0.0) == ["ab", "ab"]
    assert sp.encode("abab", out_type=str, enable_sampling=True, alpha=1.0) == ["a", "b", "a", "b"]
    spm.SetRandomGeneratorSeed(3)
    # at 0.5 each of the two joins is kept with probability 1/2: all four outcomes appear
    seen = {tuple(sp.encode("abab", out_type=str, enable_sampling=True, alpha=0.5)) for _ in range(200)}
    assert len(seen) == 4
    with pytest.raises(spm.NotOfferedError, match="Unigram only"):
        sp.CalculateEntropy("ab", 1.0)


def test_ids_out_of_range_raise_index_error_of_our_hierarchy():
    sp = unigram(AB)
    for call in (lambda: sp.IdToPiece(6), lambda: sp.IdToPiece(-1), lambda: sp.decode([0, 99]),
                 lambda: sp.GetScore([0, 6])):
        with pytest.raises(IndexError) as e:
            call()
        assert isinstance(e.value, SubwordsError)


def test_what_is_not_offered_is_refused_by_name(tmp_path):
    sp = unigram(AB)
    with pytest.raises(ValueError, match="immutable_proto"):
        sp.encode("ab", out_type="immutable_proto")
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world\n" * 20)
    with pytest.raises(ValueError, match="model_type=word"):
        spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp_path / "m"), model_type="word")
    with pytest.raises(ValueError, match="--no_such_flag"):
        spm.SentencePieceTrainer.train(f"--input={corpus} --model_prefix={tmp_path / 'm'} --no_such_flag=1")
    with pytest.raises(ValueError, match="pretokenizer"):
        spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp_path / "m"), pretokenizer=str.split)
    with pytest.raises(ValueError, match="treat_whitespace_as_suffix"):
        spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp_path / "m"),
                                       treat_whitespace_as_suffix=True)
    with pytest.raises(RuntimeError, match="FlatBuffer"):
        spm.ConvertToFlatbuffer(model_file="x")
    assert not (tmp_path / "m.model").exists()


def test_trainer_writes_the_model_and_vocab_with_spm_train_layout(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("".join(f"the cat sat on the mat {i % 7}\n" for i in range(200)))
    spm.SentencePieceTrainer.train(f"--input={corpus} --model_prefix={tmp_path / 'm'} --vocab_size=40 "
                                   "--control_symbols=<cls> --user_defined_symbols=<sep> --pad_id=3")
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))
    assert sp.vocab_size() == 40
    assert [sp.id_to_piece(i) for i in range(6)] == ["<unk>", "<s>", "</s>", "<pad>", "<cls>", "<sep>"]
    assert (sp.unk_id(), sp.bos_id(), sp.eos_id(), sp.pad_id()) == (0, 1, 2, 3)
    assert sp.IsControl(4) and not sp.IsControl(5)
    assert sp.encode("the<sep>cat", out_type=str).count("<sep>") == 1
    vocab = (tmp_path / "m.vocab").read_text(encoding="utf-8").splitlines()
    assert len(vocab) == 40 and vocab[0] == "<unk>\t0"
    assert sp.decode(sp.encode("the cat sat on the mat 3")) == "the cat sat on the mat 3"
