"""The local stack the Python test tiers run against: the `timeaware`
binary and its outputs, a `timeaware serve` on loopback, a tokenizer trained
here on our data and a Llama initialised at random from a config.

Nothing is downloaded. The trainers tier (python/tests/trainers) wraps these in
pytest fixtures; the GPU tier (python/tests/gpu/run.py) calls them directly.
Errors are raised as RuntimeError naming what is missing.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
V1_NAME = re.compile(r"^prefer(Tool|NoTool)_elapse_(\d+)\.json$")

# The tiny model of the CPU tiers is the one examples/trl-grpo/tiny_model.py
# makes for users: its chat template, special tokens, tokenizer and Llama.
_TINY_MODEL = REPO_ROOT / "examples" / "trl-grpo" / "tiny_model.py"


def _load_tiny_model() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("timeaware_example_tiny_model", _TINY_MODEL)
    assert spec is not None and spec.loader is not None, _TINY_MODEL
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_tiny = _load_tiny_model()
CHAT_TEMPLATE: str = _tiny.CHAT_TEMPLATE
SPECIAL_TOKENS: list[str] = _tiny.SPECIAL_TOKENS
TINY: dict[str, int] = _tiny.TINY
train_tokenizer = _tiny.train_tokenizer
random_llama = _tiny.random_llama

# The timer secret of the servers the tiers start.
TIMERS_SECRET = "trainers-tier-timer-secret-0123456789abcdef"


def required(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Calls fn for a pytest fixture: a RuntimeError (a missing binary, data
    directory or server) fails the test with its message instead of erroring."""
    import pytest

    try:
        return fn(*args, **kwargs)
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)


def binary() -> Path:
    """The timeaware binary: $TIMEAWARE_BIN or <repo>/bin/timeaware."""
    path = Path(os.environ.get("TIMEAWARE_BIN") or REPO_ROOT / "bin" / "timeaware")
    if not path.is_file() or not os.access(path, os.X_OK):
        raise RuntimeError(f"timeaware binary not found at {path}; run `make build` or set TIMEAWARE_BIN")
    return path


def v1_files() -> list[Path]:
    """The five TicToc v1 files under $TIMEAWARE_SHARED (default <repo>/../shared)."""
    shared = Path(os.environ.get("TIMEAWARE_SHARED") or REPO_ROOT.parent / "shared")
    files = sorted(p for p in (shared / "data" / "tictoc-v1").glob("*.json") if V1_NAME.match(p.name))
    if len(files) != 5:
        raise RuntimeError(f"expected the five TicToc v1 files in {shared}/data/tictoc-v1; set TIMEAWARE_SHARED")
    return files


def run_timeaware(bin_path: Path, *args: Any, timeout: float = 300) -> subprocess.CompletedProcess:
    """Runs the binary; a non-zero exit raises with its stderr."""
    res = subprocess.run([str(bin_path), *map(str, args)], capture_output=True, text=True, timeout=timeout,
                         check=False)
    if res.returncode != 0:
        raise RuntimeError(f"timeaware {' '.join(map(str, args))} exited {res.returncode}:\n{res.stderr}")
    return res


def direct_answer(sample_id: str) -> str:
    """The direct reply the pairs' side file gives a sample."""
    return f"The result fetched a moment ago for {sample_id} is still current, so here it is again."


def build_pairs(bin_path: Path, files: list[Path], out: Path, *extra: Any) -> dict[str, Path]:
    """``pairs build --split paper`` on the v1 files, with direct replies from
    a side file written beside ``out``: {"train": path, "test": path}."""
    side = out.with_name(out.stem + "-direct.jsonl")
    ids = sorted({r["id"] for path in files for r in json.loads(path.read_text(encoding="utf-8"))})
    with side.open("w", encoding="utf-8") as f:
        for rid in ids:
            f.write(json.dumps({"id": rid, "direct_answer": direct_answer(rid)}) + "\n")
    inputs = [a for p in files for a in ("--input", p)]
    run_timeaware(bin_path, "pairs", "build", *inputs, "--direct-answers", side, "--time-format", "iso_delta",
                  "--split", "paper", *extra, "--out", out)
    return {s: out.with_name(f"{out.stem}-{s}{out.suffix}") for s in ("train", "test")}


def synth_outputs(bin_path: Path, work: Path, count: int = 8, *, suffix: str = ".parquet",
                  openrlhf_label: bool = True) -> dict[str, Path]:
    """Every synth RL output (Parquet, or the format ``suffix`` names), with
    OpenRLHF's label column unless told otherwise."""
    tasks = REPO_ROOT / "examples" / "budget" / "tasks.jsonl"
    commands = {
        "budget": ["synth", "budget", "--input", tasks, "--family", "general", "--seed", "5"],
        "puzzles": ["synth", "puzzles", "--count", count, "--seed", "5"],
        "traveler": ["synth", "traveler", "--count", count, "--seed", "5"],
        "negotiation": ["synth", "negotiation", "--count", count, "--seed", "5"],
    }
    out = {}
    for name, args in commands.items():
        path = work / f"{name}{suffix}"
        run_timeaware(bin_path, *args, *(["--openrlhf-label"] if openrlhf_label else []), "--out", path)
        out[name] = path
    return out


