"""Interop tests for `timeaware synth budget`: the VeRL RL parquet read back by
pyarrow and Hugging Face datasets the way VeRL's RLHFDataset loads it, the
teacher requests, and an end-to-end check that a row's timer settings are what
the get_duration tool and the real `timeaware serve` accept and that its
time_limit_s is the budget the Timely reward applies; then the rows of
``--unit tokens``: their budgets typed as integers by pyarrow and datasets,
drawn from the set or the range, and stated in the prompt.

These tests run the real CLI (see conftest.py for TIMEAWARE_BIN).
"""
from __future__ import annotations

import asyncio
import json
import math
import os
import re
import subprocess
import urllib.error
import urllib.request

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from timeaware import scoring
from timeaware import verl as tv
from timeaware.client import Client
from timeaware.tools import TIMER_OPTIONS, GetDurationTool

pytestmark = pytest.mark.needs_binary

N_TASKS = 60
SEED = 3
BUDGET = re.compile(r"\n\nYour time budget for this task is (\d+\.\d{2}) seconds\.$")
NO_LIMIT = "\n\nThere is no time limit for this task."
DURATION_TEXT = re.compile(r"^\d+\.\d{2} seconds\.$")


def clean_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIMEAWARE_")}
    env.update(extra)
    return env


def task(i: int) -> dict:
    t = {"id": f"arith-{i}", "question": f"What is {i} times {i + 1}?", "answer": i * (i + 1)}
    if i % 2 == 0:
        t["baseline_seconds"] = 4 + i / 4
    if i % 7 == 0:
        t["answer"] = str(i * (i + 1))
    return t


