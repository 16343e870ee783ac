"""The pure-Python timely/general reward in bench/serve/reference.py, checked
against a table of expected results and against the Go scorer
(`timeaware score --data-source timely/general`), which must give the same
score and details for every item: the table's, and a few thousand generated
items mixing many spellings of equal and unequal answers.

The Go comparison runs the real CLI (see conftest.py for TIMEAWARE_BIN):

    make build
    python -m pytest python/tests/interop/test_reward_reference.py -q
"""
from __future__ import annotations

import importlib.util
import json
import math
import random
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
DATA_SOURCE = "timely/general"
EXACT_KEYS = ("acc", "task_reward", "format_ok", "on_time")  # score and times may differ in the last bit (sin)


def load_reference():
    path = REPO_ROOT / "bench" / "serve" / "reference.py"
    spec = importlib.util.spec_from_file_location("timeaware_reward_reference", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


ref = load_reference()

# ---------------------------------------------------------------- cases

HALF = {"elapsed_s": 5.0, "time_limit_s": 10.0}  # U = sin(pi/4)
FULL = {"elapsed_s": 10, "time_limit_s": 10}  # U = 1
LATE = {"elapsed_s": 12.5, "time_limit_s": 10.0}
UNTIMED = {}
NO_LIMIT = {"elapsed_s": 3.0}

# Scores under DefaultConfig (r_f 0.1, r 0.5, lambda 0.4, sine utilisation).
RIGHT_HALF = 0.1 + 0.5 + 0.4 * math.sin(math.pi / 4)
RIGHT_FULL = 1.0
RIGHT_UNTIMED = 0.6
WRONG = 0.1


def tagged(answer: str, prose: str = "Let me work through this step by step.\n") -> str:
    return f"{prose}<answer>{answer}</answer>"


# (id, solution_str, ground_truth, extra_info, acc, format_ok, score); an
# acc of None marks an item that cannot be scored (error, fallback score 0).
CASES = [
    ("int", tagged("42"), "42", HALF, 1, 1, RIGHT_HALF),
    ("int wrong", tagged("24"), "42", HALF, 0, 1, WRONG),
    ("int ground truth number", tagged("42"), 42, HALF, 1, 1, RIGHT_HALF),
    ("float ground truth number", tagged("\\frac{3}{4}"), 0.75, FULL, 1, 1, RIGHT_FULL),
    ("negative", tagged("-2"), "2", HALF, 0, 1, WRONG),
    ("boxed fraction", tagged("\\boxed{\\frac{3}{4}}"), "0.75", HALF, 1, 1, RIGHT_HALF),
    ("boxed shorthand fraction", tagged("$\\boxed{\\frac34}$"), "3/4", HALF, 1, 1, RIGHT_HALF),
    ("dfrac", tagged("\\dfrac{1}{2}"), "\\frac{1}{2}", HALF, 1, 1, RIGHT_HALF),
    ("negative fraction", tagged("-\\frac{1}{2}"), "-0.5", HALF, 1, 1, RIGHT_HALF),
    ("rounded third", tagged("0.33"), "1/3", HALF, 0, 1, WRONG),
    ("percent as p", tagged("50\\%"), "50", HALF, 1, 1, RIGHT_HALF),
    ("percent as p/100", tagged("50%"), "0.5", HALF, 1, 1, RIGHT_HALF),
    ("percent vs percent", tagged("5%"), "50%", HALF, 0, 1, WRONG),
    ("thousands", tagged("\\$1{,}000"), "1000", HALF, 1, 1, RIGHT_HALF),
    ("thousands vs decimal", tagged("1,000"), "1.000", HALF, 0, 1, WRONG),
    ("scientific", tagged("1e3"), "1000", HALF, 1, 1, RIGHT_HALF),
    ("degrees", tagged("90^\\circ"), "90", HALF, 1, 1, RIGHT_HALF),
    ("assignment", tagged("x = 7"), "7", HALF, 1, 1, RIGHT_HALF),
    ("choice", tagged("(B)"), "B", HALF, 1, 1, RIGHT_HALF),
    ("choice text", tagged("\\text{b}"), "(B)", HALF, 1, 1, RIGHT_HALF),
    ("choice wrong", tagged("(C)"), "B", HALF, 0, 1, WRONG),
    ("words", tagged("  New York. "), "new york", HALF, 1, 1, RIGHT_HALF),
    ("prose in tag", tagged("The answer is 5"), "5", HALF, 0, 1, WRONG),
    ("last pair", tagged("1") + " no, " + tagged("2", ""), "2", HALF, 1, 1, RIGHT_HALF),
    ("boxed outside tag", "\\boxed{9} " + tagged("8", ""), "8", HALF, 1, 1, RIGHT_HALF),
    ("no tag", "The answer is \\boxed{5}.", "5", HALF, 0, 0, 0.0),
    ("unclosed tag", "<answer>5", "5", HALF, 0, 0, 0.0),
    ("empty tag", tagged("  "), "5", HALF, 0, 0, 0.0),
    ("unbalanced boxed", tagged("\\boxed{\\frac{1}{2}"), "0.5", HALF, 0, 0, 0.0),
    ("on time at the limit", tagged("7"), "7", FULL, 1, 1, RIGHT_FULL),
    ("late and right", tagged("7"), "7", LATE, 1, 1, 0.0),
    ("late and wrong", tagged("8"), "7", LATE, 0, 1, 0.0),
    ("untimed right", tagged("7"), "7", UNTIMED, 1, 1, RIGHT_UNTIMED),
    ("untimed wrong", tagged("8"), "7", UNTIMED, 0, 1, WRONG),
    ("no limit", tagged("7"), "7", NO_LIMIT, 1, 1, RIGHT_UNTIMED),
    ("no extra_info", tagged("7"), "7", None, 1, 1, RIGHT_UNTIMED),
    ("unicode prose", tagged("½ → \\frac{1}{2}", "Réponse : "), "\\frac{1}{2}", HALF, 0, 1, WRONG),
    ("long response", tagged("\\boxed{12}", "reasoning " * 5000), "12", HALF, 1, 1, RIGHT_HALF),
    ("null response", None, "7", HALF, 0, 0, 0.0),
    ("missing ground truth", tagged("7"), None, HALF, None, None, 0.0),
    ("huge ground truth", tagged("7"), 10**400, HALF, None, None, 0.0),
    ("huge elapsed", tagged("7"), "7", {"elapsed_s": 10**400}, None, None, 0.0),
    ("bool ground truth", tagged("7"), True, HALF, None, None, 0.0),
    ("zero limit", tagged("7"), "7", {"elapsed_s": 1.0, "time_limit_s": 0}, None, None, 0.0),
    ("negative elapsed", tagged("7"), "7", {"elapsed_s": -1.0, "time_limit_s": 10}, None, None, 0.0),
    ("string elapsed", tagged("7"), "7", {"elapsed_s": "1", "time_limit_s": 10}, None, None, 0.0),
]


def item(solution_str, ground_truth, extra_info) -> dict:
    return {"data_source": DATA_SOURCE, "solution_str": solution_str,
            "ground_truth": ground_truth, "extra_info": extra_info}


def generated_items(n: int, seed: int) -> list[dict]:
    """Items whose answers are random spellings of a few values and choices,
    so that many pairs are equal in a non-obvious way and many are not."""
    rng = random.Random(seed)
    values = [
        ["3/4", "0.75", ".75", "\\frac{3}{4}", "\\frac34", "\\dfrac{3}{4}", "6/8", "75%", "75\\%", "7.5e-1"],
        ["-1/2", "-0.5", "-\\frac{1}{2}", "\\frac{-1}{2}", "-.5", "1/-2", "\u22120.5", "-50%"],
        ["1000", "1,000", "1{,}000", "1e3", "1\\,000", "1000.0", "\\$1,000", "1.000", "1,00"],
        ["1/3", "0.333333333333", "0.33", "\\frac{1}{3}", "33.3333333333%"],
        ["90", "90^\\circ", "90^{\\circ}", "90°", "9e1", "-90"],
        ["B", "(B)", "b", "\\text{B}", "\\textbf{(B)}", "C", "(c)"],
        ["x", "X", "y", "\\sqrt{2}", "\\sqrt2", "(1,2)", "\\left(1, 2\\right)", "\\{1,2\\}", "Paris", "paris."],
    ]
    wrappers = ["{}", "{}", "{}", "${}$", "\\({}\\)", "\\boxed{{{}}}", "x = {}", "{}.", "\\text{{{}}}",
                " {} ", "\\mathrm{{{}}}", "$$\\boxed{{{}}}$$", "\\boxed{{{}", "{}}}"]
    responses = ["<answer>{}</answer>", "Reasoning.\n<answer>\n{}\n</answer>", "so \\boxed{{{}}}",
                 "MY ANSWER: {}", "The final answer is {}.", "**Answer:** {}", "<answer>\\boxed{{{}}}</answer>",
                 "<answer>wrong</answer> no: <answer>{}</answer>", "<answer>{}"]
    items = []
    for _ in range(n):
        group = rng.choice(values)
        answer = rng.choice(wrappers).format(rng.choice(group))
        truth = rng.choice(group if rng.random() < 0.8 else rng.choice(values))
        elapsed = rng.choice([None, 0.0, 2.5, 7.0, 10.0, 11.0])
        extra = {"time_limit_s": 10.0} if rng.random() < 0.8 else {}
        if elapsed is not None:
            extra["elapsed_s"] = elapsed
        items.append(item(rng.choice(responses).format(answer), truth, extra))
    return items


# ---------------------------------------------------------------- reference only


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_reference_table(case):
    _, solution_str, ground_truth, extra_info, acc, format_ok, score = case
    got, err = ref.score_item(DATA_SOURCE, solution_str, ground_truth, extra_info)
    assert list(got) == ["score", *ref.DETAIL_KEYS]
    if acc is None:
        assert err is not None, f"item should fail, scored {got}"
        assert got == dict.fromkeys(got, 0.0)
        return
    assert err is None, err
    assert (got["acc"], got["format_ok"]) == (acc, format_ok)
    assert got["task_reward"] == (0.5 if acc else 0.0)
    assert math.isclose(got["score"], score, rel_tol=0, abs_tol=1e-12), f"score {got['score']}, want {score}"
    assert got["reported_s"] == 0.0
    assert ref.compute_score(DATA_SOURCE, solution_str, ground_truth, extra_info) == got


def test_reference_time_details():
    got = ref.compute_score(DATA_SOURCE, tagged("7"), "7", {"elapsed_s": 2.5, "time_limit_s": 10})
    assert got["elapsed_s"] == 2.5 and got["time_limit_s"] == 10 and got["on_time"] == 1.0
    assert got["time_ratio"] == 0.25
    assert math.isclose(got["utilization"], math.sin(math.pi / 8), rel_tol=0, abs_tol=1e-15)
    late = ref.compute_score(DATA_SOURCE, tagged("7"), "7", LATE)
    assert late["on_time"] == 0.0 and late["time_ratio"] == 1.25 and late["utilization"] == 1.0
    untimed = ref.compute_score(DATA_SOURCE, tagged("7"), "7", {"time_limit_s": 10})
    assert untimed["time_limit_s"] == 0.0 and untimed["time_ratio"] == 0.0 and untimed["on_time"] == 1.0


def test_reference_rejects_other_data_sources():
    got, err = ref.score_item("timely/game", tagged("7"), "7", HALF)
    assert err and got["score"] == 0.0


# ---------------------------------------------------------------- against Go


def run_score(run_timeaware, tmp_path, items, name, *config_args):
    inp, out = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.out.jsonl"
    inp.write_text("".join(json.dumps(it) + "\n" for it in items), encoding="utf-8")
    proc = run_timeaware(*config_args, "score", "--data-source", DATA_SOURCE, "--input", inp, "--out", out,
                         "--max-errors", len(items))
    assert proc.returncode == 0, (
        f"`timeaware score` exited {proc.returncode} (does the binary have the score command? "
        f"rebuild it with `make build`)\nstderr:\n{proc.stderr}"
    )
    lines = out.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == "", "output does not end in a newline"
    assert len(lines) - 1 == len(items), f"{len(lines) - 1} results for {len(items)} items"
    return [json.loads(line) for line in lines[:-1]]


def compare(items, go_results, cfg):
    mismatches = []
    for i, (it, go) in enumerate(zip(items, go_results)):
        py, err = ref.score_item(it["data_source"], it["solution_str"], it["ground_truth"], it["extra_info"], cfg)
        where = f"item {i} {json.dumps(it)[:200]}"
        if ("error" in go) != (err is not None):
            mismatches.append(f"{where}: go error {go.get('error')!r}, python error {err!r}")
            continue
        go_keys = set(go) - {"error"}
        if go_keys != set(py):
            mismatches.append(f"{where}: go keys {sorted(go_keys)}, python keys {sorted(py)}")
            continue
        for key, want in py.items():
            got = go[key]
            same = got == want if key in EXACT_KEYS else math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-12)
            if not same:
                mismatches.append(f"{where}: {key} go {got!r}, python {want!r}")
    assert not mismatches, f"{len(mismatches)} mismatches; first ones:\n" + "\n".join(mismatches[:10])


