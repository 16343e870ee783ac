"""GRPO with TRL on timeaware synth rows, rewarded by the timeaware verifier.

    TIMEAWARE_URL=http://127.0.0.1:8080 python examples/trl-grpo/train.py \
        --model Qwen/Qwen2.5-1.5B-Instruct --train out/puzzles.parquet --output-dir out/puzzles-grpo

The reward function is timeaware.trl.GRPOReward, which sends every completion
to the verifier at TIMEAWARE_URL (default http://127.0.0.1:8080). --env
get_duration gives each rollout the get_duration tool on a timer of its own
(rows of `synth budget`); --env negotiation plays each row of `synth
negotiation` as a whole episode through the send tool. The defaults are for a
real run on one NVIDIA GPU (bf16, gradient checkpointing); the trainers test
tier runs this same file on a tiny model with --max-steps 2.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from datasets import load_dataset
from transformers import AutoTokenizer
from trl import GRPOConfig, GRPOTrainer
from trl.chat_template_utils import qwen3_schema

from timeaware.trl import GetDurationEnv, GRPOReward, NegotiationEnv

ENVIRONMENTS = {"none": None, "get_duration": GetDurationEnv, "negotiation": NegotiationEnv}


def load_rows(path: str):
    """A synth output as written: Parquet, or JSONL for a .jsonl/.json path."""
    kind = "json" if path.endswith((".jsonl", ".json")) else "parquet"
    return load_dataset(kind, data_files=path, split="train")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, help="model name or directory")
    p.add_argument("--train", required=True, help="rows (Parquet or JSONL) from a `timeaware synth` command")
    p.add_argument("--output-dir", required=True)
    p.add_argument("--env", choices=sorted(ENVIRONMENTS), default="none",
                   help="get_duration for `synth budget` rows, negotiation for `synth negotiation` rows")
    p.add_argument("--max-steps", type=int, default=-1)
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--learning-rate", type=float, default=1e-6)
    p.add_argument("--beta", type=float, default=0.0, help="KL coefficient; 0 loads no reference model")
    p.add_argument("--num-generations", type=int, default=8, help="completions per prompt (the group)")
    p.add_argument("--batch-size", type=int, default=8,
                   help="completions per device and step; a multiple of --num-generations")
    p.add_argument("--grad-accum", type=int, default=4)
    p.add_argument("--max-completion-length", type=int, default=1024, help="tokens, all turns of a rollout together")
    p.add_argument("--max-tool-calls", type=int, default=8, help="tool-calling turns per rollout with --env")
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--response-schema", choices=["auto", "qwen3"], default="auto",
                   help="how tool calls are parsed with --env: auto lets TRL pick for the chat templates it knows; "
                        "qwen3 for a template writing <tool_call>{\"name\", \"arguments\"}</tool_call>")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    gpu = torch.cuda.is_available()
    rows = load_rows(args.train)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    if args.response_schema == "qwen3":
        tokenizer.response_schema = qwen3_schema
    env = ENVIRONMENTS[args.env]
    config = GRPOConfig(
        output_dir=args.output_dir,
        learning_rate=args.learning_rate,
        beta=args.beta,
        num_generations=args.num_generations,
        per_device_train_batch_size=args.batch_size,
        gradient_accumulation_steps=args.grad_accum,
        max_completion_length=args.max_completion_length,
        max_tool_calling_iterations=args.max_tool_calls if env else None,
        temperature=args.temperature,
        num_train_epochs=args.epochs,
        max_steps=args.max_steps,
        bf16=gpu,
        gradient_checkpointing=gpu,
        use_cpu=not gpu,
        lr_scheduler_type="constant_with_warmup",
        warmup_steps=0.05,  # a fraction of the steps
        logging_steps=1,
        save_strategy="no" if args.max_steps > 0 else "epoch",
        report_to=[],
        seed=args.seed,
    )
    reward = GRPOReward()
    trainer = GRPOTrainer(
        model=args.model,
        reward_funcs=reward,
        args=config,
        train_dataset=rows,
        processing_class=tokenizer,
        environment_factory=env,
    )
    trainer.train()
    trainer.save_model(args.output_dir)
    trainer.state.save_to_json(str(Path(args.output_dir) / "trainer_state.json"))
    print("timeaware:", json.dumps(reward.stats()), flush=True)


if __name__ == "__main__":
    main()
