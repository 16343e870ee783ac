"""The GPU recipes in examples/ hold together under the trainers' own code.

A real run needs GPUs; what can be checked on CPU is checked with the pinned
trainers: VeRL composes and validates its Hydra config with every line of
examples/verl-grpo/grpo.args and loads the data, reward function, reward
manager and tool that config names; OpenRLHF's own argument parser accepts
every line of examples/openrlhf-grpo/grpo.args, and its dataset and
remote-reward client, configured by the parsed arguments, score a row.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

from conftest import REPO_ROOT, recipe_lines


def test_verl_recipe_config_validates(verl_config, server):
    from verl.trainer.main_ppo import validate_config
    from verl.trainer.ppo.utils import need_critic, need_reference_policy

    validate_config(config=verl_config, use_reference_policy=need_reference_policy(verl_config),
                    use_critic=need_critic(verl_config))
    assert verl_config.algorithm.adv_estimator == "grpo"
    assert verl_config.ray_kwargs.ray_init.runtime_env.env_vars.TIMEAWARE_URL == server.url


def test_verl_recipe_loads_our_reward_function_and_manager(verl_config, adapter):
    from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager
    from verl.trainer.ppo.reward import get_custom_reward_fn, resolve_reward_manager_cls

    import timeaware.verl

    assert resolve_reward_manager_cls(verl_config) is NaiveRewardManager
    fn = get_custom_reward_fn(verl_config)
    assert fn.func.__name__ == "_call_with_kwargs_async" and fn.args[0] is timeaware.verl.compute_score
    result = asyncio.run(fn(data_source="timepuzzles", solution_str="MY ANSWER: 2023-08-15<|im_end|>",
                            ground_truth="2023-08-15", extra_info={}))
    assert result["score"] == 1.0


def test_verl_recipe_loads_the_tool_and_the_rows(verl_config, tokenizer, synth_outputs, adapter):
    import pyarrow.parquet as pq
    from verl.tools.tool_registry import initialize_tools_from_config
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from timeaware.tools import GetDurationTool

    tools = initialize_tools_from_config(verl_config.actor_rollout_ref.rollout.multi_turn.tool_config_path)
    assert [type(t) for t in tools] == [GetDurationTool]
    assert tools[0].name == "get_duration"

    ds = RLHFDataset(data_files=verl_config.data.train_files, tokenizer=tokenizer, config=verl_config.data)
    rows = pq.read_table(synth_outputs["budget"]).to_pylist()
    assert len(ds) == len(rows)
    item = ds[0]
    assert item["agent_name"] == "tool_agent"
    assert item["data_source"] == rows[0]["data_source"]


def openrlhf_parser() -> argparse.ArgumentParser:
    """OpenRLHF's own parser: the statements of train_ppo_ray's main block
    that build it, run as they are."""
    import importlib.util

    # Importing the module would import vLLM and DeepSpeed; read its source.
    path = importlib.util.find_spec("openrlhf.cli.train_ppo_ray").origin
    src = Path(path).read_text(encoding="utf-8")
    start = src.index("    parser = argparse.ArgumentParser(")
    end = src.index("    args = parser.parse_args()")
    body = "\n".join(line[4:] for line in src[start:end].splitlines())
    env = {"argparse": argparse, "datetime": datetime, "os": __import__("os")}
    exec(compile(body, path, "exec"), env)  # noqa: S102 - the pinned OpenRLHF's own code
    return env["parser"]


def test_openrlhf_recipe_arguments_parse_and_score(synth_outputs, tokenizer, server, tiny_model_dir, tmp_path,
                                                   adapter):
    from openrlhf.datasets.prompts_dataset import PromptDataset
    from openrlhf.utils.agent import SingleTurnAgentExecutor
    from openrlhf.utils.config import hierarchize
    from datasets import load_dataset

    reward_file = tmp_path / "out" / "timeaware_reward.py"
    values = {"MODEL": str(tiny_model_dir), "DATA": str(synth_outputs["puzzles"]), "OUT": str(tmp_path / "out"),
              "TIMEAWARE_URL": server.url, "REWARD_FILE": str(reward_file)}
    # run.sh's lines that write the reward file, run as they are, with this
    # interpreter as python3.
    script = (REPO_ROOT / "examples" / "openrlhf-grpo" / "run.sh").read_text(encoding="utf-8").splitlines()
    writes = [line for line in script if line.startswith(('mkdir -p "$(dirname "$REWARD_FILE")"',
                                                          "python3 -m timeaware.openrlhf "))]
    assert len(writes) == 2, writes
    bin_dir = Path(sys.executable).parent
    res = subprocess.run(["bash", "-euc", "\n".join(writes)], cwd=REPO_ROOT, capture_output=True, text=True,
                         env={"PATH": f"{bin_dir}:{os.environ['PATH']}", **values}, check=False)
    assert res.returncode == 0, res.stderr
    argv = [w for line in recipe_lines("openrlhf-grpo", values) for w in line.split()]
    args = hierarchize(openrlhf_parser().parse_args(argv))
    assert args.reward.remote_url == str(reward_file)
    assert (args.data.input_key, args.data.label_key, args.data.apply_chat_template) == ("prompt", "label", True)
    assert args.algo.advantage.estimator == "group_norm" and args.rollout.n_samples_per_prompt > 1

    ds = load_dataset("parquet", data_files=args.data.prompt_dataset, split="train")
    prompts = PromptDataset(ds, tokenizer, SimpleNamespace(args=args, is_rank_0=lambda: True))
    _, prompt, label, _ = prompts[0]
    answer = json.loads(label)["ground_truth"]
    ids = tokenizer(f"MY ANSWER: {answer}", add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]

    class Engine:
        async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
            out = SimpleNamespace(token_ids=ids, text=None, finish_reason="stop", logprobs=None)
            return SimpleNamespace(outputs=[out])

    # The actors' environment does not name the verifier: the file does.
    adapter.configure(url="http://127.0.0.1:9")
    executor = SingleTurnAgentExecutor(remote_rm_url=args.reward.remote_url.split(","))
    out = asyncio.run(executor.execute(prompt, label, SimpleNamespace(max_tokens=len(ids), logprobs=None),
                                       args.data.max_len, tokenizer, Engine()))
    assert out["reward"] == [1.0], out["extra_logs"]


def test_readme_token_count_manager_lines_select_it(synth_outputs, tiny_model_dir, server, tmp_path, adapter):
    """python/README's VeRL lines for the token-budget rewards, added to the
    recipe's, compose into VeRL's config, and VeRL's own loader builds our
    manager from them, with the think tags of reward_kwargs."""
    import re

    import verl
    from hydra import compose, initialize_config_dir
    from verl.trainer.ppo.reward import load_reward_manager, resolve_reward_manager_cls

    from timeaware.verl_tokens import TokenCountRewardManager

    readme = (REPO_ROOT / "python" / "README.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```text\n(.*?)```", readme, re.S) if "pkg://timeaware.verl_tokens" in b]
    lines = block.split()
    assert "reward.reward_manager.source=importlib" in lines
    values = {"MODEL": str(tiny_model_dir), "DATA": str(tmp_path), "TOOLS": "unused.yaml", "TIMEAWARE_URL": server.url,
              "GPUS": "1"}
    # The README's quoting: Hydra reads an unquoted </...> as a syntax error.
    tags = ["+reward.custom_reward_function.reward_kwargs.think_open='<reason>'",
            "+reward.custom_reward_function.reward_kwargs.think_close='</reason>'"]
    config_dir = Path(verl.__file__).parent / "trainer" / "config"
    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
        cfg = compose(config_name="ppo_trainer", overrides=recipe_lines("verl-grpo", values) + lines + tags)
    assert resolve_reward_manager_cls(cfg) is TokenCountRewardManager

    async def build():
        from transformers import AutoTokenizer

        return load_reward_manager(cfg, AutoTokenizer.from_pretrained(tiny_model_dir))

    manager = asyncio.run(build())
    assert isinstance(manager, TokenCountRewardManager)
    assert (manager.think_open, manager.think_close) == ("<reason>", "</reason>")
    import timeaware.verl

    assert manager.compute_score.args[0] is timeaware.verl.compute_score