@pytest.fixture(scope="module")
def budget(timeaware_bin, tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("budget")
    tasks = tmp / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(task(i)) + "\n" for i in range(N_TASKS)), encoding="utf-8")
    config = tmp / "timeaware.yaml"
    config.write_text("synth:\n  budget:\n    no_limit_fraction: 0.3\n", encoding="utf-8")
    out, teacher = tmp / "rl.parquet", tmp / "teacher.jsonl"
    proc = subprocess.run(
        [str(timeaware_bin), "--config", str(config), "synth", "budget", "--input", str(tasks),
         "--family", "general", "--seed", str(SEED), "--teacher-requests", str(teacher),
         "--teacher-model", "teacher-model", "--out", str(out)],
        capture_output=True, text=True, timeout=120, env=clean_env(), stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    return {"out": out, "teacher": teacher, "rows": pq.read_table(out).to_pylist()}


def key_paths(obj, prefix=()):
    """Every key path of a row, with the list of prompt messages collapsed."""
    paths = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            paths.add(prefix + (k,))
            paths |= key_paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for v in obj:
            paths |= key_paths(v, prefix + ("[]",))
    return paths


def struct_types(t: pa.DataType):
    if pa.types.is_struct(t):
        yield t
        for i in range(t.num_fields):
            yield from struct_types(t.field(i).type)
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        yield from struct_types(t.value_type)


def test_rows_share_one_layout_without_empty_structs(budget):
    schema = pq.read_schema(budget["out"])
    assert schema.names == ["data_source", "prompt", "ability", "reward_model", "extra_info", "agent_name"]
    for field in schema:
        for st in struct_types(field.type):
            assert st.num_fields > 0, f"{field.name} holds an empty struct"
    rows = budget["rows"]
    assert len(rows) == N_TASKS
    first = key_paths(rows[0])
    assert ("extra_info", "tools_kwargs", "get_duration", "create_kwargs", "time_limit_s") in first
    for i, row in enumerate(rows):
        assert key_paths(row) == first, f"row {i} has other nested keys"
        assert row["data_source"] == "timely/general"
        assert row["agent_name"] == "tool_agent"
        assert row["ability"] == "general"
        assert row["reward_model"]["style"] == "rule"
        assert row["reward_model"]["ground_truth"] == str(task(i)["answer"])
        ei = row["extra_info"]
        assert ei["need_tools_kwargs"] is True
        assert ei["index"] == i and ei["split"] == "train" and ei["task_id"] == f"arith-{i}"
        prompt = row["prompt"]
        assert isinstance(prompt, list) and [m["role"] for m in prompt] == ["system", "user"]
        assert all(set(m) == {"role", "content"} and isinstance(m["content"], str) for m in prompt)


def test_budget_sentence_matches_time_limit(budget):
    limited = unlimited = 0
    for row in budget["rows"]:
        user = row["prompt"][1]["content"]
        limit = row["extra_info"]["time_limit_s"]
        if limit is None:
            unlimited += 1
            assert user.endswith(NO_LIMIT) and not BUDGET.search(user)
            assert row["extra_info"]["multiplier"] is None
            continue
        limited += 1
        m = BUDGET.search(user)
        assert m, user
        assert m.group(1) == f"{limit:.2f}"
        assert float(m.group(1)) == limit, "the limit is the budget the model is told, exactly"
        base, mult = row["extra_info"]["baseline_s"], row["extra_info"]["multiplier"]
        assert mult in (0.75, 1.0, 2.0, 3.0)
        # multiplier × baseline, to 0.01 s
        assert abs(limit - max(mult * base, 0.01)) <= 0.005 + 1e-9
    assert limited > 0 and unlimited > 0, (limited, unlimited)


def test_create_kwargs_carry_the_timer_settings(budget):
    for row in budget["rows"]:
        ei = row["extra_info"]
        ck = ei["tools_kwargs"]["get_duration"]["create_kwargs"]
        assert set(ck) == set(TIMER_OPTIONS), "exactly the options GetDurationTool reads"
        assert ck["speed_factor"] == ei["timer"]["speed_factor"] in (0.5, 1.0, 2.0)
        assert ck["jitter"] == ei["timer"]["jitter"] == 0.05
        assert ck["time_limit_s"] == (ei["time_limit_s"] or 0.0)
        assert ck["ttl_s"] >= 3600


def test_datasets_loads_the_rows(budget, tmp_path):
    import datasets

    datasets.disable_progress_bars()
    ds = datasets.load_dataset(
        "parquet", data_files=str(budget["out"]), split="train", cache_dir=str(tmp_path)
    )
    assert len(ds) == N_TASKS
    assert ds.column_names == ["data_source", "prompt", "ability", "reward_model", "extra_info", "agent_name"]
    for i, row in enumerate(ds):
        assert row == budget["rows"][i]


def test_teacher_requests(budget):
    lines = budget["teacher"].read_text(encoding="utf-8").splitlines()
    assert len(lines) == N_TASKS
    for line, row in zip(lines, budget["rows"]):
        req = json.loads(line)
        assert set(req) == {"custom_id", "method", "url", "body"}
        assert req["custom_id"] == row["extra_info"]["request_id"] == row["extra_info"]["task_id"] + "#0"
        assert req["method"] == "POST" and req["url"] == "/v1/chat/completions"
        body = req["body"]
        assert body["model"] == "teacher-model"
        assert body["messages"] == row["prompt"]
        (tool,) = body["tools"]
        assert tool["type"] == "function" and tool["function"]["name"] == "get_duration"
        assert tool["function"]["parameters"] == {"type": "object", "properties": {}, "required": []}


# ------------------------------------------------------------- end to end


@pytest.fixture(scope="module")
def server(start_serve, tmp_path_factory):
    s = start_serve(tmp_path_factory.mktemp("serve-budget"), {"TIMEAWARE_TIMERS_SECRET": "synth-budget-tests-0123456789"})
    yield s.url
    s.stop()


@pytest.fixture
def adapter(server):
    scoring.shutdown()
    scoring.configure(reset=True, url=server, max_wait_ms=0)
    yield
    scoring.shutdown()
    scoring.configure(reset=True)


def post(url: str, body: dict) -> tuple:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def timely(t: float, limit: float) -> float:
    return 0.1 + 0.5 + 0.4 * math.sin(math.pi / 2 * t / limit)


def pick_rows(rows):
    limited = next(r for r in rows if r["extra_info"]["time_limit_s"] is not None)
    unlimited = next(r for r in rows if r["extra_info"]["time_limit_s"] is None)
    return limited, unlimited


def test_create_kwargs_are_accepted_by_the_service(budget, server):
    c = Client(server)
    for i, row in enumerate(pick_rows(budget["rows"])):
        ck = row["extra_info"]["tools_kwargs"]["get_duration"]["create_kwargs"]
        status, doc = post(server + "/v1/timers", {"rollout_id": f"budget-raw-{i}", **ck})
        assert status == 201, doc
        reading = c.read_timer(doc["timer"])
        assert reading["speed_factor"] == ck["speed_factor"]
        assert reading["jitter"] == ck["jitter"]
        assert reading["time_limit_s"] == ck["time_limit_s"]


def test_a_row_drives_the_tool_and_the_reward(budget, server, adapter):
    limited, unlimited = pick_rows(budget["rows"])
    tool = GetDurationTool({"type": "native", "base_url": server}, None)

    async def rollout(row, rid):
        ck = row["extra_info"]["tools_kwargs"]["get_duration"]["create_kwargs"]
        iid, _ = await tool.create(rid, **ck)
        await asyncio.sleep(0.05)
        resp, _, _ = await tool.execute(iid, {})
        assert DURATION_TEXT.match(resp.text), resp.text
        elapsed = await tool.calc_reward(iid)
        token = tool.timer_token(iid)
        await tool.release(iid)
        return elapsed, token

    c = Client(server)
    for row, rid in ((limited, "budget-rollout-1"), (unlimited, "budget-rollout-2")):
        elapsed, token = asyncio.run(rollout(row, rid))
        ck = row["extra_info"]["tools_kwargs"]["get_duration"]["create_kwargs"]
        reading = c.read_timer(token)
        assert (reading["speed_factor"], reading["jitter"], reading["time_limit_s"]) == (
            ck["speed_factor"], ck["jitter"], ck["time_limit_s"])
        assert elapsed >= 0.05 * ck["speed_factor"] * 0.9

        gt = row["reward_model"]["ground_truth"]
        solution = f"The product is {gt}. <answer>{gt}</answer>"
        ei = dict(row["extra_info"], rollout_reward_scores={"get_duration": elapsed})
        r = tv.compute_score_sync(row["data_source"], solution, gt, ei)
        limit = row["extra_info"]["time_limit_s"]
        if limit is None:
            assert r["time_limit_s"] == 0.0 and r["on_time"] == 1.0
            assert r["score"] == pytest.approx(0.6)
            continue
        assert r["time_limit_s"] == limit and r["on_time"] == 1.0 and r["acc"] == 1.0
        assert r["score"] == pytest.approx(timely(r["elapsed_s"], limit))

        half = dict(row["extra_info"], elapsed_s=limit / 2)
        r = tv.compute_score_sync(row["data_source"], solution, gt, half)
        assert r["score"] == pytest.approx(timely(limit / 2, limit))
        late = dict(row["extra_info"], elapsed_s=limit * 1.01)
        assert tv.compute_score_sync(row["data_source"], solution, gt, late)["score"] == 0.0
        with_timer = dict(row["extra_info"], timer=token)
        r = tv.compute_score_sync(row["data_source"], solution, gt, with_timer)
        assert r["time_limit_s"] == limit and r["score"] > 0.6


# ----------------------------------------------------------- token budgets

TOKEN_SENTENCES = {
    "length/lcpo_exact": re.compile(
        r"\n\nSpend (\d+) tokens on your reasoning, as close to that count as you can, before you answer\.$"),
    "length/lcpo_max": re.compile(r"\n\nSpend at most (\d+) tokens on your reasoning before you answer\.$"),
    "length/thinkprune": re.compile(
        r"\n\nKeep your whole reply within (\d+) tokens; a reply that runs longer earns nothing\.$"),
    "length/elastic": re.compile(
        r"\n\nSpend at most (\d+) tokens on your thinking and at most (\d+) tokens on the answer that follows it\.$"),
}
TOKEN_FIELDS = ["split", "index", "task_id", "variant", "request_id", "answer_check", "token_budget"]
TOKEN_BUDGETS = (300, 1000, 2500)


@pytest.fixture(scope="module")
def token_rows(timeaware_bin, tmp_path_factory) -> dict:
    """Token-budgeted rows of every reward: a set of budgets for lcpo_exact,
    lcpo_max and thinkprune, the default range (L1's) for a second lcpo_max
    file, the configured budgets for elastic."""
    tmp = tmp_path_factory.mktemp("budget-tokens")
    tasks = tmp / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(task(i)) + "\n" for i in range(N_TASKS)), encoding="utf-8")
    config = tmp / "timeaware.yaml"
    config.write_text("synth:\n  budget:\n    elastic_think_budget: 700\n    elastic_answer_budget: 300\n", encoding="utf-8")
    runs = {reward: ["--reward", reward, "--token-budgets", ",".join(map(str, TOKEN_BUDGETS))]
            for reward in TOKEN_SENTENCES if reward != "length/elastic"}
    runs["length/elastic"] = ["--reward", "length/elastic"]
    runs["range"] = ["--reward", "length/lcpo_max"]  # the default: L1's range, 100 to 4000
    out = {}
    for name, args in runs.items():
        path = tmp / (name.replace("/", "-") + ".parquet")
        proc = subprocess.run(
            [str(timeaware_bin), "--config", str(config), "synth", "budget", "--input", str(tasks), "--family", "general",
             "--seed", str(SEED), "--unit", "tokens", *args, "--out", str(path)],
            capture_output=True, text=True, timeout=120, env=clean_env(), stdin=subprocess.DEVNULL, check=False,
        )
        assert proc.returncode == 0, proc.stderr
        out[name] = path
    return out


