"""Run a timeaware command as N Ray tasks, one shard each, and merge their
manifests: a corpus too big for one machine is spread over the Ray cluster
a training job already has (extra ``timeaware[ray]``).

    python -m timeaware.ray --shards 8 --out DIR [--address ADDR] [--binary PATH] \\
        -- pairs build --input /data/trajectories --split group

Shard i runs the command with ``--shard i/N --out DIR/part-iiiii-of-NNNNN.EXT``
(EXT from the command's ``--format``, else parquet; score writes JSONL). A
command that splits (``--split``, ``--test-fraction``) writes its train and
test parts to ``DIR/train/`` and ``DIR/test/``, the layout Hugging Face
``datasets`` reads as two splits. ``DIR.manifest.json``, beside the
directory as a single run's manifest is beside its file (inside, the
trainers' loaders would take it for data), merges the parts' manifests:
inputs, config, every part's path (relative to the manifest), hash and row
count, the summaries' integer counts summed. A failed shard is retried
(``--retries``). The shards write into a hidden directory beside DIR; only
when every shard has succeeded do their parts replace the previous run's in
DIR, the merged manifest last, so a run that fails leaves the previous
output and its manifest as they were.

The binary reaches the workers through Ray's object store (the
``timeaware`` found on PATH is put there once, and each node writes it to a
cache directory named by its hash before the first shard it runs), or
``--binary`` names a path every node has. Paths in the command, and DIR,
are resolved against the driver's working directory: give absolute paths on
a file system every node mounts.

``start_verifiers()`` runs the verifier service on the cluster itself: one
``timeaware serve`` per node, each in a Ray actor pinned to its node, all
sharing one timer secret and bearer token. Give the returned ``env()`` to
the training job's runtime environment: the adapter then scores on its
node's replica and moves to another when that one fails, so a VeRL cluster
needs no separate deployment.

The same from Python::

    from timeaware.ray import run_sharded
    manifest = run_sharded(["synth", "puzzles", "--count", "100000", "--seed", "1"],
                           shards=8, out="puzzles")
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["ShardFailed", "Verifiers", "main", "run_sharded", "start_verifiers"]

#: Extensions by --format value.
_EXTENSIONS = {"parquet": "parquet", "jsonl": "jsonl", "arrow": "arrow"}

#: Commands that take --shard i/n.
SHARDED_COMMANDS = (
    ("pairs", "build"),
    ("synth", "timestamps"),
    ("synth", "budget"),
    ("synth", "puzzles"),
    ("synth", "traveler"),
    ("synth", "negotiation"),
    ("score",),
)


class ShardFailed(RuntimeError):
    """A shard's command failed after its retries; the message holds its
    exit status and the end of its error output."""


def _command_of(args: Sequence[str]) -> tuple[str, ...]:
    for cmd in SHARDED_COMMANDS:
        if tuple(args[: len(cmd)]) == cmd:
            return cmd
    names = ", ".join(" ".join(c) for c in SHARDED_COMMANDS)
    raise ValueError(f"timeaware.ray: {' '.join(args[:2]) or '(no command)'!s} cannot be sharded; one of: {names}")


def _flag_value(args: Sequence[str], flag: str) -> str | None:
    for i, a in enumerate(args):
        if a == flag and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(flag + "="):
            return a[len(flag) + 1:]
    return None


def _check_args(args: Sequence[str]) -> None:
    for flag in ("--out", "--shard"):
        if _flag_value(args, flag) is not None or flag in args:
            raise ValueError(f"timeaware.ray: leave {flag} out of the command; each shard gets its own")


def _extension(cmd: tuple[str, ...], args: Sequence[str]) -> str:
    if cmd in (("score",), ("synth", "timestamps")):
        return "jsonl"  # these write JSONL whatever the name
    fmt = _flag_value(args, "--format")
    if fmt is None:
        return "parquet"
    if fmt not in _EXTENSIONS:
        raise ValueError(f"timeaware.ray: --format {fmt!r}: want one of {', '.join(_EXTENSIONS)}")
    return _EXTENSIONS[fmt]


def _part_name(i: int, n: int, ext: str) -> str:
    return f"part-{i:05d}-of-{n:05d}.{ext}"


def _materialise(blob: bytes, digest: str) -> str:
    """Write the shipped binary once per node and user, atomically, into a
    directory only this user may write; a file there is used only when it
    has the shipped hash. Returns its path."""
    d = os.path.join(tempfile.gettempdir(), f"timeaware-ray-{os.getuid()}-{digest[:16]}")
    os.makedirs(d, mode=0o700, exist_ok=True)
    st = os.stat(d)
    if st.st_uid != os.getuid() or st.st_mode & 0o022:
        d = tempfile.mkdtemp(prefix="timeaware-ray-")  # someone else's: use a fresh one
    exe = os.path.join(d, "timeaware")
    try:
        with open(exe, "rb") as f:
            if hashlib.sha256(f.read()).hexdigest() == digest:
                return exe
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".timeaware-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.chmod(tmp, 0o700)
        os.replace(tmp, exe)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return exe


#: The file whose presence in the staging directory says the run still
#: wants its shards' output; the driver removes it when the run fails.
_LIVE = ".live"


class _Abandoned(RuntimeError):
    """A shard of a run that has failed: not retried."""


def _abandoned(out: str) -> bool:
    """Whether the run that asked for out has given up on it."""
    return not os.path.exists(os.path.join(os.path.dirname(out), _LIVE))


def _take_back(out: str) -> None:
    """Remove what a shard wrote for an abandoned run (its part, split
    sides, manifest), and the staging directory if that leaves it empty:
    the command recreates the directory the driver has removed."""
    stem = os.path.basename(out).rsplit(".", 1)[0]
    stage = os.path.dirname(out)
    with contextlib.suppress(OSError):
        for name in os.listdir(stage):
            if name.startswith((stem, "." + stem)):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(stage, name))
        os.rmdir(stage)


def _run_shard(binary: Any, args: list[str], cwd: str, out: str) -> dict[str, Any]:
    """One shard, on a worker: run the command, return its manifest. binary
    is a path, or (bytes, sha256) shipped through the object store; out is
    a path in the run's staging directory. Ray's cancellation is best
    effort (a task can start, or go on, after the driver has been told it
    is cancelled), so a shard checks that the run still wants its output
    before it starts the command and after it ends, and takes back what it
    wrote when not."""
    name = " ".join(args[-2:])
    if _abandoned(out):
        raise _Abandoned(f"{name}: not run: the run has failed")
    exe = binary if isinstance(binary, str) else _materialise(*binary)
    # The driver's directory, for the command's relative paths; a node that
    # lacks it runs from its own (absolute paths work everywhere).
    run_dir = cwd if os.path.isdir(cwd) else None
    # In a session of its own, so that stopping the shard stops the command
    # and whatever it started.
    proc = subprocess.Popen(
        [exe, *args, "--out", out], cwd=run_dir, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        while True:
            try:
                _, stderr = proc.communicate(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                if _abandoned(out):
                    raise _Abandoned(f"{name}: stopped: the run has failed") from None
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        if _abandoned(out):
            _take_back(out)
        raise
    if _abandoned(out):
        _take_back(out)
        raise _Abandoned(f"{name}: output taken back: the run has failed")
    if proc.returncode != 0:
        tail = (stderr or "").strip().splitlines()[-5:]
        raise ShardFailed(f"{' '.join(args[-2:])}: exit {proc.returncode}: " + " | ".join(tail))
    path = os.path.join(run_dir or "", out + ".manifest.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            manifest: dict[str, Any] = json.load(f)
        return manifest
    # A command that writes no manifest (score): describe the
    # part here, as its manifest would.
    h, size, rows = hashlib.sha256(), 0, 0
    with open(os.path.join(run_dir or "", out), "rb") as f:
        for line in f:
            h.update(line)
            size += len(line)
            rows += bool(line.strip())
    return {"tool": "timeaware", "command": " ".join(a for a in args[:2] if not a.startswith("-")),
            "outputs": [{"path": os.path.basename(out), "role": "records", "format": "jsonl",
                         "sha256": h.hexdigest(), "bytes": size, "rows": rows}],
            "inputs": None, "config": {}, "summary": {}}


def _sum_counts(summaries: list[Any], key: str = "") -> Any:
    """The parts' summaries merged: integer counts summed, key by key;
    ``*_min`` and ``*_max`` taken as the minimum and maximum; other values
    kept where every part agrees and dropped where they differ (a mean is
    not a sum); the shards' own ``skipped_other_shards`` dropped."""
    first = summaries[0]
    ints = all(isinstance(s, int) and not isinstance(s, bool) for s in summaries)
    if ints and key.endswith("_min"):
        return min(summaries)
    if ints and key.endswith("_max"):
        return max(summaries)
    if ints:
        return sum(summaries)
    if all(isinstance(s, dict) for s in summaries):
        out = {}
        keys: list[str] = []
        for s in summaries:
            keys.extend(k for k in s if k not in keys)
        for k in keys:
            if k == "skipped_other_shards":
                continue
            vals = [s[k] for s in summaries if k in s]
            if len(vals) < len(summaries):
                if all(isinstance(v, int) and not isinstance(v, bool) for v in vals) and not k.endswith(("_min", "_max")):
                    out[k] = sum(vals)  # a count some parts lack is 0 there
                continue
            merged = _sum_counts(vals, k)
            if merged is not None:
                out[k] = merged
        return out
    return first if all(s == first for s in summaries) else None


