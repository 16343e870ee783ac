"""The GPU tier: our outputs, rewards and timers through the real trainers on
one NVIDIA GPU, at the sizes a user trains at, in one script that writes one
JSON of figures.

    python python/tests/gpu/run.py --out out/gpu/figures.json      # make test-gpu

It runs, against the real `timeaware` binary and a `timeaware serve` it
starts on loopback:

1. ``MarginDPOTrainer`` in bf16 on ``pairs build --split paper`` output built
   with ``--label-only-margin`` 1, 0.5 and 1.5: the first-step loss, reference
   log-probs computed on the fly and precomputed, must equal softplus(δ)
   (computed here from the margins pyarrow reads); then DPO training and an
   evaluation on the test side;
2. TRL's GRPOTrainer on `synth budget` rows with ``GRPOReward`` and the
   ``get_duration`` tool (``GetDurationEnv``) on the server: the reward calls'
   p50/p99 latency and the share of step time spent waiting for them;
3. ``timeaware eval run`` on the test pairs against the model before and after
   DPO, each served by ``transformers serve --continuous-batching`` (batched
   generation).

Models are Llamas initialised at random from a config; the tokenizer is
trained here on the data at hand. Without a GPU (or with ``--size toy``) the
same steps run at toy size on the CPU, which CI does through the trainers
tier. A failed check exits 1 after writing the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import localstack

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("WANDB_MODE", "disabled")


@dataclass(frozen=True)
class Size:
    """How big each part runs."""

    name: str
    model: dict  # LlamaConfig shape
    vocab: int
    dpo_batch: int
    dpo_steps: int
    grpo_steps: int
    grpo_generations: int
    grpo_batch: int
    completion_tokens: int
    eval_rows: int | None  # test pairs evaluated (DPO) and put to the model (eval run); None: all
    eval_tokens: int
    eval_concurrency: int


SIZES = {
    # About 222M parameters: what the tier's time budget was sized with.
    "gpu": Size("gpu", dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=16, num_attention_heads=16,
                            num_key_value_heads=16), vocab=8192, dpo_batch=8, dpo_steps=60, grpo_steps=20,
                grpo_generations=8, grpo_batch=16, completion_tokens=96, eval_rows=None, eval_tokens=32,
                eval_concurrency=64),
    "toy": Size("toy", dict(localstack.TINY), vocab=2048, dpo_batch=4, dpo_steps=4, grpo_steps=2,
                grpo_generations=2, grpo_batch=4, completion_tokens=16, eval_rows=24, eval_tokens=8,
                eval_concurrency=8),
}
MARGINS = (1.0, 0.5, 1.5)
BETA = 0.1


def softplus(x: float) -> float:
    """−log σ(−x): the offset-DPO loss of a pair while the policy is the reference."""
    return math.log1p(math.exp(x))


class Report:
    """The figures and the checks; written as JSON whatever happens."""

    def __init__(self, path: Path, size: Size, device: str) -> None:
        self.path = path
        self.data: dict[str, Any] = {"size": size.name, "device": device, "python": platform.python_version(),
                                     "checks": [], "sections": {}}
        self.started = time.monotonic()

    def check(self, name: str, ok: bool, detail: str) -> None:
        self.data["checks"].append({"name": name, "ok": bool(ok), "detail": detail})
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}", flush=True)

    def section(self, name: str, figures: dict[str, Any]) -> None:
        self.data["sections"][name] = figures
        print(f"== {name}: {json.dumps(figures)}", flush=True)

    @property
    def ok(self) -> bool:
        return all(c["ok"] for c in self.data["checks"])

    def write(self) -> None:
        self.data["seconds"] = round(time.monotonic() - self.started, 1)
        self.data["ok"] = self.ok
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(self.data, indent=2) + "\n")
        tmp.replace(self.path)


def versions() -> dict[str, str]:
    import datasets
    import torch
    import transformers
    import trl

    return {"torch": torch.__version__, "transformers": transformers.__version__, "trl": trl.__version__,
            "datasets": datasets.__version__, "cuda": str(torch.version.cuda)}


def load_parquet(path: Path):
    from datasets import load_dataset

    return load_dataset("parquet", data_files=str(path), split="train")


def dpo_config(out: Path, size: Size, gpu: bool, **kw: Any):
    from trl import DPOConfig

    base = dict(
        output_dir=str(out), per_device_train_batch_size=size.dpo_batch, per_device_eval_batch_size=size.dpo_batch,
        learning_rate=5e-5 if gpu else 1e-3, logging_steps=1, report_to=[], save_strategy="no",
        use_cpu=not gpu, bf16=True, model_init_kwargs={"dtype": "bfloat16"}, dataloader_num_workers=0,
        max_length=4096, seed=0, beta=BETA, data_seed=0, gradient_checkpointing=gpu,
    )
    base.update(kw)
    return DPOConfig(**base)


def first_step_loss(trainer) -> float:
    trainer.train()
    return next(h["loss"] for h in trainer.state.log_history if "loss" in h)


def dpo(report: Report, bin_path: Path, work: Path, model_dir: Path, tokenizer, size: Size, gpu: bool) -> Path:
    """The first-step checks for each margin, then training and evaluation;
    returns the trained model's directory."""
    import pyarrow.parquet as pq
    from timeaware.trl import MarginDPOTrainer

    files = localstack.v1_files()
    # bf16 carries 8 significant bits: the loss is read to about 1 %.
    tol = 0.02
    first: list[dict[str, Any]] = []
    splits: dict[float, dict[str, Path]] = {}
    for m in MARGINS:
        splits[m] = localstack.build_pairs(bin_path, files, work / f"pairs-m{m}.parquet", "--label-only-margin", m)
        margins = pq.read_table(splits[m]["train"], columns=["margin"]).column("margin").to_pylist()
        batch = margins[: size.dpo_batch]
        want = sum(softplus(x) for x in batch) / len(batch)
        for precompute in (False, True):
            ds = load_parquet(splits[m]["train"]).select(range(size.dpo_batch))
            args = dpo_config(work / "dpo-first", size, gpu, max_steps=1, precompute_ref_log_probs=precompute,
                              learning_rate=1e-7)
            trainer = MarginDPOTrainer(model=str(model_dir), args=args, train_dataset=ds, processing_class=tokenizer)
            dtype = str(next(trainer.model.parameters()).dtype)
            got = first_step_loss(trainer)
            ref = "precomputed" if precompute else "on the fly"
            first.append({"margin": m, "reference": ref, "loss": got, "want": want, "dtype": dtype})
            report.check(f"dpo first-step loss, margin {m}, reference {ref}",
                         abs(got - want) <= tol * want and dtype == "torch.bfloat16",
                         f"loss {got:.4f}, softplus(margin) {want:.4f}, weights {dtype}")
            del trainer

    m = MARGINS[0]
    train, test = load_parquet(splits[m]["train"]), load_parquet(splits[m]["test"])
    if size.eval_rows is not None:
        test = test.select(range(min(size.eval_rows, len(test))))
    trained = work / "dpo-model"
    args = dpo_config(trained, size, gpu, max_steps=size.dpo_steps, eval_strategy="no")
    trainer = MarginDPOTrainer(model=str(model_dir), args=args, train_dataset=train, eval_dataset=test,
                               processing_class=tokenizer)
    before = trainer.evaluate()
    t0 = time.monotonic()
    trainer.train()
    train_s = time.monotonic() - t0
    after = trainer.evaluate()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    trainer.save_model(str(trained))
    tokenizer.save_pretrained(trained)
    keys = ("eval_loss", "eval_rewards/accuracies", "eval_rewards/margins")
    report.section("dpo", {
        "first_step": first,
        "train_pairs": len(train), "test_pairs": len(test), "steps": len(losses),
        "train_seconds": round(train_s, 1), "seconds_per_step": round(train_s / max(1, len(losses)), 3),
        "loss_first": losses[0] if losses else None, "loss_last": losses[-1] if losses else None,
        "test_before": {k: before.get(k) for k in keys}, "test_after": {k: after.get(k) for k in keys},
    })
    report.check("dpo trains", len(losses) == size.dpo_steps and all(math.isfinite(x) for x in losses),
                 f"{len(losses)} logged steps of {size.dpo_steps}, all finite")
    report.check("dpo evaluates on the test side", math.isfinite(after.get("eval_loss", math.nan)),
                 f"eval_loss {before.get('eval_loss')} -> {after.get('eval_loss')} on {len(test)} test pairs")
    return trained


