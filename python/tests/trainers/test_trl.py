"""TRL 1.16 on our pairs: DPOTrainer and RewardTrainer train on `pairs build`
output as written, and `timeaware.trl.MarginDPOTrainer` applies each pair's
margin as the offset of offset DPO.

The expected losses are computed here from the margins pyarrow reads, with
the formula of offset DPO, not with any code of the trainer under test.
"""

from __future__ import annotations

import json
import math

import pyarrow.parquet as pq
import pytest
import torch
from datasets import load_dataset

from trl import DPOConfig, DPOTrainer, RewardConfig, RewardTrainer


def softplus(x: float) -> float:
    """−log σ(−x)."""
    return math.log1p(math.exp(x))


def dpo_args(tmp_path, **kw) -> DPOConfig:
    base = dict(
        output_dir=str(tmp_path / "out"),
        per_device_train_batch_size=4,
        max_steps=3,
        learning_rate=1e-3,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        use_cpu=True,
        dataloader_num_workers=0,
        max_length=4096,
        seed=0,
        beta=0.1,
    )
    base.update(kw)
    return DPOConfig(**base)


def pairs(path, n: int | None = None, seed: int = 0):
    ds = load_dataset("parquet", data_files=str(path), split="train")
    if n is not None:
        ds = ds.shuffle(seed=seed).select(range(n))
    return ds


def test_dpo_trains_on_pairs_build_output(pairs_split, tiny_model_dir, tokenizer, tmp_path):
    ds = pairs(pairs_split["train"], 12)
    assert {"prompt", "chosen", "rejected", "tools", "margin"} <= set(ds.column_names)
    trainer = DPOTrainer(model=str(tiny_model_dir), args=dpo_args(tmp_path), train_dataset=ds, processing_class=tokenizer)

    # The chat template rendered what the pairs hold: the tools list in the
    # prompt, and a tool call as the completion of every tool-labelled pair.
    prepared = trainer.train_dataset
    assert len(prepared) == len(ds), "no pair was dropped as too long"
    for i in range(len(ds)):
        row, tok = ds[i], prepared[i]
        prompt = tokenizer.decode(tok["prompt_ids"])
        tools = json.loads(row["tools"])
        assert tools, f"row {i} carries no tools"
        assert "<tools>" in prompt and all(t["function"]["name"] in prompt for t in tools), f"row {i}: {prompt[:300]!r}"
        tool_side = "chosen" if row["label"] == "tool" else "rejected"
        direct_side = "rejected" if tool_side == "chosen" else "chosen"
        call = row[tool_side][0]["tool_calls"][0]["function"]
        tool_text = tokenizer.decode(tok[f"{tool_side}_ids"])
        assert f'<tool_call>{{"name": "{call["name"]}"' in tool_text, f"row {i}: {tool_text!r}"
        assert "<tool_call>" not in tokenizer.decode(tok[f"{direct_side}_ids"])

    result = trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert len(losses) == 3 and all(math.isfinite(x) for x in losses), losses
    assert result.global_step == 3


def test_reward_trainer_reads_margin(pairs_split, tiny_model_dir, tokenizer, tmp_path):
    ds = pairs(pairs_split["train"], 8)
    margins = pq.read_table(pairs_split["train"], columns=["margin"]).column("margin").to_pylist()
    assert set(margins) == {1.0}, "label-only v1 pairs carry the configured margin 1.0"
    args = RewardConfig(
        output_dir=str(tmp_path / "rm"), per_device_train_batch_size=4, max_steps=2, learning_rate=1e-3,
        logging_steps=1, report_to=[], save_strategy="no", use_cpu=True, max_length=4096, seed=0,
    )
    trainer = RewardTrainer(model=str(tiny_model_dir), args=args, train_dataset=ds, processing_class=tokenizer)
    batch = next(iter(trainer.get_train_dataloader()))
    assert batch["margin"].tolist() == [1.0] * 4, "the margin column reaches the batch"
    model = trainer.model.eval()
    with torch.no_grad():
        loss, outputs = trainer.compute_loss(model, dict(batch), return_outputs=True)
    r = outputs.logits.squeeze(-1)
    rc, rr = r[:4], r[4:]
    want = -torch.nn.functional.logsigmoid(rc - rr - 1.0).mean()
    without = -torch.nn.functional.logsigmoid(rc - rr).mean()
    assert loss.item() == pytest.approx(want.item(), rel=1e-5)
    assert abs(loss.item() - without.item()) > 1e-3, "the margin changes the loss"
    trainer.model.train()
    trainer.train()
    assert all(math.isfinite(h["loss"]) for h in trainer.state.log_history if "loss" in h)