def _rows_by(outputs: list[dict[str, Any]]) -> dict[str, int]:
    """Rows by split for a split run, else by the outputs' role."""
    rows: dict[str, int] = {}
    for o in outputs:
        key = o.get("split") or o.get("role") or "rows"
        rows[key] = rows.get(key, 0) + (o.get("rows") or 0)
    return rows


def run_sharded(
    command: Sequence[str],
    shards: int,
    out: str,
    *,
    address: str | None = None,
    binary: str | None = None,
    retries: int = 2,
) -> dict[str, Any]:
    """Run ``timeaware COMMAND`` as ``shards`` Ray tasks writing to the
    directory ``out``; return the merged manifest (also written to
    ``out.manifest.json``). Connects to the Ray cluster at ``address``, or
    starts or joins one as ``ray.init()`` does when Ray is not yet
    initialised. The shards write into a hidden directory beside ``out``;
    their parts replace the previous run's only once every shard has
    succeeded (see `_commit`). Raises ``ShardFailed`` when a shard still
    fails after ``retries`` retries, leaving ``out`` and its manifest as
    they were."""
    import ray  # the extra timeaware[ray]

    args = [str(a) for a in command]
    if args and args[0] == "timeaware":
        args = args[1:]
    cmd = _command_of(args)
    _check_args(args)
    if shards < 1:
        raise ValueError(f"timeaware.ray: shards must be at least 1, got {shards}")
    if retries < 0:
        raise ValueError(f"timeaware.ray: retries must not be negative, got {retries}")
    ext = _extension(cmd, args)
    cwd = os.getcwd()
    root = Path(out).resolve()
    root.parent.mkdir(parents=True, exist_ok=True)
    merged_path = root.parent / (root.name + ".manifest.json")

    options: dict[str, Any] = {"max_retries": retries, "retry_exceptions": [ShardFailed], "num_cpus": 1}
    if binary is None:
        found = shutil.which("timeaware")
        if found is None:
            raise FileNotFoundError("timeaware.ray: no timeaware binary on PATH; give binary= (--binary)")
        blob = Path(found).read_bytes()
        shipped: Any = (blob, hashlib.sha256(blob).hexdigest())
    else:
        shipped = str(Path(binary).resolve())

    if not ray.is_initialized():
        ray.init(address=address)
    task = ray.remote(_run_shard).options(**options)
    ref = ray.put(shipped)
    # The shards write beside DIR, on its file system, so that their parts
    # move into DIR by renaming.
    stage = Path(tempfile.mkdtemp(prefix=f".{root.name}.run-", dir=root.parent))
    live = stage / _LIVE
    live.touch()
    try:
        refs = [
            task.remote(ref, [*args, "--shard", f"{i}/{shards}"], cwd, str(stage / _part_name(i, shards, ext)))
            for i in range(shards)
        ]
        try:
            # Shard by shard as they finish, so that the first to fail stops
            # the others at once.
            pending = list(refs)
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                ray.get(done)
            manifests = ray.get(refs)
        except ray.exceptions.RayError as e:
            _stop_shards(ray, refs, live)
            cause = e.as_instanceof_cause() if isinstance(e, ray.exceptions.RayTaskError) else e
            lines = str(cause).strip().splitlines() or [type(e).__name__]
            raise ShardFailed(f"{lines[-1]} (nothing replaced: {out} and its manifest are as they were)") from None
        outputs, parts = _arrange(stage, root, manifests, shards, ext)
        merged = _merge(manifests, outputs, shards, args)
        _commit(stage, root, parts, merged_path, json.dumps(merged, indent=2) + "\n")
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return merged


