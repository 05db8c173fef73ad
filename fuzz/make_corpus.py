"""Writes the seed corpora in fuzz/corpus/<target>/ from the project's own trainer and exporters,
plus a few hand-written variants per format (the corners a trained model does not reach).

    python fuzz/make_corpus.py          # rewrites every seed file (regressions are never touched)

The Rust ``hf_pipeline`` target reads what ``subwords._core.HfPipeline`` is given: the seeds are
captured from ``subwords.formats.load`` on the tokenizer.json seeds, as ``plan \\xFF vocab \\xFF
merges`` (see fuzz/src/targets.rs). Every file is small (a few KB); the whole corpus is a few
hundred KB. Output is deterministic for a given subwords.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")

TEXT = [
    "the lower newest widest lowest low low low newer wider",
    "Hello, wörld! It's 2024; naïve café — déjà vu.",
    "漢字かな交じり文と 한국어 텍스트 и русский текст",
    "tab\tseparated  double  spaces ①② ﬁ e\u0301 👩\u200d👩",
    "aaaa aaa aa a ab abc abcd abcde bcd cde",
] * 3


def write(target: str, name: str, data: bytes) -> None:
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


# -- a minimal protobuf writer (SentencePiece ModelProto, field numbers of proto.rs) -------------

def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(tag: int, value) -> bytes:
    if isinstance(value, bool) or isinstance(value, int):
        return varint(tag << 3) + varint(int(value))
    if isinstance(value, float):
        return varint(tag << 3 | 5) + struct.pack("<f", value)
    if isinstance(value, str):
        value = value.encode("utf-8")
    return varint(tag << 3 | 2) + varint(len(value)) + value


def sp_model(pieces, trainer=(), normalizer=()) -> bytes:
    out = b""
    for text, score, kind in pieces:
        out += field(1, field(1, text) + field(2, float(score)) + field(3, kind))
    out += field(2, b"".join(field(t, v) for t, v in trainer))
    out += field(3, b"".join(field(t, v) for t, v in normalizer))
    return out


NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


def main() -> None:
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    import subwords
    from subwords import _core
    from subwords.formats import export

    if os.path.isdir(CORPUS):
        for name in ("model_json", "sentencepiece_model", "tiktoken_ranks", "hf_pipeline", "hf_tables", "tokenizer_json",
                     "vocab_merges", "subword_nmt", "vocab_txt"):
            shutil.rmtree(os.path.join(CORPUS, name), ignore_errors=True)
    tmp = tempfile.mkdtemp()
    try:
        models = {
            "bpe_end": dict(model="bpe", spelling="end", vocab_size=80),
            "bpe_front": dict(model="bpe", spelling="front", vocab_size=90),
            "bpe_front_bytes": dict(model="bpe", spelling="front", vocab_size=340, byte_fallback=True),
            "bpe_continuation": dict(model="bpe", spelling="continuation", vocab_size=80),
            "bpe_bytes_gpt2": dict(model="bpe", spelling="bytes", pre_split="gpt2", vocab_size=280),
            "bpe_superword": dict(model="bpe", spelling="end", vocab_size=110, superword_at=85),
            "bpe_lower": dict(model="bpe", spelling="end", vocab_size=95, lowercase=True, strip_accents=True,
                              clean_text=True),
            "wordpiece_bert": dict(model="wordpiece", preset="bert", vocab_size=90),
            "wordpiece_rest": dict(model="wordpiece", spelling="continuation", vocab_size=80, unknown="rest"),
            "unigram_front": dict(model="unigram", spelling="front", vocab_size=80),
            "unigram_front_bytes": dict(model="unigram", spelling="front", vocab_size=340, byte_fallback=True),
            "unigram_end": dict(model="unigram", spelling="end", vocab_size=95),
        }
        toks = {}
        for name, kw in models.items():
            try:
                toks[name] = subwords.train(TEXT, **kw)
            except subwords.SubwordsError as e:
                print(f"skip {name}: {e}", file=sys.stderr)
                continue
            write("model_json", f"{name}.json", toks[name].to_json().encode("utf-8"))
        # model_json: hand-made corners
        small = json.loads(toks["bpe_end"].to_json())
        small["rows"] = small["rows"][:12]
        small["merges"] = []
        small["options"] = None
        small["report"] = None
        write("model_json", "hand_no_merges.json", json.dumps(small).encode())
        write("model_json", "hand_not_object.json", b"[1, 2, 3]")
        write("model_json", "hand_truncated.json", toks["bpe_end"].to_json().encode()[:300])

        # sentencepiece: the exporter's files, then hand-made ModelProtos
        for name in ("bpe_front", "bpe_front_bytes", "unigram_front", "unigram_front_bytes"):
            if name in toks:
                p = os.path.join(tmp, f"{name}.model")
                export(toks[name], p, "sentencepiece")
                write("sentencepiece_model", f"{name}.model", read(p))
        letters = [(c, -float(i), NORMAL) for i, c in enumerate("abcdelnorstw\u2581")]
        base = [("<unk>", 0.0, UNKNOWN), ("<s>", 0.0, CONTROL), ("</s>", 0.0, CONTROL)]
        charsmap = bytes(_core_charsmap(_core))
        write("sentencepiece_model", "hand_unigram.model",
              sp_model(base + letters + [("\u2581lo", -1.5, NORMAL), ("we", -2.0, NORMAL), ("<sep>", 0.0, USER_DEFINED)],
                       trainer=[(3, 1)], normalizer=[(1, "identity")]))
        write("sentencepiece_model", "hand_bpe_unused.model",
              sp_model(base + letters + [("lo", -20.0, NORMAL), ("low", -21.0, UNUSED), ("er", -22.0, NORMAL)],
                       trainer=[(3, 2)], normalizer=[(1, "identity"), (3, False), (4, False)]))
        byte_pieces = [(f"<0x{b:02X}>", 0.0, BYTE) for b in range(256)]
        write("sentencepiece_model", "hand_byte_fallback.model",
              sp_model(base + byte_pieces + letters, trainer=[(3, 1), (35, True), (44, "?")],
                       normalizer=[(1, "nmt_nfkc"), (2, charsmap), (5, True)]))
        write("sentencepiece_model", "hand_charsmap.model",
              sp_model(base + letters, trainer=[(3, 1)], normalizer=[(1, "nmt_nfkc"), (2, charsmap)]))
        write("sentencepiece_model", "hand_no_unk.model", sp_model(letters, trainer=[(3, 1)]))
        write("sentencepiece_model", "hand_empty.model", b"")

        # tiktoken: the exporter's rank file, then hand-made ones
        if "bpe_bytes_gpt2" in toks:
            p = os.path.join(tmp, "r50k.tiktoken")
            export(toks["bpe_bytes_gpt2"], p, "tiktoken")
            write("tiktoken_ranks", "exported.tiktoken", read(p))
        byte_lines = [base64.b64encode(bytes([b])).decode() + f" {b}" for b in range(256)]
        extra = [b"ab", b"bc", b"abc", b"  ", b"\xe6\xbc\xa2", b"hello world", b"x" * 20, b"\xff\xfe"]
        merged = [base64.b64encode(t).decode() + f" {256 + k}" for k, t in enumerate(extra)]
        write("tiktoken_ranks", "hand_bytes.tiktoken", ("\n".join(byte_lines) + "\n").encode())
        write("tiktoken_ranks", "hand_merges.tiktoken", ("\n".join(byte_lines + merged) + "\n").encode())
        write("tiktoken_ranks", "hand_crlf_blank.tiktoken", ("\r\n".join(byte_lines + [""] + merged)).encode())
        write("tiktoken_ranks", "hand_gap.tiktoken", ("\n".join(byte_lines + ["YWJj 900"]) + "\n").encode())
        write("tiktoken_ranks", "hand_missing_byte.tiktoken", ("\n".join(byte_lines[1:]) + "\n").encode())
        write("tiktoken_ranks", "hand_bad_base64.tiktoken", b"IQ== 0\nIR== 1\nI Q= 2\n")
        write("tiktoken_ranks", "hand_dup.tiktoken", ("\n".join(byte_lines + ["YWI= 300", "YWI= 301"])).encode())

        # tokenizer.json / vocab.json+merges.txt: the exporter's files
        for name in ("bpe_end", "bpe_front", "bpe_front_bytes", "bpe_continuation", "bpe_bytes_gpt2", "wordpiece_bert",
                     "wordpiece_rest", "unigram_front", "unigram_front_bytes", "bpe_lower"):
            if name not in toks:
                continue
            p = os.path.join(tmp, f"{name}.json")
            try:
                export(toks[name], p, "hf")
            except subwords.SubwordsError as e:
                print(f"skip hf {name}: {e}", file=sys.stderr)
                continue
            write("tokenizer_json", f"{name}.json", read(p))
        for name, doc in hand_tokenizer_jsons(charsmap).items():
            write("tokenizer_json", f"hand_{name}.json", json.dumps(doc, ensure_ascii=False).encode())
        if "bpe_bytes_gpt2" in toks:
            d = os.path.join(tmp, "vm")
            os.makedirs(d)
            export(toks["bpe_bytes_gpt2"], d, "vocab-merges")
            v, m = read(os.path.join(d, "vocab.json")), read(os.path.join(d, "merges.txt"))
            write("vocab_merges", "exported.bin", v + b"\xff" + m)
            write("vocab_merges", "exported_no_header.bin", v + b"\xff" + m.split(b"\n", 1)[1])
        gpt2 = _gpt2_chars()
        vocab = {c: i for i, c in enumerate(gpt2)}
        for k, (a, b) in enumerate([("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("l", "o"), ("lo", "w")]):
            vocab[a + b] = 256 + k
        vocab["<|endoftext|>"] = len(vocab)
        merges = "#version: 0.2\nĠ t\nh e\nĠt he\nl o\nlo w\n"
        write("vocab_merges", "hand_gpt2.bin", json.dumps(vocab, ensure_ascii=False).encode() + b"\xff" + merges.encode())
        write("vocab_merges", "hand_crlf.bin", json.dumps(vocab).encode() + b"\xff" + merges.replace("\n", "\r\n").encode())
        write("vocab_merges", "hand_small.bin", b'{"a": 0, "b": 1, "ab": 2}\xffa b\n')
        write("vocab_merges", "hand_bad_merge.bin", b'{"a": 0, "b": 1}\xffa b c\n')
        write("vocab_merges", "hand_missing.bin", b'{"a": 0}\xffa b\n')
        write("vocab_merges", "hand_not_object.bin", b'["a", "b"]\xff')
        write("vocab_merges", "hand_dup_key.bin", b'{"a": 0, "a": 1}\xff')

        # hf_pipeline: what the loader hands the core, captured from the tokenizer.json seeds
        captured = capture_plans(os.path.join(CORPUS, "tokenizer_json"), os.path.join(CORPUS, "vocab_merges"))
        for name, (plan, vocab, merges) in sorted(captured.items()):
            lines = []
            for m in merges:
                pair = m.split(" ") if isinstance(m, str) else list(m)
                if len(pair) == 2 and all(pair) and not any(" " in x or "\n" in x for x in pair):
                    lines.append(f"{pair[0]} {pair[1]}")
            v = json.dumps(dict(sorted(vocab.items(), key=lambda kv: kv[1])), ensure_ascii=False)
            write("hf_pipeline", f"{name}.bin", plan.encode() + b"\xff" + v.encode() + b"\xff" + "\n".join(lines).encode())
            if name in ("wordpiece_bert", "hand_wordpiece", "hand_unigram", "hand_precompiled_unigram", "hand_bpe_suffix"):
                whole = json.loads(plan)
                if whole["model"]["type"] != "Unigram":
                    whole["model"]["vocab"] = sorted(vocab.items(), key=lambda kv: kv[1])
                if whole["model"]["type"] == "Bpe":
                    ids = dict(vocab)
                    whole["model"]["merges"] = [[ids[a], ids[b], ids[a + b.removeprefix("##")]] for a, b in
                                                (line.split(" ") for line in lines)]
                write("hf_pipeline", f"{name}_whole.json", json.dumps(whole, ensure_ascii=False).encode())

        # hf_tables: the tokenizer.json seeds themselves, which load reads the tables of first
        for name in sorted(os.listdir(os.path.join(CORPUS, "tokenizer_json"))):
            write("hf_tables", name, read(os.path.join(CORPUS, "tokenizer_json", name)))

        # subword-nmt codes
        if "bpe_end" in toks:
            p = os.path.join(tmp, "codes")
            export(toks["bpe_end"], p, "subword-nmt")
            write("subword_nmt", "exported.codes", read(p))
        write("subword_nmt", "hand_v02.codes", "#version: 0.2\ne s\nes t</w>\nl o\nlo w</w>\n".encode())
        write("subword_nmt", "hand_v01.codes", "#version: 0.1\ne s\nes t\nt </w>\nl o\n".encode())
        write("subword_nmt", "hand_no_header.codes", "a b\nab c\nc </w>\n".encode())
        write("subword_nmt", "hand_handmade.codes", "#version: 0.2\nab cd</w>\na b\nc d</w>\n".encode())
        write("subword_nmt", "hand_unicode.codes", "#version: 0.2.0\n漢 字</w>\né e\nñ a</w>\n".encode())
        write("subword_nmt", "hand_dup.codes", "#version: 0.2\na b\na b\nab b</w>\n".encode())
        write("subword_nmt", "hand_bad_line.codes", "#version: 0.2\na b c\n".encode())
        write("subword_nmt", "hand_bad_version.codes", "#version: 0.3\na b\n".encode())
        write("subword_nmt", "hand_empty.codes", "#version: 0.2\n".encode())

        # BERT vocab.txt
        if "wordpiece_bert" in toks:
            p = os.path.join(tmp, "vocab.txt")
            export(toks["wordpiece_bert"], p, "vocab-txt")
            write("vocab_txt", "exported.txt", read(p))
        write("vocab_txt", "hand_small.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\nb\n##b\nab\n##c\n".encode())
        write("vocab_txt", "hand_crlf.txt", "[UNK]\r\n[CLS]\r\n[SEP]\r\nhello\r\n##lo\r\n".encode())
        write("vocab_txt", "hand_unicode.txt", "[UNK]\n[CLS]\n[SEP]\n漢\n##字\né\n##s\n##\n#\n".encode())
        write("vocab_txt", "hand_no_cls.txt", "[UNK]\n[SEP]\na\n".encode())
        write("vocab_txt", "hand_space.txt", "[UNK]\n[CLS]\n[SEP]\na b\n".encode())
        write("vocab_txt", "hand_dup.txt", "[UNK]\n[CLS]\n[SEP]\na\na\n".encode())
        write("vocab_txt", "hand_no_newline.txt", "[UNK]\n[CLS]\n[SEP]".encode())
        write("vocab_txt", "hand_latin1.txt", b"[UNK]\n[CLS]\n[SEP]\ncaf\xe9\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for target in sorted(os.listdir(CORPUS)):
        files = os.listdir(os.path.join(CORPUS, target))
        size = sum(os.path.getsize(os.path.join(CORPUS, target, f)) for f in files)
        print(f"{target}: {len(files)} files, {size} bytes")


def _core_charsmap(core) -> bytes:
    """A small precompiled character map written by the core's own builder (``Charsmap::build``,
    through ``_core.sp_model_bytes``): NFKC-like rules for a few characters, a two-character
    rule, and every other Unicode space to U+0020."""
    from subwords.formats._sp_export import WHITESPACE

    rules = [("\ufb01", "fi"), ("\u2460", "1"), ("e\u0301", "\u00e9"), ("\u00c5", "A\u030a"), ("\uff21", "A")]
    rules += [(w, " ") for w in WHITESPACE if w != " "]
    pieces = [("<unk>", 0.0, UNKNOWN), ("a", -1.0, NORMAL), ("\u2581", -2.0, NORMAL)]
    data = core.sp_model_bytes("unigram", pieces, False, " ? ", rules, True, True, True)
    return _normalizer_charsmap(bytes(data))


def _normalizer_charsmap(data: bytes) -> bytes:
    """The precompiled_charsmap of a ModelProto (field 3, then its field 2), read by hand."""

    def fields(buf: bytes):
        i = 0
        while i < len(buf):
            key, i = _read_varint(buf, i)
            tag, wire = key >> 3, key & 7
            if wire == 0:
                v, i = _read_varint(buf, i)
            elif wire == 5:
                v, i = buf[i:i + 4], i + 4
            elif wire == 1:
                v, i = buf[i:i + 8], i + 8
            elif wire == 2:
                n, i = _read_varint(buf, i)
                v, i = buf[i:i + n], i + n
            else:
                raise ValueError(f"wire type {wire}")
            yield tag, v

    for tag, v in fields(data):
        if tag == 3:
            for t2, v2 in fields(v):
                if t2 == 2:
                    return v2
    raise ValueError("no precompiled_charsmap in the exported model")


def _read_varint(buf: bytes, i: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def _gpt2_chars() -> list[str]:
    out, n = [], 0
    for b in range(256):
        if 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF:
            out.append(chr(b))
        else:
            out.append(chr(256 + n))
            n += 1
    return out


def hand_tokenizer_jsons(charsmap: bytes) -> dict:
    """tokenizer.json documents covering components the exporter does not write."""
    letters = {c: i for i, c in enumerate("[UNK] [CLS] [SEP] a b c d e h l o r w".split())}
    wp_vocab = dict(letters)
    for t in ("##a", "##b", "##e", "##l", "##o", "he", "##llo", "low", "##er"):
        wp_vocab[t] = len(wp_vocab)
    added = [{"id": 1, "content": "[CLS]", "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True},
             {"id": 2, "content": "[SEP]", "single_word": True, "lstrip": True, "rstrip": True,
              "normalized": True, "special": False}]
    base = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added}
    docs = {}
    docs["wordpiece"] = dict(base, normalizer={"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                                               "strip_accents": None, "lowercase": True},
                             pre_tokenizer={"type": "BertPreTokenizer"},
                             post_processor={"type": "BertProcessing", "sep": ["[SEP]", 2], "cls": ["[CLS]", 1]},
                             decoder={"type": "WordPiece", "prefix": "##", "cleanup": True},
                             model={"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                                    "max_input_chars_per_word": 100, "vocab": wp_vocab})
    bpe_vocab = {"<unk>": 0, "▁": 1, "a": 2, "b": 3, "l": 4, "o": 5, "w": 6, "▁l": 7, "▁lo": 8, "▁low": 9, "ab": 10}
    for b in range(256):
        bpe_vocab[f"<0x{b:02X}>"] = 11 + b
    docs["metaspace_bpe"] = dict(
        base, added_tokens=[{"id": 0, "content": "<unk>", "single_word": False, "lstrip": False, "rstrip": False,
                             "normalized": False, "special": True}],
        normalizer={"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
            {"type": "NFKC"}, {"type": "Strip", "strip_left": True, "strip_right": False}]},
        pre_tokenizer={"type": "Sequence", "pretokenizers": [
            {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False},
            {"type": "Digits", "individual_digits": True}, {"type": "Punctuation", "behavior": "Contiguous"}]},
        post_processor={"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": 0}}],
                        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
                        "special_tokens": {}},
        decoder={"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                                                   {"type": "ByteFallback"}, {"type": "Fuse"},
                                                   {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        model={"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
               "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
               "vocab": bpe_vocab, "merges": [["▁", "l"], ["▁l", "o"], ["▁lo", "w"], ["a", "b"]]})
    docs["bpe_suffix"] = dict(
        base, added_tokens=[],
        normalizer={"type": "Sequence", "normalizers": [{"type": "Lowercase"}, {"type": "NFD"}, {"type": "StripAccents"},
                                                         {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "}]},
        pre_tokenizer={"type": "WhitespaceSplit"},
        post_processor=None,
        decoder={"type": "BPEDecoder", "suffix": "</w>"},
        model={"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "##",
               "end_of_word_suffix": "</w>", "fuse_unk": False, "byte_fallback": False, "ignore_merges": True,
               "vocab": {"l": 0, "o": 1, "w": 2, "##o": 3, "##w</w>": 4, "lo": 5, "low</w>": 6, "w</w>": 7, "##w": 8},
               "merges": ["l ##o", "lo ##w</w>"]})
    docs["unigram"] = dict(
        base, added_tokens=[],
        normalizer={"type": "Sequence", "normalizers": [
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}, {"type": "NFC"}]},
        pre_tokenizer={"type": "Metaspace", "replacement": "▁", "add_prefix_space": True},
        post_processor={"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 1], "trim_offsets": True,
                        "add_prefix_space": True},
        decoder={"type": "Metaspace", "replacement": "▁", "add_prefix_space": True},
        model={"type": "Unigram", "unk_id": 0, "byte_fallback": False,
               "vocab": [["<unk>", 0.0], ["<s>", 0.0], ["</s>", 0.0], ["▁", -2.0], ["a", -3.0], ["b", -3.5], ["ab", -4.0],
                         ["▁ab", -4.5], ["l", -3.0], ["o", -3.0], ["w", -3.0], ["low", -5.0]]})
    docs["bytelevel_roberta"] = dict(
        base, added_tokens=[{"id": 0, "content": "<s>", "single_word": False, "lstrip": False, "rstrip": False,
                             "normalized": True, "special": True}],
        normalizer={"type": "NFKD"},
        pre_tokenizer={"type": "Sequence", "pretokenizers": [{"type": "Whitespace"},
                                                              {"type": "ByteLevel", "add_prefix_space": True,
                                                               "trim_offsets": True, "use_regex": False}]},
        post_processor={"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        decoder={"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        model={"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
               "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": True,
               "vocab": dict({c: i + 1 for i, c in enumerate(_gpt2_chars())}, **{"<s>": 0, "Ġh": 257, "Ġhe": 258}),
               "merges": ["Ġ h", "Ġh e"]})
    docs["precompiled_unigram"] = dict(
        docs["unigram"], normalizer={"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode()},
        model=dict(docs["unigram"]["model"], byte_fallback=True,
                   vocab=docs["unigram"]["model"]["vocab"] + [[f"<0x{b:02X}>", -9.0] for b in range(256)]))
    docs["bad_regex"] = dict(docs["bpe_suffix"], normalizer={"type": "Replace", "pattern": {"Regex": "a+"}, "content": ""})
    docs["bad_version"] = dict(docs["bpe_suffix"], version="2.0")
    return docs


def capture_plans(*folders: str) -> dict:
    """Loads every seed with subwords.formats.load, recording what HfPipeline is built from."""
    from subwords import _core
    from subwords.formats import load

    seen: dict = {}
    real = _core.HfPipeline

    class Spy:
        normalize_with = staticmethod(real.normalize_with)

        def __new__(cls, plan, tables, limit):
            pairs = tables.pairs()
            seen["last"] = (plan, dict(pairs), [list(m) for m in tables.merges()])
            return real(plan, tables, limit)

    out = {}
    _core.HfPipeline = Spy
    try:
        for folder in folders:
            for name in sorted(os.listdir(folder)):
                path = os.path.join(folder, name)
                seen.pop("last", None)
                with tempfile.TemporaryDirectory() as d:
                    if folder.endswith("vocab_merges"):
                        v, _, m = read(path).partition(b"\xff")
                        with open(os.path.join(d, "vocab.json"), "wb") as f:
                            f.write(v)
                        with open(os.path.join(d, "merges.txt"), "wb") as f:
                            f.write(m)
                        target, fmt = d, "vocab-merges"
                    else:
                        target = os.path.join(d, "tokenizer.json")
                        shutil.copy(path, target)
                        fmt = "hf"
                    try:
                        load(target, format=fmt)
                    except Exception:  # noqa: BLE001 - refused seeds still show a plan if one was made
                        pass
                if "last" in seen:
                    out[("vm_" if fmt == "vocab-merges" else "") + os.path.splitext(name)[0]] = seen["last"]
    finally:
        _core.HfPipeline = real
    return out


if __name__ == "__main__":
    main()
