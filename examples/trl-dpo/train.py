"""Offset DPO on timeaware pairs with TRL: each pair's margin is the offset.

    python examples/trl-dpo/train.py --model Qwen/Qwen2.5-1.5B-Instruct \
        --train tictoc-pairs-train.parquet --eval tictoc-pairs-test.parquet --output-dir runs/tictoc-dpo

The defaults are for a real run on one or more NVIDIA GPUs (bf16, gradient
checkpointing); launch with `accelerate launch` for several. The trainers test
tier runs this same file on a tiny model with --max-steps 2.
"""

from __future__ import annotations

import argparse

import torch
from datasets import load_dataset
from trl import DPOConfig

from timeaware.trl import MarginDPOTrainer


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, help="model name or directory")
    p.add_argument("--train", required=True, help="pairs (Parquet) from `timeaware pairs build`")
    p.add_argument("--eval", help="held-out pairs, e.g. the test side of --split paper")
    p.add_argument("--output-dir", required=True)
    p.add_argument("--beta", type=float, default=0.1)
    p.add_argument("--learning-rate", type=float, default=5e-7)
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--max-steps", type=int, default=-1)
    p.add_argument("--batch-size", type=int, default=2, help="per device")
    p.add_argument("--grad-accum", type=int, default=8)
    p.add_argument("--max-length", type=int, default=8192,
                   help="tokens of prompt + response; TRL drops pairs whose prompt alone is longer")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    gpu = torch.cuda.is_available()
    data = {"train": args.train} | ({"test": args.eval} if args.eval else {})
    ds = load_dataset("parquet", data_files=data)
    config = DPOConfig(
        output_dir=args.output_dir,
        beta=args.beta,
        learning_rate=args.learning_rate,
        num_train_epochs=args.epochs,
        max_steps=args.max_steps,
        per_device_train_batch_size=args.batch_size,
        per_device_eval_batch_size=args.batch_size,
        gradient_accumulation_steps=args.grad_accum,
        max_length=args.max_length,
        bf16=gpu,
        gradient_checkpointing=gpu,
        use_cpu=not gpu,
        lr_scheduler_type="cosine",
        warmup_steps=0.1,  # a fraction of the steps
        logging_steps=1,
        eval_strategy="epoch" if args.eval else "no",
        save_strategy="no" if args.max_steps > 0 else "epoch",
        report_to=[],
        seed=args.seed,
    )
    trainer = MarginDPOTrainer(
        model=args.model,
        args=config,
        train_dataset=ds["train"],
        eval_dataset=ds["test"] if args.eval else None,
    )
    trainer.train()
    trainer.save_model(args.output_dir)


if __name__ == "__main__":
    main()
