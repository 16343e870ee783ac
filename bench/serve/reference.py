#!/usr/bin/env python3
"""Pure-Python reference of timeaware's timely/general reward.

A standard-library port of the Timely-RL general-reasoning reward in
rewards/timely.go, with the answer extraction and answer equality of
rewards/answer.go, under rewards.DefaultConfig (sine utilisation, r_f 0.1,
lambda 0.4, r 0.5, answer tag "answer", no duration tag). It is what a VeRL
user would otherwise run in process as a custom reward function, and the
baseline the verifier service is benchmarked against:

    custom_reward_function:
      path: bench/serve/reference.py
      name: compute_score

Results equal the Go scorer's (python/tests/interop/test_reward_reference.py checks
this against `timeaware score`); the time-derived details may differ from Go
in the last bit of a float, because Go's math.Sin is not the C library's.
Timer tokens (extra_info.timer) need the service and are not supported.

As a script it scores a JSONL file of {data_source, solution_str,
ground_truth, extra_info} items the way `timeaware score` does, writing one
result per line, and prints {"items", "failed", "seconds", "items_per_s"}:

    python bench/serve/reference.py --input items.jsonl [--out results.jsonl]
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from dataclasses import dataclass

DATA_SOURCE = "timely/general"
DETAIL_KEYS = (
    "acc", "task_reward", "format_ok", "on_time", "elapsed_s",
    "time_limit_s", "time_ratio", "utilization", "reported_s",
)


@dataclass(frozen=True)
class TimelyConfig:
    """The timely/general fields of rewards.Config, with DefaultConfig values."""

    utilization: str = "sin"
    step_table: tuple = (0.25, 0.5, 0.75, 1.0)
    format_reward: float = 0.1
    lambda_: float = 0.4
    correct_reward: float = 0.5
    answer_tag: str = "answer"
    fallback_score: float = 0.0


DEFAULT_CONFIG = TimelyConfig()


class ItemError(ValueError):
    """An item field is missing or malformed (Go: rewards.FieldError)."""


# ---------------------------------------------------------------- extraction
# Every delimiter, space and case fold is ASCII-only, as in rewards/answer.go.

_SPACE = " \t\n\r\v\f"
_LINE_LEAD = _SPACE + "*#>-"
_LEAD = _SPACE + "*:"
_TRAIL = _SPACE + "*"
_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_NO_SPACE = str.maketrans("", "", _SPACE)
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_BRACE_TOKEN = re.compile(r"\\.|[{}]", re.S)  # a backslash escapes the next character


def _match_brace(s: str, open_: int) -> int:
    """Index of the brace closing the one at s[open_], or -1."""
    depth = 0
    for m in _BRACE_TOKEN.finditer(s, open_):
        t = m.group()
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if depth == 0:
                return m.start()
    return -1


def _last_boxed(s: str):
    """None when s holds no \\boxed{ or \\fbox{; else the trimmed content of
    the last one ("" when its brace is unmatched)."""
    k, n = s.rfind("\\boxed{"), 7
    f = s.rfind("\\fbox{")
    if f > k:
        k, n = f, 6
    if k < 0:
        return None
    open_ = k + n - 1
    end = _match_brace(s, open_)
    if end < 0:
        return ""
    return s[open_ + 1:end].strip(_SPACE)


def _clean_labelled(s: str) -> str:
    s = s.lstrip(_LEAD).rstrip(_TRAIL)
    if s.endswith("."):
        s = s[:-1].rstrip(_TRAIL)
    return s


def _last_label_line(s: str, final: bool):
    lines = s.split("\n")
    for line in reversed(lines):
        if final:
            k = line.translate(_LOWER).rfind("final answer is")
            if k >= 0:
                return _clean_labelled(line[k + len("final answer is"):])
        t = line.lstrip(_LINE_LEAD)
        head = t[:13].translate(_LOWER)
        if not final and head.startswith("my answer:"):
            return _clean_labelled(t[len("my answer:"):])
        if final and head.startswith("answer:"):
            return _clean_labelled(t[len("answer:"):])
        if final and head.startswith("final answer:"):
            return _clean_labelled(t[len("final answer:"):])
    return None


def extract_answer(response: str, tag: str):
    """The final answer of a response, or None (rewards.ExtractAnswer)."""
    if tag:
        j = response.rfind("</" + tag + ">")
        if j < 0:
            return None
        i = response.rfind("<" + tag + ">", 0, j)
        if i < 0:
            return None
        body = response[i + len(tag) + 2:j]
        box = _last_boxed(body)
        answer = box if box is not None else body.strip(_SPACE)
        return answer or None
    box = _last_boxed(response)
    if box is not None:
        return box or None
    for final in (False, True):
        answer = _last_label_line(response, final)
        if answer is not None:
            return answer or None
    return None


# ---------------------------------------------------------------- equality

_WRAPPERS = ("\\text{", "\\textbf{", "\\textit{", "\\textrm{", "\\mathrm{", "\\mathbf{", "\\mbox{", "\\boxed{", "\\fbox{")
_UNWRAP_STOP = re.compile(r"[\\}]")
_LEFT_RIGHT = re.compile(r"\\(?:left|right)(?![A-Za-z])")
_TOKENS = re.compile(
    r"\\dfrac|\\tfrac|\\displaystyle|\\[!,;:$%]|[$~]|\^\{\\circ\}|\^\\circ|\u00b0|\{,\}|\u2212"
)
_TOKEN_REPLACEMENT = {"\\dfrac": "\\frac", "\\tfrac": "\\frac", "\\%": "%", "{,}": ",", "\u2212": "-"}
_PLAIN = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_GROUPED = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?")


def _strip_outer(s: str) -> str:
    while True:
        s = s.strip(_SPACE)
        n = len(s)
        if n > 0 and s[-1] == ".":
            s = s[:-1]
        elif n >= 4 and s.startswith("$$") and s.endswith("$$"):
            s = s[2:-2]
        elif n >= 2 and s[0] == "$" and s[-1] == "$":
            s = s[1:-1]
        elif n >= 4 and (s.startswith("\\(") and s.endswith("\\)") or s.startswith("\\[") and s.endswith("\\]")):
            s = s[2:-2]
        elif s.startswith("\\boxed{") and _match_brace(s, 6) == n - 1:
            s = s[7:-1]
        elif s.startswith("\\fbox{") and _match_brace(s, 5) == n - 1:
            s = s[6:-1]
        else:
            return s


def _unwrap_commands(s: str) -> str:
    if "\\" not in s or not any(w in s for w in _WRAPPERS):
        return s
    match, stack = {}, []
    for m in _BRACE_TOKEN.finditer(s):
        t = m.group()
        if t == "{":
            stack.append(m.start())
        elif t == "}" and stack:
            match[stack.pop()] = m.start()
    out, dropped, i, n = [], set(), 0, len(s)
    while i < n:
        m = _UNWRAP_STOP.search(s, i)
        if m is None:
            out.append(s[i:])
            break
        k = m.start()
        out.append(s[i:k])
        if s[k] == "}":
            if k not in dropped:
                out.append("}")
            i = k + 1
            continue
        wrapper = next((w for w in _WRAPPERS if s.startswith(w, k)), None)
        j = k + len(wrapper) - 1 if wrapper else -1
        if j in match:
            dropped.add(match[j])
            i = j + 1
        else:
            out.append(s[k:k + 2])
            i = k + 2
    return "".join(out)


def _normalize(s: str) -> str:
    s = _strip_outer(s)
    s = _unwrap_commands(s)
    if "\\left" in s or "\\right" in s:
        s = _LEFT_RIGHT.sub("", s)
    s = _TOKENS.sub(lambda m: _TOKEN_REPLACEMENT.get(m.group(), ""), s)
    s = _strip_outer(s)
    s = s.translate(_NO_SPACE)
    if len(s) > 2 and s[0] in _LETTERS and s[1] == "=":
        s = s[2:]
    if len(s) == 3 and s[0] == "(" and s[2] == ")" and s[1] in _LETTERS:
        s = s[1]
    return s


def _plain(s: str):
    if "," in s:
        return float(s.replace(",", "")) if _GROUPED.fullmatch(s) else None
    return float(s) if _PLAIN.fullmatch(s) else None


def _signed(s: str):
    neg = s[:1] == "-"
    if s[:1] in ("-", "+"):
        s = s[1:]
    v = _plain(s)
    return -v if neg and v is not None else v


def _ratio(num: str, den: str):
    a, b = _signed(num), _signed(den)
    if a is None or b is None or b == 0:
        return None
    return a / b


def _frac_arg(s: str, i: int):
    if i >= len(s) or s[i] == "\\":
        return None
    if s[i] == "{":
        end = _match_brace(s, i)
        return None if end < 0 else (s[i + 1:end], end + 1)
    return s[i], i + 1


def _parse_number(s: str):
    """(value, is_percent) of a normalised answer, or None."""
    pct = s.endswith("%")
    if pct:
        s = s[:-1]
    neg = s[:1] == "-"
    if s[:1] in ("-", "+"):
        s = s[1:]
    if s.startswith("\\frac"):
        num = _frac_arg(s, 5)
        den = num and _frac_arg(s, num[1])
        if not den or den[1] != len(s):
            return None
        v = _ratio(num[0], den[0])
    elif s.count("/") == 1:
        v = _ratio(*s.split("/"))
    else:
        v = _plain(s)
    if v is None or math.isinf(v) or math.isnan(v):
        return None
    return (-v if neg else v), pct


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-12 * max(1.0, abs(a), abs(b))


def equal_answers(pred: str, ref: str) -> bool:
    """Whether a predicted answer equals the reference (rewards.EqualAnswers)."""
    a, b = _normalize(pred), _normalize(ref)
    if not a or not b:
        return False
    x, y = _parse_number(a), _parse_number(b)
    if x is not None and y is not None:
        (xv, xp), (yv, yp) = x, y
        if xp == yp:
            return _close(xv, yv)
        if xp:
            return _close(yv, xv) or _close(yv, xv / 100)
        return _close(xv, yv) or _close(xv, yv / 100)
    return a.translate(_LOWER) == b.translate(_LOWER)


# ---------------------------------------------------------------- reward


def utilization(cfg: TimelyConfig, ratio: float) -> float:
    x = min(max(ratio, 0.0), 1.0)
    if cfg.utilization == "linear":
        return x
    if cfg.utilization == "step":
        n = len(cfg.step_table)
        return cfg.step_table[min(int(x * n), n - 1)] if n else 0.0
    return math.sin(math.pi / 2 * x)


def timely_reward(cfg: TimelyConfig, t: float, t_max: float, r: float) -> float:
    if t_max > 0 and t > t_max:
        return 0.0
    if r <= 0:
        return cfg.format_reward
    u = utilization(cfg, t / t_max) if t_max > 0 else 0.0
    return cfg.format_reward + r + cfg.lambda_ * u


def _number_field(extra_info: dict, key: str):
    v = extra_info.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ItemError(f"extra_info.{key}: not a number")
    try:
        return float(v)
    except OverflowError:
        raise ItemError(f"extra_info.{key}: out of range") from None


def _measure(extra_info: dict):
    """(t, timed, limit) as in Scorer.measure, without timer tokens."""
    limit = _number_field(extra_info, "time_limit_s")
    if limit is not None and (not math.isfinite(limit) or limit <= 0):
        raise ItemError(f"extra_info.time_limit_s: {limit} is not a positive number of seconds")
    limit = limit or 0.0
    if extra_info.get("timer"):
        raise ItemError("extra_info.timer: the item names a timer, but this scorer has no timer store")
    t = _number_field(extra_info, "elapsed_s")
    if t is None:
        return 0.0, False, limit
    if not math.isfinite(t) or t < 0:
        raise ItemError(f"extra_info.elapsed_s: {t} is not a non-negative number of seconds")
    return t, True, limit


def _ground_truth_text(ground_truth) -> str:
    if ground_truth is None:
        raise ItemError("ground_truth: missing: this data source needs the reference answer")
    if isinstance(ground_truth, str):
        return ground_truth
    if isinstance(ground_truth, (int, float)) and not isinstance(ground_truth, bool):
        try:
            finite = math.isfinite(float(ground_truth))
        except OverflowError:
            finite = False
        if not finite:
            raise ItemError("ground_truth: not a valid number")
        return str(ground_truth)
    raise ItemError("ground_truth: want a string or a number")


def _score_general(cfg: TimelyConfig, solution_str: str, ground_truth, extra_info: dict) -> dict:
    ref = _ground_truth_text(ground_truth)
    answer = extract_answer(solution_str, cfg.answer_tag)
    format_ok = answer is not None
    correct = format_ok and equal_answers(answer, ref)
    r = cfg.correct_reward if correct else 0.0
    t, timed, limit = _measure(extra_info)
    if not timed:
        limit = 0.0
    ratio = util = 0.0
    on_time = True
    if timed and limit > 0:
        ratio = t / limit
        util = utilization(cfg, ratio)
        on_time = t <= limit
    score = timely_reward(cfg, t, limit, r) if format_ok else 0.0
    return {
        "score": score,
        "acc": 1.0 if correct else 0.0,
        "task_reward": r,
        "format_ok": 1.0 if format_ok else 0.0,
        "on_time": 1.0 if on_time else 0.0,
        "elapsed_s": t,
        "time_limit_s": limit,
        "time_ratio": ratio,
        "utilization": util,
        "reported_s": 0.0,
    }


def _fallback(cfg: TimelyConfig) -> dict:
    out = {"score": cfg.fallback_score}
    out.update(dict.fromkeys(DETAIL_KEYS, 0.0))
    return out


def score_item(data_source, solution_str, ground_truth, extra_info, cfg: TimelyConfig = DEFAULT_CONFIG):
    """(result, error): the result has "score" and every detail key; on a
    failed item it is the fallback with zero details and error says why."""
    try:
        if data_source != DATA_SOURCE:
            raise ItemError(f"data_source: unknown data_source {data_source!r}")
        if solution_str is None:
            solution_str = ""
        if not isinstance(solution_str, str):
            raise ItemError("solution_str: not a string")
        if extra_info is None:
            extra_info = {}
        if not isinstance(extra_info, dict):
            raise ItemError("extra_info: not an object")
        return _score_general(cfg, solution_str, ground_truth, extra_info), None
    except ItemError as e:
        return _fallback(cfg), str(e)


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs) -> dict:
    """VeRL's custom reward entry point. Always returns the same keys, as the
    Go scorer does; an item that cannot be scored gets the fallback score."""
    return score_item(data_source, solution_str, ground_truth, extra_info)[0]


# ---------------------------------------------------------------- script


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--input", required=True, help="JSONL items")
    ap.add_argument("--out", help="write results here (default: discard)")
    args = ap.parse_args(argv)

    with open(args.input, encoding="utf-8") as f:
        items = [json.loads(line) for line in f]
    start = time.perf_counter()
    results = []
    failed = 0
    for it in items:
        res, err = score_item(it.get("data_source") or DATA_SOURCE, it.get("solution_str"),
                              it.get("ground_truth"), it.get("extra_info"))
        if err is not None:
            res = dict(res, error=err)
            failed += 1
        results.append(res)
    seconds = time.perf_counter() - start
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            for res in results:
                f.write(json.dumps(res) + "\n")
    print(json.dumps({"items": len(items), "failed": failed, "seconds": seconds,
                      "items_per_s": len(items) / seconds if seconds > 0 else None}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
