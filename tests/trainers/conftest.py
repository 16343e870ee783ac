"""Fixtures of the trainers tier: the real TRL, VeRL and OpenRLHF code, on CPU,
against the real `timeaware` binary and server.

Nothing is downloaded: the tokenizer is trained here on the data at hand and
the model is a tiny Llama initialised at random from a config, both saved to
a directory first (TRL rebuilds its reference model from the model's
``_name_or_path``). Needs:

  TIMEAWARE_BIN     the binary (default <repo>/bin/timeaware)
  TIMEAWARE_SHARED  the shared directory holding data/tictoc-v1 (default <repo>/../shared)

A missing binary or data directory fails the tests; nothing is skipped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
V1_NAME = re.compile(r"^prefer(Tool|NoTool)_elapse_(\d+)\.json$")

# Everything the tests load is local.
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("WANDB_MODE", "disabled")

# The chat template of the tiny model: ChatML turns, tools listed in the
# system turn, tool calls as <tool_call>{"name": ..., "arguments": ...}</tool_call>
# (what VeRL's hermes tool parser reads), tool results as user turns.
CHAT_TEMPLATE = (
    "{%- set sys = messages[0].content if messages and messages[0].role == 'system' else none -%}"
    "{%- if tools or sys is not none -%}<|im_start|>system\n"
    "{%- if sys is not none %}{{ sys }}\n{% endif -%}"
    "{%- if tools -%}Tools you may call, one JSON object each:\n<tools>\n"
    "{%- for tool in tools %}{{ tool | tojson }}\n{% endfor -%}"
    "</tools>\nTo call one, answer with <tool_call>{\"name\": NAME, \"arguments\": {...}}</tool_call>.\n"
    "{%- endif -%}<|im_end|>\n{%- endif -%}"
    "{%- for m in messages -%}"
    "{%- if m.role == 'system' and loop.first -%}"
    "{%- elif m.role == 'assistant' -%}<|im_start|>assistant\n{{ m.content or '' }}"
    "{%- for call in (m.tool_calls or []) -%}"
    "{%- set args = call.function.arguments -%}"
    "<tool_call>{\"name\": \"{{ call.function.name }}\", \"arguments\": "
    "{{ args if args is string else (args | tojson) }}}</tool_call>"
    "{%- endfor -%}<|im_end|>\n"
    "{%- elif m.role == 'tool' -%}<|im_start|>user\n<tool_response>{{ m.content or '' }}</tool_response><|im_end|>\n"
    "{%- else -%}<|im_start|>{{ m.role }}\n{{ m.content or '' }}<|im_end|>\n"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|im_start|>assistant\n{%- endif -%}"
)
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]


@pytest.fixture(scope="session")
def timeaware_bin() -> Path:
    path = Path(os.environ.get("TIMEAWARE_BIN") or REPO_ROOT / "bin" / "timeaware")
    if not path.is_file() or not os.access(path, os.X_OK):
        pytest.fail(f"timeaware binary not found at {path}; run `make build` or set TIMEAWARE_BIN", pytrace=False)
    return path


@pytest.fixture(scope="session")
def v1_files() -> list[Path]:
    shared = Path(os.environ.get("TIMEAWARE_SHARED") or REPO_ROOT.parent / "shared")
    files = sorted(p for p in (shared / "data" / "tictoc-v1").glob("*.json") if V1_NAME.match(p.name))
    if len(files) != 5:
        pytest.fail(f"expected the five TicToc v1 files in {shared}/data/tictoc-v1; set TIMEAWARE_SHARED", pytrace=False)
    return files


@pytest.fixture(scope="session")
def run_timeaware(timeaware_bin):
    def run(*args, timeout: float = 300) -> subprocess.CompletedProcess:
        res = subprocess.run(
            [str(timeaware_bin), *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        assert res.returncode == 0, f"timeaware {' '.join(map(str, args))} exited {res.returncode}:\n{res.stderr}"
        return res

    return run


@pytest.fixture(scope="session")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("trainers")


@pytest.fixture(scope="session")
def pairs_split(run_timeaware, v1_files, work) -> dict:
    """``pairs build --split paper`` on the v1 data, with direct replies from
    a side file: {"train": path, "test": path}."""
    side = work / "direct_answers.jsonl"
    ids = sorted({r["id"] for path in v1_files for r in json.loads(path.read_text(encoding="utf-8"))})
    with side.open("w", encoding="utf-8") as f:
        for rid in ids:
            f.write(json.dumps({"id": rid, "direct_answer": direct_answer(rid)}) + "\n")
    out = work / "pairs.parquet"
    inputs = [a for p in v1_files for a in ("--input", p)]
    run_timeaware("pairs", "build", *inputs, "--direct-answers", side, "--time-format", "iso_delta",
                  "--split", "paper", "--out", out)
    return {"train": work / "pairs-train.parquet", "test": work / "pairs-test.parquet"}


def direct_answer(sample_id: str) -> str:
    return f"The result fetched a moment ago for {sample_id} is still current, so here it is again."


@pytest.fixture(scope="session")
def synth_outputs(run_timeaware, work) -> dict:
    """Every synth RL output as Parquet, with OpenRLHF's label column."""
    tasks = REPO_ROOT / "examples" / "budget" / "tasks.jsonl"
    out = {}
    commands = {
        "budget": ["synth", "budget", "--input", tasks, "--family", "general", "--seed", "5"],
        "puzzles": ["synth", "puzzles", "--count", "8", "--seed", "5"],
        "traveler": ["synth", "traveler", "--count", "8", "--seed", "5"],
        "negotiation": ["synth", "negotiation", "--count", "8", "--seed", "5"],
    }
    for name, args in commands.items():
        path = work / f"{name}.parquet"
        run_timeaware(*args, "--openrlhf-label", "--out", path)
        out[name] = path
    return out


