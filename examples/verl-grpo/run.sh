#!/usr/bin/env bash
# GRPO with VeRL 0.9.1 on time-budgeted prompts: the model calls get_duration while it works and
# is rewarded by Timely-RL from the rollout's own timer. One node; see README.md beside this file.
#
#   TRAIN_TASKS=tasks-train.jsonl VAL_TASKS=tasks-val.jsonl bash examples/verl-grpo/run.sh [override ...]
set -euo pipefail
cd "$(dirname "$0")/../.."

: "${TRAIN_TASKS:?set TRAIN_TASKS to a JSONL file of tasks {id, question, answer, baseline_seconds?}}"
: "${VAL_TASKS:?set VAL_TASKS to a JSONL file of held-out tasks}"
MODEL=${MODEL:-Qwen/Qwen2.5-3B-Instruct}
DATA=${DATA:-data/verl-grpo}
GPUS=${GPUS:-8}
TIMEAWARE_URL=${TIMEAWARE_URL:-http://127.0.0.1:8080}
TOOLS=python/examples/get_duration_tool_config.yaml
TIMEAWARE=${TIMEAWARE:-bin/timeaware}

mkdir -p "$DATA"
"$TIMEAWARE" synth budget --input "$TRAIN_TASKS" --family general --seed 1 --out "$DATA/budget-train.parquet"
"$TIMEAWARE" synth budget --input "$VAL_TASKS" --family general --seed 2 --out "$DATA/budget-test.parquet"

# The verifier on this node (replicas elsewhere need the same secret).
export TIMEAWARE_TIMERS_SECRET=${TIMEAWARE_TIMERS_SECRET:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}
"$TIMEAWARE" serve --addr "${TIMEAWARE_URL#http://}" &
serve=$!
trap 'kill "$serve" 2>/dev/null' EXIT

source examples/args.sh
args=$(expand_args examples/verl-grpo/grpo.args)
mapfile -t args <<< "$args"

python3 -m verl.trainer.main_ppo "${args[@]}" "$@"
