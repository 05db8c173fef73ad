"""LiteToken (arXiv 2602.04706) through ``subwords.trim(..., litetoken=True)`` and
``subwords trim --litetoken``: the paper's measure ``R(t) = F1 / (F1 + F2)`` worked by hand, the
engine against the replaying reference (python/subwords/reference/litetoken.py), cl100k on 10k
lines of the multilingual corpus, and bad input."""

from __future__ import annotations

import base64
import gzip
import json
import math
import random
import subprocess
import sys

import pytest

import peers
import subwords
from subwords import trim
from subwords.errors import InputError, OptionError, SubwordsError
from subwords.reference import litetoken as ref


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "subwords", *args], capture_output=True, text=True, encoding="utf-8")


def rank_file(path, extra: list[bytes]):
    """A .tiktoken file: the 256 bytes at ranks 0..255, then ``extra`` in order."""
    tokens = [bytes([i]) for i in range(256)] + extra
    path.write_bytes(b"".join(base64.b64encode(t) + f" {r}\n".encode() for r, t in enumerate(tokens)))
    return path


# -- the hand-worked case (the reference module's docstring works it too) ------------------------
#
# The paper's definition: F1(t) counts t in the final encoding of the corpus, F2(t) counts t made by
# a merge and merged again; t is a residue when R(t) = F1 / (F1 + F2) is below the threshold.
# Corpus: "abc" 9 times, then one line that ends as the piece "ab".
#   each "abc": a b c -> ab c -> abc      ab is made and merged on (F2 += 1); abc is final (F1 += 1)
#   the "ab" line: a b -> ab             ab is final (F1 += 1)
# F1(ab) = 1, F2(ab) = 9, R(ab) = 0.1;  F1(abc) = 9, F2(abc) = 0, R(abc) = 1.

def test_rank_rule_by_hand(tmp_path):
    corpus = ["abc"] * 9 + ["ab"]
    # ranks: ab 256, abc 257. abc has the cuts a+bc (no row bc) and ab+c: without ab nothing makes
    # abc, so ab is protected and nothing goes.
    tok = subwords.load(rank_file(tmp_path / "cl100k_base.tiktoken", [b"ab", b"abc"]))
    t = trim(tok, corpus, litetoken=True, threshold=0.2)
    assert [(i, p) for i, p, *_ in t.litetoken.residues] == []
    assert t.litetoken.protected == [(256, "ab", 1, 9)]
    specials = len(tok._core.specials())  # the cl100k pattern's, at their own ids above the ranks
    assert (t.old_size, t.new_size, t.litetoken.lines_changed) == (258 + specials, 258 + specials, 0)
    # with bc (rank 258) abc is still made as a+bc: ab goes
    (tmp_path / "x").mkdir()
    path = rank_file(tmp_path / "x" / "cl100k_base.tiktoken", [b"ab", b"abc", b"bc"])
    out = tmp_path / "cut.tiktoken"
    t = trim(subwords.load(path), corpus, litetoken=True, threshold=0.2, output=out)
    assert t.litetoken.residues == [(256, "ab", 1, 9)]
    assert t.litetoken.protected == []
    assert (t.old_size, t.new_size) == (259 + specials, 258 + specials)
    assert t.id_map[255] == 255 and t.id_map[256] is None and t.id_map[257:259] == [256, 257]
    # abc: a b c -> (ab gone) b+c -> a bc -> abc, the row now at 256; the "ab" line is now a, b
    assert t.tokenizer.encode("abc") == [256]
    assert t.tokenizer.encode("ab") == [97, 98]
    assert t.litetoken.lines_changed == 1 and t.litetoken.lines == 10
    assert out.read_bytes().split(b"\n")[256:258] == [base64.b64encode(b"abc") + b" 256", base64.b64encode(b"bc") + b" 257"]
    assert json.loads((tmp_path / "cut.tiktoken.ids.json").read_text())["old_to_new"][256] is None
    # 0.1 is not below 0.1: at threshold 0.1 ab is no residue
    assert trim(subwords.load(path), corpus, litetoken=True, threshold=0.1).litetoken.residues == []


