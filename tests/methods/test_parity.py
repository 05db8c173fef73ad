"""Parity-aware BPE (Foroutan et al., arXiv 2508.04796): the rule worked by hand, the core's
learner against the pure-Python reference (python/subwords/reference/parity.py) on random
small multi-language corpora, training from one input per language, and bad input.

The definition both implement: at each step, the language with the largest cost
``tokens(l) / d(l)`` (tokens per byte by default) is compressed worst; the merge is the pair
counted most often in that language's units, applied to every language's units."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import subwords
import subwords.formats
from subwords import _core
from subwords.errors import OptionError
from subwords.measure.metrics import gini
from subwords.reference import parity as ref

# en: "a b" x6, "x y" x3 (18 bytes); de: "ç d" x2 (ç two bytes: 6 bytes) -- the one-symbol unit
# "e" x1 of the docstring's case is given to the reference as a fixed piece and 1 byte
WORKED = [(("a", "b"), 6, 0), (("x", "y"), 3, 0), (("ç", "d"), 2, 1)]


def test_worked_case_by_hand():
    # before: en 18/18 = 1 > de 5/7: en's best pair (a,b) 6 -> ab; en 12/18 = 0.667.
    # then: de 5/7 = 0.714 > 0.667: de's best (ç,d) 2 -> çd; de 3/7.
    out = ref.learn(WORKED, [18, 7], new_rows=2, min_count=1, fixed=[0, 1])
    assert out.merges == [("a", "b"), ("ç", "d")]
    assert out.chosen_by == [0, 1]
    assert out.tokens_after == [12, 3]
    # plain BPE (every merge global) takes (x,y) 3 second
    plain = ref.learn(WORKED, [18, 7], new_rows=2, min_count=1, fixed=[0, 1], global_merges=2)
    assert plain.merges == [("a", "b"), ("x", "y")]
    # the core's learner, the same case (the one-symbol unit as a unit of its own)
    merges, chosen, stop, after = _core.parity_learn(
        [(list(u), c, l) for u, c, l in WORKED] + [(["e"], 1, 1)], [18, 7], 2, 1)
    assert merges == [("a", "b"), ("ç", "d")] and chosen == [0, 1] and stop == "size" and after == [12, 3]


def test_train_worked_case_and_report():
    # The same corpus through subwords.train (spelling "end": the last symbol carries </w>, so
    # "ab" is a + b</w>; the bytes are the units' text bytes); two new rows past the first run's
    # alphabet.
    langs = {"en": ["ab"] * 6 + ["xy"] * 3, "de": ["çd"] * 2 + ["e"]}
    base = subwords.train(languages=langs, parity=True, vocab_size=1000, min_count=1)
    alphabet = base.report["alphabet_size"]
    tok = subwords.train(languages=langs, parity=True, vocab_size=base.vocab_size - len(base.merges) + 2, min_count=1)
    assert alphabet == 7
    assert tok.merges == [("a", "b</w>"), ("ç", "d</w>")]
    p = tok.report["parity"]
    assert [x["name"] for x in p["languages"]] == ["en", "de"]
    assert [(x["bytes"], x["tokens_before"], x["tokens_after"]) for x in p["languages"]] == [(18, 18, 12), (7, 5, 3)]
    assert [x["merges_chosen"] for x in p["languages"]] == [1, 1]
    # Gini of two values is |a - b| / (2 (a + b)): 2/3 and 3/7 give (5/21) / (2 * 23/21) = 5/46
    assert p["gini"] == pytest.approx(5 / 46)
    assert p["gini"] == pytest.approx(gini([12 / 18, 3 / 7]))  # the metric compare reports
    assert p["parity_ratio"] == pytest.approx((2 / 3) / (3 / 7))
    # plain BPE on the same texts takes x y second
    plain = subwords.train(langs["en"] + langs["de"], vocab_size=tok.vocab_size, min_count=1)
    assert plain.merges == [("a", "b</w>"), ("x", "y</w>")]


def test_model_is_ordinary_bpe(tmp_path):
    langs = {"en": ["the cat sat on the mat"] * 3, "de": ["die Katze sass auf der Matte"] * 3}
    tok = subwords.train(languages=langs, parity=True, vocab_size=300, spelling="bytes", pre_split="gpt2")
    path = tmp_path / "m.json"
    tok.save(path)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["options"]["parity"]["languages"] == ["en", "de"]
    assert saved["report"]["parity"]["languages"][1]["name"] == "de"
    back = subwords.load(path)
    assert back.merges == tok.merges
    text = "the Katze sat"
    assert back.encode(text) == tok.encode(text) and tok.decode(tok.encode(text)) == text
    # exports as any byte-level BPE model, and tokenizers reads it with the same ids
    out = tmp_path / "tokenizer.json"
    subwords.formats.export(tok, out, "hf")
    import tokenizers

    hf = tokenizers.Tokenizer.from_file(str(out))
    assert hf.encode(text).ids == tok.encode(text)


corpora = st.lists(
    st.tuples(st.lists(st.sampled_from("abcdé"), min_size=1, max_size=6).map(tuple),
              st.integers(min_value=1, max_value=9), st.integers(min_value=0, max_value=2)),
    min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(units=corpora, new_rows=st.integers(min_value=0, max_value=12), min_count=st.integers(min_value=1, max_value=3),
       measure=st.sampled_from(["tokens_per_byte", "tokens", "tokens_per_symbol"]),
       global_merges=st.integers(min_value=0, max_value=3), window=st.sampled_from([None, 1, 2, 4]),
       alpha=st.sampled_from([0.5, 1.0, 2.0]))
def test_core_matches_reference(units, new_rows, min_count, measure, global_merges, window, alpha):
    nbytes = [sum(len("".join(u).encode()) * c for u, c, l in units if l == k) or 1 for k in range(3)]
    want = ref.learn(units, nbytes, new_rows, min_count, measure, global_merges, window, alpha)
    merges, chosen, stop, after = _core.parity_learn([(list(u), c, l) for u, c, l in units], nbytes, new_rows,
                                                     min_count, measure, global_merges, window, alpha)
    assert merges == want.merges
    assert chosen == want.chosen_by
    assert stop == want.stop
    assert after == want.tokens_after


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.text(alphabet="abcé ", min_size=1, max_size=12), min_size=1, max_size=6),
                min_size=2, max_size=3))
def test_train_matches_reference_on_units(per_language):
    # Training from texts: the units the pipeline counts (one table per language, spelled
    # "end"), given to the reference with the bytes of their texts, learn the same merges.
    names = [f"l{k}" for k in range(len(per_language))]
    assume(all("".join(t).split() for t in per_language))  # a language of only spaces is refused (below)
    units, nbytes, fixed = [], [], []
    for k, texts in enumerate(per_language):
        counts: dict[str, int] = {}
        for t in texts:
            for w in t.split():
                counts[w] = counts.get(w, 0) + 1
        nbytes.append(sum(len(w.encode()) * c for w, c in counts.items()))
        fixed.append(sum(c for w, c in counts.items() if len(w) == 1))
        for w, c in counts.items():
            if len(w) > 1:
                units.append((tuple(w[:-1]) + (w[-1] + "</w>",), c, k))
    want = ref.learn(units, nbytes, 10**6, min_count=1, fixed=fixed)
    full = subwords.train(languages=dict(zip(names, per_language)), parity=True, vocab_size=10**5, min_count=1)
    assert full.merges == want.merges
    assert [x["tokens_after"] for x in full.report["parity"]["languages"]] == want.tokens_after


def test_language_field(tmp_path):
    path = tmp_path / "c.jsonl"
    rows = [{"lang": "en", "text": "ab ab ab"}, {"lang": "de", "text": "çd çd"}, {"lang": "en", "text": "xy"}]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    a = subwords.train(path, parity=True, language_field="lang", vocab_size=1000, min_count=1)
    b = subwords.train(languages={"en": ["ab ab ab", "xy"], "de": ["çd çd"]}, parity=True, vocab_size=1000, min_count=1)
    assert a.merges == b.merges
    assert a.options["parity"]["languages"] == ["en", "de"]


BAD = [
    (dict(languages={"en": ["ab ab"]}), "two or more"),
    (dict(languages={"en": ["ab ab"], "de": [""]}), "has no text"),
    (dict(languages={"en": ["ab ab"], "de": ["cd"]}, model="wordpiece"), "model='bpe'"),
    (dict(languages={"en": ["ab ab"], "de": ["cd"]}, model="unigram"), "model='bpe'"),
    (dict(languages={"en": ["ab ab"], "de": ["cd"]}, picky=0.9), "picky"),
    (dict(languages={"en": ["ab ab"], "de": ["cd"]}, length_max=True), "length_max"),
    (dict(languages={"en": ["ab ab"], "de": ["cd"]}, scaffold=True), "scaffold"),
    (dict(languages={"en": ["ab ab"], "de": ["cd"]}, superword_at=300, spelling="bytes"), "superword_at"),
    (dict(languages={"en": ["ab ab"], "de": ["cd"]}, parity_window=0), "parity_window"),
    (dict(languages={"en": ["ab ab"], "de": ["cd"]}, parity_alpha=2.0), "window"),
    (dict(languages={"en": ["ab ab"], "de": ["cd"]}, counts=True), "counts"),
]


@pytest.mark.parametrize("kw,message", BAD)
def test_bad_options_refused(kw, message):
    with pytest.raises(OptionError, match=message):
        subwords.train(parity=True, vocab_size=300, **kw)


def test_bad_input_refused(tmp_path):
    with pytest.raises(OptionError, match="add parity=True"):
        subwords.train(languages={"en": ["ab"], "de": ["cd"]}, vocab_size=300)
    with pytest.raises(OptionError, match="applies to parity-aware BPE"):
        subwords.train(["ab"], vocab_size=300, parity_window=4)
    with pytest.raises(OptionError, match="one input per language"):
        subwords.train(["ab ab"], parity=True, vocab_size=300)
    empty = tmp_path / "de.txt"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(OptionError, match="is empty"):
        subwords.train(languages={"en": ["ab ab"], "de": empty}, parity=True, vocab_size=300)
    path = tmp_path / "c.jsonl"
    path.write_text('{"lang": "en", "text": "ab"}\n{"text": "cd"}\n', encoding="utf-8")
    with pytest.raises(OptionError, match="no field 'lang'"):
        subwords.train(path, parity=True, language_field="lang", vocab_size=300)


def test_cli(tmp_path):
    from subwords.cli import main

    en, de, jl = tmp_path / "en.txt", tmp_path / "de.txt", tmp_path / "c.jsonl"
    en.write_text("ab ab ab\nxy\n", encoding="utf-8")
    de.write_text("çd çd\n", encoding="utf-8")
    out = tmp_path / "m.json"
    assert main(["train", "--parity", "--language", f"en={en}", "--language", f"de={de}", "--vocab-size", "1000",
                 "--min-count", "1", "-o", str(out), "--quiet"]) == 0
    model = subwords.load(out)
    assert model.options["parity"]["languages"] == ["en", "de"]
    jl.write_text('{"l": "en", "text": "ab ab ab"}\n{"l": "de", "text": "çd çd"}\n{"l": "en", "text": "xy"}\n',
                  encoding="utf-8")
    out2 = tmp_path / "m2.json"
    assert main(["train", str(jl), "--parity", "--language-field", "l", "--vocab-size", "1000", "--min-count", "1",
                 "-o", str(out2), "--quiet"]) == 0
    assert subwords.load(out2).merges == model.merges
    # bad input: a clear error and no file written
    bad = tmp_path / "bad.json"
    for args in (["--language", f"en={en}"], ["--language", f"en={en}", "--language", f"de={de}", "--model", "unigram"],
                 ["--language", f"en={en}", "--language", f"de={tmp_path / 'none.txt'}"],
                 ["--language", f"en{en}", "--language", f"de={de}"]):
        assert main(["train", "--parity", *args, "--vocab-size", "300", "-o", str(bad), "--quiet"]) == 2
        assert not bad.exists()


def test_curve_and_compare(tmp_path, capsys):
    from subwords import measure
    from subwords.cli import main

    langs = {"en": ["the cat sat on the mat", "a cat on a mat"] * 3, "de": ["die Katze sass auf der Matte"] * 3}
    points = measure.curve(None, [270, 290], parity=True, languages=langs, spelling="bytes", pre_split="gpt2")
    for p in points:
        direct = subwords.train(languages=langs, parity=True, vocab_size=p.size, spelling="bytes", pre_split="gpt2")
        assert (p.rows, p.corpus_pieces) == (direct.vocab_size, direct.report["corpus_pieces_after"])
    en, de = tmp_path / "en.txt", tmp_path / "de.txt"
    en.write_text("\n".join(langs["en"]) + "\n", encoding="utf-8")
    de.write_text("\n".join(langs["de"]) + "\n", encoding="utf-8")
    assert main(["curve", "--parity", "--language", f"en={en}", "--language", f"de={de}", "--spelling", "bytes",
                 "--pre-split", "gpt2", "--sizes", "270,290", "--json", "--quiet"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [p["corpus_pieces"] for p in shown] == [p.corpus_pieces for p in points]
    # compare: a parity model is measured like any other, per language with --labelled
    model = tmp_path / "m.json"
    subwords.train(languages=langs, parity=True, vocab_size=290, spelling="bytes", pre_split="gpt2").save(model)
    labelled = tmp_path / "held.tsv"
    labelled.write_text("en\tthe mat\nde\tdie Matte\n", encoding="utf-8")
    assert main(["compare", "-m", str(model), str(labelled), "--labelled", "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out[0]["language_gini"] is not None