def percentile(xs: list[float], q: float) -> float:
    """The q-quantile by the nearest-rank method."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


def grpo(report: Report, work: Path, model_dir: Path, tokenizer_dir: Path, budget: Path, server_url: str,
         size: Size, gpu: bool) -> None:
    """GRPOTrainer with GRPOReward and GetDurationEnv against the server."""
    from timeaware import verl
    from timeaware.trl import GetDurationEnv, GRPOReward
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer
    from trl.chat_template_utils import qwen3_schema

    class TimedReward(GRPOReward):
        """GRPOReward that records how long each call took."""

        def __init__(self) -> None:
            super().__init__()
            self.seconds: list[float] = []
            self.timers = 0  # rollouts scored on a timer of their own

        async def __call__(self, *args: Any, **kwargs: Any):
            t0 = time.perf_counter()
            try:
                return await super().__call__(*args, **kwargs)
            finally:
                self.seconds.append(time.perf_counter() - t0)
                self.timers += sum(1 for e in kwargs.get("environments") or [] if e.timer_token)

    # GRPOReward and GetDurationEnv both find the server here.
    os.environ["TIMEAWARE_URL"] = server_url
    verl.configure(url=server_url)
    rows = load_parquet(budget)
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    tokenizer.response_schema = qwen3_schema  # the template writes <tool_call>{"name", "arguments"}</tool_call>
    reward = TimedReward()
    config = GRPOConfig(
        output_dir=str(work / "grpo"), learning_rate=1e-6, beta=0.0, num_generations=size.grpo_generations,
        per_device_train_batch_size=size.grpo_batch, gradient_accumulation_steps=1,
        max_completion_length=size.completion_tokens, max_tool_calling_iterations=4, temperature=1.0,
        max_steps=size.grpo_steps, bf16=True, model_init_kwargs={"dtype": "bfloat16"}, use_cpu=not gpu,
        logging_steps=1, save_strategy="no", report_to=[], seed=0, gradient_checkpointing=gpu,
    )
    trainer = GRPOTrainer(model=str(model_dir), reward_funcs=reward, args=config, train_dataset=rows,
                          processing_class=tokenizer, environment_factory=GetDurationEnv)
    t0 = time.monotonic()
    trainer.train()
    wall = time.monotonic() - t0
    logs = [h for h in trainer.state.log_history if "step_time" in h]
    step_time = sum(h["step_time"] for h in logs)
    waited = sum(reward.seconds)
    stats = reward.stats()
    ms = [s * 1000 for s in reward.seconds]
    report.section("grpo", {
        "steps": len(logs), "rows": len(rows), "completions": stats["completions"], "scored": stats["scored"],
        "unscored": stats["unscored"], "timers": reward.timers, "reward_calls": len(ms),
        "reward_p50_ms": round(percentile(ms, 0.5), 2) if ms else None,
        "reward_p99_ms": round(percentile(ms, 0.99), 2) if ms else None,
        "reward_mean_ms": round(statistics.fmean(ms), 2) if ms else None,
        "step_seconds_mean": round(step_time / max(1, len(logs)), 3),
        "reward_wait_share": round(waited / step_time, 4) if step_time else None,
        "train_seconds": round(wall, 1),
        "reward_mean": [h.get("reward") for h in logs],
    })
    report.check("grpo runs its steps", len(logs) == size.grpo_steps, f"{len(logs)} of {size.grpo_steps} steps")
    report.check("every rollout ran on a timer of its own", reward.timers == stats["completions"],
                 f"{reward.timers} timers for {stats['completions']} rollouts")
    report.check("grpo scores every completion", stats["completions"] > 0 and stats["unscored"] == 0,
                 f"{stats['scored']} scored, {stats['unscored']} unscored of {stats['completions']}")
    del trainer


def first_rows(src: Path, dst: Path, n: int | None) -> Path:
    """The first n rows of a pairs file (all when n is None), as Parquet."""
    import pyarrow.parquet as pq

    table = pq.read_table(src)
    pq.write_table(table if n is None else table.slice(0, n), dst)
    return dst


def eval_run(report: Report, bin_path: Path, work: Path, models: dict[str, Path], test: Path, size: Size,
             gpu: bool) -> None:
    """`eval run` on the test pairs against each model, served with batched generation."""
    data = first_rows(test, work / "eval-pairs.parquet", size.eval_rows)
    figures: dict[str, Any] = {}
    outs = {}
    for name, model_dir in models.items():
        server = localstack.ModelServer(model_dir, work / f"serve-{name}.log", "--continuous-batching",
                                        "--dtype", "bfloat16" if gpu else "float32")
        try:
            out = work / f"eval-{name}.jsonl"
            t0 = time.monotonic()
            res = subprocess.run(
                [str(bin_path), "eval", "run", "--endpoint", server.url + "/v1", "--model", str(model_dir),
                 "--data", str(data), "--out", str(out), "--no-cache", "--max-tokens", str(size.eval_tokens),
                 "--concurrency", str(size.eval_concurrency), "--seed", "0", "--json", "--bootstrap", "200"],
                capture_output=True, text=True, timeout=900, check=False,
            )
            seconds = time.monotonic() - t0
        finally:
            server.stop()
        ok = res.returncode == 0
        report.check(f"eval run against the {name} model", ok,
                     f"exit {res.returncode} in {seconds:.1f} s" + ("" if ok else ": " + res.stderr[-2000:]))
        if not ok:
            continue
        rep = json.loads(res.stdout)
        src = rep["data_sources"]["tictoc/decision"]
        figures[name] = {"seconds": round(seconds, 1), "rows": src["n"], "failed": src["failed"],
                         "requests": rep["requests"]["requests"],
                         "metrics": {k: src["metrics"][k]["mean"] for k in ("score", "nar", "attempt")
                                     if k in src["metrics"]}}
        outs[name] = out
    if len(outs) == 2:
        res = subprocess.run([str(bin_path), "eval", "compare", str(outs["before"]), str(outs["after"]), "--json"],
                             capture_output=True, text=True, timeout=300, check=False)
        report.check("eval compare before/after", res.returncode == 0, f"exit {res.returncode}")
        if res.returncode == 0:
            figures["compare"] = json.loads(res.stdout)
    report.section("eval_run", figures)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=localstack.REPO_ROOT / "out" / "gpu" / "figures.json")
    p.add_argument("--size", choices=["auto", *SIZES], default="auto",
                   help="gpu (about 222M parameters) where CUDA is, toy (the CPU tiers' tiny model) elsewhere")
    p.add_argument("--work", type=Path, help="scratch directory (default: a temporary one, removed at the end)")
    p.add_argument("--only", action="append", choices=["dpo", "grpo", "eval"], help="run only these parts")
    args = p.parse_args(argv)

    import torch
    from safetensors.torch import load_file
    from transformers import AutoTokenizer

    gpu = torch.cuda.is_available()
    size = SIZES["gpu" if gpu else "toy"] if args.size == "auto" else SIZES[args.size]
    if size.name == "gpu" and not gpu:
        p.error("--size gpu needs a CUDA device")
    device = torch.cuda.get_device_name(0) if gpu else f"cpu ({os.cpu_count()} cores)"
    parts = set(args.only or ["dpo", "grpo", "eval"])
    report = Report(args.out, size, device)
    report.data["versions"] = versions()
    work = args.work or Path(tempfile.mkdtemp(prefix="timeaware-gpu-"))
    work.mkdir(parents=True, exist_ok=True)
    server = None
    try:
        bin_path = localstack.binary()
        files = localstack.v1_files()
        synth = localstack.synth_outputs(bin_path, work)
        tok_dir = localstack.train_tokenizer(localstack.corpus(files, synth.values()), work / "tokenizer", size.vocab)
        tokenizer = AutoTokenizer.from_pretrained(tok_dir)
        model_dir = localstack.random_llama(tokenizer, work / "model", **size.model)
        n_params = sum(t.numel() for t in load_file(str(model_dir / "model.safetensors")).values())
        report.data["model_parameters"] = n_params
        print(f"== {size.name} size on {device}: {n_params / 1e6:.1f}M parameters, work dir {work}", flush=True)
        trained = model_dir
        if "dpo" in parts:
            trained = dpo(report, bin_path, work, model_dir, tokenizer, size, gpu)
        if "grpo" in parts:
            server = localstack.Server(bin_path, work / "timeaware-serve.log")
            grpo(report, work, model_dir, tok_dir, synth["budget"], server.url, size, gpu)
        if "eval" in parts:
            test = localstack.build_pairs(bin_path, files, work / "pairs-eval.parquet")["test"]
            models = {"before": model_dir, "after": trained} if trained != model_dir else {"before": model_dir}
            eval_run(report, bin_path, work, models, test, size, gpu)
    except Exception as exc:  # the figures so far are still written
        report.check("the tier ran to its end", False, f"{type(exc).__name__}: {exc}")
        raise
    finally:
        if server is not None:
            server.stop()
        if gpu:
            report.data["gpu_peak_memory_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
        report.write()
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"== {'all checks passed' if report.ok else 'FAILED'} in {report.data['seconds']} s; figures in {args.out}")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