def _ours(extra_bc: bool):
    # trained on {abc: 9, abd: 1} with min_count 2: a+b (10), then ab+c</w> (9); ab+d</w> (1) is below 2
    tok = subwords.train({"abc": 9, "abd": 1}, vocab_size=50, min_count=2)
    assert tok.merges == [("a", "b"), ("ab", "c</w>")]
    if extra_bc:
        doc = json.loads(tok.to_json())
        doc["rows"].append(["bc</w>", "learned"])
        doc["merges"].append(["b", "c</w>"])
        tok = subwords.SubwordsTokenizer.from_json(json.dumps(doc))
    return tok


def test_merge_list_by_hand():
    # the same counts in our end-of-word spelling: "abd" ends as ab d</w>, so F1(ab) = 1
    corpus = ["abc"] * 9 + ["abd"]
    tok = _ours(False)
    t = trim(tok, corpus, litetoken=True, threshold=0.2)
    assert t.litetoken.residues == [] and [p for _, p, *_ in t.litetoken.protected] == ["ab"]
    tok = _ours(True)
    ab = tok.piece_to_id("ab")
    t = trim(tok, corpus, litetoken=True, threshold=0.2)
    assert t.litetoken.residues == [(ab, "ab", 1, 9)]
    # abc</w>'s only merge (ab, c</w>) is gone: it is re-ranked as a + bc</w>, at the place of that
    # merge or later, once bc</w> is made: after b + c</w>. Learned rows follow the merges, so
    # bc</w> now comes before abc</w>.
    assert t.litetoken.reranked == 1
    assert t.tokenizer.merges == [("b", "c</w>"), ("a", "bc</w>")]
    old_rows = tok.rows
    assert [t.tokenizer.rows[t.id_map[i]] if t.id_map[i] is not None else None for i in range(len(old_rows))] == \
        [r if r != "ab" else None for r in old_rows]
    assert t.tokenizer.rows[-2:] == ["bc</w>", "abc</w>"]
    assert t.tokenizer.encode_pieces("abc abd") == ["abc</w>", "a", "b", "d</w>"]
    assert t.litetoken.lines_changed == 1
    assert t.new_size == t.old_size - 1


# -- the engine against the replaying reference ------------------------------------------------
#
# Random vocabularies over the letters a, b (every row at most 5 letters, so most rows have
# several cuts into rows and removing a residue often strands nothing), held-out text made of
# the longest rows (so shorter rows are mostly steps), and, for the merge list, also models
# trained on words.

def random_merge_model(rng: random.Random, rows_wanted: int):
    """Our end-of-word model: the alphabet a b a</w> b</w>, then random merges x + y of rows (x
    not word-final), each making a new row of at most 5 letters."""
    base = subwords.train({"ab": 3, "ba": 3}, vocab_size=10, min_count=100)
    doc = json.loads(base.to_json())
    pieces = {p for p, k in doc["rows"] if k != "special"}
    for _ in range(20_000):
        if len(doc["merges"]) >= rows_wanted:
            break
        x, y = rng.choice(sorted(pieces)), rng.choice(sorted(pieces))
        if x.endswith("</w>") or x + y in pieces or len((x + y).replace("</w>", "")) > 5:
            continue
        pieces.add(x + y)
        doc["rows"].append([x + y, "learned"])
        doc["merges"].append([x, y])
    doc["report"] = None
    return subwords.SubwordsTokenizer.from_json(json.dumps(doc))


WORDS = ["low", "lower", "newest", "widest", "lowest", "new", "wide", "west", "slow", "slower", "news", "tide"]


def _corpus(rng: random.Random, lines: int) -> list[str]:
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6))) for _ in range(lines)]


