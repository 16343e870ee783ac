#!/usr/bin/env bash
# GRPO (group_norm) with OpenRLHF 0.11.2 on Time Puzzles, rewards from timeaware serve through
# timeaware's reward function for OpenRLHF (timeaware.openrlhf). One node with 8 GPUs; see
# README.md beside this file.
#
#   bash examples/openrlhf-grpo/run.sh [extra OpenRLHF arguments ...]
set -euo pipefail
cd "$(dirname "$0")/../.."

MODEL=${MODEL:-Qwen/Qwen2.5-3B-Instruct}
DATA=${DATA:-data/openrlhf-grpo/puzzles.parquet}
OUT=${OUT:-runs/openrlhf-grpo}
TIMEAWARE_URL=${TIMEAWARE_URL:-http://127.0.0.1:8080}
TIMEAWARE=${TIMEAWARE:-bin/timeaware}
REWARD_FILE=${REWARD_FILE:-$OUT/timeaware_reward.py}

mkdir -p "$(dirname "$DATA")"
"$TIMEAWARE" synth puzzles --count 20000 --seed 1 --openrlhf-label --out "$DATA"

# The service writes its address to the file once it listens, and exits 2 when it cannot (the
# port taken): train only against this process.
addr_file=$(mktemp -u "${TMPDIR:-/tmp}/timeaware-serve.XXXXXX")
"$TIMEAWARE" serve --addr "${TIMEAWARE_URL#http://}" --addr-file "$addr_file" &
serve=$!
trap 'kill "$serve" 2>/dev/null' EXIT
until [ -s "$addr_file" ]; do
    kill -0 "$serve" 2>/dev/null || { wait "$serve" || true; echo "run.sh: timeaware serve did not start" >&2; exit 1; }
    sleep 0.1
done
until curl -fs -o /dev/null "http://$(cat "$addr_file")/healthz"; do kill -0 "$serve"; sleep 0.1; done

# OpenRLHF runs the reward function in its Ray actors, which do not see this shell's
# environment: the file holds the verifier's URL itself.
mkdir -p "$(dirname "$REWARD_FILE")"
python3 -m timeaware.openrlhf --write "$REWARD_FILE" --url "$TIMEAWARE_URL"

source examples/args.sh
args=$(expand_args examples/openrlhf-grpo/grpo.args)
read -r -a args <<< "$(tr '\n' ' ' <<< "$args")"

ray start --head --num-gpus 8 >/dev/null 2>&1 || true
python3 -m openrlhf.cli.train_ppo_ray "${args[@]}" "$@"
