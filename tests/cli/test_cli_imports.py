"""`subwords train` pays only for what it uses: it does not import the model file formats (issue
15: at 7 MB a process's fixed costs count, and `subwords.formats` imports every reader)."""

from __future__ import annotations

import json
import subprocess
import sys


def test_train_does_not_import_the_file_formats(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat\nthe dog sat on the log\n", encoding="utf-8")
    script = (
        "import json, sys, subwords.cli\n"
        f"rc = subwords.cli.main(['train', {str(corpus)!r}, '--spelling', 'front', '--vocab-size', '30', "
        f"'-o', {str(tmp_path / 'm.json')!r}, '--quiet'])\n"
        "print(json.dumps([rc, sorted(m for m in sys.modules if m.startswith('subwords.formats'))]))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    rc, loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert rc == 0
    assert loaded == []
    assert (tmp_path / "m.json").stat().st_size > 0


def test_the_cli_lists_the_formats_the_dispatcher_knows():
    import subwords.formats
    from subwords._format_names import FORMATS

    assert subwords.formats.FORMATS is FORMATS
    assert "sentencepiece" in FORMATS and "hf" in FORMATS


def test_train_on_plain_text_imports_no_sampling_compression_or_array_modules(tmp_path):
    # the sampler's hash (hashlib), the gzip reader, the id-array writer and the
    # explorer's browser launcher (webbrowser, which brings subprocess) are imported when used,
    # not by every `subwords train`.
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat\nthe dog sat on the log\n", encoding="utf-8")
    watched = ["hashlib", "gzip", "subwords._arrays", "webbrowser", "subprocess"]
    script = (
        "import json, sys, subwords.cli\n"
        f"rc = subwords.cli.main(['train', {str(corpus)!r}, '--model', 'wordpiece', '--vocab-size', '40', "
        f"'-o', {str(tmp_path / 'm.json')!r}, '--quiet'])\n"
        f"print(json.dumps([rc, [m for m in {watched!r} if m in sys.modules]]))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    rc, loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert rc == 0
    assert loaded == []
    assert json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))["model"] == "wordpiece"


def test_the_modules_train_skips_still_work_when_asked_for(tmp_path):
    # the lazy imports load on use: a gzip input, a sampled input and an id array all still work
    import gzip

    import subwords

    corpus = tmp_path / "c.txt.gz"
    with gzip.open(corpus, "wt", encoding="utf-8") as f:
        f.write("low lower lowest\n" * 20)
    tok = subwords.train([corpus], model="bpe", spelling="end", vocab_size=20)
    arr = tok.encode_array(["low lowest"])
    assert list(arr.offsets) == [0, len(tok.encode("low lowest"))]
    assert list(arr.ids) == tok.encode("low lowest")
    # a sampled input: the sampler draws through hashlib, imported on first use
    import subwords.cli

    plain = tmp_path / "c.txt"
    plain.write_text("".join(f"word{i} low lower\n" for i in range(200)), encoding="utf-8")
    model = tmp_path / "s.json"
    rc = subwords.cli.main(["train", str(plain), "--sample", "0.5", "--seed", "1", "--vocab-size", "30", "-o",
                            str(model), "--quiet"])
    assert rc == 0
    assert subwords.load(model).vocab_size == 30