@pytest.mark.parametrize("name", [*TOKEN_SENTENCES, "range"])
def test_token_rows_type_their_budgets_as_integers(token_rows, name):
    schema = pq.read_schema(token_rows[name])
    assert schema.names == ["data_source", "prompt", "ability", "reward_model", "extra_info"], "single-turn: no agent_name"
    ei = schema.field("extra_info").type
    elastic = name == "length/elastic"
    assert [ei.field(i).name for i in range(ei.num_fields)] == TOKEN_FIELDS + (["think_budget", "answer_budget"] if elastic else [])
    for field in ("index", "variant", "token_budget", *(("think_budget", "answer_budget") if elastic else ())):
        assert ei.field(field).type == pa.int64(), field


@pytest.mark.parametrize("name", [*TOKEN_SENTENCES, "range"])
def test_token_rows_state_their_budget(token_rows, name):
    reward = "length/lcpo_max" if name == "range" else name
    rows = pq.read_table(token_rows[name]).to_pylist()
    assert len(rows) == N_TASKS
    budgets = set()
    for i, row in enumerate(rows):
        assert row["data_source"] == reward
        assert row["reward_model"] == {"style": "rule", "ground_truth": str(task(i)["answer"])}
        ei = row["extra_info"]
        assert (ei["index"], ei["split"], ei["task_id"], ei["variant"], ei["answer_check"]) == (i, "train", f"arith-{i}", 0, "")
        assert ei["request_id"] == f"arith-{i}#0"
        system, user = row["prompt"]
        assert system["role"] == "system" and "<answer></answer>" in system["content"]
        assert user["role"] == "user" and user["content"].startswith(task(i)["question"] + "\n\n")
        m = TOKEN_SENTENCES[reward].search(user["content"])
        assert m, user["content"]
        if name == "length/elastic":
            assert (ei["think_budget"], ei["answer_budget"], ei["token_budget"]) == (700, 300, 1000)
            assert m.groups() == ("700", "300")
            continue
        assert m.group(1) == str(ei["token_budget"])
        budgets.add(ei["token_budget"])
        if name == "range":
            assert 100 <= ei["token_budget"] <= 4000
        else:
            assert ei["token_budget"] in TOKEN_BUDGETS
    if name == "range":
        assert len(budgets) > N_TASKS // 2, "drawn from the whole range"
    elif name != "length/elastic":
        assert budgets == set(TOKEN_BUDGETS), "every budget of the set is drawn among 60 tasks"


