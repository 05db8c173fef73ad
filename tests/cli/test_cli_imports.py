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
