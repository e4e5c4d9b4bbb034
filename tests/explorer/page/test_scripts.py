"""The page's scripts reach the browser compacted (no comment lines, no indentation), and compacting them keeps every
line of code: no template literal spans lines (so indentation is never content), and what is sent still parses."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from transformer.explorer.page import scripts


@pytest.mark.parametrize("path", scripts.SCRIPTS, ids=lambda path: path.name)
def test_no_template_literal_or_block_comment_spans_lines(path):
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        assert line.count("`") % 2 == 0, f"{path.name}:{number}: a template literal that spans lines"
        assert "/*" not in line, f"{path.name}:{number}: a block comment (compact keeps only line comments out)"


@pytest.mark.parametrize("path", scripts.SCRIPTS, ids=lambda path: path.name)
def test_compacting_drops_only_comment_lines_blank_lines_and_indentation(path):
    script = path.read_text(encoding="utf-8")
    code = [line.strip() for line in script.splitlines() if line.strip() and not line.strip().startswith("//")]
    compacted = scripts.compact(script)
    assert compacted.splitlines() == code and len(compacted) < 0.75 * len(script)
    assert " // " not in compacted, "a comment after code: it reaches every visitor (put it on its own line)"
    assert (
        scripts.compact("  a();\n\n  // why\n  b(); // kept: code before it\n") == "a();\nb(); // kept: code before it"
    )


@pytest.mark.parametrize("path", scripts.SCRIPTS, ids=lambda path: path.name)
def test_the_compacted_script_parses(path, tmp_path):
    node = shutil.which("node")
    assert node, "node is needed (make install's npm brings it)"
    sent = tmp_path / path.name
    sent.write_text(scripts.compact(path.read_text(encoding="utf-8")), encoding="utf-8")
    checked = subprocess.run([node, "--check", str(sent)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stderr


def test_the_head_carries_each_script_compacted():
    head = scripts.head({"views": []})
    for path in scripts.SCRIPTS:
        assert scripts.compact(path.read_text(encoding="utf-8")) in head
    assert not [line for line in head.splitlines() if line.lstrip().startswith("//")]
