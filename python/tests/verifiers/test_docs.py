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
import json
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


def test_the_vf_eval_command_writes_where_the_doc_says_and_quietly(timeaware_bin, server, tmp_path):
    """The doc's vf-eval command, run by verifiers' own CLI as written but
    for the two addresses (the tier's server, a scripted model): its run
    lands under out/vf-eval, nothing under outputs/, every rollout is
    scored, and its log has no failed push and no error."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from scripted import ScriptedModel
    from scripted import text as say

    text = DOC.read_text(encoding="utf-8")
    cmd = re.search(r"```sh\n(vf-eval .*?)\n```", text, re.S).group(1).replace("\\\n", " ")
    synth = re.search(r"```sh\n(timeaware synth [^\n]*)\n```", text).group(1)
    (tmp_path / "out").mkdir()
    subprocess.run([str(timeaware_bin), *synth.split()[1:]], check=True, capture_output=True, cwd=tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TIMEAWARE_", "PRIME_"))}
    env["OPENAI_API_KEY"] = "scripted"
    with ScriptedModel(lambda request: say("MY ANSWER: 2000-01-01")) as model:
        args = cmd.replace("http://127.0.0.1:8080", server.url).replace("http://127.0.0.1:8000/v1", model.url).split()
        exe = Path(sys.executable).with_name(args[0])
        res = subprocess.run([str(exe), *args[1:]], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env,
                             stdin=subprocess.DEVNULL, check=False)
    log = res.stdout + res.stderr
    assert res.returncode == 0, log[-4000:]
    assert not (tmp_path / "outputs").exists(), "vf-eval wrote outputs/ where it ran"
    (traces,) = (tmp_path / "out" / "vf-eval").glob("*/traces.jsonl")
    episodes = [json.loads(line) for line in traces.read_text().splitlines()]
    assert sum(len(e["traces"]) for e in episodes) == 8, "4 rows, 2 rollouts each"
    for e in episodes:
        for t in e["traces"]:
            assert t["rewards"]["timeaware"] is not None, t
    assert "push failed" not in log.lower(), log[-4000:]  # "Trace push failed (... needs an API key ...)"
    assert "error" not in log.lower(), log[-4000:]
