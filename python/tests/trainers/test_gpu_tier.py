"""The GPU tier's script (python/tests/gpu/run.py) at toy size on the CPU: the
same steps `make test-gpu` runs on one NVIDIA GPU, so a change that breaks
the GPU tier fails here first. Its own checks decide its exit status; this
test reads the figures it wrote and holds the tier's pins to the trainers'."""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys

from conftest import REPO_ROOT

PIN = re.compile(r"^([A-Za-z0-9_.-]+)==(\S+)$")


def pins(path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        m = PIN.match(line.strip())
        if m:
            out[m.group(1).lower()] = m.group(2)
    return out


def test_gpu_tier_pins_are_what_this_tier_runs():
    gpu = pins(REPO_ROOT / "python" / "tests" / "gpu" / "requirements.txt")
    trainers = pins(REPO_ROOT / "python" / "tests" / "trainers" / "requirements.txt")
    assert {"torch", "transformers", "trl"} <= set(gpu)
    for name, version in gpu.items():
        assert trainers.get(name, importlib.metadata.version(name)) == version, name
        assert importlib.metadata.version(name).split("+")[0] == version, name


def test_gpu_tier_runs_at_toy_size(timeaware_bin, tmp_path):
    out = tmp_path / "figures.json"
    res = subprocess.run(
        [sys.executable, str(REPO_ROOT / "python" / "tests" / "gpu" / "run.py"), "--size", "toy", "--out", str(out),
         "--work", str(tmp_path / "work")],
        capture_output=True, text=True, timeout=900, check=False,
    )
    assert out.is_file(), res.stdout[-3000:] + res.stderr[-3000:]
    fig = json.loads(out.read_text())
    failed = [c for c in fig["checks"] if not c["ok"]]
    assert res.returncode == 0 and fig["ok"] and not failed, (failed, res.stderr[-3000:])
    assert fig["size"] == "toy"

    # Six first-step checks: three margins, the reference on the fly and precomputed.
    first = fig["sections"]["dpo"]["first_step"]
    assert sorted((f["margin"], f["reference"]) for f in first) == sorted(
        (m, r) for m in (0.5, 1.0, 1.5) for r in ("on the fly", "precomputed"))
    assert all(f["dtype"] == "torch.bfloat16" for f in first)

    grpo = fig["sections"]["grpo"]
    assert grpo["steps"] == 2 and grpo["completions"] == grpo["timers"] == grpo["scored"] > 0
    assert 0 < grpo["reward_p50_ms"] <= grpo["reward_p99_ms"]
    assert 0 < grpo["reward_wait_share"] < 1

    ev = fig["sections"]["eval_run"]
    for side in ("before", "after"):
        assert ev[side]["rows"] == 24 and ev[side]["failed"] == 0, ev[side]
    assert ev["compare"]["data_sources"]["tictoc/decision"]["rows"] == 24