def _stop_shards(ray: Any, refs: list[Any], live: Path) -> None:
    """Stop the shards of a failed run before their staging directory goes:
    with live gone, a shard not yet started does not start, and one running
    kills its command within 0.2 s and takes back what it wrote
    (`_run_shard`). Waits up to 60 s for them. Not with ray.cancel: in Ray
    2.x a cancellation that races with the task's end can abort the
    driver."""
    live.unlink(missing_ok=True)
    with contextlib.suppress(Exception):
        ray.wait(refs, num_returns=len(refs), timeout=60)


def _arrange(
    stage: Path, root: Path, manifests: list[dict[str, Any]], shards: int, ext: str
) -> tuple[list[dict[str, Any]], list[str]]:
    """Lay the shards' outputs out in stage as they will be in root: a split
    run's sides in train/ and test/. Returns the merged manifest's outputs
    (paths relative to root's parent) and the parts' paths relative to
    stage."""
    outputs, parts = [], []
    for i, m in enumerate(manifests):
        part = stage / _part_name(i, shards, ext)
        stem = part.name[: -len(ext) - 1]
        for entry in m.get("outputs", []):
            src = stage / entry["path"]
            # A split run writes <out>-train.<ext> and <out>-test.<ext>.
            side = next((s for s in ("train", "test") if src.name == f"{stem}-{s}.{ext}"), None)
            rel = src.name if side is None else f"{side}/{part.name}"
            if side is not None:
                (stage / side).mkdir(exist_ok=True)
                os.replace(src, stage / rel)
            parts.append(rel)
            output = {**entry, "path": f"{root.name}/{rel}", "shard": i}
            if side is not None:
                output["split"] = side
            outputs.append(output)
    return outputs, parts