def _merge_list_case(tok, held, threshold):
    """The engine's report and the reference's (removed, protected, found) for one model."""
    t = trim(tok, held, litetoken=True, threshold=threshold)
    ranks = {}
    for r, (a, b) in enumerate(tok.merges):
        ranks.setdefault((a, b), r)
    units = {}
    for line in held:
        for w in line.split():
            key = tuple(list(w[:-1]) + [w[-1] + "</w>"])
            units[key] = units.get(key, 0) + 1
    made, final = ref.replay_counts([(list(u), c) for u, c in units.items()],
                                    lambda a, b: (ranks[(a, b)], a + b) if (a, b) in ranks else None)
    rows, kinds = tok.rows, tok.kinds
    learned = [p for p, k in zip(rows, kinds) if k == "learned"]
    found = ref.residues(learned, made, final, threshold)
    by_piece = {p: i for i, p in enumerate(rows)}
    made_by = {}
    for a, b in tok.merges:
        made_by.setdefault(a + b, []).append((a, b))
    size = {}

    def sz(p):
        if p not in made_by:
            return 1
        if p not in size:
            a, b = made_by[p][0]
            size[p] = sz(a) + sz(b)
        return size[p]

    def splits(p):
        cuts = [(p[:k], p[k:]) for k in range(1, len(p)) if p[:k] in by_piece and p[k:] in by_piece]
        return made_by.get(p, []) + [c for c in cuts if c not in made_by.get(p, [])]

    order = sorted((p for p in learned if p in made_by), key=lambda p: (sz(p), by_piece[p]))
    removed, protected = ref.cut(order, list(found), splits, lambda p: made_by[p][0] if p in made_by else None)
    return t, removed, protected, found


def test_merge_list_matches_reference():
    removals = 0
    cases = []
    for seed in range(16):
        rng = random.Random(seed)
        tok = random_merge_model(rng, rng.randint(40, 110))
        words = [p[:-4] for p in tok.rows if p.endswith("</w>") and len(p) >= 7]
        held = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 4))) for _ in range(40)]
        cases.append((tok, held, rng.choice([0.1, 0.3, 0.5])))
    for seed in range(6):
        rng = random.Random(1000 + seed)
        tok = subwords.train(_corpus(rng, 60), vocab_size=rng.randint(30, 70), min_count=1)
        cases.append((tok, _corpus(rng, 40), rng.choice([0.1, 0.3, 0.5, 0.9])))
    for tok, held, threshold in cases:
        t, removed, protected, found = _merge_list_case(tok, held, threshold)
        assert {p: (f1, f2) for _, p, f1, f2 in t.litetoken.residues} == {p: found[p] for p in removed}
        assert {p: (f1, f2) for _, p, f1, f2 in t.litetoken.protected} == {p: found[p] for p in protected}
        assert t.new_size == t.old_size - len(removed)
        assert {tok.rows[i] for i, x in enumerate(t.id_map) if x is None} == removed
        assert all(t.tokenizer.rows[x] == tok.rows[i] for i, x in enumerate(t.id_map) if x is not None)
        for line in held:
            assert t.tokenizer.decode(t.tokenizer.encode(line)) == line
        # the changed-lines count, recounted
        old_ids, new_ids = tok.encode_batch(held), t.tokenizer.encode_batch(held)
        assert t.litetoken.lines_changed == sum(1 for a, b in zip(old_ids, new_ids) if [t.id_map[i] for i in a] != b)
        removals += bool(removed)
    assert removals >= 4  # the cases exercise removal, not only protection


