"""Shared fixtures for timeaware's Python interop tests.

The tests drive the real CLI binary and read its output with the libraries
trainers use (pyarrow, Hugging Face datasets). They need:

  TIMEAWARE_BIN     the binary (default <repo>/bin/timeaware; build it with
                    `go build -o bin/timeaware ./cmd/timeaware`)
  TIMEAWARE_SHARED  the shared directory holding data/tictoc-v1
                    (default <repo>/../shared)

A missing binary or data directory fails the tests with a message saying so;
nothing is skipped.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
V1_NAME = re.compile(r"^prefer(Tool|NoTool)_elapse_(\d+)\.json$")

# Tests must never reach a hub: everything they load is local.
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "needs_binary: runs the timeaware CLI; fails (never skips) when the binary is missing",
    )


@pytest.fixture(scope="session")
def timeaware_bin() -> Path:
    path = Path(os.environ.get("TIMEAWARE_BIN") or REPO_ROOT / "bin" / "timeaware")
    if not path.is_file() or not os.access(path, os.X_OK):
        pytest.fail(
            f"timeaware binary not found or not executable at {path}. Build it with "
            f"`go build -o bin/timeaware ./cmd/timeaware` from {REPO_ROOT}, "
            "or point TIMEAWARE_BIN at it.",
            pytrace=False,
        )
    return path


@pytest.fixture(autouse=True)
def _require_binary(request):
    if request.node.get_closest_marker("needs_binary") is not None:
        request.getfixturevalue("timeaware_bin")


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    path = Path(os.environ.get("TIMEAWARE_SHARED") or REPO_ROOT.parent / "shared")
    if not path.is_dir():
        pytest.fail(f"shared directory not found at {path}; set TIMEAWARE_SHARED", pytrace=False)
    return path


@pytest.fixture(scope="session")
def v1_dir(shared_dir) -> Path:
    path = shared_dir / "data" / "tictoc-v1"
    files = sorted(p for p in path.glob("*.json") if V1_NAME.match(p.name)) if path.is_dir() else []
    if len(files) != 5:
        pytest.fail(f"expected the five TicToc v1 files in {path}, found {len(files)}", pytrace=False)
    return path


@pytest.fixture(scope="session")
def v1_files(v1_dir) -> list[Path]:
    """The five v1 files in name order (the order every test passes them in)."""
    return sorted(p for p in v1_dir.glob("*.json") if V1_NAME.match(p.name))


@pytest.fixture(scope="session")
def v1_samples(v1_files) -> dict:
    """(id, elapse) -> {"record", "label", "file"} for every v1 sample."""
    samples = {}
    for path in v1_files:
        kind, level = V1_NAME.match(path.name).groups()
        for record in json.loads(path.read_text(encoding="utf-8")):
            key = (record["id"], int(level))
            assert key not in samples, f"duplicate sample {key} in v1 data"
            samples[key] = {
                "record": record,
                "label": "tool" if kind == "Tool" else "direct",
                "file": path.name,
            }
    return samples


@pytest.fixture(scope="session")
def run_timeaware(timeaware_bin):
    """Run the CLI with the given arguments; returns the CompletedProcess."""

    def run(*args, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(timeaware_bin), *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    return run


@pytest.fixture(scope="session")
def catalog() -> dict:
    """alias or canonical name -> (canonical name, sensitivity, paper_split),
    read from the repository's scenario catalog."""
    with open(REPO_ROOT / "configs" / "scenarios.yaml", encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    out = {}
    for s in doc["scenarios"]:
        entry = (s["name"], s["sensitivity"], s["paper_split"])
        out[s["name"]] = entry
        for alias in s["aliases"]:
            out[alias] = entry
    return out
