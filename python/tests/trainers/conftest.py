"""Fixtures of the trainers tier: the real TRL, VeRL and OpenRLHF code, on CPU,
against the real `timeaware` binary and server.

Nothing is downloaded: the tokenizer is trained here on the data at hand and
the model is a tiny Llama initialised at random from a config, both saved to
a directory first (TRL rebuilds its reference model from the model's
``_name_or_path``). Needs:

  TIMEAWARE_BIN     the binary (default <repo>/bin/timeaware)
  TIMEAWARE_SHARED  the shared directory holding data/tictoc-v1 (default <repo>/../shared)

A missing binary or data directory fails the tests; nothing is skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import localstack
from localstack import TIMERS_SECRET, Server, right_answer  # noqa: F401 (the tests import them from here)

# Everything the tests load is local.
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("WANDB_MODE", "disabled")
# One OpenMP thread per process. The tier's models are tiny: generation is
# thousands of small matrix products, each a barrier for torch's threads,
# which spin while they wait. On a machine shared with other jobs (CI) a
# barrier can cost a time slice: the GRPO example of docs/openenv.md took
# 388 s beside two busy loops per core with two threads and 101 s with one
# (28 s and 34 s on a quiet machine). Subprocesses inherit it; set the
# variable to choose otherwise.
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(scope="session")
def timeaware_bin() -> Path:
    return localstack.required(localstack.binary)


@pytest.fixture(scope="session")
def v1_files() -> list[Path]:
    return localstack.required(localstack.v1_files)


@pytest.fixture(scope="session")
def run_timeaware(timeaware_bin):
    def run(*args, timeout: float = 300) -> subprocess.CompletedProcess:
        return localstack.required(localstack.run_timeaware, timeaware_bin, *args, timeout=timeout)

    return run


@pytest.fixture(scope="session")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("trainers")


@pytest.fixture(scope="session")
def pairs_split(timeaware_bin, v1_files, work) -> dict:
    """``pairs build --split paper`` on the v1 data, with direct replies from
    a side file: {"train": path, "test": path}."""
    return localstack.required(localstack.build_pairs, timeaware_bin, v1_files, work / "pairs.parquet")


@pytest.fixture(scope="session")
def synth_outputs(timeaware_bin, work) -> dict:
    """Every synth RL output as Parquet, with OpenRLHF's label column."""
    return localstack.required(localstack.synth_outputs, timeaware_bin, work)


@pytest.fixture(scope="session")
def tokenizer_dir(work, v1_files, synth_outputs) -> Path:
    """A byte-level BPE tokenizer trained here on the v1 trajectories and the
    synth prompts, with ChatML special tokens and CHAT_TEMPLATE."""
    return localstack.train_tokenizer(localstack.corpus(v1_files, synth_outputs.values()), work / "tokenizer")


@pytest.fixture(scope="session")
def tokenizer(tokenizer_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tokenizer_dir)


@pytest.fixture(scope="session")
def tiny_model_dir(work, tokenizer_dir, tokenizer) -> Path:
    """A two-layer Llama with 32-wide hidden states, initialised at random
    (fixed seed) and saved with the tokenizer."""
    return localstack.random_llama(tokenizer, work / "tiny-llama")


@pytest.fixture(scope="session")
def server(timeaware_bin, work):
    s = localstack.required(Server, timeaware_bin, work / "serve.log")
    yield s
    s.stop()


@pytest.fixture
def restartable(timeaware_bin, tmp_path):
    """A `Restartable` verifier of the test's own."""
    r = localstack.Restartable(timeaware_bin, tmp_path, "verifier")
    yield r
    r.stop()


