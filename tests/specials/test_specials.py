"""Special tokens in training (docs/SPECIALS.md): ids 0..k-1 in the order given,
inside the budget, never split and never learned from, matched in text only when allowed (user
symbols always), kept through save/load and through every export that can hold them, read back
by the original libraries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as sp_pb
import tiktoken
import tokenizers as tk

import subwords
from subwords.errors import InputError, OptionError
from subwords.formats import export, load

FOUR = {"low": 5, "lower": 2, "newest": 6, "widest": 3}

# a small corpus of plain sentences, with the end-of-text marker between documents
SENTENCES = [
    "the cat sat on the mat and the dog sat on the log",
    "a lower newest widest lowest newer wider",
    "hello world, hello there, the world is wide",
    "tokenizers cut text into pieces and glue pieces back into text",
    "special tokens are rows of their own and never split",
]
DOCS = [s + " <|endoftext|>" for s in SENTENCES] * 4 + ["<|endoftext|><|endoftext|>hello<|endoftext|>"]
EOT = "<|endoftext|>"


def train(data=DOCS, **kw):
    kw.setdefault("vocab_size", 120)
    return subwords.train(data, **kw)


# -- ids and budget ---------------------------------------------------------------------------------


def test_specials_take_ids_0_to_k_minus_1_in_the_order_given():
    tok = train(special_tokens=[EOT, "<pad>", "<mask>"])
    assert tok.rows[:4] == [EOT, "<pad>", "<mask>", "[UNK]"]
    assert tok.kinds[:4] == ["special"] * 4
    assert tok.special_tokens == {EOT: 0, "<pad>": 1, "<mask>": 2, "[UNK]": 3}


def test_unk_listed_among_the_specials_takes_that_place_and_is_the_only_unk():
    tok = train(special_tokens=["[PAD]", "[UNK]", "[CLS]"])
    assert tok.rows[:3] == ["[PAD]", "[UNK]", "[CLS]"]
    assert tok.rows.count("[UNK]") == 1
    assert tok.kinds[3] == "alphabet"
    # a symbol with no row is [UNK], now id 1
    assert tok.encode("\u4e2d") == [1]


def test_specials_are_inside_the_budget():
    # 000_ (BPE page): the four words with 10 merges make 22 rows = 11 symbols + [UNK] + 10 learned.
    # Two specials inside a budget of 24 leave room for the same 10 merges: 24 = 2 + 1 + 11 + 10.
    plain = subwords.train(FOUR, vocab_size=22)
    tok = subwords.train(FOUR, vocab_size=24, special_tokens=["<s>", "</s>"])
    assert tok.vocab_size == 24
    assert tok.merges == plain.merges
    assert tok.rows[2:] == plain.rows


def test_specials_that_do_not_fit_the_budget_are_refused():
    # 11 symbols + [UNK] + 2 specials = 14 rows at the least
    with pytest.raises(OptionError, match="at least 14"):
        subwords.train(FOUR, vocab_size=13, special_tokens=["<s>", "</s>"])
    subwords.train(FOUR, vocab_size=14, special_tokens=["<s>", "</s>"])


# -- never split, never learned from, matched only when allowed --------------------------------------


@pytest.mark.parametrize("spelling", ["end", "front", "bytes"])
def test_the_issue_example_is_one_id_when_allowed_and_text_when_not(spelling):
    # the byte-level model spells every character, so the marker as text decodes back whole;
    # the others never saw "<", "|", ">" (they are only in the markers) and spell them [UNK]
    kw = dict(spelling="bytes", pre_split="gpt2", vocab_size=300) if spelling == "bytes" else dict(spelling=spelling)
    tok = train(special_tokens=[EOT], **kw)
    allowed = tok.encode(f"{EOT} hello", allowed_special="all")
    assert allowed == [0] + tok.encode(" hello")
    assert tok.encode(f"{EOT} hello", allowed_special={EOT}) == allowed
    as_text = tok.encode(f"{EOT} hello")
    assert 0 not in as_text and len(as_text) > 2
    if spelling == "bytes":
        assert tok.decode(as_text) == f"{EOT} hello"
    else:
        assert "[UNK]" in tok.encode_pieces(f"{EOT} hello")


def test_specials_are_never_learned_from():
    tok = train(special_tokens=[EOT])
    learned = [p for p, k in zip(tok.rows, tok.kinds) if k in ("alphabet", "learned")]
    # "|" occurs in the corpus only inside the marker
    assert not any("|" in p for p in learned)
    # training with the marker is training on the stretches between markers, each a text
    stretches = [part for d in DOCS for part in d.split(EOT) if part]
    without = subwords.train(stretches, vocab_size=119)
    assert tok.merges == without.merges
    assert tok.rows[1:] == without.rows


def test_a_count_table_holding_a_special_is_cut_at_it():
    tok = subwords.train({"low": 5, f"low{EOT}er": 2}, vocab_size=30, special_tokens=[EOT])
    assert not any("|" in p for p, k in zip(tok.rows, tok.kinds) if k != "special")


def test_only_the_allowed_specials_match():
    tok = train(special_tokens=[EOT, "<pad>"])
    ids = tok.encode(f"a{EOT}b<pad>", allowed_special={EOT})
    assert ids.count(0) == 1 and 1 not in ids
    assert tok.decode(ids[ids.index(0) + 1:]).endswith("pad[UNK]")  # "<" and ">" only ever were in specials
    with pytest.raises(InputError, match="not a special token"):
        tok.encode("x", allowed_special={"<nope>"})
    batch = tok.encode_batch([f"{EOT}hello", "hello"], allowed_special="all")
    assert batch == [tok.encode(f"{EOT}hello", allowed_special="all"), tok.encode("hello")]
    assert batch[0] == [0] + tok.encode("hello")


def test_the_engine_batch_cuts_at_specials_as_the_single_call_does():
    # encode_batch and encode cut by one rule in the core (encoder.rs, Allowed::split): leftmost,
    # and the longest of specials starting at one place ("<|end|>" before its prefix "<|end")
    tok = train(special_tokens=[EOT, "<|end", "<|end|>", "<pad>"], user_symbols=["<sep>"])
    texts = [f"{EOT}{EOT}", "<|end|><|end", "a<|end|>b<|endoftext|>c<pad>", "x<sep><|endo", "", "plain text",
             f"<pad><sep>{EOT}<|end|>"] + [f"{s} {EOT} {s}<sep>" for s in SENTENCES]
    for allowed in ("all", {EOT}, {"<|end"}, ()):
        assert tok.encode_batch(texts, allowed_special=allowed, threads=2) == \
            [tok.encode(t, allowed_special=allowed) for t in texts]
    assert tok.encode_batch(["<|end|>"], allowed_special="all") == [[2]]


def test_user_symbols_always_match_and_keep_offsets():
    tok = train(special_tokens=[EOT], user_symbols=["<sep>"])
    assert tok.rows[:3] == [EOT, "<sep>", "[UNK]"]
    assert tok.user_symbols == ["<sep>"]
    text = "hello<sep>world"
    ids = tok.encode(text)
    assert ids == tok.encode("hello") + [1] + tok.encode("world")
    assert tok.encode_batch([text]) == [ids]
    offsets = tok.encode_with_offsets(text)
    assert [i for i, _, _ in offsets] == ids
    assert (1, 5, 10) in offsets and text[5:10] == "<sep>"
    k = [i for i, _, _ in offsets].index(1)
    assert all(0 <= s <= e <= 5 for _, s, e in offsets[:k])
    assert all(10 <= s <= e <= 15 for _, s, e in offsets[k + 1:])
    assert "".join(text[s:e] for _, s, e in offsets) == text


# -- reserved rows and padding ----------------------------------------------------------------------


def test_reserved_rows_follow_the_user_symbols():
    tok = train(special_tokens=[EOT], user_symbols=["<sep>"], reserved_tokens=3)
    assert tok.rows[:6] == [EOT, "<sep>", "<|reserved_0|>", "<|reserved_1|>", "<|reserved_2|>", "[UNK]"]


@pytest.mark.parametrize("model,spelling", [("bpe", "end"), ("bpe", "bytes"), ("unigram", "front"),
                                            ("wordpiece", "continuation")])
def test_pad_to_multiple_pads_with_reserved_rows_and_cuts_text_as_before(model, spelling):
    kw = dict(model=model, spelling=spelling, special_tokens=[EOT], reserved_tokens=1,
              vocab_size=300 if spelling == "bytes" else 100)
    if model == "unigram":
        kw["vocab_size"] = 60
    plain = train(**kw)
    padded = train(**kw, pad_to_multiple=64)
    assert padded.vocab_size % 64 == 0 and plain.vocab_size <= padded.vocab_size < plain.vocab_size + 64
    pad = padded.vocab_size - plain.vocab_size
    assert padded.rows[:2] == [EOT, "<|reserved_0|>"]
    assert padded.rows[2:2 + pad] == [f"<|reserved_{i}|>" for i in range(1, 1 + pad)]
    assert padded.rows[2 + pad:] == plain.rows[2:]
    for text in SENTENCES + [f"{EOT} hello"]:
        assert padded.encode_pieces(text) == plain.encode_pieces(text)
        assert padded.decode(padded.encode(text)) == plain.decode(plain.encode(text))
    assert subwords.SubwordsTokenizer.from_json(padded.to_json()) == padded


def test_bytes_spelling_puts_the_256_bytes_after_the_specials():
    tok = train(spelling="bytes", pre_split="gpt2", vocab_size=300, special_tokens=[EOT])
    assert tok.rows[0] == EOT and tok.kinds[1:257] == ["alphabet"] * 256
    assert tok.encode(f"{EOT} hello", allowed_special="all") == [0] + tok.encode(" hello")


# -- the model file -----------------------------------------------------------------------------------


def test_save_and_load_keep_the_specials(tmp_path):
    tok = train(special_tokens=[EOT, "<pad>"], user_symbols=["<sep>"], reserved_tokens=2, pad_to_multiple=32,
                bos_token=EOT, eos_token=EOT, pad_token="<pad>", unk_token="[UNK]")
    path = tmp_path / "m.json"
    tok.save(path)
    back = subwords.load(path)
    assert back == tok and back.rows == tok.rows
    text = f"hello<sep>world{EOT}<pad>"
    assert back.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
    assert back.encode(text) == tok.encode(text)
    opts = back.train_options
    assert opts.special_tokens == (EOT, "<pad>") and opts.user_symbols == ("<sep>",)
    assert (opts.reserved_tokens, opts.pad_to_multiple, opts.pad_token) == (2, 32, "<pad>")


def test_a_model_without_specials_writes_none_of_their_keys():
    doc = json.loads(subwords.train(FOUR, vocab_size=22).to_json())
    for key in ("special_tokens", "user_symbols", "reserved_tokens", "pad_to_multiple", "bos_token", "eos_token",
                "pad_token", "unk_token"):
        assert key not in doc["options"]


# -- bad input: a clear OptionError, nothing written ---------------------------------------------------


@pytest.mark.parametrize("kw,message", [
    (dict(special_tokens=[""]), "empty special token"),
    (dict(special_tokens=["<s>", "<s>"]), "given twice"),
    (dict(special_tokens=["<s>"], user_symbols=["<s>"]), "given twice"),
    (dict(special_tokens=["<|reserved_0|>"], reserved_tokens=1), "given twice"),
    (dict(special_tokens=["e"]), "collides with the alphabet symbol"),
    (dict(user_symbols=["x"]), "collides with the alphabet symbol"),
    (dict(special_tokens=["</w>"]), "mark"),
    (dict(special_tokens=["   "]), "only whitespace"),
    (dict(special_tokens=["<" + "x" * 300 + ">"]), "limit is 256"),
    (dict(special_tokens="<s>"), r"special_tokens='<s>': expected a list"),
    (dict(special_tokens=[3]), r"special_tokens=\[3\]: item 0: expected a str"),
    (dict(special_tokens=["<s>"], bos_token="<bos>"), "not one of special_tokens"),
    (dict(unk_token="<unk>"), "always"),
    (dict(user_symbols=["[UNK]"]), "unknown row"),
    (dict(pad_to_multiple=0), "pad_to_multiple"),
    (dict(model="word", special_tokens=["<s>"]), "apply to the bpe"),
])
def test_bad_specials_are_refused(kw, message):
    with pytest.raises(OptionError, match=message):
        subwords.train(FOUR, **{"vocab_size": 30, **kw})


def test_a_special_that_is_an_alphabet_symbol_is_refused():
    # the four words end in w, r and t: "t</w>" is a symbol of their end spelling
    with pytest.raises(OptionError, match="collides with the alphabet symbol"):
        subwords.train(FOUR, vocab_size=30, special_tokens=["t</w>"])


@pytest.mark.parametrize("kw,special", [
    ({"normalize": "nfkc"}, "<ﬁle>"),     # NFKC folds the ligature ﬁ into f + i
    ({"normalize": "nfkc"}, "<|１|>"),     # and the full-width digit into 1
    ({"lowercase": True}, "<BOS>"),
])
def test_a_special_the_normalization_would_change_is_refused(kw, special, tmp_path):
    with pytest.raises(OptionError, match="would be normalized to"):
        subwords.train(FOUR, vocab_size=30, special_tokens=[special], **kw)
    # a special the normalization keeps is taken
    tok = subwords.train(FOUR, vocab_size=30, special_tokens=["<file>"], **kw)
    assert tok.id_to_piece(0) == "<file>"


# -- exports, read back by the original libraries -------------------------------------------------------


def test_tokenizer_json_has_the_specials_as_added_tokens_with_roles(tmp_path):
    tok = train(spelling="front", special_tokens=["<s>", "</s>", "<pad>", EOT], user_symbols=["<sep>"],
                bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    out = tmp_path / "tokenizer.json"
    export(tok, out, "hf")
    peer = tk.Tokenizer.from_file(str(out))
    added = peer.get_added_tokens_decoder()
    assert {i: (t.content, t.special) for i, t in added.items()} == {
        0: ("<s>", True), 1: ("</s>", True), 2: ("<pad>", True), 3: (EOT, True), 4: ("<sep>", False)}
    for text in [f"<s>{EOT} hello world</s>", "the cat<sep>sat on the mat", *SENTENCES]:
        assert peer.encode(text).ids == tok.encode(text, allowed_special="all"), text
    config = json.loads((tmp_path / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config["bos_token"] == "<s>" and config["eos_token"] == "</s>" and config["pad_token"] == "<pad>"
    assert config["unk_token"] == "[UNK]"
    # subwords reads its export back with the same ids
    back = load(out)
    assert back.encode(f"<s> hello</s>", allowed_special="all") == tok.encode("<s> hello</s>", allowed_special="all")


def test_byte_level_tokenizer_json_matches_tokenizers_on_the_endoftext_example(tmp_path):
    tok = train(spelling="bytes", pre_split="gpt2", vocab_size=300, special_tokens=[EOT])
    out = tmp_path / "tokenizer.json"
    export(tok, out, "hf")
    peer = tk.Tokenizer.from_file(str(out))
    for text in [f"{EOT} hello", f"a{EOT}{EOT}b", *SENTENCES]:
        assert peer.encode(text).ids == tok.encode(text, allowed_special="all")
    assert not (tmp_path / "tokenizer_config.json").exists()  # no roles named


@pytest.mark.parametrize("model", ["bpe", "unigram"])
def test_sentencepiece_model_has_control_and_user_defined_pieces(tmp_path, model):
    tok = train(model=model, spelling="front", vocab_size=80, special_tokens=["<s>", "</s>", "<pad>"],
                user_symbols=["<sep>"], bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    out = tmp_path / "m.model"
    export(tok, out, "sentencepiece")
    sp = spm.SentencePieceProcessor(model_file=str(out))
    assert [sp.IdToPiece(i) for i in range(5)] == ["<s>", "</s>", "<pad>", "<sep>", "[UNK]"]
    assert [sp.IsControl(i) for i in range(5)] == [True, True, True, False, False]
    proto = sp_pb.ModelProto()
    proto.ParseFromString(out.read_bytes())
    types = sp_pb.ModelProto.SentencePiece.Type
    assert [types.Name(p.type) for p in proto.pieces[:5]] == ["CONTROL"] * 3 + ["USER_DEFINED", "UNKNOWN"]
    assert sp.IsUnknown(4)
    assert (sp.bos_id(), sp.eos_id(), sp.pad_id(), sp.unk_id()) == (0, 1, 2, 4)
    for text in SENTENCES:
        assert sp.encode(text) == tok.encode(text), text
    # both match the user symbol in text; sentencepiece spells the text around it as one text
    # (no "▁" before "sat"), subwords as separate texts, as tokenizers does (docs/SPECIALS.md)
    assert 3 in sp.encode("the cat<sep>sat") and 3 in tok.encode("the cat<sep>sat")


def test_tiktoken_file_with_its_special_tokens(tmp_path):
    from tiktoken.load import load_tiktoken_bpe

    from subwords.formats.tiktoken.read import GPT2_PATTERN

    tok = train(spelling="bytes", pre_split="gpt2", vocab_size=320, special_tokens=[EOT, "<|pad|>"])
    out = tmp_path / "m.tiktoken"
    export(tok, out, "tiktoken")
    specials = json.loads((tmp_path / "m.tiktoken.special_tokens.json").read_text(encoding="utf-8"))
    assert specials == {EOT: 0, "<|pad|>": 1}
    enc = tiktoken.Encoding("m", pat_str=GPT2_PATTERN, mergeable_ranks=load_tiktoken_bpe(str(out)),
                            special_tokens=specials)
    for text in [f"{EOT} hello", f"x<|pad|>{EOT}y", *SENTENCES]:
        assert enc.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
        assert enc.encode(text, disallowed_special=()) == tok.encode(text)
    back = load(out, pattern=GPT2_PATTERN)
    assert back.special_tokens == specials
    assert back.encode(f"{EOT} hello", allowed_special="all") == tok.encode(f"{EOT} hello", allowed_special="all")


def test_formats_that_cannot_hold_them_refuse_and_write_nothing(tmp_path):
    tok = train(special_tokens=[EOT])
    with pytest.raises(InputError, match="special token"):
        export(tok, tmp_path / "codes.txt", "subword-nmt")
    byte_level = train(spelling="bytes", pre_split="gpt2", vocab_size=300, user_symbols=["<sep>"])
    with pytest.raises(InputError, match="user symbols"):
        export(byte_level, tmp_path / "m.tiktoken", "tiktoken")
    assert list(tmp_path.iterdir()) == []


# -- the command line -------------------------------------------------------------------------------------


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "subwords", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120, env={**os.environ, "PYTHONIOENCODING": "utf-8"})


def test_cli_train_with_special_tokens_and_padding(tmp_path):
    (tmp_path / "docs.txt").write_text("\n".join(DOCS) + "\n", encoding="utf-8")
    p = run("train", "docs.txt", "-o", "m.json", "--vocab-size", "100", "--special-token", EOT,
            "--special-token", "<pad>", "--user-symbol", "<sep>", "--reserved-tokens", "2", "--pad-to-multiple", "16",
            "--pad-token", "<pad>", "--quiet", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    tok = subwords.load(tmp_path / "m.json")
    assert tok.rows[:5] == [EOT, "<pad>", "<sep>", "<|reserved_0|>", "<|reserved_1|>"]
    assert tok.vocab_size % 16 == 0
    assert tok.train_options.pad_token == "<pad>"


def test_cli_refuses_a_bad_special_and_writes_nothing(tmp_path):
    (tmp_path / "docs.txt").write_text("\n".join(DOCS) + "\n", encoding="utf-8")
    p = run("train", "docs.txt", "-o", "m.json", "--vocab-size", "100", "--special-token", "<s>",
            "--special-token", "<s>", cwd=tmp_path)
    assert p.returncode != 0 and "given twice" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "m.json").exists()
