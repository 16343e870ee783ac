"""docs/openenv.md's Python examples run as written, against the real OpenEnv
server and the real TRL.

A fenced ``python`` block right after ``<!-- example: openenv -->`` (which
internal/docexamples leaves to this tier) is executed verbatim in a scratch
directory holding ``out/budget.parquet`` (rows of ``synth budget``), with
``python -m timeaware.openenv --env timely`` listening where the doc says,
127.0.0.1:8001, in front of the session's ``timeaware serve``. ``MODEL``, the
one name the text leaves to the reader, is bound to the tiny model, whose
tokenizer declares how its replies carry tool calls as a released chat model
TRL knows gets from TRL itself.
"""

from __future__ import annotations

import math
import re
import shutil
import socket

import pyarrow.parquet as pq
import pytest
from conftest import REPO_ROOT
from test_openenv import OpenEnvServer

MARKER = "<!-- example: openenv -->"
BLOCK = re.compile(r"^" + re.escape(MARKER) + r"\s*```python\n(.*?)```", re.DOTALL | re.MULTILINE)
DOC = REPO_ROOT / "docs" / "openenv.md"
HOST, PORT = "127.0.0.1", 8001  # where the doc's examples look for the server

# What the client example prints: a reading of the timer ("0.41 seconds."),
# then whether the answer ended the episode, its reward and that the state
# names the episode's timer ("True 0.61 True").
FLOAT = r"-?\d+(?:\.\d+)?(?:e-?\d+)?"
CLIENT_OUTPUT = re.compile(rf"(\d+\.\d+) seconds\.\nTrue ({FLOAT}) True\n")


def examples() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    blocks = BLOCK.findall(text)
    markers = sum(line.strip() == MARKER for line in text.splitlines())
    assert markers == len(blocks), f"{DOC}: a marker not followed by a python block"
    return blocks


def test_the_doc_has_its_two_examples():
    # The OpenEnv client by hand, then TRL's GRPOTrainer with TimelySession.
    blocks = examples()
    assert len(blocks) == 2
    assert "TimeawareEnvClient" in blocks[0] and "GRPOTrainer" in blocks[1]


def port_free(host: str, port: int) -> bool:
    """Whether a listening socket can be bound at host:port, as the server binds it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


@pytest.fixture(scope="module")
def doc_server(server, tmp_path_factory):
    """The doc's server: the timely environment on 127.0.0.1:8001."""
    if not port_free(HOST, PORT):
        pytest.fail(f"{HOST}:{PORT} is taken by another process; docs/openenv.md's examples need the OpenEnv "
                    f"server there: stop that process and run again", pytrace=False)
    srv = OpenEnvServer("timely", server.url, tmp_path_factory.mktemp("openenv-docs") / "timely.log",
                        "--host", HOST, port=PORT).wait()
    assert srv.url == f"http://{HOST}:{PORT}"
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def tool_model_dir(tiny_model_dir, tmp_path_factory):
    """The tiny model, its tokenizer saved with the response schema of its
    tool calls: TRL's GRPOTrainer adds one itself only to the chat templates
    of the models it knows (Qwen3's, Llama's, ...), and the tier's template is
    its own. It writes ``<tool_call>{"name", "arguments"}</tool_call>`` as
    Qwen3 does, so Qwen3's schema reads it."""
    from transformers import AutoTokenizer
    from trl.chat_template_utils import qwen3_schema

    out = tmp_path_factory.mktemp("openenv-docs") / "tiny-llama-tools"
    shutil.copytree(tiny_model_dir, out)
    tokenizer = AutoTokenizer.from_pretrained(out)
    tokenizer.response_schema = qwen3_schema
    tokenizer.save_pretrained(out)
    return out


@pytest.fixture
def scratch(synth_outputs, tmp_path, monkeypatch):
    """A scratch directory holding the file the examples read, as the cwd."""
    (tmp_path / "out").mkdir()
    pq.write_table(pq.read_table(synth_outputs["budget"]).slice(0, 8), tmp_path / "out" / "budget.parquet")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(code: str, model) -> dict:
    env = {"MODEL": str(model), "__name__": "__doc_example__"}
    exec(compile(code, "<docs/openenv.md example>", "exec"), env)  # noqa: S102 - our own docs
    return env


def test_client_example_prints_a_reading_and_a_reward(doc_server, scratch, tiny_model_dir, capsys):
    before = doc_server.stats()["counters"]
    run(examples()[0], tiny_model_dir)
    out = capsys.readouterr().out
    m = CLIENT_OUTPUT.fullmatch(out)
    assert m, f"the example printed {out!r}"
    reading, reward = float(m.group(1)), float(m.group(2))
    limit = pq.read_table("out/budget.parquet").to_pylist()[0]["extra_info"]["time_limit_s"]
    assert 0 <= reading < limit
    # The right answer, on time: Timely-RL's reward for it lies in [0.6, 1].
    assert 0.6 <= reward <= 1.0
    after = doc_server.stats()["counters"]
    assert after["episodes"] - before["episodes"] == 1 and after["scored"] - before["scored"] == 1


def test_grpo_example_trains(doc_server, scratch, tool_model_dir):
    before = doc_server.stats()["counters"]
    env = run(examples()[1], tool_model_dir)
    trainer = env["trainer"]
    assert trainer.state.global_step >= 1, "the example trained"
    final = [h["train_loss"] for h in trainer.state.log_history if "train_loss" in h]
    assert final and math.isfinite(final[-1]), trainer.state.log_history
    # Every rollout played an episode on the doc's server and got its reward there.
    delta = {k: v - before[k] for k, v in doc_server.stats()["counters"].items()}
    assert delta["episodes"] >= 1 and delta["episodes"] == delta["scored"], delta
