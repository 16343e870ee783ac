"""The timeqa and tempreason rewards against the benchmarks' own scoring
scripts, vendored unmodified under third_party/ (see its README):

- TimeQA: utils.py of wenhuchen/Time-Sensitive-QA (compute_exact,
  compute_f1, get_raw_scores);
- TempReason: the SQuAD v1.1 evaluate.py behind Hugging Face's "squad"
  metric (exact_match_score, f1_score, metric_max_over_ground_truths,
  evaluate).

About 250 (prediction, gold answers) cases, hand-picked edge cases and
seeded random ones mixing case, punctuation, articles, Unicode letters,
marks and white space, and empty strings, are scored by the real CLI
(`timeaware score`, each item's own data_source) with the prediction on an
"Answer:" line. Every item's exact_match and f1 must equal the script's
value for that prediction, and their means x 100 must equal get_raw_scores'
and evaluate's aggregates on the same predictions.

A prediction that is empty once the answer line is cleaned (ExtractAnswer:
ASCII white space, leading colons and asterisks, trailing asterisks and one
full stop) is no answer to our rewards: it scores 0 with answered = 0,
where the scripts would score the empty string. Those cases are checked
for that and left out of the comparison.

    make build
    TIMEAWARE_BIN=bin/timeaware python -m pytest python/tests/interop/test_public_bench_oracle.py -q
"""
from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
THIRD_PARTY = HERE / "third_party"


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


timeqa = load("timeqa_official_utils", THIRD_PARTY / "timeqa" / "utils.py")
squad = load("squad_v11_official_evaluate", THIRD_PARTY / "squad_v11" / "evaluate.py")

HAND = [
    ("George Peter", ["George Peter"]),
    ("the George Peter.", ["George Peter"]),
    ("Peter", ["George Peter"]),
    ("-", [""]),
    ("George Peter", [""]),
    ("the", [""]),
    ("A", ["an"]),
    ("An apple, the pear", ["apple pear"]),
    ("1995", ["March 1995", "1995"]),
    ("March 1994", ["March 1995", "1994"]),
    ("Ålborg", ["ålborg"]),
    ("İstanbul", ["istanbul"]),
    ("İstanbul", ["i\u0307stanbul"]),
    ("ΟΔΟΣ", ["οδος"]),
    ("ΟΔΟΣ", ["οδοσ"]),
    ("ΣΑΣ.Σ", ["σας σ"]),
    ("the\u0301 end", ["end"]),
    ("théa the", ["théa"]),
    ("théâtre", ["theatre"]),
    ("Paris\u00a0France", ["paris france"]),
    ("Paris\x1cFrance", ["Paris France"]),
    ("Paris\u2028France", ["Paris France"]),
    ("«»", [""]),
    ("«»", ["«»"]),
    ("2.0", ["2"]),
    ("the the cat cat", ["cat"]),
    ("U.S.", ["US"]),
    ("a_b", ["ab"]),
    ("x—the—y", ["x y"]),
    ("東京 the 日本", ["東京日本", "東京 日本"]),
    ("member of the State Senate of North Dakota", ["member of State Senate of North Dakota"]),
    ("Oct, 1874", ["Oct, 1874", "October 1874"]),
    ("", [""]),
    ("*", [""]),
    (" . ", ["x"]),
]

WORDS = ["paris", "France", "THE", "the", "A", "a", "an", "An", "U.S.", "1995", "2.0", "2", "Ålborg", "İstanbul",
         "ΟΔΟΣ", "οδος", "Σ", "ς", "théâtre", "naïve", "東京", "日本", "x_y", "l'été", "state", "senate", "of",
         "Oct", "1874", "member", "²", "Ⅻ", "ǅ", "ﬁ"]
PUNCT = [",", ".", "!", "-", "—", "«", "»", "(", ")", "'", '"', "...", ":", ";", "?", "&", "/", "*", "_", "\u0301"]
SPACES = [" ", " ", " ", "  ", "\t", "\u00a0", "\u2003", "\x1c", "\u3000", "\x85"]


def random_answer(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(0, 5)):
        w = rng.choice(WORDS)
        if rng.random() < 0.3:
            w = w.upper() if rng.random() < 0.5 else w.lower()
        if rng.random() < 0.3:
            w = rng.choice(PUNCT) + w if rng.random() < 0.5 else w + rng.choice(PUNCT)
        parts.append(w)
        parts.append(rng.choice(SPACES) if rng.random() < 0.85 else rng.choice(PUNCT))
    return "".join(parts[:-1]) if parts and rng.random() < 0.8 else "".join(parts)


def variant(rng: random.Random, s: str) -> str:
    """A spelling of s that often normalises the same."""
    out = s.upper() if rng.random() < 0.3 else s
    if rng.random() < 0.4:
        out = rng.choice(["the ", "A ", "an "]) + out
    if rng.random() < 0.4:
        out = out + rng.choice([".", "!", " ,", "\u00a0", "  "])
    if rng.random() < 0.2:
        words = out.split()
        if words:
            words.pop(rng.randrange(len(words)))
        out = " ".join(words)
    return out


