"""examples/trl-grpo/train.py, the GRPO recipe users copy, on the tiny model:
two steps on rows the real binary wrote, rewarded by the session's server
through TIMEAWARE_URL, as the README launches it.

What the run logged is read back from the trainer state the script saves;
the expected range of the reward comes from the rewards' definitions (every
timepuzzles and timely/general reward lies in [0, 1]), not from the reward
code under test.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest
from conftest import REPO_ROOT

SCRIPT = REPO_ROOT / "examples" / "trl-grpo" / "train.py"


def run_recipe(model, train, out, url: str, *extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIMEAWARE_")}
    env["TIMEAWARE_URL"] = url
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--model", str(model), "--train", str(train), "--output-dir", str(out),
         "--max-steps", "2", "--num-generations", "2", "--batch-size", "4", "--grad-accum", "1",
         "--max-completion-length", "24", "--learning-rate", "1e-3", *extra],
        check=False, capture_output=True, text=True, timeout=600, env=env, cwd=REPO_ROOT,
    )


@pytest.mark.parametrize(
    ("source", "extra"),
    [("puzzles", []), ("budget", ["--env", "get_duration", "--max-tool-calls", "1", "--response-schema", "qwen3"])],
    ids=["puzzles", "budget-get_duration"],
)
def test_grpo_recipe_runs_and_every_completion_is_scored(source, extra, synth_outputs, tiny_model_dir, server, tmp_path):
    out = tmp_path / "run"
    res = run_recipe(tiny_model_dir, synth_outputs[source], out, server.url, *extra)
    assert res.returncode == 0, res.stderr[-4000:]
    assert (out / "model.safetensors").is_file(), sorted(p.name for p in out.iterdir())

    history = json.loads((out / "trainer_state.json").read_text())["log_history"]
    steps = [h for h in history if "rewards/timeaware/mean" in h]
    assert len(steps) == 2, history
    for h in steps:
        mean = h["rewards/timeaware/mean"]
        assert math.isfinite(mean) and 0.0 <= mean <= 1.0, h
        assert h["timeaware/unscored"] == 0.0, h
        if extra:
            assert "tools/call_frequency" in h, h  # the tool was offered to every rollout
    # Two steps of four completions, each scored by the server at TIMEAWARE_URL.
    stats = json.loads(next(line for line in res.stdout.splitlines() if line.startswith("timeaware: "))[len("timeaware: "):])
    assert stats == {"completions": 8, "scored": 8, "unscored": 0}, res.stdout[-2000:]


@pytest.mark.parametrize(
    ("source", "extra"),
    [("puzzles", []), ("budget", ["--env", "get_duration", "--max-tool-calls", "1", "--response-schema", "qwen3"]),
     ("negotiation", ["--env", "negotiation", "--max-tool-calls", "1", "--response-schema", "qwen3"])],
    ids=["puzzles", "budget-get_duration", "negotiation"],
)
def test_grpo_recipe_without_a_verifier_stops_naming_the_url(source, extra, synth_outputs, tiny_model_dir, tmp_path):
    # With a tool or an environment, the rollouts are played without the
    # verifier before any reward is asked for: it exited 0, 0 of 8 scored.
    res = run_recipe(tiny_model_dir, synth_outputs[source], tmp_path / "run", "http://127.0.0.1:9", *extra)
    assert res.returncode != 0
    assert "VerifierUnreachable" in res.stderr and "127.0.0.1:9" in res.stderr, res.stderr[-4000:]


CPU_MARKER = ("<!-- example: skip needs torch and TRL; the trainers tier "
              "(python/tests/trainers/test_trl_grpo_recipe.py) runs it as written -->")


def test_the_readmes_cpu_commands_run_as_written(timeaware_bin, server, tmp_path):
    """examples/trl-grpo/README.md's CPU block, run by bash as written (its pip
    line left out: this tier has the pins installed), in a scratch
    directory holding the README's puzzles rows and the server's address
    where the README's own commands put them: the tiny model is made and
    trained for two steps, every completion scored."""
    import re
    import shutil
    from pathlib import Path

    readme = (REPO_ROOT / "examples" / "trl-grpo" / "README.md").read_text(encoding="utf-8")
    block = re.search(re.escape(CPU_MARKER) + r"\s*```sh\n(.*?)```", readme, re.S).group(1)
    lines = [line for line in block.splitlines() if not line.startswith("pip install")]
    synth = re.search(r"^timeaware synth puzzles [^\n]*$", readme, re.M).group(0)
    (tmp_path / "out").mkdir()
    (tmp_path / "examples").symlink_to(REPO_ROOT / "examples")
    subprocess.run([str(timeaware_bin), *synth.split()[1:]], check=True, capture_output=True, cwd=tmp_path)
    (tmp_path / "out" / "serve.addr").write_text(server.url.removeprefix("http://") + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIMEAWARE_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # python is this tier's
    assert shutil.which("python", path=env["PATH"]) == str(Path(sys.executable).parent / "python")
    res = subprocess.run(["bash", "-euo", "pipefail", "-c", "\n".join(lines)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=900, check=False)
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    history = json.loads((tmp_path / "out" / "tiny-grpo" / "trainer_state.json").read_text())["log_history"]
    steps = [h for h in history if "rewards/timeaware/mean" in h]
    assert len(steps) == 2 and all(h["timeaware/unscored"] == 0.0 for h in steps), history
    assert 'timeaware: {"completions": 8, "scored": 8, "unscored": 0}' in res.stdout
