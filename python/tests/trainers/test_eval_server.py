"""`timeaware eval run` against a real OpenAI-compatible model server:
`transformers serve` with the tiny Llama on CPU. The replies of a random
model are noise; what is checked is the wire: the server takes our
requests (tools, tool_choice, seed, max_tokens, multi-turn tool messages)
and the runner reads its answers, for every kind of row we write."""

import json
from pathlib import Path

import pytest
from localstack import ModelServer


@pytest.fixture(scope="module")
def model_server(work, tiny_model_dir):
    s = ModelServer(tiny_model_dir, work / "transformers-serve.log")
    yield s
    s.stop()


def first_rows(src: Path, dst: Path, n: int) -> Path:
    """The first n rows of a synth output, as JSONL (eval reads any format;
    few rows keep a CPU model quick)."""
    import pyarrow.parquet as pq

    rows = pq.read_table(src).slice(0, n).to_pylist()
    dst.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return dst


def test_eval_run_against_transformers_serve(work, run_timeaware, model_server, tiny_model_dir, synth_outputs, pairs_split):
    data = [first_rows(synth_outputs[name], work / f"eval-{name}.jsonl", 3) for name in ("puzzles", "traveler", "negotiation", "budget")]
    data.append(first_rows(pairs_split["test"], work / "eval-pairs.jsonl", 4))
    # The TicToc v1 trajectory whose logged tool calls carry a Python dict's
    # repr as arguments: the server parses the JSON pairs build writes.
    import pyarrow.parquet as pq

    literal = [r for r in pq.read_table(pairs_split["test"]).to_pylist() if r["id"] == "tide_height_12"][:2]
    assert literal, "tide_height_12 is on the test side of the paper split"
    calls = [c for r in literal for m in r["prompt"] for c in (m.get("tool_calls") or [])]
    assert calls and all(json.loads(c["function"]["arguments"]) for c in calls)
    data.append(work / "eval-pairs-literal.jsonl")
    data[-1].write_text("".join(json.dumps(r) + "\n" for r in literal))
    out = work / "eval-results.jsonl"
    args = ["eval", "run", "--endpoint", model_server.url + "/v1", "--model", str(tiny_model_dir),
            "--out", str(out), "--max-tokens", "8", "--max-turns", "3", "--json", "--concurrency", "2", "--bootstrap", "50"]
    for d in data:
        args += ["--data", str(d)]
    proc = run_timeaware(*args)
    assert proc.returncode == 0, proc.stderr + "\n" + model_server.log.read_text(errors="replace")[-3000:]
    report = json.loads(proc.stdout)

    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(results) == 3 * 4 + 4 + len(literal)
    assert [r["index"] for r in results] == list(range(len(results)))
    for r in results:
        assert "error" not in r, r
        assert isinstance(r["reply"], str)
    sources = {r["data_source"] for r in results}
    assert {"timepuzzles", "traveler", "negotiation", "tictoc/decision"} <= sources
    assert any(s.startswith("timely/") for s in sources)
    for name, sr in report["data_sources"].items():
        assert sr["failed"] == 0, name
        if sr["n"]:
            assert "score" in sr["metrics"], name
    assert report["requests"]["requests"] >= len(results) - sum(1 for r in results if r.get("skipped"))

    # A rerun is answered from the cache: the server is asked nothing.
    again = run_timeaware(*args)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["requests"]["requests"] == 0
    assert [json.loads(line)["reply"] for line in out.read_text().splitlines()] == [r["reply"] for r in results]


def test_eval_run_token_budget_rows_read_the_server_usage(work, run_timeaware, model_server, tiny_model_dir):
    """Token-budget rows (synth budget --unit tokens) against the real
    server: the response's length is the server's usage.completion_tokens,
    which --max-tokens bounds, and the report breaks results down by budget."""
    tasks = Path(__file__).resolve().parents[3] / "examples" / "budget" / "tasks.jsonl"
    rows = work / "eval-tokens.parquet"
    made = run_timeaware("synth", "budget", "--input", str(tasks), "--family", "general", "--seed", "7", "--unit", "tokens",
                         "--reward", "length/thinkprune", "--token-budgets", "4,6", "--out", str(rows))
    assert made.returncode == 0, made.stderr
    data = first_rows(rows, work / "eval-tokens.jsonl", 3)
    out = work / "eval-tokens-results.jsonl"
    proc = run_timeaware("eval", "run", "--endpoint", model_server.url + "/v1", "--model", str(tiny_model_dir),
                         "--data", str(data), "--out", str(out), "--max-tokens", "5", "--json", "--no-cache",
                         "--bootstrap", "50")
    assert proc.returncode == 0, proc.stderr + "\n" + model_server.log.read_text(errors="replace")[-3000:]
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(results) == 3
    for r in results:
        assert "error" not in r, r
        n = r["details"]["response_tokens"]
        assert 1 <= n <= 5, r  # the server's count of a reply capped at 5 tokens
        budget = r["details"]["token_budget"]
        assert budget in (4, 6)
        assert r["details"]["within_budget"] == (1.0 if n <= budget else 0.0)
        assert r["details"]["overshoot_tokens"] == max(0, n - budget)
    report = json.loads(proc.stdout)["data_sources"]["length/thinkprune"]
    assert report["failed"] == 0
    assert {p["budget"] for p in report["curve"]} <= {4, 6} and report["curve"]