@pytest.mark.parametrize("name", ["length/lcpo_max", "length/elastic"])
def test_datasets_loads_the_token_rows(token_rows, name, tmp_path):
    import datasets

    datasets.disable_progress_bars()
    ds = datasets.load_dataset("parquet", data_files=str(token_rows[name]), split="train", cache_dir=str(tmp_path))
    assert len(ds) == N_TASKS
    ei = ds.features["extra_info"]
    for field in ("index", "variant", "token_budget", *(("think_budget", "answer_budget") if name == "length/elastic" else ())):
        assert ei[field].dtype == "int64", field
    rows = pq.read_table(token_rows[name]).to_pylist()
    for i, row in enumerate(ds):
        assert row == rows[i]
        assert isinstance(row["extra_info"]["token_budget"], int)


def test_token_rows_score_on_the_service(token_rows, server, adapter):
    """A row of each reward, as written, scored by the real service with the
    counts a trainer adds; the expected rewards are the papers' formulas with
    the documented defaults (alpha 0.0003, delta 0.5), computed here."""
    alpha, delta = 0.0003, 0.5
    for name in TOKEN_SENTENCES:
        row = pq.read_table(token_rows[name]).to_pylist()[0]
        gt, ei = row["reward_model"]["ground_truth"], row["extra_info"]
        right, wrong = f"<answer>{gt}</answer>", "<answer>no idea</answer>"

        def score(solution, **counts):
            return tv.compute_score_sync(row["data_source"], solution, gt, dict(ei, **counts))["score"]

        if name == "length/elastic":
            think = f"<think>{'step ' * 5}</think>"
            t, s = ei["think_budget"], ei["answer_budget"]
            assert score(think + right, response_tokens=t + s + 2, think_tokens=t, answer_tokens=s) == pytest.approx(1.0)
            assert score(think + right, response_tokens=t + s + 3, think_tokens=t + 1, answer_tokens=s) == 0.0
            assert score(think + wrong, response_tokens=12, think_tokens=5, answer_tokens=6) == 0.0
            continue
        n = ei["token_budget"]
        for n_y in (n - 200, n, n + 1, n + 1000):
            for c, solution in ((1.0, right), (0.0, wrong)):
                if name == "length/lcpo_exact":
                    want = c - alpha * abs(n - n_y)
                elif name == "length/lcpo_max":
                    want = c * min(max(alpha * (n - n_y) + delta, 0.0), 1.0)
                else:
                    want = c if n_y <= n else 0.0
                assert score(solution, response_tokens=n_y) == pytest.approx(want), (name, n_y, c)
