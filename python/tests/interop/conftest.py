"""Shared fixtures for timeaware's Python interop tests.

The tests drive the real CLI binary and read its output with the libraries
trainers use (pyarrow, Hugging Face datasets). They need:

  TIMEAWARE_BIN     the binary (default <repo>/bin/timeaware; build it with
                    `go build -o bin/timeaware ./cmd/timeaware`)
  TIMEAWARE_SHARED  the shared directory holding data/tictoc-v1
                    (default <repo>/../shared)

A missing binary or data directory fails the tests with a message saying so;
nothing is skipped.

Tests that need the verifier service start it with `start_serve` (a
`ServeProcess`): on a port the kernel picks, never on one found free and
then given up, which another process could take in between.
"""
from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[3]
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
    with open(REPO_ROOT / "splits" / "scenario" / "scenarios.yaml", encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    out = {}
    for s in doc["scenarios"]:
        entry = (s["name"], s["sensitivity"], s["paper_split"])
        out[s["name"]] = entry
        for alias in s["aliases"]:
            out[alias] = entry
    return out


class ServeProcess:
    """One `timeaware serve` process on a loopback port the kernel picks.

    `start` runs it with ``--addr 127.0.0.1:0 --addr-file FILE``, waits for
    FILE (the service writes it, atomically, once its listener is bound),
    then polls ``/healthz`` until it answers 200. Both waits share one
    deadline and fail the test at once, with the server's log, if the
    process exits. `restart` starts it again on the port of its last run,
    for tests whose clients must find it at the same URL. `stop` sends
    SIGTERM and requires a clean exit (0) within 15 s.

    The environment is the test's without TIMEAWARE_* variables, HOME a
    private directory, plus ``env``.
    """

    START_TIMEOUT_S = 20.0

    def __init__(self, binary: Path, tmp: Path, env: Optional[Dict[str, str]] = None):
        self.binary = Path(binary)
        self.dir = Path(tempfile.mkdtemp(prefix="serve-", dir=tmp))
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TIMEAWARE_")}
        self.env["HOME"] = str(self.dir)
        self.env.update(env or {})
        self.log = self.dir / "serve.log"
        self.addr_file = self.dir / "addr"
        self.port: Optional[int] = None
        self.proc: Optional[subprocess.Popen] = None
        self._logf = None

    @property
    def url(self) -> str:
        assert self.port is not None, "the server has not been started"
        return f"http://127.0.0.1:{self.port}"

    def start(self, port: int = 0) -> "ServeProcess":
        assert self.proc is None, "the server is already running"
        self.addr_file.unlink(missing_ok=True)
        self._logf = open(self.log, "ab")
        self.proc = subprocess.Popen(
            [str(self.binary), "serve", "--addr", f"127.0.0.1:{port}", "--addr-file", str(self.addr_file)],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=self._logf,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + self.START_TIMEOUT_S
        addr = self._await(self._read_addr, deadline, f"write its address to {self.addr_file}")
        self.port = int(addr.rpartition(":")[2])
        self._await(self._healthy, deadline, f"answer {self.url}/healthz")
        return self

    def restart(self) -> "ServeProcess":
        """Start again on the port of the last run (free since that run
        stopped, unless another process has taken it meanwhile)."""
        assert self.port is not None, "the server has not been started"
        return self.start(port=self.port)

    def _read_addr(self) -> Optional[str]:
        try:
            return self.addr_file.read_text().strip() or None
        except FileNotFoundError:
            return None

    def _healthy(self) -> bool:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=1)
        try:
            conn.request("GET", "/healthz")
            return conn.getresponse().status == 200
        except (OSError, http.client.HTTPException):
            return False
        finally:
            conn.close()

    def _await(self, probe, deadline: float, what: str):
        while True:
            got = probe()
            if got:
                return got
            if self.proc.poll() is not None:
                code = self.proc.returncode
                self.proc = None
                self._logf.close()
                pytest.fail(f"timeaware serve exited with {code} before it could {what}:\n{self.log.read_text()}", pytrace=False)
            if time.monotonic() > deadline:
                self.kill()
                pytest.fail(
                    f"timeaware serve did not {what} within {self.START_TIMEOUT_S:.0f}s:\n{self.log.read_text()}",
                    pytrace=False,
                )
            time.sleep(0.02)

    def stop(self) -> None:
        """SIGTERM; the server must drain and exit 0 within 15 s."""
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            pytest.fail(f"timeaware serve ignored SIGTERM:\n{self.log.read_text()}", pytrace=False)
        finally:
            self._logf.close()
        assert code == 0, f"timeaware serve exited with {code} after SIGTERM:\n{self.log.read_text()}"

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
            self._logf.close()

    def metrics(self, conn: Optional[http.client.HTTPConnection] = None) -> Dict[str, float]:
        """The server's /metrics samples, keyed by name{labels} (labels sorted).
        On a new connection, closed after; or on conn, kept open: a test that
        reads the server's state while its connections or memory are full
        opens conn before, so that the read needs no new connection."""
        own = conn is None
        if conn is None:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        try:
            conn.request("GET", "/metrics")
            resp = conn.getresponse()
            text = resp.read().decode()
            assert resp.status == 200, text
        finally:
            if own:
                conn.close()
        out: Dict[str, float] = {}
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            name, _, value = line.rpartition(" ")
            out[canonical_sample(name)] = float(value)
        return out


def canonical_sample(sample: str) -> str:
    """name{b="2",a="1"} -> name{a="1",b="2"} so lookups ignore label order."""
    if "{" not in sample:
        return sample
    name, labels = sample[:-1].split("{", 1)
    parts = sorted(re.findall(r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"', labels))
    return name + "{" + ",".join(parts) + "}"


@pytest.fixture(scope="session")
def start_serve(timeaware_bin):
    """start_serve(tmp, env=None) -> a running ServeProcess whose files go
    under tmp. The caller stops it; any still running at the end of the
    session are killed."""
    started = []

    def start(tmp: Path, env: Optional[Dict[str, str]] = None) -> ServeProcess:
        s = ServeProcess(timeaware_bin, tmp, env)
        started.append(s)
        return s.start()

    yield start
    for s in started:
        s.kill()


@pytest.fixture
def refused_urls() -> Iterator[Callable[[int], List[str]]]:
    """refused_urls(n) -> n loopback URLs where nothing listens, for the
    whole test: each port is held by a socket that is bound but not
    listening, so connecting is refused and no other process can take the
    port meanwhile (a port found free and given up could be)."""
    held: List[socket.socket] = []

    def make(n: int = 1) -> List[str]:
        urls = []
        for _ in range(n):
            s = socket.socket()
            held.append(s)
            s.bind(("127.0.0.1", 0))
            urls.append(f"http://127.0.0.1:{s.getsockname()[1]}")
        return urls

    yield make
    for s in held:
        s.close()


@pytest.fixture
def refused_url(refused_urls) -> str:
    """A loopback URL where nothing listens, for the whole test (see refused_urls)."""
    return refused_urls(1)[0]