def _merge(manifests: list[dict[str, Any]], outputs: list[dict[str, Any]], shards: int, args: list[str]) -> dict[str, Any]:
    """The merged manifest of the shards' manifests."""
    first = manifests[0]
    config = dict(first.get("config") or {})
    config.pop("shard", None)
    merged = {
        "tool": first.get("tool", "timeaware"),
        "version": first.get("version"),
        "command": first.get("command"),
        "runner": {"name": "timeaware.ray", "shards": shards, "args": args},
        "outputs": outputs,
        "inputs": first.get("inputs"),
        "config": config,
        "summary": _sum_counts([m.get("summary") or {} for m in manifests]),
        # Rows by side for a split run, else by the output's role (the
        # command's name for it: "pairs", "puzzles", ...).
        "rows": _rows_by(outputs),
    }
    return merged


def _set_aside(path: Path, token: str) -> Path | None:
    """A backup of the file at path, beside it and hidden (a second name, or
    on a file system without hard links the file itself, renamed away);
    None when there is no file."""
    if not path.exists():
        return None
    backup = path.with_name(f".{path.name}.bak-{token}")
    try:
        os.link(path, backup)
    except OSError:
        os.replace(path, backup)
    return backup


def _commit(stage: Path, root: Path, parts: list[str], manifest_path: Path, manifest_text: str) -> None:
    """Replace the previous run's output with this one's: the parts (paths
    relative to stage) move to the same paths in root, the previous run's
    parts this run did not write (another number of shards, a split where
    this run has none) leave root, and the manifest goes in last, written
    whole beside its path first. Other files in root stay. Each file
    replaced or removed is kept under a hidden name until the manifest is in
    place; if any step fails, every path gets its previous file back and the
    error is raised. The manifest names each part's SHA-256, so a process
    killed halfway leaves a mix that its manifest gives away."""
    token = secrets.token_hex(4)
    tmp = manifest_path.with_name(f".{manifest_path.name}.tmp-{token}")
    new = {root / p for p in parts}
    stale = [
        p for d in (root, root / "train", root / "test") if d.is_dir()
        for p in sorted(d.glob("part-*-of-*.*")) if p not in new
    ]
    made = [d for d in (root, root / "train", root / "test") if not d.exists()]
    undo: list[tuple[Path, Path | None]] = []  # (path, its previous file or None), in order
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(manifest_text)
            f.flush()
            os.fsync(f.fileno())
        root.mkdir(exist_ok=True)
        for rel in parts:
            dest = root / rel
            dest.parent.mkdir(exist_ok=True)
            undo.append((dest, _set_aside(dest, token)))
            os.replace(stage / rel, dest)
        for old in stale:
            undo.append((old, _set_aside(old, token)))
            old.unlink(missing_ok=True)
        undo.append((manifest_path, _set_aside(manifest_path, token)))
        os.replace(tmp, manifest_path)
    except BaseException:
        for path, backup in reversed(undo):
            with contextlib.suppress(OSError):
                if backup is None:
                    path.unlink(missing_ok=True)
                else:
                    os.replace(backup, path)
                    # A second name of the file still in place: renaming
                    # one name of a file onto another does nothing.
                    backup.unlink(missing_ok=True)
        for d in reversed(made):
            with contextlib.suppress(OSError):
                d.rmdir()  # only when empty
        tmp.unlink(missing_ok=True)
        raise
    for _, backup in undo:
        if backup is not None:
            backup.unlink(missing_ok=True)
    for d in (root / "train", root / "test"):
        if d.is_dir() and not any(d.iterdir()):
            d.rmdir()


