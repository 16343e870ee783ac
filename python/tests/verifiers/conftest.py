"""Fixtures of the verifiers tier: verifiers 0.4's own evaluation entry point
(``vf-eval``) on the ``timeaware-env`` environment, against the real
``timeaware serve`` and a scripted OpenAI-compatible model server.

The tier has its own virtualenv (.venv-verifiers: verifiers pins openai
below 3, the trainers tier openai 3). The server and the synth outputs are
made the way the trainers tier makes them, by python/tests/localstack.py. Needs:

  TIMEAWARE_BIN     the binary (default <repo>/bin/timeaware)

A missing binary fails the tests; nothing is skipped.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(Path(__file__).resolve().parent))

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import localstack
from scripted import ScriptedModel

right_answer = localstack.right_answer


@pytest.fixture(scope="session")
def timeaware_bin() -> Path:
    return localstack.required(localstack.binary)


@pytest.fixture(scope="session")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("verifiers")


@pytest.fixture(scope="session")
def synth_outputs(timeaware_bin, work) -> dict[str, Path]:
    """Every synth RL output as JSON Lines, written by the binary with the
    trainers tier's commands and seeds."""
    return localstack.required(localstack.synth_outputs, timeaware_bin, work, suffix=".jsonl", openrlhf_label=False)


@pytest.fixture(scope="session")
def server(timeaware_bin, work):
    s = localstack.required(localstack.Server, timeaware_bin, work / "serve.log")
    yield s
    s.stop()


@pytest.fixture
def restartable(timeaware_bin, tmp_path):
    """A verifier of the test's own that it stops and starts again on the same address."""
    r = localstack.Restartable(timeaware_bin, tmp_path, "verifier")
    yield r
    r.stop()


@pytest.fixture
def fresh():
    """The adapter's process state (batchers, counters) fresh for the test."""
    from timeaware import scoring
    from timeaware import verifiers as tv

    scoring.shutdown()
    tv.stats(reset=True)
    yield
    scoring.shutdown()
    tv.stats(reset=True)


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def vf_eval(tmp_path, monkeypatch) -> Callable[..., list[dict]]:
    """Run verifiers' own ``vf-eval`` entry point (in this process, so the
    adapter's counters can be read) on ``timeaware-env`` with the rows of
    ``data`` and a scripted model answering with ``reply(request)``; return
    the traces it wrote (traces.jsonl), one per row, in row order, each with
    the requests its rollout made as ``requests``."""
    from verifiers.v1.cli.eval.main import main

    monkeypatch.setenv("SCRIPTED_API_KEY", "scripted")
    runs = iter(range(1000))

    def run(data: Path, reply, *args: str, verifier_url: str) -> list[dict]:
        out = tmp_path / f"eval-{next(runs)}"
        n = len(read_rows(data))
        with ScriptedModel(reply) as model:
            main(["timeaware-env", "--env.taskset.data", str(data), "--env.taskset.verifier-url", verifier_url,
                  "--model", "scripted", "--client.base-url", model.url, "--client.api-key-var", "SCRIPTED_API_KEY",
                  "-n", str(n), "-r", "1", "--push", "false", "--output-dir", str(out), *args])
            requests = list(model.requests)
        (traces_file,) = out.glob("*/traces.jsonl")
        episodes = [json.loads(line) for line in traces_file.read_text().splitlines()]
        traces = sorted((t for e in episodes for t in e["traces"]), key=lambda t: t["task"]["data"]["idx"])
        assert [t["task"]["data"]["idx"] for t in traces] == list(range(n))
        for t in traces:
            t["requests"] = [r for r in requests if _rollout_of(r, t)]
        return traces

    return run


def _rollout_of(request: dict, trace: dict) -> bool:
    """Whether the model request belongs to the trace's rollout: its
    messages start with the row's prompt."""
    prompt = trace["task"]["data"]["prompt"]
    got = [{"role": m["role"], "content": m.get("content")} for m in request["messages"][: len(prompt)]]
    return got == [{"role": m["role"], "content": m["content"]} for m in prompt]


def reward_of(trace: dict) -> float | None:
    """The timeaware reward verifiers recorded on the trace (None when unscored)."""
    r = trace["rewards"].get("timeaware")
    return None if r is None else r["score"]