def test_rank_rule_matches_reference(tmp_path):
    removals = 0
    for seed in range(16):
        rng = random.Random(100 + seed)
        # random rows over a, b of 2..6 letters, in a random rank order after the bytes
        extra = sorted({"".join(rng.choice("ab") for _ in range(rng.randint(2, 6))) for _ in range(rng.randint(20, 70))})
        rng.shuffle(extra)
        learned_bytes = [x.encode() for x in extra]
        d = tmp_path / str(seed)
        d.mkdir()
        tok = subwords.load(rank_file(d / "cl100k_base.tiktoken", learned_bytes))
        rank = {t: r for t, r in tok._core.tokens()}
        longest = sorted(extra, key=len)[-8:]
        held = [" ".join(rng.choice(longest) for _ in range(rng.randint(1, 4))) for _ in range(40)]
        threshold = rng.choice([0.1, 0.3, 0.5])
        t = trim(tok, held, litetoken=True, threshold=threshold)
        units = {}
        for line in held:
            for piece in tok._core.split(line):
                key = tuple(bytes([x]) for x in piece.encode())
                units[key] = units.get(key, 0) + 1
        pick = lambda a, b: (rank[a + b], a + b) if a + b in rank else None  # noqa: E731
        made, final = ref.replay_counts([(list(u), c) for u, c in units.items()], pick,
                                        whole=lambda seq: b"".join(seq) if b"".join(seq) in rank else None)
        found = ref.residues(learned_bytes, made, final, threshold)

        def splits(p):
            return [(p[:k], p[k:]) for k in range(1, len(p)) if p[:k] in rank and p[k:] in rank]

        def derivation(p):
            # the last merge of p replayed alone, when that makes p
            seq = [bytes([x]) for x in p]
            last = None
            while len(seq) > 1:
                options = [(rank[seq[k] + seq[k + 1]], k) for k in range(len(seq) - 1) if seq[k] + seq[k + 1] in rank]
                if not options:
                    return None
                k = min(options)[1]
                last = (seq[k], seq[k + 1])
                seq[k:k + 2] = [seq[k] + seq[k + 1]]
            return last

        order = sorted(learned_bytes, key=lambda p: (len(p), rank[p]))
        removed, protected = ref.cut(order, list(found), splits, derivation)
        token = tok._core.token
        assert {token(i): (f1, f2) for i, _, f1, f2 in t.litetoken.residues} == {p: found[p] for p in removed}
        assert {token(i): (f1, f2) for i, _, f1, f2 in t.litetoken.protected} == {p: found[p] for p in protected}
        for line in held:
            assert t.tokenizer.decode(t.tokenizer.encode(line)) == line
        removals += bool(removed)
    assert removals >= 4


# -- cl100k on 10k lines -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cl100k(tmp_path_factory):
    d = tmp_path_factory.mktemp("cl100k")
    path = d / "cl100k_base.tiktoken"
    path.write_bytes(gzip.decompress(peers.crate_member("bpe-openai", "0.2.1", "data/cl100k_base.tiktoken.gz")))
    return path


def test_cl100k_round_trip_and_counts(cl100k, tmp_path):
    lines = list(peers.multilingual_texts())[:10_000]
    assert len(lines) == 10_000
    old = subwords.load(cl100k)
    out = tmp_path / "cl100k_base.tiktoken"
    t = trim(old, lines, litetoken=True, output=out)
    rep = t.litetoken
    # the counts agree with each other and with the id map
    assert rep.lines == 10_000 and 0 < rep.lines_changed < rep.lines
    assert len(rep.residues) > 0
    assert t.new_size == t.old_size - len(rep.residues)
    # the id map: a removed rank maps to None; ids with no row at all (cl100k has holes below its
    # specials) map to None too; the specials keep their ids
    rows = {r for _, r in old._core.tokens()}  # the ranks
    assert {i for i, *_ in rep.residues} == {i for i in rows if t.id_map[i] is None}
    assert all(t.id_map[i] == i for _, i in old._core.specials())
    assert not {i for i, *_ in rep.protected} & {i for i, *_ in rep.residues}
    for _, _, f1, f2 in rep.residues:
        assert f1 + f2 > 0 and f1 < 0.1 * (f1 + f2)
    kept = [t.id_map[i] for i in sorted(rows) if t.id_map[i] is not None]
    assert kept == list(range(len(kept)))
    # every line encodes and decodes back unchanged, and the changed-lines count is what it says
    new_ids = t.tokenizer.encode_batch(lines)
    old_ids = old.encode_batch(lines)
    assert all(t.tokenizer.decode(ids) == line for ids, line in zip(new_ids, lines))
    assert sum(1 for a, b in zip(old_ids, new_ids) if [t.id_map[i] for i in a] != b) == rep.lines_changed
    # the written rank file, read by the real tiktoken, gives the same ids
    peer = peers.tiktoken_peer(out.read_bytes(), "cl100k_base", "cut")
    assert [peer.encode(x, disallowed_special=()) for x in lines[:2000]] == new_ids[:2000]