class _Replica:
    """A Ray actor holding one ``timeaware serve`` process on its node."""

    def __init__(self, binary: Any, env: dict[str, str], port: int, extra: list[str]) -> None:
        import ray

        exe = binary if isinstance(binary, str) else _materialise(*binary)
        host = ray.util.get_node_ip_address()
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("TIMEAWARE_")}
        full_env.update(env)
        # The server writes the address it bound to --addr-file (whole, by
        # renaming) once it listens, and its log through its own descriptor;
        # both live in a directory of this replica's own.
        self._dir = tempfile.mkdtemp(prefix="timeaware-serve-")
        self._addr_path = os.path.join(self._dir, "addr")
        self._log_path = os.path.join(self._dir, "serve.log")
        with open(self._log_path, "wb") as log:
            self._proc = subprocess.Popen(
                [exe, "serve", "--addr", f"{host}:{port}", "--addr-file", self._addr_path, *extra],
                env=full_env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            )
        try:
            self.url = self._wait()
        except BaseException:
            self.stop()
            raise

    def _wait(self) -> str:
        import time
        import urllib.request

        deadline = time.monotonic() + 30
        url = ""
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                text = Path(self._log_path).read_text(errors="replace")
                raise RuntimeError(f"timeaware serve exited {self._proc.returncode}: {text[-2000:]}")
            if not url:
                with contextlib.suppress(FileNotFoundError):
                    addr = Path(self._addr_path).read_text().strip()
                    url = f"http://{addr}" if addr else ""
            if url:
                try:
                    with urllib.request.urlopen(url + "/readyz", timeout=2) as r:
                        if r.status == 200:
                            return url
                except OSError:
                    pass
            time.sleep(0.05)
        what = f"{url} did not answer /readyz" if url else f"wrote no address to {self._addr_path}"
        raise RuntimeError(f"timeaware serve {what} within 30 s")

    def info(self) -> dict[str, Any]:
        import ray

        return {"url": self.url, "node_id": ray.get_runtime_context().get_node_id(), "pid": self._proc.pid}

    def stop(self) -> int:
        self._proc.terminate()
        try:
            code = self._proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            code = self._proc.wait()
        shutil.rmtree(self._dir, ignore_errors=True)
        return code


class Verifiers:
    """Replicas started by `start_verifiers`: their URLs, the token and
    secret they share, and the actors holding them."""

    def __init__(self, actors: list[Any], infos: list[dict[str, Any]], token: str, secret: str) -> None:
        self.actors, self.infos, self.token, self.secret = actors, infos, token, secret

    @property
    def urls(self) -> list[str]:
        return [i["url"] for i in self.infos]

    def env(self) -> dict[str, str]:
        """Environment variables for the training job (for example Ray's
        ``runtime_env={"env_vars": ...}``): the adapter's ``TIMEAWARE_URL``
        listing every replica (each process uses its own node's first) and
        ``TIMEAWARE_SERVE_TOKEN``."""
        return {"TIMEAWARE_URL": ",".join(self.urls), "TIMEAWARE_SERVE_TOKEN": self.token}

    def stop(self) -> None:
        """Stop every replica at once (SIGTERM: each drains its requests),
        then its actor."""
        _stop_all(self.actors)


def _stop_all(actors: list[Any]) -> None:
    import ray

    pending = []
    for a in actors:
        with contextlib.suppress(Exception):  # an actor already gone
            pending.append(a.stop.remote())
    for ref in pending:
        with contextlib.suppress(Exception):  # a replica already gone
            ray.get(ref, timeout=30)
    for a in actors:
        with contextlib.suppress(Exception):
            ray.kill(a)


