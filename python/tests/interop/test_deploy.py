"""The container image and Kubernetes manifests of the verifier service.

deploy/kubernetes/*.yaml are validated offline against the JSON schemas that
kubernetes-validate bundles for K8S_VERSION, strictly (an unknown field is an
error); their cross-references are checked (Service, PDB and HPA find the
Deployment, probes hit the service's routes on the container port, every
secretKeyRef exists in the example Secret); the Dockerfile's invariants are
read from its text (no docker daemon is needed); and the real binary is
started with the Deployment's arguments and environment, the Secret's example
values resolved, to show that the command line is one it accepts and that it
leaves as the probes expect on SIGTERM.
"""
from __future__ import annotations

import copy
import http.client
import json
import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[3]
KUBE_DIR = REPO_ROOT / "deploy" / "kubernetes"
DOCKERFILE = REPO_ROOT / "Dockerfile"

# The Kubernetes release whose schemas the manifests are held to. Everything
# they use (apps/v1, policy/v1, autoscaling/v2) is GA since 1.23.
K8S_VERSION = "1.33.0"

SELECTOR = {"app.kubernetes.io/name": "timeaware", "app.kubernetes.io/component": "verifier"}


def load(name: str) -> dict:
    docs = [d for d in yaml.safe_load_all((KUBE_DIR / name).read_text(encoding="utf-8")) if d is not None]
    assert len(docs) == 1, f"{name}: expected one object, found {len(docs)}"
    return docs[0]


def manifests() -> list[str]:
    return sorted(p.name for p in KUBE_DIR.glob("*.yaml") if p.name != "kustomization.yaml")


@pytest.fixture(scope="module")
def deployment() -> dict:
    return load("deployment.yaml")


@pytest.fixture(scope="module")
def container(deployment) -> dict:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


@pytest.fixture(scope="module")
def secret() -> dict:
    return load("secret.yaml")


def env_of(container: dict) -> dict:
    return {e["name"]: e for e in container.get("env", [])}


def duration_s(text: str) -> float:
    """A Go duration of the simple forms the manifests use: 10s, 1m30s, 500ms."""
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text)
    assert parts and "".join(a + b for a, b in parts) == text, f"unsupported duration {text!r}"
    return sum(float(n) * units[u] for n, u in parts)


def addr_arg(args: list[str]) -> str:
    for i, a in enumerate(args):
        if a == "--addr":
            return args[i + 1]
        if a.startswith("--addr="):
            return a.split("=", 1)[1]
    pytest.fail(f"no --addr in {args}", pytrace=False)


def with_addr(args: list[str], addr: str) -> list[str]:
    out = list(args)
    for i, a in enumerate(out):
        if a == "--addr":
            out[i + 1] = addr
        elif a.startswith("--addr="):
            out[i] = "--addr=" + addr
    return out


# ---------------------------------------------------------------- schemas


@pytest.mark.parametrize("name", manifests())
def test_manifest_matches_kubernetes_schema(name):
    obj = load(name)
    try:
        kubernetes_validate.validate(obj, K8S_VERSION, strict=True)
    except kubernetes_validate.ValidationError as e:
        path = "/".join(map(str, e.path))
        pytest.fail(f"{name}: {path}: {e.message} (Kubernetes {K8S_VERSION} schema)", pytrace=False)