# -- bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("threshold", [0, -0.5, 1.5, math.nan, math.inf, "0.1", True])
def test_bad_threshold(tmp_path, threshold):
    tok = _ours(False)
    out = tmp_path / "o.json"
    with pytest.raises(OptionError, match="threshold"):
        trim(tok, ["abc"], litetoken=True, threshold=threshold, output=out)
    assert list(tmp_path.iterdir()) == []


def test_bad_inputs_write_nothing(tmp_path):
    out = tmp_path / "o.json"
    with pytest.raises(InputError, match="no such model file"):
        trim(tmp_path / "missing.json", ["abc"], litetoken=True, output=out)
    with pytest.raises(InputError, match="empty"):
        trim(_ours(False), [" ", ""], litetoken=True, output=out)
    wp = subwords.train(["the cat sat"] * 3, model="wordpiece", vocab_size=40)
    with pytest.raises(OptionError, match="wordpiece"):
        trim(wp, ["the cat"], litetoken=True, output=out)
    with pytest.raises(OptionError, match="litetoken=True"):
        trim(_ours(False), ["abc"], threshold=0.2)
    with pytest.raises(OptionError):
        trim(_ours(False), ["abc"], litetoken=True, min_count=2)
    assert list(tmp_path.iterdir()) == []


def test_cli(tmp_path):
    tok = _ours(True)
    model = tmp_path / "m.json"
    tok.save(model)
    corpus = tmp_path / "c.txt"
    corpus.write_text("abc\n" * 9 + "abd\n", encoding="utf-8")
    out = tmp_path / "cut.json"
    r = run("trim", "--litetoken", str(model), str(corpus), "--threshold", "0.2", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "1 residues removed" in r.stdout and "1 of 10 lines' ids changed" in r.stdout
    assert subwords.load(out).merges == [("b", "c</w>"), ("a", "bc</w>")]
    assert json.loads((tmp_path / "cut.json.ids.json").read_text())["new_size"] == tok.vocab_size - 1
    for bad in (["--threshold", "2"], ["--threshold", "nan"], ["--threshold", "x"]):
        o = tmp_path / "bad.json"
        r = run("trim", "--litetoken", str(model), str(corpus), *bad, "-o", str(o))
        assert r.returncode != 0 and "--threshold" in r.stderr and not o.exists()
    r = run("trim", "--litetoken", str(tmp_path / "nope.json"), str(corpus), "-o", str(tmp_path / "n.json"))
    assert r.returncode != 0 and "no such model file" in r.stderr and not (tmp_path / "n.json").exists()
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    r = run("trim", "--litetoken", str(model), str(empty), "-o", str(tmp_path / "e.json"))
    assert r.returncode != 0 and "empty" in r.stderr and not (tmp_path / "e.json").exists()


def test_tokenizer_json(tmp_path):
    """A byte-level BPE tokenizer.json (our model exported) cut by LiteToken: written back as a
    tokenizer.json that the real tokenizers library reads and encodes as we do."""
    from subwords.formats import export
    from tokenizers import Tokenizer

    texts = list(peers.multilingual_texts())[:3000]
    tok = subwords.train(texts[:2000], vocab_size=1500, spelling="bytes", pre_split="gpt2")
    src = tmp_path / "tokenizer.json"
    export(tok, src, "hf")
    out = tmp_path / "cut" / "tokenizer.json"
    out.parent.mkdir()
    t = trim(src, texts[2000:], litetoken=True, threshold=0.3, output=out)
    rep = t.litetoken
    assert rep.format == "hf" and len(rep.residues) > 0 and rep.reranked > 0
    assert t.new_size == t.old_size - len(rep.residues)
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert len(doc["model"]["vocab"]) == len(json.loads(src.read_text(encoding="utf-8"))["model"]["vocab"]) - len(rep.residues)
    peer = Tokenizer.from_file(str(out))
    held = texts[2000:]
    ours = t.tokenizer.encode_batch(held)
    assert [peer.encode(x, add_special_tokens=False).ids for x in held] == ours
    assert [t.tokenizer.decode(ids) for ids in ours] == held
    old_ids = subwords.load(src).encode_batch(held)
    assert rep.lines_changed == sum(1 for a, b in zip(old_ids, ours) if [t.id_map[i] for i in a] != b)