def start_verifiers(
    *,
    per_node: int = 1,
    port: int = 0,
    token: str | None = None,
    secret: str | None = None,
    binary: str | None = None,
    serve_args: Sequence[str] = (),
    address: str | None = None,
    detached: bool = False,
) -> Verifiers:
    """Start ``per_node`` ``timeaware serve`` replicas on every alive node of
    the Ray cluster, each in an actor pinned to its node, listening on the
    node's address (``port`` 0: a port the kernel picks; a fixed port allows
    one replica per node). All share one timer secret and one bearer token
    (random ones unless given), so a timer created on one replica reads on
    any. Returns once every replica answers ``/readyz``; when one fails to
    start, the others are stopped and the error raised. ``detached`` keeps
    the replicas after this driver exits (stop them with ``stop()`` from
    the returned object, or ``ray.kill``), so that one script can start them
    and the training job, started with their ``env()``, use them."""
    import secrets as _secrets

    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    if per_node < 1:
        raise ValueError(f"timeaware.ray: per_node must be at least 1, got {per_node}")
    if port and per_node > 1:
        raise ValueError("timeaware.ray: a fixed port allows one replica per node")
    for a in serve_args:
        if a.split("=", 1)[0] in ("--addr", "--addr-file"):
            raise ValueError(f"timeaware.ray: leave {a.split('=', 1)[0]} out of serve_args; each replica gets its own")
    if not ray.is_initialized():
        ray.init(address=address)
    if binary is None:
        found = shutil.which("timeaware")
        if found is None:
            raise FileNotFoundError("timeaware.ray: no timeaware binary on PATH; give binary=")
        blob = Path(found).read_bytes()
        shipped: Any = (blob, hashlib.sha256(blob).hexdigest())
    else:
        shipped = str(Path(binary).resolve())
    token = token or _secrets.token_urlsafe(24)
    secret = secret or _secrets.token_urlsafe(32)
    env = {"TIMEAWARE_SERVE_TOKEN": token, "TIMEAWARE_TIMERS_SECRET": secret}
    ref = ray.put(shipped)
    Replica = ray.remote(num_cpus=0)(_Replica)
    actors = []
    for node in ray.nodes():
        if not node.get("Alive"):
            continue
        for _ in range(per_node):
            opts: dict[str, Any] = {
                "scheduling_strategy": NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False),
            }
            if detached:
                opts["lifetime"] = "detached"
            actors.append(Replica.options(**opts).remote(ref, env, port, list(serve_args)))
    try:
        infos = ray.get([a.info.remote() for a in actors])
    except BaseException:
        _stop_all(actors)
        raise
    return Verifiers(actors, infos, token, secret)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" not in argv:
        print("timeaware.ray: put the timeaware command after --, e.g. "
              "python -m timeaware.ray --shards 4 --out DIR -- synth puzzles --count 1000 --seed 1", file=sys.stderr)
        return 2
    cut = argv.index("--")
    ap = argparse.ArgumentParser(prog="python -m timeaware.ray", description="Run a timeaware command as Ray tasks, one shard each.")
    ap.add_argument("--shards", type=int, required=True, help="number of shards (Ray tasks)")
    ap.add_argument("--out", required=True, help="output directory of the parts; the merged manifest is OUT.manifest.json")
    ap.add_argument("--address", help="Ray cluster address (default: as ray.init() finds or starts one)")
    ap.add_argument("--binary", help="path of the timeaware binary on every node (default: the one on PATH, shipped to the workers)")
    ap.add_argument("--retries", type=int, default=2, help="retries of a failed shard (default 2)")
    opts = ap.parse_args(argv[:cut])
    try:
        m = run_sharded(argv[cut + 1:], opts.shards, opts.out, address=opts.address, binary=opts.binary, retries=opts.retries)
    except (ValueError, FileNotFoundError, ShardFailed) as e:
        print(str(e), file=sys.stderr)
        return 1
    rows = ", ".join(f"{k} {v}" for k, v in m["rows"].items())
    print(f"timeaware.ray: {m['command']} in {opts.shards} shards: {len(m['outputs'])} parts ({rows} rows) in {opts.out}; "
          f"manifest {opts.out.rstrip(os.sep)}.manifest.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
