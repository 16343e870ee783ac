"""docs/verifiers.md's Python examples run as written, with verifiers installed.

A fenced ``python`` block right after the marker below (which
internal/docexamples reads as a skipped example, since the docs' runner has
no verifiers) is executed verbatim in a scratch directory holding the synth
output it names, with TIMEAWARE_URL pointing at the tier's server, and what
it prints is compared with the ``text`` block that follows it.
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil

import pytest
from conftest import REPO_ROOT

MARKER = "<!-- example: skip runs in the verifiers tier (python/tests/verifiers/test_docs.py), which has verifiers installed -->"
BLOCK = re.compile(r"^" + re.escape(MARKER) + r"\s*```python\n(.*?)```\s*```text\n(.*?)```", re.DOTALL | re.MULTILINE)
DOC = REPO_ROOT / "docs" / "verifiers.md"


def examples():
    text = DOC.read_text(encoding="utf-8")
    found = BLOCK.findall(text)
    assert text.count(MARKER) == len(found), f"{DOC}: a marker not followed by a python block and its output"
    return [pytest.param(code, want, id=f"docs/verifiers.md#{i + 1}") for i, (code, want) in enumerate(found)]


def test_the_doc_has_runnable_examples():
    assert len(examples()) >= 1


@pytest.mark.parametrize(("code", "want"), examples())
def test_doc_example_runs_verbatim(code, want, timeaware_bin, server, fresh, tmp_path, monkeypatch):
    import subprocess

    (tmp_path / "out").mkdir()
    monkeypatch.chdir(tmp_path)
    # The output the doc's sh block writes, written the same way.
    sh = re.search(r"```sh\n(timeaware synth [^\n]*)\n```", DOC.read_text(encoding="utf-8")).group(1)
    args = sh.split()[1:]
    subprocess.run([str(timeaware_bin), *args], check=True, capture_output=True, stdin=subprocess.DEVNULL)
    monkeypatch.setenv("TIMEAWARE_URL", server.url)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, "<doc example>", "exec"), {"__name__": "__doc_example__"})  # noqa: S102 - our own docs
    assert buf.getvalue() == want
    shutil.rmtree(tmp_path / "out")