def first_step_loss(trainer) -> float:
    trainer.train()
    return next(h["loss"] for h in trainer.state.log_history if "loss" in h)


@pytest.mark.parametrize("precompute", [False, True], ids=["reference-on-the-fly", "precomputed-reference"])
def test_margin_dpo_first_step_loss_label_only_pairs(pairs_split, tiny_model_dir, tokenizer, tmp_path, precompute):
    from timeaware.trl import MarginDPOTrainer

    ds = pairs(pairs_split["train"], 4)
    assert ds["margin"] == [1.0] * 4
    args = dpo_args(tmp_path, max_steps=1, precompute_ref_log_probs=precompute)
    trainer = MarginDPOTrainer(model=str(tiny_model_dir), args=args, train_dataset=ds, processing_class=tokenizer)
    # At step 1 the policy is the reference: loss = −log σ(−1) = log(1 + e).
    assert first_step_loss(trainer) == pytest.approx(1.3133, abs=1e-4)
    assert softplus(1.0) == pytest.approx(1.3133, abs=1e-4)


def test_margin_dpo_first_step_loss_mixed_margins(run_timeaware, work, tiny_model_dir, tokenizer, tmp_path):
    from timeaware.trl import MarginDPOTrainer

    # The built-in demo sample has annotators' votes, so its margins vary.
    demo = work / "demo"
    run_timeaware("demo", "--out", demo)
    path = demo / "pairs.parquet"
    margins = pq.read_table(path, columns=["margin"]).column("margin").to_pylist()
    assert len(set(margins)) > 1, margins
    ds = load_dataset("parquet", data_files=str(path), split="train")
    n = len(ds)
    args = dpo_args(tmp_path, max_steps=1, per_device_train_batch_size=n)
    trainer = MarginDPOTrainer(model=str(tiny_model_dir), args=args, train_dataset=ds, processing_class=tokenizer)
    want = sum(softplus(m) for m in margins) / n
    assert first_step_loss(trainer) == pytest.approx(want, abs=1e-4)
    # Plain DPO on the same pairs starts at log 2: the margin is what moved it.
    plain = DPOTrainer(model=str(tiny_model_dir), args=dpo_args(tmp_path / "plain", max_steps=1, per_device_train_batch_size=n),
                       train_dataset=ds, processing_class=tokenizer)
    assert first_step_loss(plain) == pytest.approx(math.log(2), abs=1e-4)


def test_margin_dpo_rejects_what_it_cannot_honour(pairs_split, tiny_model_dir, tokenizer, tmp_path):
    from timeaware.trl import MarginDPOTrainer

    ds = pairs(pairs_split["train"], 4)
    with pytest.raises(ValueError, match="no 'margin' column"):
        MarginDPOTrainer(model=str(tiny_model_dir), args=dpo_args(tmp_path), train_dataset=ds.remove_columns("margin"),
                         processing_class=tokenizer)
    with pytest.raises(ValueError, match="loss_type='sigmoid'"):
        MarginDPOTrainer(model=str(tiny_model_dir), args=dpo_args(tmp_path, loss_type=["ipo"]), train_dataset=ds,
                         processing_class=tokenizer)


def test_example_training_script_runs(pairs_split, tiny_model_dir, tmp_path):
    """examples/trl-dpo/train.py, the recipe users copy, on the tiny model."""
    import subprocess
    import sys

    from conftest import REPO_ROOT

    script = REPO_ROOT / "examples" / "trl-dpo" / "train.py"
    out = tmp_path / "run"
    res = subprocess.run(
        [sys.executable, str(script), "--model", str(tiny_model_dir), "--train", str(pairs_split["train"]),
         "--output-dir", str(out), "--max-steps", "2", "--batch-size", "2",
         "--grad-accum", "1", "--learning-rate", "1e-3"],
        capture_output=True, text=True, timeout=600,
    )
    assert res.returncode == 0, res.stderr[-4000:]
    assert (out / "model.safetensors").is_file(), sorted(p.name for p in out.iterdir())
