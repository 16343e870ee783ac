#!/usr/bin/env bash
# Build the verifier's container image from the repository's Dockerfile and
# check that it serves: the container starts with its own CMD (serve on
# 0.0.0.0:8080, a bearer token from the environment), answers /healthz,
# refuses /v1/rewards without the token and answers it with the token, runs
# as a non-root user, and exits 0 on SIGTERM. .ci/run runs it.
#
#   bash deploy/image-smoke.sh
#
# Needs a container runtime: docker or podman whose `info` answers. Without
# one it prints one line saying so and exits 0. So it does when the runtime
# cannot reach the registry for the pinned base images (no network); a base
# image the registry does not have (a wrong digest) fails.
set -euo pipefail
cd "$(dirname "$0")/.."

runtime=""
for c in docker podman; do
    if command -v "$c" >/dev/null 2>&1 && "$c" info >/dev/null 2>&1; then
        runtime=$c
        break
    fi
done
if [ -z "$runtime" ]; then
    echo "image smoke test: no container runtime here (docker or podman that answers 'info'); the image is not built"
    exit 0
fi

# The base images, as the Dockerfile pins them.
mapfile -t bases < <(sed -n 's/^FROM[[:space:]]\{1,\}\([^[:space:]]*\).*/\1/p' Dockerfile)
for base in "${bases[@]}"; do
    if ! out=$("$runtime" pull -q "$base" 2>&1); then
        if grep -qiE 'manifest unknown|not found|manifest_unknown|does not exist' <<<"$out"; then
            echo "image smoke test: the registry has no $base:" >&2
            echo "$out" >&2
            exit 1
        fi
        echo "image smoke test: $runtime cannot pull $base ($(head -n1 <<<"$out")); the image is not built"
        exit 0
    fi
done

tag="timeaware:smoke-$$"
name="timeaware-smoke-$$"
token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
cleanup() {
    "$runtime" rm -f "$name" >/dev/null 2>&1 || true
    "$runtime" rmi -f "$tag" >/dev/null 2>&1 || true
}
trap cleanup EXIT

echo "image smoke test: $runtime build"
start=$(date +%s)
"$runtime" build -q --build-arg VERSION=smoke -t "$tag" . >/dev/null
echo "image smoke test: built in $(($(date +%s) - start)) s, $("$runtime" image inspect -f '{{.Size}}' "$tag") bytes"

user=$("$runtime" image inspect -f '{{.Config.User}}' "$tag")
if [ "${user%%:*}" = "" ] || [ "${user%%:*}" = 0 ] || [ "${user%%:*}" = root ]; then
    echo "image smoke test: the image runs as '$user', not as a non-root uid" >&2
    exit 1
fi

# A loopback port the runtime picks: nothing guessed, nothing another process can take.
"$runtime" run -d --name "$name" -p 127.0.0.1::8080 -e TIMEAWARE_SERVE_TOKEN="$token" "$tag" >/dev/null
port=$("$runtime" port "$name" 8080/tcp | sed -n 's/.*:\([0-9]\{1,\}\)$/\1/p' | head -n1)
url="http://127.0.0.1:$port"

status() { curl -s -o /dev/null -w '%{http_code}' "$@" || true; }
deadline=$((SECONDS + 60))
until [ "$(status "$url/healthz")" = 200 ]; do
    if [ "$("$runtime" inspect -f '{{.State.Running}}' "$name")" != true ] || [ $SECONDS -ge $deadline ]; then
        echo "image smoke test: $url/healthz never answered 200; the container's log:" >&2
        "$runtime" logs "$name" >&2 || true
        exit 1
    fi
    sleep 0.2
done
without=$(status "$url/v1/rewards")
with=$(status -H "Authorization: Bearer $token" "$url/v1/rewards")
if [ "$without" != 401 ] || [ "$with" != 200 ]; then
    echo "image smoke test: /v1/rewards answered $without without the token and $with with it (want 401 and 200)" >&2
    "$runtime" logs "$name" >&2 || true
    exit 1
fi

"$runtime" stop -t 30 "$name" >/dev/null
code=$("$runtime" inspect -f '{{.State.ExitCode}}' "$name")
if [ "$code" != 0 ]; then
    echo "image smoke test: the service exited $code on SIGTERM; the container's log:" >&2
    "$runtime" logs "$name" >&2 || true
    exit 1
fi
echo "image smoke test: the image serves /healthz, wants its token, runs as $user and stops cleanly (exit 0)"