@pytest.fixture(scope="session")
def tokenizer_dir(work, v1_files, synth_outputs) -> Path:
    """A byte-level BPE tokenizer trained here on the v1 trajectories and the
    synth prompts, with ChatML special tokens and CHAT_TEMPLATE."""
    import pyarrow.parquet as pq
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    def corpus():
        for path in v1_files:
            for record in json.loads(path.read_text(encoding="utf-8")):
                yield json.dumps(record, ensure_ascii=False)
        for path in synth_outputs.values():
            for row in pq.read_table(path, columns=["prompt"]).column("prompt").to_pylist():
                for m in row:
                    yield m["content"]

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=2048, special_tokens=SPECIAL_TOKENS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(corpus(), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=SPECIAL_TOKENS[1:2],
    )
    fast.chat_template = CHAT_TEMPLATE
    out = work / "tokenizer"
    fast.save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def tokenizer(tokenizer_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tokenizer_dir)


@pytest.fixture(scope="session")
def tiny_model_dir(work, tokenizer_dir, tokenizer) -> Path:
    """A two-layer Llama with 32-wide hidden states, initialised at random
    (fixed seed) and saved with the tokenizer."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=16384,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    model = LlamaForCausalLM(config)
    out = work / "tiny-llama"
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


class Server:
    """One `timeaware serve` on a port the kernel chose: --addr 127.0.0.1:0,
    the bound address read from --addr-file (written once the listener is
    bound), ready once /healthz answers 200; the waits share a deadline."""

    def __init__(self, binary: Path, log: Path, env: dict) -> None:
        self.log = log
        self._logf = log.open("wb")
        addr_file = log.with_suffix(".addr")
        addr_file.unlink(missing_ok=True)
        self.proc = subprocess.Popen(
            [str(binary), "serve", "--addr", "127.0.0.1:0", "--addr-file", str(addr_file)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._logf,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and self.proc.poll() is None:
            addr = addr_file.read_text().strip() if addr_file.exists() else ""
            if addr:
                self.url = f"http://{addr}"
                if self._healthy():
                    return
            time.sleep(0.05)
        self.stop()
        pytest.fail(f"timeaware serve did not start:\n{log.read_text()}", pytrace=False)

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + "/healthz", timeout=1) as r:
                return r.status == 200
        except OSError:
            return False

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._logf.close()


TIMERS_SECRET = "trainers-tier-timer-secret-0123456789abcdef"


@pytest.fixture(scope="session")
def server(timeaware_bin, work):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIMEAWARE_")}
    env["TIMEAWARE_TIMERS_SECRET"] = TIMERS_SECRET
    s = Server(timeaware_bin, work / "serve.log", env)
    yield s
    s.stop()


@pytest.fixture
def adapter(server):
    """The timeaware adapter pointed at the session's server, fresh state."""
    from timeaware import scoring

    scoring.shutdown()
    scoring.configure(reset=True, url=server.url)
    os.environ["TIMEAWARE_URL"] = server.url
    yield scoring
    scoring.shutdown()
    scoring.configure(reset=True)
    os.environ.pop("TIMEAWARE_URL", None)