class Recorder:
    """A proxy on loopback in front of the session's server that forwards
    every request as it is and keeps each ``POST /v1/score/batch`` item with
    the result the server returned for it: what an adapter sent the
    service, and what the service made of it."""

    def __init__(self, upstream: str) -> None:
        self.scored: list[tuple[dict, dict]] = []
        self.batches: list[list[dict]] = []  # the items of each request, as sent
        self._lock = threading.Lock()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length", "connection")}
                req = urllib.request.Request(upstream + self.path, data=body or None, method=self.command, headers=headers)
                try:
                    with urllib.request.urlopen(req, timeout=30) as r:
                        status, out, out_headers = r.status, r.read(), r.headers
                except urllib.error.HTTPError as e:
                    status, out, out_headers = e.code, e.read(), e.headers
                if self.command == "POST" and self.path.startswith("/v1/score/batch") and status == 200:
                    items = json.loads(body)["items"]
                    results = json.loads(out)["results"]
                    with recorder._lock:
                        recorder.scored.extend(zip(items, results))
                        recorder.batches.append(items)
                self.send_response(status)
                for k, v in out_headers.items():
                    if k.lower() not in ("content-length", "connection", "transfer-encoding", "date", "server"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            do_GET = do_POST = do_DELETE = do_PUT = _forward

            def log_message(self, *args) -> None:  # quiet
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def take(self) -> list[tuple[dict, dict]]:
        """The (item, result) pairs recorded since the last call."""
        with self._lock:
            out, self.scored = self.scored, []
        return out

    def take_batches(self) -> list[list[dict]]:
        """The items of each request recorded since the last call, request by request."""
        with self._lock:
            out, self.batches = self.batches, []
        return out

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def recorder(server):
    """A `Recorder` in front of the session's server."""
    r = Recorder(server.url)
    yield r
    r.close()


@pytest.fixture
def recorded(recorder, adapter):
    """The adapter pointed at the recording proxy."""
    adapter.configure(url=recorder.url)
    os.environ["TIMEAWARE_URL"] = recorder.url
    return recorder


@pytest.fixture
def adapter(server):
    """The timeaware adapter pointed at the session's server, fresh state."""
    from timeaware import scoring

    scoring.shutdown()
    scoring.configure(reset=True, url=server.url)
    os.environ["TIMEAWARE_URL"] = server.url
    yield scoring
    scoring.shutdown()
    scoring.configure(reset=True)
    os.environ.pop("TIMEAWARE_URL", None)


def cpu_grpo_config(out: Path, **overrides: Any):
    """TRL's GRPOConfig for the tier's two-step runs on CPU: two prompts of a
    group of two, every step logged, nothing reported or saved; ``overrides``
    set the rest (max_completion_length, max_tool_calling_iterations, ...)."""
    from trl import GRPOConfig

    settings: dict[str, Any] = {
        "output_dir": str(out), "per_device_train_batch_size": 4, "num_generations": 2, "max_steps": 2,
        "learning_rate": 1e-3, "logging_steps": 1, "report_to": [], "save_strategy": "no", "use_cpu": True,
        "dataloader_num_workers": 0, "seed": 0,
    }
    return GRPOConfig(**{**settings, **overrides})


def scripted_rollout(tokenizer, ds, text, script: list, *, variant=lambda k: k, logprobs: bool = True):
    """A GRPOTrainer ``rollout_func`` that answers instead of the model: in
    each call, the k-th prompt of row i gets ``text(i, variant(k))`` and an
    end of sequence, and ``script`` gets the call's list of
    ``(i, variant(k))``. ``logprobs`` False returns none, as TRL's own
    generation without vLLM does once a tool has answered."""
    by_prompt = {json.dumps(ds[i]["prompt"]): i for i in range(len(ds))}

    def rollout(prompts, trainer):
        seen: dict[int, int] = {}
        call, prompt_ids, completion_ids = [], [], []
        for p in prompts:
            i = by_prompt[json.dumps(p)]
            v = variant(seen.get(i, 0))
            seen[i] = seen.get(i, 0) + 1
            call.append((i, v))
            prompt = tokenizer.apply_chat_template(p, tokenize=False, add_generation_prompt=True)
            prompt_ids.append(tokenizer(prompt, add_special_tokens=False)["input_ids"])
            completion_ids.append(tokenizer(text(i, v), add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id])
        script.append(call)
        return {"prompt_ids": prompt_ids, "completion_ids": completion_ids,
                "logprobs": [[0.0] * len(c) for c in completion_ids] if logprobs else None}

    return rollout


SHORT_THINK = "Six sevens."
LONG_THINK = ("Six times seven: seven and seven are fourteen, and seven more twenty-one, then twenty-eight, "
              "thirty-five and forty-two, so the product is forty-two.")


def length_text(i: int, long: bool, right: bool) -> str:
    """A scripted completion of length row i: a short or a long thought, then a right or a wrong answer."""
    think = f"Question {i}. " + (LONG_THINK if long else SHORT_THINK)
    return f"<think>{think}</think>\n<answer>{42 if right else 41}</answer>"


def scripted_ids(tokenizer, text: str) -> list[int]:
    """The ids a scripted rollout returns for text: its tokens and an end of sequence."""
    return tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]


def expected_counts(tokenizer, text: str, think_close: str = "</think>") -> dict:
    """The token counts of `scripted_ids` (text, then an end of sequence),
    read off the tokenizer's character offsets, without decoding: think =
    the tokens that start before the closing tag starts, answer = the other
    tokens that end after it ends, and the end of sequence. For texts with
    a closing tag."""
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    start = text.index(think_close)
    end = start + len(think_close)
    offsets = enc["offset_mapping"]
    return {"response_tokens": len(offsets) + 1, "think_tokens": sum(s < start for s, _ in offsets),
            "answer_tokens": sum(e > end and s >= start for s, e in offsets) + 1}


def recipe_lines(name: str, values: dict) -> list[str]:
    """The recipe's argument lines as its run.sh expands them (examples/args.sh)."""
    res = subprocess.run(
        ["bash", "-c", f'source examples/args.sh && expand_args examples/{name}/grpo.args'],
        cwd=REPO_ROOT, env={"PATH": os.environ["PATH"], **values}, capture_output=True, text=True, check=False,
    )
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines and not any("${" in line for line in lines), lines
    return lines


@pytest.fixture(scope="session")
def verl_config(synth_outputs, tiny_model_dir, server, tmp_path_factory):
    """VeRL's own trainer config composed with every line of examples/verl-grpo/grpo.args,
    on the tiny model, the budget rows, the example tool config and the session's server."""
    import verl
    from hydra import compose, initialize_config_dir

    data = tmp_path_factory.mktemp("verl-grpo")
    shutil.copy(synth_outputs["budget"], data / "budget-train.parquet")
    shutil.copy(synth_outputs["budget"], data / "budget-test.parquet")
    values = {
        "MODEL": str(tiny_model_dir),
        "DATA": str(data),
        "TOOLS": str(REPO_ROOT / "python" / "examples" / "get_duration_tool_config.yaml"),
        "TIMEAWARE_URL": server.url,
        "GPUS": "8",
    }
    config_dir = Path(verl.__file__).parent / "trainer" / "config"
    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
        return compose(config_name="ppo_trainer", overrides=recipe_lines("verl-grpo", values))