def cases() -> list[tuple[str, list[str]]]:
    rng = random.Random(41)
    out = list(HAND)
    while len(out) < 250:
        pred = random_answer(rng)
        golds = []
        for _ in range(rng.randint(1, 3)):
            r = rng.random()
            golds.append("" if r < 0.15 else variant(rng, pred) if r < 0.6 else random_answer(rng))
        out.append((pred, golds))
    return out


def cleans_to_empty(pred: str) -> bool:
    """ExtractAnswer finds no answer on the line "Answer: <pred>"."""
    ws = " \t\n\r\v\f"
    s = pred.strip(ws).lstrip(ws + "*:").rstrip(ws + "*")
    if s.endswith("."):
        s = s[:-1].rstrip(ws + "*")
    return s == ""


def run_score(run_timeaware, tmp_path, items):
    inp, out = tmp_path / "items.jsonl", tmp_path / "results.jsonl"
    inp.write_text("".join(json.dumps(it) + "\n" for it in items), encoding="utf-8")
    proc = run_timeaware("score", "--input", inp, "--out", out)
    assert proc.returncode == 0, (
        f"`timeaware score` exited {proc.returncode} (does the binary have the timeqa and tempreason rewards? "
        f"rebuild it with `make build`)\nstderr:\n{proc.stderr}"
    )
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(items)
    return [json.loads(line) for line in lines]


@pytest.mark.needs_binary
def test_rewards_equal_the_official_scripts(run_timeaware, tmp_path):
    cs = cases()
    for pred, _ in cs:
        assert "\n" not in pred and "\\" not in pred and "answer" not in pred.lower()
    items = []
    for pred, golds in cs:
        gt = json.dumps({"answers": golds})  # a JSON string, as the importers write it
        for ds in ("timeqa", "tempreason"):
            items.append({"data_source": ds, "solution_str": "Let me think.\nAnswer: " + pred, "ground_truth": gt})
    results = run_score(run_timeaware, tmp_path, items)

    preds_tq, refs_tq, ours_tq = {}, {}, []
    preds_tr, dataset_tr, ours_tr = {}, [], []
    compared = 0
    for i, (pred, golds) in enumerate(cs):
        tq, tr = results[2 * i], results[2 * i + 1]
        assert "error" not in tq and "error" not in tr, (pred, golds, tq, tr)
        where = f"case {i}: prediction {pred!r}, golds {golds!r}"
        if cleans_to_empty(pred):
            for got in (tq, tr):
                assert got == {"score": 0, "exact_match": 0, "f1": 0, "answered": 0}, where
            continue
        compared += 1
        em = max(timeqa.compute_exact(g, pred) for g in golds)
        f1 = max(timeqa.compute_f1(g, pred) for g in golds)
        assert (tq["exact_match"], tq["f1"], tq["score"], tq["answered"]) == (em, f1, f1, 1), f"timeqa {where}: {tq}"
        em = int(squad.metric_max_over_ground_truths(squad.exact_match_score, pred, golds))
        f1 = squad.metric_max_over_ground_truths(squad.f1_score, pred, golds)
        assert (tr["exact_match"], tr["f1"], tr["score"], tr["answered"]) == (em, f1, f1, 1), f"tempreason {where}: {tr}"

        qid = f"q{i}"
        preds_tq[qid], refs_tq[qid] = pred, golds
        ours_tq.append(tq)
        preds_tr[qid] = pred
        dataset_tr.append({"id": qid, "answers": [{"text": g} for g in golds]})
        ours_tr.append(tr)
    assert compared >= 200, f"only {compared} cases compared"

    # The cases reach every branch of the two F1s.
    assert any(0 < r["f1"] < 1 for r in ours_tq)
    assert any(a["f1"] == 1 and b["f1"] == 0 and a["exact_match"] == 1 for a, b in zip(ours_tq, ours_tr))

    raw = timeqa.get_raw_scores(preds_tq, refs_tq)
    assert raw["total"] == len(ours_tq)
    assert 100.0 * sum(r["exact_match"] for r in ours_tq) / len(ours_tq) == pytest.approx(raw["exact"], abs=1e-9)
    assert 100.0 * sum(r["f1"] for r in ours_tq) / len(ours_tq) == pytest.approx(raw["f1"], abs=1e-9)

    agg = squad.evaluate([{"paragraphs": [{"qas": dataset_tr}]}], preds_tr)
    assert 100.0 * sum(r["exact_match"] for r in ours_tr) / len(ours_tr) == pytest.approx(agg["exact_match"], abs=1e-9)
    assert 100.0 * sum(r["f1"] for r in ours_tr) / len(ours_tr) == pytest.approx(agg["f1"], abs=1e-9)