def scripted_rollout(tokenizer, ds, text, script: list, *, variant=lambda k: k, logprobs: bool = True):
    """A GRPOTrainer ``rollout_func`` that answers instead of the model: in
    each call, the k-th prompt of row i gets ``text(i, variant(k))`` and an
    end of sequence, and ``script`` gets the call's list of
    ``(i, variant(k))``. ``logprobs`` False returns none, as TRL's own
    generation without vLLM does once a tool has answered."""
    by_prompt = {json.dumps(ds[i]["prompt"]): i for i in range(len(ds))}

    def rollout(prompts, trainer):
        seen: dict[int, int] = {}
        call, prompt_ids, completion_ids = [], [], []
        for p in prompts:
            i = by_prompt[json.dumps(p)]
            v = variant(seen.get(i, 0))
            seen[i] = seen.get(i, 0) + 1
            call.append((i, v))
            prompt = tokenizer.apply_chat_template(p, tokenize=False, add_generation_prompt=True)
            prompt_ids.append(tokenizer(prompt, add_special_tokens=False)["input_ids"])
            completion_ids.append(tokenizer(text(i, v), add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id])
        script.append(call)
        return {"prompt_ids": prompt_ids, "completion_ids": completion_ids,
                "logprobs": [[0.0] * len(c) for c in completion_ids] if logprobs else None}

    return rollout


def right_answer(data_source: str, ground_truth: str, extra_info: dict) -> str:
    """A right answer written from the row's ground truth."""
    if data_source == "timepuzzles":
        return f"Checking every candidate date.\nMY ANSWER: {ground_truth}"
    if data_source.startswith("timely/"):
        return f"Working it out.\n<answer>{ground_truth}</answer>"
    if data_source == "traveler":
        gt = json.loads(ground_truth)
        if "answer" not in gt:
            # A vague question: the answer synth found most likely.
            return f"Weighing how likely each event is.\nANSWER: {extra_info['answer']}"
        ans = gt["answer"]
        if isinstance(ans, list):
            ans = ", ".join(ans) if ans else "nobody"
        return f"Looking at the events.\nANSWER: {ans}"
    if data_source == "negotiation":
        # The reply form the row's prompt asks for: walking away is always
        # valid and is worth the role's BATNA.
        return json.dumps({"text": "I will take my outside option.", "action": {"action": "batna"}})
    raise AssertionError(data_source)


def recipe_lines(name: str, values: dict) -> list[str]:
    """The recipe's argument lines as its run.sh expands them (examples/args.sh)."""
    res = subprocess.run(
        ["bash", "-c", f'source examples/args.sh && expand_args examples/{name}/grpo.args'],
        cwd=REPO_ROOT, env={"PATH": os.environ["PATH"], **values}, capture_output=True, text=True, check=False,
    )
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines and not any("${" in line for line in lines), lines
    return lines


@pytest.fixture(scope="session")
def verl_config(synth_outputs, tiny_model_dir, server, tmp_path_factory):
    """VeRL's own trainer config composed with every line of examples/verl-grpo/grpo.args,
    on the tiny model, the budget rows, the example tool config and the session's server."""
    import verl
    from hydra import compose, initialize_config_dir

    data = tmp_path_factory.mktemp("verl-grpo")
    shutil.copy(synth_outputs["budget"], data / "budget-train.parquet")
    shutil.copy(synth_outputs["budget"], data / "budget-test.parquet")
    values = {
        "MODEL": str(tiny_model_dir),
        "DATA": str(data),
        "TOOLS": str(REPO_ROOT / "python" / "examples" / "get_duration_tool_config.yaml"),
        "TIMEAWARE_URL": server.url,
        "GPUS": "8",
    }
    config_dir = Path(verl.__file__).parent / "trainer" / "config"
    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
        return compose(config_name="ppo_trainer", overrides=recipe_lines("verl-grpo", values))