def right_answer(data_source: str, ground_truth: str, extra_info: dict) -> str:
    """A right answer written from the row's ground truth."""
    if data_source == "timepuzzles":
        return f"Checking every candidate date.\nMY ANSWER: {ground_truth}"
    if data_source.startswith("timely/"):
        return f"Working it out.\n<answer>{ground_truth}</answer>"
    if data_source == "traveler":
        gt = json.loads(ground_truth)
        if "answer" not in gt:
            # A vague question: the answer synth found most likely.
            return f"Weighing how likely each event is.\nANSWER: {extra_info['answer']}"
        ans = gt["answer"]
        if isinstance(ans, list):
            ans = ", ".join(ans) if ans else "nobody"
        return f"Looking at the events.\nANSWER: {ans}"
    if data_source == "negotiation":
        # The reply form the row's prompt asks for: walking away is always
        # valid and is worth the role's BATNA.
        return json.dumps({"text": "I will take my outside option.", "action": {"action": "batna"}})
    raise AssertionError(data_source)


def corpus(files: Iterable[Path], synth: Iterable[Path]) -> Iterator[str]:
    """The text a tokenizer is trained on: the v1 records and the synth prompts."""
    import pyarrow.parquet as pq

    for path in files:
        for record in json.loads(path.read_text(encoding="utf-8")):
            yield json.dumps(record, ensure_ascii=False)
    for path in synth:
        for row in pq.read_table(path, columns=["prompt"]).column("prompt").to_pylist():
            for m in row:
                yield m["content"]


class LocalServer:
    """A server process on loopback, its output in ``log``: started at once,
    ready once ``wait_ready`` sees its URL answer 200, stopped with SIGTERM
    (then SIGKILL after ``stop_timeout`` seconds). The test tiers' servers
    (`Server`, `ModelServer`, the OpenEnv server) are this with their own
    command line and their own way of telling where they listen."""

    #: What a start error calls the server.
    what = "the server"
    #: The route that answers 200 once the server is up.
    health = "/health"
    stop_timeout = 15.0

    def __init__(self, argv: list[str], log: Path, env: dict | None = None, cwd: Path | None = None) -> None:
        self.log = log
        self.url = ""
        self._logf = log.open("wb")
        self.proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=self._logf,
                                     stderr=subprocess.STDOUT)

    def listening(self) -> str:
        """The server's base URL once it says where it listens, else ""."""
        raise NotImplementedError

    def wait_ready(self, timeout: float) -> str:
        """Waits until the server answers; returns its URL. A server that
        exits or does not answer within ``timeout`` is stopped, and the error
        carries its log."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.what} exited:\n" + self.log.read_text(errors="replace"))
            url = self.listening()
            if url:
                try:
                    with urllib.request.urlopen(url + self.health, timeout=1) as r:
                        if r.status == 200:
                            self.url = url
                            return url
                except OSError:
                    pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"{self.what} did not start:\n" + self.log.read_text(errors="replace"))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=self.stop_timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._logf.close()


class AddrFileServer(LocalServer):
    """A server that writes the host:port it bound to a file beside its log
    (``addr_file``, removed before the start)."""

    def __init__(self, argv_before_addr: list[str], log: Path, env: dict | None = None,
                 cwd: Path | None = None) -> None:
        self.addr_file = log.with_suffix(".addr")
        self.addr_file.unlink(missing_ok=True)
        super().__init__([*argv_before_addr, "--addr-file", str(self.addr_file)], log, env, cwd)

    def listening(self) -> str:
        addr = self.addr_file.read_text().strip() if self.addr_file.exists() else ""
        return f"http://{addr}" if addr else ""


class Server(AddrFileServer):
    """One `timeaware serve` on a port the kernel chose: --addr 127.0.0.1:0,
    the bound address read from --addr-file (written once the listener is
    bound), ready once /healthz answers 200."""

    what = "timeaware serve"
    health = "/healthz"

    def __init__(self, bin_path: Path, log: Path, env: dict | None = None, *args: str) -> None:
        if env is None:
            env = {k: v for k, v in os.environ.items() if not k.startswith("TIMEAWARE_")}
            env["TIMEAWARE_TIMERS_SECRET"] = TIMERS_SECRET
        super().__init__([str(bin_path), "serve", "--addr", "127.0.0.1:0", *args], log, env)
        self.wait_ready(20)


class Restartable:
    """A `timeaware serve` that a test stops and starts again on the same
    address, as a verifier killed mid-run and brought back by its
    supervisor: ``url`` stays the same, each start logs to a file of its own."""

    def __init__(self, bin_path: Path, work: Path, name: str) -> None:
        self._bin, self._work, self._name, self._starts = bin_path, work, name, 0
        self._server: Server | None = Server(bin_path, work / f"{name}-0.log")
        self.url = self._server.url

    def stop(self) -> None:
        """Stop the server (SIGTERM); its address refuses connections."""
        if self._server is not None:
            self._server.stop()
            self._server = None

    def start(self) -> None:
        """Start it again on the same address; returns once it answers."""
        self._starts += 1
        port = self.url.rsplit(":", 1)[1]
        self._server = Server(self._bin, self._work / f"{self._name}-{self._starts}.log", None,
                              "--addr", f"127.0.0.1:{port}")


class ModelServer(LocalServer):
    """`transformers serve` (the OpenAI-compatible server of transformers) for
    one model directory, on a port the kernel chose, read from its log.
    ``args`` go to the command line (``--continuous-batching``, ``--dtype``)."""

    what = "transformers serve"
    stop_timeout = 20.0

    def __init__(self, model_dir: Path, log: Path, *args: str, start_timeout: float = 180) -> None:
        import sys

        exe = Path(sys.executable).with_name("transformers")
        super().__init__([str(exe), "serve", str(model_dir), "--host", "127.0.0.1", "--port", "0",
                          "--log-level", "info", *args], log)
        self.wait_ready(start_timeout)

    def listening(self) -> str:
        m = re.search(r"Uvicorn running on (http://127\.0\.0\.1:\d+)", self.log.read_text(errors="replace"))
        return m.group(1) if m else ""