@pytest.mark.needs_binary
def test_reference_matches_go_on_table(run_timeaware, tmp_path):
    items = [item(*case[1:4]) for case in CASES]
    compare(items, run_score(run_timeaware, tmp_path, items, "table"), ref.DEFAULT_CONFIG)


@pytest.mark.needs_binary
def test_reference_matches_go_on_generated_items(run_timeaware, tmp_path):
    items = generated_items(3000, seed=20250101)
    go = run_score(run_timeaware, tmp_path, items, "generated")
    right = sum(r["acc"] == 1 for r in go)
    assert 0.2 * len(items) < right < 0.8 * len(items), f"{right} of {len(items)} right: a poor mix of cases"
    compare(items, go, ref.DEFAULT_CONFIG)


@pytest.mark.needs_binary
def test_reference_matches_go_without_answer_tag(run_timeaware, tmp_path):
    """answer_tag "" accepts \\boxed{}, MY ANSWER: and final-answer lines."""
    config = tmp_path / "untagged.yaml"
    config.write_text('rewards:\n  timely:\n    answer_tag: ""\n', encoding="utf-8")
    items = [item(*case[1:4]) for case in CASES] + generated_items(2000, seed=7)
    go = run_score(run_timeaware, tmp_path, items, "untagged", "--config", config)
    compare(items, go, ref.TimelyConfig(answer_tag=""))
