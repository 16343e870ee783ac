"""VeRL 0.9.1's own rollout and reward path on every synth output, on CPU.

The rows go the way VeRL's trainer sends them: ``RLHFDataset`` and
``collate_fn``, ``DataProto.from_single_dict`` and the trainer's
``_get_gen_batch``, then VeRL's ``AgentLoopWorker`` (the single-turn loop,
or the tool agent loop for budget rows, with the tools of the example tool
config), whose rewards come from VeRL's ``RewardLoopWorker`` and ``naive``
reward manager calling ``timeaware.verl.compute_score`` as the recipe
(examples/verl-grpo) configures it. Two pieces stand in for GPU machinery:
the LLM server is scripted (it answers a row with a tool call and then with
a right or a wrong answer), and the reward worker is called in-process
rather than as a Ray actor.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from types import SimpleNamespace

import pyarrow.parquet as pq
import pytest

from conftest import SHORT_THINK, expected_counts, length_text, right_answer, scripted_ids
from oracles import elastic, kimi, lcpo_exact, shorterbetter

SOURCES = ["budget", "puzzles", "traveler", "negotiation"]
GENERATION_S = 0.15  # the scripted server's time per generation turn
TOOL_CALL = '<tool_call>{"name": "get_duration", "arguments": {}}</tool_call>'
TOOL_RESPONSE = re.compile(r"<tool_response>(\d+\.\d\d) seconds\.</tool_response>")


def wrong_answer(data_source: str) -> str:
    if data_source == "timepuzzles":
        return "MY ANSWER: 1999-01-01"
    if data_source.startswith("timely/"):
        return "<answer>-1</answer>"
    if data_source == "traveler":
        return "ANSWER: no such thing"
    if data_source == "negotiation":
        return "I would rather not say."
    raise AssertionError(data_source)


def answers_right(first_row: int) -> bool:
    """Whether the scripted server answers a prompt right: for the prompts
    first seen at even rows."""
    return first_row % 2 == 0


def first_row(rows, i: int) -> int:
    return next(j for j, r in enumerate(rows) if r["prompt"] == rows[i]["prompt"])


class ScriptedServer:
    """Stands in for VeRL's LLM server client. It finds the row a prompt
    belongs to by the row's user message; for a row that offers the
    get_duration tool it first calls it, then answers, right or wrong as
    `answers_right` says, each turn taking GENERATION_S."""

    def __init__(self, tokenizer, rows):
        self.tokenizer = tokenizer
        self.rows = rows
        self.calls = 0

    def row_of(self, text: str) -> int:
        """The first row whose whole prompt is in text; when the prompts of
        several rows are (one a later turn of another's dialogue), the
        longest (rows may also share a prompt)."""
        hits = [i for i, r in enumerate(self.rows) if all(m["content"] in text for m in r["prompt"])]
        assert hits, "the prompt matches no row"
        size = max(sum(len(m["content"]) for m in self.rows[i]["prompt"]) for i in hits)
        hits = [i for i in hits if sum(len(m["content"]) for m in self.rows[i]["prompt"]) == size]
        assert all(self.rows[i]["prompt"] == self.rows[hits[0]]["prompt"] for i in hits), f"ambiguous: {hits}"
        return hits[0]

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        from verl.workers.rollout.replica import TokenOutput

        self.calls += 1
        await asyncio.sleep(GENERATION_S)
        text = self.tokenizer.decode(prompt_ids, skip_special_tokens=False)
        i = self.row_of(text)
        row = self.rows[i]
        if row.get("agent_name") == "tool_agent" and "<tool_response>" not in text:
            reply = TOOL_CALL
        elif answers_right(i):
            reply = right_answer(row["data_source"], row["reward_model"]["ground_truth"], row["extra_info"])
        else:
            reply = wrong_answer(row["data_source"])
        ids = self.tokenizer(reply, add_special_tokens=False)["input_ids"] + [self.tokenizer.eos_token_id]
        return TokenOutput(token_ids=ids, stop_reason="completed", num_preempted=0)


class InProcessActor:
    """What VeRL does with a Ray actor handle, ``handle.method.remote(...)``
    awaited, done on a local object."""

    def __init__(self, obj):
        self._obj = obj

    def __getattr__(self, name):
        return SimpleNamespace(remote=getattr(self._obj, name))


@pytest.fixture(scope="module")
def config(verl_config):
    """The recipe's config with room for every synth output: TRAVELER
    prompts run to about 7,000 characters, beyond the recipe's 2048-token
    limit for budget rows (VeRL would drop those rows while loading)."""
    from omegaconf import OmegaConf

    return OmegaConf.merge(verl_config, {"data": {"max_prompt_length": 8192, "max_response_length": 512}})


def dataset(config, tokenizer, path):
    from verl.utils.dataset.rl_dataset import RLHFDataset

    return RLHFDataset(data_files=str(path), tokenizer=tokenizer, config=config.data)


@pytest.mark.parametrize("name", SOURCES)
def test_rlhf_dataset_and_collate_keep_every_field(name, config, tokenizer, synth_outputs):
    from verl.utils.dataset.rl_dataset import collate_fn

    rows = pq.read_table(synth_outputs[name]).to_pylist()
    ds = dataset(config, tokenizer, synth_outputs[name])
    assert len(ds) == len(rows)
    batch = collate_fn([ds[i] for i in range(len(ds))])
    for i, row in enumerate(rows):
        assert batch["data_source"][i] == row["data_source"], f"row {i}"
        assert batch["reward_model"][i] == row["reward_model"], f"row {i}"
        assert batch["extra_info"][i] == row["extra_info"], f"row {i}"
        assert list(batch["raw_prompt"][i]) == row["prompt"], f"row {i}"
        if name == "budget":
            assert batch["agent_name"][i] == "tool_agent", f"row {i}"
            assert batch["tools_kwargs"][i] == row["extra_info"]["tools_kwargs"], f"row {i}"
            assert batch["tools_kwargs"][i]["get_duration"]["create_kwargs"]["time_limit_s"] > 0
        else:
            assert "agent_name" not in row
    if name == "budget":
        assert "agent_name" in batch
    else:
        assert "agent_name" not in batch, "rows without an agent run VeRL's default single-turn loop"


def rollout(config, tokenizer, rows, path):
    """Rows through VeRL's trainer batching, agent loop and reward loop: the
    DataProto the trainer gets back."""
    from verl import DataProto
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker
    from verl.trainer.ppo.ray_trainer import RayPPOTrainer
    from verl.utils.dataset.rl_dataset import collate_fn

    ds = dataset(config, tokenizer, path)
    batch = DataProto.from_single_dict(collate_fn([ds[i] for i in range(len(ds))]))
    gen_batch = RayPPOTrainer._get_gen_batch(None, batch)  # the trainer's own split; it uses no state
    server = ScriptedServer(tokenizer, rows)

    async def run():
        # Both workers take the running loop at construction, as in their actors.
        rewards = RewardLoopWorker(config)
        worker = AgentLoopWorker(config, llm_client=server, reward_loop_worker_handles=[InProcessActor(rewards)])
        return await worker.generate_sequences(gen_batch)

    return asyncio.run(run()), server


def expected_reward(row, right: bool, details: dict) -> float:
    """The reward each data source must give, written from the papers'
    formulas, not from our scorer."""
    source = row["data_source"]
    gt = row["reward_model"]["ground_truth"]
    if source.startswith("timely/"):
        t, limit = details["elapsed_s"], row["extra_info"]["time_limit_s"]
        assert 0 < t <= limit
        # Timely-RL: r_f + r + λ·sin(π/2 · t/T) with r_f = 0.1, r = 0.5, λ = 0.4; r_f alone when wrong.
        return 0.1 + 0.5 + 0.4 * math.sin(math.pi / 2 * t / limit) if right else 0.1
    if source == "timepuzzles":
        return 1.0 if right else 0.0
    if source == "traveler":
        info = json.loads(gt)
        if not right:
            return 0.0
        # Crisp questions score 1; a vague one its soft accuracy, which synth
        # wrote down as best_score when it chose the answer.
        return 1.0 if info["category"] != "vague" else row["extra_info"]["best_score"]
    if source == "negotiation":
        if not right:
            return 0.0  # no readable action
        # Walking away earns the role's BATNA, normalised by the role's
        # range over all agreements: payoffs add up over issues.
        info = json.loads(gt)
        role = info["role"]
        (batna,) = [r["batna"] for r in info["scenario"]["roles"] if r["id"] == role]
        lo = sum(min(issue["points"][role]) for issue in info["scenario"]["issues"])
        hi = sum(max(issue["points"][role]) for issue in info["scenario"]["issues"])
        return min(max((batna - lo) / (hi - lo), 0.0), 1.0)
    raise AssertionError(source)


@pytest.mark.parametrize("name", SOURCES)
def test_agent_loop_and_reward_loop_score_every_data_source(name, config, tokenizer, synth_outputs, server,
                                                            adapter):
    from timeaware.client import Client

    client = Client(server.url)
    rows = pq.read_table(synth_outputs[name]).to_pylist()
    out, llm = rollout(config, tokenizer, rows, synth_outputs[name])
    n = len(rows)
    assert len(out) == n
    tools = name == "budget"
    assert llm.calls == (2 if tools else 1) * n

    # Every detail key our service lists for the data source reaches VeRL's batch, for every row.
    (listing,) = [r for r in client.rewards() if r["data_source"] == rows[0]["data_source"]]
    keys = set(listing["keys"])
    assert set(out.meta_info["reward_extra_keys"]) == keys | {"score"}

    verdicts = [answers_right(first_row(rows, i)) for i in range(n)]
    assert any(verdicts) and not all(verdicts), "both right and wrong answers are scored"
    prompt_len = out.batch["prompts"].shape[1]
    for i, row in enumerate(rows):
        details = {k: float(out.non_tensor_batch[k][i]) for k in keys | {"score"}}
        valid = int(out.batch["attention_mask"][i, prompt_len:].sum())
        reward = float(out.batch["rm_scores"][i, valid - 1])
        assert reward == pytest.approx(details["score"]), f"row {i}: rm_scores holds the score at the last token"
        right = verdicts[i]
        assert reward == pytest.approx(expected_reward(row, right, details), abs=1e-6), f"row {i}: {details}"
        if name == "negotiation":
            assert details["parsed"] == (1.0 if right else 0.0), f"row {i}: {details}"
            if right:
                gt = json.loads(row["reward_model"]["ground_truth"])
                roles = {r["id"]: r for r in gt["scenario"]["roles"]}
                assert details["points_self"] == roles[gt["role"]]["batna"]
                assert 0.0 < reward < 1.0
        if tools:
            response = tokenizer.decode(out.batch["responses"][i, :valid], skip_special_tokens=False)
            shown = TOOL_RESPONSE.findall(response)
            assert len(shown) == 1, f"row {i}: one get_duration answer in the response: {response!r}"
            assert float(shown[0]) > 0, f"row {i}: the model was shown the time of its first turn"
            assert out.non_tensor_batch["__num_turns__"][i] == 4  # user, call, tool answer, answer
            assert details["acc"] == (1.0 if right else 0.0)
            assert details["time_limit_s"] == row["extra_info"]["time_limit_s"]
            timer = out.non_tensor_batch["timeaware_timer"][i]
            assert isinstance(timer, str) and timer, f"row {i}: the tool left its timer in the extra fields"
            # The reward read the rollout's own timer: no less than the two
            # scripted generations at the row's speed factor, no more than
            # the timer reads now.
            speed = row["extra_info"]["tools_kwargs"]["get_duration"]["create_kwargs"]["speed_factor"]
            now = client.read_timer(timer)["elapsed_s"]
            assert 2 * GENERATION_S * speed * 0.99 <= details["elapsed_s"] <= now, f"row {i}: {details}, now {now}"


class NegotiatingServer(ScriptedServer):
    """A policy that proposes, on its first turn, the package the opponent
    likes best on every issue, which the scripted opponent accepts."""

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        from verl.workers.rollout.replica import TokenOutput

        self.calls += 1
        await asyncio.sleep(0.05)
        text = self.tokenizer.decode(prompt_ids, skip_special_tokens=False)
        row = self.rows[self.row_of(text)]
        gt = json.loads(row["reward_model"]["ground_truth"])
        other = next(r["id"] for r in gt["scenario"]["roles"] if r["id"] != gt["role"])
        offer = {}
        for issue in gt["scenario"]["issues"]:
            pts = issue["points"][other]
            offer[issue["id"]] = issue["options"][pts.index(max(pts))]
        reply = json.dumps({"text": "Take the terms you like best.", "action": {"action": "propose", "offer": offer}})
        ids = self.tokenizer(reply, add_special_tokens=False)["input_ids"] + [self.tokenizer.eos_token_id]
        return TokenOutput(token_ids=ids, stop_reason="completed", num_preempted=0)


def test_negotiation_agent_loop_plays_episodes_against_the_environment(config, tokenizer, synth_outputs, server, adapter, work):
    """Negotiation rows with agent_name timeaware_negotiation go through
    VeRL's AgentLoopWorker to timeaware.negotiation.NegotiationAgentLoop
    (registered by the example agent-loop config), which plays each against
    the service's environment; VeRL's reward loop then scores the whole
    episode: a deal on the opponent's best package, worth to the agent what
    its payoff table says."""
    import pyarrow as pa
    from omegaconf import OmegaConf

    from conftest import REPO_ROOT

    table = pq.read_table(synth_outputs["negotiation"])
    table = table.append_column("agent_name", pa.array(["timeaware_negotiation"] * table.num_rows))
    path = work / "negotiation-agent.parquet"
    pq.write_table(table, path)
    rows = table.to_pylist()
    cfg = OmegaConf.merge(config, {"actor_rollout_ref": {"rollout": {"agent": {
        "agent_loop_config_path": str(REPO_ROOT / "python" / "examples" / "negotiation_agent_loop.yaml")}}}})

    from verl import DataProto
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker
    from verl.trainer.ppo.ray_trainer import RayPPOTrainer
    from verl.utils.dataset.rl_dataset import collate_fn

    ds = dataset(cfg, tokenizer, path)
    batch = DataProto.from_single_dict(collate_fn([ds[i] for i in range(len(ds))]))
    gen_batch = RayPPOTrainer._get_gen_batch(None, batch)
    llm = NegotiatingServer(tokenizer, rows)

    async def run():
        rewards = RewardLoopWorker(cfg)
        worker = AgentLoopWorker(cfg, llm_client=llm, reward_loop_worker_handles=[InProcessActor(rewards)])
        return await worker.generate_sequences(gen_batch)

    out = asyncio.run(run())
    assert llm.calls == len(rows), "one turn each: the opponent accepts its best package"
    prompt_len = out.batch["prompts"].shape[1]
    for i, row in enumerate(rows):
        gt = json.loads(row["reward_model"]["ground_truth"])
        role = gt["role"]
        other = next(r["id"] for r in gt["scenario"]["roles"] if r["id"] != role)
        issues = gt["scenario"]["issues"]
        mine = sum(iss["points"][role][iss["points"][other].index(max(iss["points"][other]))] for iss in issues)
        lo = sum(min(iss["points"][role]) for iss in issues)
        hi = sum(max(iss["points"][role]) for iss in issues)
        want = min(max((mine - lo) / (hi - lo), 0.0), 1.0)
        valid = int(out.batch["attention_mask"][i, prompt_len:].sum())
        reward = float(out.batch["rm_scores"][i, valid - 1])
        assert float(out.non_tensor_batch["deal"][i]) == 1.0, f"row {i}"
        assert reward == pytest.approx(want, abs=1e-6), f"row {i}"
        assert float(out.non_tensor_batch["points_self"][i]) == pytest.approx(mine)
        transcript = json.loads(out.non_tensor_batch["timeaware_transcript"][i])
        assert transcript[-1]["role"] == other and transcript[-1]["action"] == {"action": "accept"}
        assert transcript[0]["think_s"] > 0, "the policy's generation time is on the clock"


# Token-budget rewards: VeRL's compute_score gets no token ids, so the counts
# come from timeaware.verl_tokens.TokenCountRewardManager, selected with VeRL's
# importlib hook.

LENGTH_MANAGER = {"reward": {"reward_manager": {
    "source": "importlib", "name": "TokenCountRewardManager", "module": {"path": "pkg://timeaware.verl_tokens"}}}}
LENGTH_SOURCES = ["length/lcpo_exact"] * 3 + ["length/elastic"] * 3


def length_long(i: int) -> bool:
    return i % 2 == 1


def length_right(i: int) -> bool:
    return i != 1


class LengthServer(ScriptedServer):
    """Answers length row i with `length_text`: a long thought for odd rows,
    a short one for even rows, right but for row 1."""

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        from verl.workers.rollout.replica import TokenOutput

        self.calls += 1
        i = self.row_of(self.tokenizer.decode(prompt_ids, skip_special_tokens=False))
        ids = scripted_ids(self.tokenizer, length_text(i, length_long(i), length_right(i)))
        return TokenOutput(token_ids=ids, stop_reason="completed", num_preempted=0)


def length_table(tokenizer, path):
    """Six rows, three of length/lcpo_exact and three of length/elastic,
    written as VeRL reads them; row 3 carries counts of its own, which the
    manager's must replace."""
    import pyarrow as pa

    thinks = {long: [expected_counts(tokenizer, length_text(i, long, True))["think_tokens"] for i in range(6)]
              for long in (False, True)}
    short, long = max(thinks[False]), min(thinks[True])
    assert short + 1 < long
    rows = []
    for i, source in enumerate(LENGTH_SOURCES):
        rows.append({
            "prompt": [{"role": "user", "content": f"Question {i}: what is six times seven? "
                        "Think first, then give the number in <answer></answer>."}],
            "data_source": source,
            "reward_model": {"ground_truth": "42", "style": "rule"},
            "extra_info": {"answer_check": "", "token_budget": 60 if i == 2 else 30, "think_budget": (short + long) // 2, "answer_budget": 24,
                           "index": i, "think_tokens": 2 if i == 3 else None, "response_tokens": 5 if i == 3 else None},
        })
    pq.write_table(pa.Table.from_pylist(rows), path)
    return rows


def test_reward_loop_with_the_token_count_manager(config, tokenizer, recorded, work):
    from omegaconf import OmegaConf
    from verl import DataProto
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker
    from verl.trainer.ppo.ray_trainer import RayPPOTrainer
    from verl.trainer.ppo.reward import resolve_reward_manager_cls
    from verl.utils.dataset.rl_dataset import collate_fn

    from timeaware.verl_tokens import TokenCountRewardManager

    path = work / "length.parquet"
    rows = length_table(tokenizer, path)
    cfg = OmegaConf.merge(config, LENGTH_MANAGER)
    assert resolve_reward_manager_cls(cfg) is TokenCountRewardManager
    ds = dataset(cfg, tokenizer, path)
    batch = DataProto.from_single_dict(collate_fn([ds[i] for i in range(len(ds))]))
    gen_batch = RayPPOTrainer._get_gen_batch(None, batch)
    llm = LengthServer(tokenizer, rows)

    async def run():
        rewards = RewardLoopWorker(cfg)
        assert isinstance(rewards.reward_manager, TokenCountRewardManager)
        worker = AgentLoopWorker(cfg, llm_client=llm, reward_loop_worker_handles=[InProcessActor(rewards)])
        return await worker.generate_sequences(gen_batch)

    out = asyncio.run(run())
    assert llm.calls == len(rows)
    sent = {item["solution_str"]: item for item, _ in recorded.take()}
    assert len(sent) == len(rows)
    prompt_len = out.batch["prompts"].shape[1]
    got_rewards = []
    for i, row in enumerate(rows):
        text = length_text(i, length_long(i), length_right(i))
        counts = expected_counts(tokenizer, text)
        valid = int(out.batch["attention_mask"][i, prompt_len:].sum())
        assert valid == counts["response_tokens"] == len(scripted_ids(tokenizer, text)), f"row {i}"
        # What reached the service: the counts of the ids the rollout generated, in place of the row's.
        item = sent[text]
        assert {k: item["extra_info"][k] for k in counts} == counts, f"row {i}"
        # The row's own extra_info, which VeRL hands every rollout of the prompt, is left as it was.
        mine = gen_batch.non_tensor_batch["extra_info"][i]
        assert (mine["think_tokens"], mine["response_tokens"]) == ((2, 5) if i == 3 else (None, None)), f"row {i}"
        assert "answer_tokens" not in mine, f"row {i}"
        # The service read them: its details echo them.
        for k, v in counts.items():
            assert float(out.non_tensor_batch[k][i]) == v, f"row {i}: {k}"
        ei, c = row["extra_info"], 1.0 if length_right(i) else 0.0
        if row["data_source"] == "length/lcpo_exact":
            want = lcpo_exact(c, counts["response_tokens"], ei["token_budget"])
        else:
            want = elastic(c, counts["think_tokens"], counts["answer_tokens"], ei["think_budget"], ei["answer_budget"])
        reward = float(out.batch["rm_scores"][i, valid - 1])
        assert reward == pytest.approx(want, abs=1e-6), f"row {i}: {counts}"
        got_rewards.append(reward)
    # The budgets tell the completions apart: a wrong answer costs its
    # distance from the target, a right one too (row 2's target is further
    # away), and a long thought fails the elastic budget where a short one passes.
    assert got_rewards[1] < 0 < got_rewards[2] < got_rewards[0] < 1
    assert got_rewards[3] == got_rewards[5] == 0.0 and got_rewards[4] == 1.0


def test_token_count_manager_leaves_other_sources_alone(config, tokenizer, synth_outputs, recorded):
    """Rows of other data sources go through the manager as through naive: no counts are added."""
    from omegaconf import OmegaConf

    rows = pq.read_table(synth_outputs["puzzles"]).to_pylist()
    cfg = OmegaConf.merge(config, LENGTH_MANAGER)
    out, _ = rollout(cfg, tokenizer, rows, synth_outputs["puzzles"])
    sent = recorded.take()
    assert len(sent) == len(rows)
    assert all(not {"response_tokens", "think_tokens", "answer_tokens"} & set(item["extra_info"]) for item, _ in sent)
    for i, row in enumerate(rows):
        assert float(out.non_tensor_batch["score"][i]) == expected_reward(row, answers_right(first_row(rows, i)), {})


# Group-wise rewards: the rollouts of one uid are scored together.

GROUP_SOURCES = ["length/kimi", "length/shorterbetter"]
GROUP_N = 4


def group_reply(i: int, k: int) -> str:
    """Rollout k of group row i: a thought k+1 sentences long, right but for k = 1."""
    return f"<think>Row {i}. " + " ".join([SHORT_THINK] * (k + 1)) + f"</think>\n<answer>{41 if k == 1 else 42}</answer>"


class GroupServer(ScriptedServer):
    """Answers the k-th rollout of row i with `group_reply`, the rollouts of
    a prompt finishing at different times, as real ones do."""

    def __init__(self, tokenizer, rows):
        super().__init__(tokenizer, rows)
        self.seen: dict[int, int] = {}

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        from verl.workers.rollout.replica import TokenOutput

        self.calls += 1
        i = self.row_of(self.tokenizer.decode(prompt_ids, skip_special_tokens=False))
        k = self.seen.get(i, 0)
        self.seen[i] = k + 1
        await asyncio.sleep(0.05 * k)
        return TokenOutput(token_ids=scripted_ids(self.tokenizer, group_reply(i, k)), stop_reason="completed",
                           num_preempted=0)


def group_batch(cfg, tokenizer, path):
    """Two rows, one of each group-wise reward, as VeRL's trainer makes a
    step's batch of them: a uid per row, then each row repeated
    ``rollout.n`` times, interleaved (RayPPOTrainer.fit)."""
    import uuid

    import numpy as np
    import pyarrow as pa
    from verl import DataProto
    from verl.trainer.ppo.ray_trainer import RayPPOTrainer
    from verl.utils.dataset.rl_dataset import collate_fn

    rows = [{"prompt": [{"role": "user", "content": f"Question {i}: what is six times seven? Think, then answer."}],
             "data_source": source, "reward_model": {"ground_truth": "42", "style": "rule"},
             "extra_info": {"answer_check": "", "index": i}} for i, source in enumerate(GROUP_SOURCES)]
    pq.write_table(pa.Table.from_pylist(rows), path)
    ds = dataset(cfg, tokenizer, path)
    batch = DataProto.from_single_dict(collate_fn([ds[i] for i in range(len(ds))]))
    batch.non_tensor_batch["uid"] = np.array([str(uuid.uuid4()) for _ in range(len(batch.batch))], dtype=object)
    gen = RayPPOTrainer._get_gen_batch(None, batch)
    return rows, batch, gen.repeat(repeat_times=cfg.actor_rollout_ref.rollout.n, interleave=True)


def group_config(config, **reward_kwargs):
    """The recipe's config with the token-count manager, rollout.n = GROUP_N
    and one reward worker; ``reward_kwargs`` as VeRL's ``+reward...reward_kwargs.X=`` adds them."""
    from omegaconf import OmegaConf, open_dict

    cfg = OmegaConf.merge(config, LENGTH_MANAGER, {"actor_rollout_ref": {"rollout": {"n": GROUP_N}},
                                                    "reward": {"num_workers": 1}})
    with open_dict(cfg):
        cfg.reward.custom_reward_function.reward_kwargs = reward_kwargs
    return cfg


def run_group_rollout(cfg, tokenizer, rows, gen):
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker

    llm = GroupServer(tokenizer, rows)

    async def run():
        rewards = RewardLoopWorker(cfg)
        worker = AgentLoopWorker(cfg, llm_client=llm, reward_loop_worker_handles=[InProcessActor(rewards)])
        return await worker.generate_sequences(gen)

    return asyncio.run(run())


def test_reward_loop_scores_whole_groups_by_uid(config, tokenizer, recorded, work):
    """VeRL's reward loop hands the manager one rollout at a time, as each
    finishes; the manager gathers the rollouts of each uid and sends each
    group whole in one request, keyed by its uid, and every rollout gets the
    reward its group gives it."""
    cfg = group_config(config)
    rows, batch, gen = group_batch(cfg, tokenizer, work / "groups.parquet")
    out = run_group_rollout(cfg, tokenizer, rows, gen)
    requests = recorded.take_batches()
    recorded.take()
    groups: dict[str, list[dict]] = {}
    for items in requests:
        for item in items:
            assert item["group"] not in groups, "a group is sent whole, in one request"
        for item in items:
            groups.setdefault(item["group"], []).append(item)
    assert all(len(members) == GROUP_N for members in groups.values())
    uids = list(batch.non_tensor_batch["uid"])
    assert sorted(groups) == sorted(f"verl-{u}" for u in uids)
    prompt_len = out.batch["prompts"].shape[1]
    for j in range(len(gen)):
        i = j // GROUP_N
        items = groups[f"verl-{gen.non_tensor_batch['uid'][j]}"]
        assert all(it["data_source"] == rows[i]["data_source"] and it["group_size"] == GROUP_N for it in items)
        replies = [group_reply(i, k) for k in range(GROUP_N)]
        lengths = [expected_counts(tokenizer, r)["response_tokens"] for r in replies]
        oracle = kimi if rows[i]["data_source"] == "length/kimi" else shorterbetter
        want = dict(zip(lengths, oracle([k != 1 for k in range(GROUP_N)], lengths)))
        valid = int(out.batch["attention_mask"][j, prompt_len:].sum())
        assert valid in want, f"rollout {j}: {valid} tokens"
        assert float(out.batch["rm_scores"][j, valid - 1]) == pytest.approx(want[valid], abs=1e-6), f"rollout {j}"  # rm_scores are float32
        assert float(out.non_tensor_batch["group_size"][j]) == GROUP_N
        assert float(out.non_tensor_batch["solve_rate"][j]) == 0.75


def test_reward_loop_stops_on_a_group_that_cannot_be_whole(config, tokenizer, recorded, work):
    """Rollouts of one uid spread over several reward workers, or a group
    size the rollouts never reach, stop the run with the reason: a group is
    never scored smaller than it is."""
    from timeaware.verl_tokens import GroupIncomplete

    cfg = group_config(config)
    rows, _, gen = group_batch(cfg, tokenizer, work / "groups.parquet")
    spread = cfg.copy()
    spread.reward.num_workers = 2
    with pytest.raises(ValueError, match="reward.num_workers=1"):
        run_group_rollout(spread, tokenizer, rows, gen)
    short = group_config(config, group_size=GROUP_N + 1, group_wait_s=0.5)
    with pytest.raises(GroupIncomplete, match=f"has {GROUP_N} of its {GROUP_N + 1} rollouts"):
        run_group_rollout(short, tokenizer, rows, gen)
    assert recorded.take_batches() == []


def test_get_duration_tool_is_quiet_and_set_as_verl_sets_it(capfd):
    """Building the tool prints nothing (VeRL's BaseTool prints each tool's
    schema, eleven lines a rollout), and sets every attribute VeRL's
    BaseTool.__init__ sets, to the same values."""
    from verl.tools.base_tool import BaseTool

    from timeaware.tools import GetDurationTool
    from timeaware.trl import GetDurationEnv

    capfd.readouterr()
    tool = GetDurationTool({"base_url": "http://127.0.0.1:9"})
    GetDurationEnv(base_url="http://127.0.0.1:9")
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    base = BaseTool({"base_url": "http://127.0.0.1:9"}, tool.tool_schema)
    assert "get_duration" in capfd.readouterr().out, "VeRL's own BaseTool prints the schema"
    for name, value in vars(base).items():
        assert getattr(tool, name) == value, name


def test_an_outage_of_the_verifier_is_counted_and_stops_the_run_at_the_limit(config, tokenizer, synth_outputs,
                                                                              restartable, adapter, monkeypatch):
    """The budget rows through VeRL's tool agent loop and reward loop while
    the verifier comes and goes. Down from the start, the first reward
    stops the run. Killed mid-run, the get_duration tool
    cannot start the rollouts' timers: the model reads that the time is
    unavailable, and the reward does not score those rollouts as untimed
    ones but gives them the fallback, counted in the run of fallbacks.
    Restarted, it scores the next rollouts and the run ends; killed again,
    the run passes max_consecutive_fallbacks and VeRL's reward loop stops
    with VerifierUnreachable naming the URL."""
    from timeaware.scoring import VerifierUnreachable

    rows = pq.read_table(synth_outputs["budget"]).to_pylist()
    n = len(rows)
    monkeypatch.setenv("TIMEAWARE_URL", restartable.url)
    adapter.configure(url=restartable.url, retries=0, max_consecutive_fallbacks=n + n // 2)

    def scores(out):
        prompt_len = out.batch["prompts"].shape[1]
        got = []
        for i in range(n):
            valid = int(out.batch["attention_mask"][i, prompt_len:].sum())
            got.append(float(out.batch["rm_scores"][i, valid - 1]))
        return got

    def shown(out, i):
        prompt_len = out.batch["prompts"].shape[1]
        valid = int(out.batch["attention_mask"][i, prompt_len:].sum())
        return tokenizer.decode(out.batch["responses"][i, :valid], skip_special_tokens=False)

    # Down from the start: the first reward stops the run, naming the URL.
    restartable.stop()
    with pytest.raises(VerifierUnreachable, match=r"the verifier at " + re.escape(restartable.url)
                       + r" cannot be reached"):
        rollout(config, tokenizer, rows, synth_outputs["budget"])
    restartable.start()
    out, _ = rollout(config, tokenizer, rows, synth_outputs["budget"])
    assert all(s >= 0.1 for s in scores(out)), "every rollout scored, r_f at least"
    restartable.stop()
    out, _ = rollout(config, tokenizer, rows, synth_outputs["budget"])
    assert scores(out) == [0.0] * n, "the fallback, never the reward of an untimed rollout"
    for i in range(n):
        assert "The elapsed time is unavailable right now." in shown(out, i)
        assert "could not be reached to start the rollout's timer" in out.non_tensor_batch["timeaware_unreachable"][i]
    st = adapter.stats()
    assert (st["fallbacks"], st["consecutive_fallbacks"], st["fallback_alarms"]) == (n, n, 0), st
    restartable.start()
    out, _ = rollout(config, tokenizer, rows, synth_outputs["budget"])
    assert all(s >= 0.1 for s in scores(out))
    assert adapter.stats()["consecutive_fallbacks"] == 0
    restartable.stop()
    rollout(config, tokenizer, rows, synth_outputs["budget"])
    with pytest.raises(VerifierUnreachable, match=r"items in a row got no answer from the verifier at "
                       + re.escape(restartable.url)):
        rollout(config, tokenizer, rows, synth_outputs["budget"])
    assert adapter.stats()["fallback_alarms"] == 1
