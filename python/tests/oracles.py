"""Expected rewards, computed the way the papers define them, from a row and
what the verifier's own state says (a timer's reading), never with the
reward code under test. The trainers and verifiers tiers share them."""

from __future__ import annotations

import json
import math
import urllib.parse
import urllib.request


def read_timer(url: str, token: str) -> dict:
    """GET /v1/timers/{token}, straight from the server."""
    with urllib.request.urlopen(url + "/v1/timers/" + urllib.parse.quote(token, safe=""), timeout=5) as r:
        return json.loads(r.read())


def timely_general(right: bool, t: float, limit: float) -> float:
    """Timely-RL for a well-formed answer: 0 if late; 0.1 if on time and
    wrong; 0.1 + 0.5 + 0.4·sin(π/2·t/T) if on time and right."""
    if t > limit:
        return 0.0
    return 0.1 + 0.5 + 0.4 * math.sin(math.pi / 2 * t / limit) if right else 0.1


def normalised(g: dict, points: float) -> float:
    """The role's points over its agreements: (points − worst) / (best − worst), clamped to [0, 1]."""
    role = g["role"]
    best = sum(max(i["points"][role]) for i in g["scenario"]["issues"])
    worst = sum(min(i["points"][role]) for i in g["scenario"]["issues"])
    return min(max((points - worst) / (best - worst), 0.0), 1.0)


def batna_payoff(g: dict) -> float:
    """The role's score for walking away: its BATNA on the same scale."""
    return normalised(g, next(r["batna"] for r in g["scenario"]["roles"] if r["id"] == g["role"]))


def opening_payoff(g: dict) -> float:
    """The role's score for a deal on the other side's opening offer, option by option from the table."""
    offer = g["opening"]["action"]["offer"]
    points = 0
    for issue in g["scenario"]["issues"]:
        points += issue["points"][g["role"]][issue["options"].index(offer[issue["id"]])]
    return normalised(g, points)


# The token-budget rewards with their papers' default parameters.
LCPO_ALPHA = 0.0003
LCPO_DELTA = 0.5


def lcpo_exact(correct: float, n_y: int, n_gold: int, alpha: float = LCPO_ALPHA) -> float:
    """L1's LCPO-Exact (Eq. 1): r = c − α·|n_gold − n_y|."""
    return correct - alpha * abs(n_gold - n_y)


def lcpo_max(correct: float, n_y: int, n_gold: int, alpha: float = LCPO_ALPHA, delta: float = LCPO_DELTA) -> float:
    """L1's LCPO-Max (Eq. 2): r = c · clip(α·(n_gold − n_y) + δ, 0, 1)."""
    return correct * min(max(alpha * (n_gold - n_y) + delta, 0.0), 1.0)


def elastic(correct: float, think: int, answer: int, think_budget: int, answer_budget: int) -> float:
    """Elastic Reasoning: the answer's correctness when the thinking and the
    answer are each within their budgets, else 0."""
    return correct if think <= think_budget and answer <= answer_budget else 0.0


def kimi(right: list[bool], lengths: list[int]) -> list[float]:
    """Kimi k1.5's length reward (§2.3.3) added to correctness, weight 1:
    λ = 0.5 − (len − min)/(max − min) over the group, 0 when all lengths
    are equal; a right response gets λ, a wrong one min(0, λ)."""
    lo, hi = min(lengths), max(lengths)
    out = []
    for ok, n in zip(right, lengths):
        lam = 0.5 - (n - lo) / (hi - lo) if hi > lo else 0.0
        out.append((1.0 if ok else 0.0) + (lam if ok else min(0.0, lam)))
    return out


def shorterbetter(right: list[bool], lengths: list[int], alpha: float = 2.0, beta: float = 0.001) -> list[float]:
    """ShorterBetter: α·c − β·|len − SOL|, SOL the shortest right response
    of the group, or the group's mean length when none is right."""
    good = [n for ok, n in zip(right, lengths) if ok]
    sol = min(good) if good else sum(lengths) / len(lengths)
    return [(alpha if ok else 0.0) - beta * abs(n - sol) for ok, n in zip(right, lengths)]