def test_strict_validation_rejects_unknown_fields(deployment):
    """Strict mode is what catches a misspelt field; make sure it still does."""
    bad = copy.deepcopy(deployment)
    bad["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {"httpGet": {"path": "/readyz"}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, K8S_VERSION, strict=True)


def test_kustomization_lists_every_manifest(container):
    k = load("kustomization.yaml")
    assert k["apiVersion"] == "kustomize.config.k8s.io/v1beta1"
    assert k["kind"] == "Kustomization"
    assert sorted(k["resources"]) == manifests()
    names = [i["name"] for i in k.get("images", [])]
    assert container["image"].split(":")[0] in names, "kustomization images: does not retarget the container image"


# ------------------------------------------------------ cross-references


def test_labels_are_consistent(deployment):
    spec = deployment["spec"]
    assert spec["selector"] == {"matchLabels": SELECTOR}
    pod_labels = spec["template"]["metadata"]["labels"]
    for name in manifests():
        labels = load(name)["metadata"]["labels"]
        assert labels == pod_labels, f"{name}: labels {labels} differ from the pods' {pod_labels}"


def test_service_selects_the_deployment_pods(deployment, container):
    svc = load("service.yaml")
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    sel = svc["spec"]["selector"]
    assert sel and all(pod_labels.get(k) == v for k, v in sel.items()), f"{sel} does not select {pod_labels}"
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    for p in svc["spec"]["ports"]:
        target = p["targetPort"]
        assert target in ports or target in ports.values(), f"service targetPort {target} is no container port"


def test_pdb_and_hpa_target_the_deployment(deployment):
    pdb = load("pdb.yaml")
    assert pdb["spec"]["minAvailable"] == 1
    assert pdb["spec"]["selector"] == deployment["spec"]["selector"]
    assert deployment["spec"]["replicas"] >= 2, "minAvailable 1 needs at least 2 replicas to let a drain through"

    hpa = load("hpa.yaml")
    ref = hpa["spec"]["scaleTargetRef"]
    assert ref == {"apiVersion": "apps/v1", "kind": "Deployment", "name": deployment["metadata"]["name"]}
    assert hpa["spec"]["minReplicas"] >= 2
    assert [m["resource"]["name"] for m in hpa["spec"]["metrics"] if m["type"] == "Resource"] == ["cpu"]


def test_probes_hit_the_service_routes(container):
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    listen_port = int(addr_arg(container["args"]).rsplit(":", 1)[1])
    assert listen_port in ports.values(), f"--addr port {listen_port} is not a containerPort {ports}"
    for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        get = container[probe]["httpGet"]
        assert get["path"] == path, f"{probe} path {get['path']}"
        port = ports.get(get["port"], get["port"])
        assert port == listen_port, f"{probe} port {get['port']} is not the port the server listens on"


def test_env_secret_refs_exist(container, secret):
    data = set(secret.get("stringData", {})) | set(secret.get("data", {}))
    refs = [e["valueFrom"]["secretKeyRef"] for e in container["env"] if "secretKeyRef" in e.get("valueFrom", {})]
    assert refs, "the Deployment takes nothing from the Secret"
    for ref in refs:
        assert ref["name"] == secret["metadata"]["name"], f"secretKeyRef names {ref['name']}"
        assert ref["key"] in data, f"secret.yaml has no key {ref['key']}"
    env = env_of(container)
    # Beyond loopback the server refuses to start without a token.
    assert "secretKeyRef" in env["TIMEAWARE_SERVE_TOKEN"]["valueFrom"]
    assert "secretKeyRef" in env["TIMEAWARE_TIMERS_SECRET"]["valueFrom"]
    for key, value in secret["stringData"].items():
        assert "REPLACE" in value, f"secret.yaml {key}: an example value must say to replace it"


def test_shutdown_fits_the_termination_grace(deployment, container):
    env = env_of(container)
    grace = duration_s(env["TIMEAWARE_SERVE_SHUTDOWN_GRACE"]["value"])
    drain = duration_s(env["TIMEAWARE_SERVE_SHUTDOWN_TIMEOUT"]["value"])
    pod = deployment["spec"]["template"]["spec"]
    # The kubelet counts a preStop hook in the termination grace period.
    pre_stop = container.get("lifecycle", {}).get("preStop", {})
    hook = pre_stop.get("sleep", {}).get("seconds", 0)
    assert not set(pre_stop) - {"sleep"}, "a preStop hook other than sleep: its time cannot be checked here"
    assert pod["terminationGracePeriodSeconds"] > hook + grace + drain
    ready = container["readinessProbe"]
    assert ready["periodSeconds"] * ready["failureThreshold"] < grace, "readiness must fail before the grace ends"


def test_memory_limit_comes_from_the_cgroup(container):
    res = container["resources"]
    assert res["limits"]["memory"] == res["requests"]["memory"]
    assert "cpu" in res["requests"], "the HPA's CPU utilization is measured against the request"
    env = env_of(container)
    # serve.memory_limit 0 takes 90% of the cgroup limit; GOMEMLIMIT would win over it.
    assert "GOMEMLIMIT" not in env and "TIMEAWARE_SERVE_MEMORY_LIMIT" not in env


def test_security_context(deployment, container):
    pod = deployment["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert pod["enableServiceLinks"] is False, "service links add TIMEAWARE_VERIFIER_* variables"
    sc = container["securityContext"]
    assert sc["runAsNonRoot"] is True
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert "add" not in sc["capabilities"]


# ------------------------------------------------------------ Dockerfile


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    out, buf = [], ""
    for line in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if not buf and (not stripped or stripped.startswith("#")):
            continue
        if buf and stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            buf += stripped[:-1] + " "
            continue
        buf += stripped
        word, _, rest = buf.partition(" ")
        out.append((word.upper(), rest.strip()))
        buf = ""
    assert not buf, "Dockerfile ends inside a continued line"
    return out


def test_dockerfile_invariants(container):
    ins = dockerfile_instructions()
    froms = [a for i, a in ins if i == "FROM"]
    assert len(froms) >= 2, "the Dockerfile must be multi-stage"
    builder = froms[0].split()
    assert len(builder) == 3 and builder[1].upper() == "AS", f"builder stage is not named: {froms[0]}"
    image, _, tag = builder[0].partition(":")
    assert image == "golang" and tag and tag != "latest" and re.match(r"\d+\.\d+", tag), f"unpinned builder {builder[0]}"
    assert any(s in froms[-1] for s in ("distroless/static", "scratch")), f"runtime image {froms[-1]}"
    # Every base image by tag and digest: the digest is what the build pulls,
    # so a tag pushed again cannot change the image; the tag says what it is.
    for f in froms:
        ref = f.split()[0]
        assert re.fullmatch(r"[a-z0-9./-]+:[A-Za-z0-9._-]+@sha256:[0-9a-f]{64}", ref), f"not pinned by tag and digest: {ref}"

    final = ins[max(i for i, (w, _) in enumerate(ins) if w == "FROM") :]
    users = [a for i, a in final if i == "USER"]
    assert users, "the runtime stage sets no USER"
    uid, _, gid = users[-1].partition(":")
    assert uid.isdigit() and int(uid) != 0 and (not gid or (gid.isdigit() and int(gid) != 0)), users[-1]
    pod_sc = load("deployment.yaml")["spec"]["template"]["spec"]["securityContext"]
    assert pod_sc["runAsUser"] == int(uid)

    build = [a for i, a in ins if i == "RUN" and "go build" in a]
    assert len(build) == 1, build
    cmd = build[0]
    assert "CGO_ENABLED=0" in cmd and "-trimpath" in cmd
    ldflags = re.search(r'-ldflags\s+"([^"]*)"', cmd)
    assert ldflags, cmd
    flags = ldflags.group(1).split()
    assert "-s" in flags and "-w" in flags and "main.version=${VERSION}" in " ".join(flags)
    assert re.search(r"^var version = ", (REPO_ROOT / "cmd/timeaware/root.go").read_text(), re.M), \
        "-X main.version needs a package-level string var version in cmd/timeaware"
    assert any(i == "COPY" and a.startswith("--from=") for i, a in final), "the binary is not copied from the builder"

    entry = [a for i, a in final if i == "ENTRYPOINT"]
    assert entry and json.loads(entry[-1]) == ["/timeaware"], "ENTRYPOINT must be the exec form of /timeaware"
    cmd_json = [a for i, a in final if i == "CMD"]
    assert cmd_json and json.loads(cmd_json[-1]) == container["args"], "the image's CMD and the Deployment's args differ"
    exposed = [int(p.split("/")[0]) for i, a in final if i == "EXPOSE" for p in a.split()]
    assert exposed == [p["containerPort"] for p in container["ports"]]
    health = [a for i, a in final if i == "HEALTHCHECK"]
    assert health, "say HEALTHCHECK NONE rather than nothing"
    assert health[-1] == "NONE" or re.search(r"CMD\s+\[", health[-1]), "a shell-form HEALTHCHECK needs a shell"

    ignored = (REPO_ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert ".git" in ignored and ".venv" in ignored


# ------------------------------------------------------------ the binary


def http_get(hostport: str, path: str, token: str | None = None) -> int:
    host, port = hostport.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        conn.request("GET", path, headers=headers)
        resp = conn.getresponse()
        resp.read()
        return resp.status
    finally:
        conn.close()


@pytest.mark.needs_binary
def test_binary_runs_with_the_deployment_command_line(timeaware_bin, tmp_path, deployment, container, secret):
    values = secret["stringData"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIMEAWARE_") and k != "GOMEMLIMIT"}
    env["HOME"] = str(tmp_path)
    for name, e in env_of(container).items():
        if "value" in e:
            env[name] = e["value"]
        else:
            env[name] = values[e["valueFrom"]["secretKeyRef"]["key"]]
    # The Deployment's arguments, listening on a loopback port of the kernel's
    # choosing, which the service writes to --addr-file once it listens.
    addr_file = tmp_path / "serve.addr"
    args = [*with_addr(container["args"], "127.0.0.1:0"), "--addr-file", str(addr_file)]
    log_path = tmp_path / "serve.log"
    with open(log_path, "wb") as logf:
        proc = subprocess.Popen(
            [str(timeaware_bin), *args], env=env, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT
        )
    log = lambda: log_path.read_text(errors="replace")  # noqa: E731
    cmdline = shlex.join(["timeaware", *args])
    try:
        addr, deadline = None, time.monotonic() + 20
        while time.monotonic() < deadline and addr is None:
            if addr_file.exists():
                addr = addr_file.read_text().strip() or None
            elif proc.poll() is not None:
                pytest.fail(f"`{cmdline}` exited with {proc.returncode}:\n{log()}", pytrace=False)
            else:
                time.sleep(0.05)
        assert addr, f"`{cmdline}` did not report its address:\n{log()}"
        # The address is written once the listener is bound; the log's
        # serving line comes as it starts serving.
        while "msg=serving" not in log() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert http_get(addr, "/healthz") == 200
        assert "auth=true" in log(), "the token from the Secret did not reach serve.token"
        assert "timers.secret is not set" not in log(), "the timer secret from the Secret did not reach timers.secret"
        assert "is not a config variable" not in log(), f"an env name is not a config key:\n{log()}"

        assert http_get(addr, "/readyz") == 200
        assert http_get(addr, "/v1/rewards") == 401
        assert http_get(addr, "/v1/rewards", values["serve-token"]) == 200

        # SIGTERM, as the kubelet sends it: readiness fails at once, liveness
        # holds through the grace, and the process is gone before SIGKILL.
        term = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        deadline = term + 2
        while http_get(addr, "/readyz") != 503:
            assert time.monotonic() < deadline, f"/readyz still ready 2 s after SIGTERM:\n{log()}"
            time.sleep(0.02)
        assert http_get(addr, "/healthz") == 200, "liveness must not fail during the shutdown grace"
        kill_after = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        code = proc.wait(timeout=kill_after)
        assert code == 0, f"exit {code} after SIGTERM:\n{log()}"
        grace = duration_s(env["TIMEAWARE_SERVE_SHUTDOWN_GRACE"])
        assert time.monotonic() - term >= grace * 0.9, "the server left before its shutdown grace"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# ------------------------------------------------------------ the image smoke test

# A stand-in for docker, for deploy/image-smoke.sh where no container runtime
# runs: "the image" is the real binary, run in place of the container with
# the environment the script passes (its state in $FAKE_STATE). The FAKE_*
# variables make it misbehave as a runtime or an image could.
FAKE_RUNTIME = r"""#!/usr/bin/env bash
set -u
state=$FAKE_STATE
cmd=$1; shift
case "$cmd" in
info) [ -z "${FAKE_NO_DAEMON:-}" ] ;;
pull) if [ -n "${FAKE_PULL_ERROR:-}" ]; then echo "$FAKE_PULL_ERROR" >&2; exit 1; fi; echo "${@: -1}" ;;
build) echo "$*" >>"$state/built"; echo sha256:0 ;;
image) case "$3" in *Size*) echo 1234 ;; *User*) echo "${FAKE_USER-65532:65532}" ;; esac ;;
run)
    token=""
    for a in "$@"; do case "$a" in TIMEAWARE_SERVE_TOKEN=*) token=${a#*=} ;; esac; done
    if [ -n "${FAKE_DROP_TOKEN:-}" ]; then token=""; fi
    ( TIMEAWARE_SERVE_TOKEN=$token "$FAKE_BIN" serve --addr 127.0.0.1:0 --addr-file "$state/addr" >"$state/log" 2>&1 &
      echo $! >"$state/pid"; wait $!; echo $? >"$state/code" ) </dev/null >/dev/null 2>&1 &
    until [ -s "$state/addr" ] || [ -e "$state/code" ]; do sleep 0.05; done
    echo container-id ;;
port) cat "$state/addr" ;;
inspect) case "$2" in *Running*) if [ -e "$state/code" ]; then echo false; else echo true; fi ;; *ExitCode*) cat "$state/code" ;; esac ;;
stop) kill -TERM "$(cat "$state/pid")"; until [ -e "$state/code" ]; do sleep 0.05; done ;;
logs) cat "$state/log" ;;
rm|rmi) if [ -e "$state/pid" ] && [ ! -e "$state/code" ]; then kill -KILL "$(cat "$state/pid")"; fi; true ;;
*) echo "fake docker: $cmd is not faked" >&2; exit 2 ;;
esac
"""


def run_smoke(timeaware_bin, tmp_path, **fake) -> subprocess.CompletedProcess:
    bindir, state = tmp_path / "fakebin", tmp_path / "state"
    bindir.mkdir()
    state.mkdir()
    (bindir / "docker").write_text(FAKE_RUNTIME)
    (bindir / "podman").write_text("#!/bin/sh\nexit 1\n")  # present, no runtime behind it
    for f in bindir.iterdir():
        f.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TIMEAWARE_", "FAKE_"))}
    env.update(PATH=f"{bindir}{os.pathsep}{env['PATH']}", FAKE_STATE=str(state), FAKE_BIN=str(timeaware_bin), **fake)
    try:
        return subprocess.run(["bash", str(REPO_ROOT / "deploy" / "image-smoke.sh")], env=env, capture_output=True, check=False,
                              text=True, timeout=120, stdin=subprocess.DEVNULL)
    finally:
        pid = state / "pid"
        if pid.exists() and not (state / "code").exists():
            os.kill(int(pid.read_text()), signal.SIGKILL)


@pytest.mark.needs_binary
def test_image_smoke_test_passes_an_image_that_serves(timeaware_bin, tmp_path):
    res = run_smoke(timeaware_bin, tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.splitlines()[-1] == (
        "image smoke test: the image serves /healthz, wants its token, runs as 65532:65532 and stops cleanly (exit 0)")
    assert "-t timeaware:smoke-" in (tmp_path / "state" / "built").read_text()
    assert (tmp_path / "state" / "code").read_text().strip() == "0", "the service was stopped with SIGTERM"


@pytest.mark.needs_binary
@pytest.mark.parametrize(
    ("fake", "message"),
    [
        ({"FAKE_DROP_TOKEN": "1"}, "/v1/rewards answered 200 without the token and 200 with it (want 401 and 200)"),
        ({"FAKE_USER": ""}, "the image runs as '', not as a non-root uid"),
        ({"FAKE_USER": "0:0"}, "the image runs as '0:0', not as a non-root uid"),
        ({"FAKE_PULL_ERROR": "Error response from daemon: manifest unknown"}, "the registry has no golang:1.26.8-bookworm@sha256:"),
    ],
    ids=["no token needed", "no user", "root", "digest unknown"],
)
def test_image_smoke_test_fails_an_image_that_does_not(timeaware_bin, tmp_path, fake, message):
    res = run_smoke(timeaware_bin, tmp_path, **fake)
    assert res.returncode == 1, res.stdout + res.stderr
    assert message in res.stderr


@pytest.mark.parametrize(
    ("fake", "line"),
    [
        ({"FAKE_NO_DAEMON": "1"}, "image smoke test: no container runtime here (docker or podman that answers 'info'); the image is not built"),
        ({"FAKE_PULL_ERROR": "dial tcp: lookup registry-1.docker.io: no such host"},
         "image smoke test: docker cannot pull golang:1.26.8-bookworm@sha256:"),
    ],
    ids=["no runtime", "no registry"],
)
def test_image_smoke_test_says_in_one_line_when_it_cannot_build(timeaware_bin, tmp_path, fake, line):
    res = run_smoke(timeaware_bin, tmp_path, **fake)
    assert res.returncode == 0, res.stdout + res.stderr
    assert len(res.stdout.splitlines()) == 1 and res.stdout.startswith(line), res.stdout
    assert not (tmp_path / "state" / "built").exists()
