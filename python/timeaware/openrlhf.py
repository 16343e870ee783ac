"""An OpenRLHF reward function backed by the timeaware verifier service.

OpenRLHF loads a reward function from a Python file named in its remote
reward setting (``--reward.remote_url /path/to/file.py``, a path ending in
``.py``) and calls ``reward_func(queries, prompts, labels)`` in a thread for
each rollout. Point it at this file::

    --reward.remote_url "$(python -c 'import timeaware.openrlhf as m; print(m.__file__)')"

Compared with posting to the service's ``/v1/openrlhf`` route, the rollouts
go through the same micro-batcher as the VeRL and TRL adapters
(`timeaware.scoring`), so a verifier that stops answering is counted in the
same place and stops the run at the same limit:

* Each label is the row's item as JSON text, ``{"data_source",
  "ground_truth", "extra_info"}`` (what ``--openrlhf-label`` writes), or a
  bare ground truth scored by the reward named in
  ``TIMEAWARE_OPENRLHF_DATA_SOURCE``. The response is the query with its
  prompt removed; the service strips the end-of-turn text OpenRLHF keeps.
* A rollout the verifier did not answer gets ``fallback_score`` (OpenRLHF
  has no way to leave a rollout out) and counts in the run of fallbacks.
  Past ``max_consecutive_fallbacks`` in a row, or when the verifier does not
  answer at first use, the call raises `RunStopped`, naming the URL.
  OpenRLHF logs and drops any ``Exception`` a reward function raises (the
  rollout then has no reward and the run fails later for another reason),
  so `RunStopped` derives from ``BaseException``: it leaves OpenRLHF's
  executor and reaches the driver through Ray as the run's error. With
  ``on_unreachable="fallback"`` (``TIMEAWARE_ON_UNREACHABLE``) the run goes
  on and the runs are logged at ERROR.
* ``extra_logs``, which OpenRLHF averages into its logged metrics, hold the
  detail keys of the rollout's data source (every rollout of a data source
  the same keys: OpenRLHF needs every rollout of a batch to log the same
  keys, so a batch that mixes data sources with different keys fails
  there, as it does with the route), ``failed`` (1 for a rollout with no score of its
  own: rejected, or unanswered), ``timeaware/rejected`` (the verifier refused
  the item, e.g. a label with no reward) and ``timeaware/unanswered`` (the
  verifier did not answer).

Settings are read from the environment as for the other adapters
(``TIMEAWARE_URL``, ``TIMEAWARE_SERVE_TOKEN``, ...; see
`timeaware.scoring.Settings`). OpenRLHF calls the function in its Ray
actors, which see the environment of the Ray cluster, not the driver's; a
reward file written by ``python -m timeaware.openrlhf --write FILE --url
URL`` (`write_reward_file`) holds the settings itself. This module uses absolute imports only:
OpenRLHF loads it from its file path under another module name, and
`RunStopped` is `timeaware.scoring.RunStopped`, the same class however the
file was loaded.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from timeaware import scoring
from timeaware.rows import mapping
from timeaware.scoring import RunStopped

__all__ = ["RunStopped", "main", "reward_func", "write_reward_file"]

logger = logging.getLogger("timeaware")

#: The environment variable naming the reward of labels that are a bare
#: ground truth.
DATA_SOURCE_ENV = "TIMEAWARE_OPENRLHF_DATA_SOURCE"


def _item(query: str, prompt: str | None, label: Any) -> tuple[str, dict[str, Any] | str]:
    """The data source of one rollout ("" when it names none) and its
    payload, or why it has none."""
    try:
        fields = mapping(label) if isinstance(label, str) and label.strip().startswith("{") else label
    except ValueError:  # not JSON: a bare ground truth that looks like an object
        fields = label
    if isinstance(fields, Mapping) and "ground_truth" in fields:
        source = fields.get("data_source") or os.environ.get(DATA_SOURCE_ENV, "")
        source = source if isinstance(source, str) else ""
        truth = fields.get("ground_truth")
        try:
            extra = dict(mapping(fields.get("extra_info")))
        except ValueError as exc:
            return source, f"the label's extra_info is not a JSON object: {exc}"
    else:
        source, truth, extra = os.environ.get(DATA_SOURCE_ENV, ""), label, {}
    if not source:
        return "", (f"the label names no data_source and {DATA_SOURCE_ENV} is not set; write the rows with "
                    "--openrlhf-label, or set it to the reward of the bare ground truths")
    response = query[len(prompt):] if isinstance(prompt, str) and query.startswith(prompt) else query
    try:
        return source, scoring.prepare_item(source, response, truth, extra, scoring.settings())
    except Exception as exc:  # noqa: BLE001 - an odd row fails alone
        return source, f"cannot be sent: {exc!r}"


def reward_func(queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any]) -> dict[str, Any]:
    """Score OpenRLHF rollouts: ``{"rewards", "scores", "extra_logs"}``, one
    entry per query (see the module docstring). Raises `RunStopped` when the
    run must stop."""
    n = len(queries)
    if len(labels) != n or (prompts is not None and len(prompts) != n):
        raise ValueError(f"timeaware: {n} queries, {len(prompts or [])} prompts and {len(labels)} labels")
    s = scoring.settings()
    try:
        batcher = scoring.get_batcher(s)
    except (scoring.VerifierUnreachable, scoring.RolloutLogError) as exc:
        raise RunStopped(exc) from exc
    items = [_item(q, prompts[i] if prompts is not None else None, labels[i]) for i, q in enumerate(queries)]
    futures = batcher.submit_many([(src, it) for src, it in items if not isinstance(it, str)])
    rewards: list[float] = []
    logs: dict[str, list[float]] = {"failed": [], "timeaware/rejected": [], "timeaware/unanswered": []}
    results: list[tuple[int, dict[str, float]]] = []
    stop: scoring.VerifierUnreachable | None = None
    k = 0
    for i, (source, it) in enumerate(items):
        if isinstance(it, str):
            logger.warning("timeaware: OpenRLHF rollout not scored: %s", it)
            res: dict[str, float] = scoring.Unscored({"score": float(s.fallback_score)}, it, "rejected")
        else:
            try:
                res = futures[k].result(timeout=s.deadline_s)
            except scoring.VerifierUnreachable as exc:
                stop = stop or exc
                res = scoring.fallback_result(source, s, reason="no answer from the verifier")
            except Exception as exc:  # noqa: BLE001 - the deadline guard
                logger.warning("timeaware: no result for a %s rollout (%r); using the fallback", source, exc)
                res = scoring.fallback_result(source, s, reason="no answer in time")
            k += 1
        cause = res.cause if isinstance(res, scoring.Unscored) else ""
        unanswered = 1.0 if cause == "verifier_unreachable" else 0.0
        rejected = 1.0 if cause in ("rejected", "internal") else 0.0
        rewards.append(float(res["score"]))
        logs["failed"].append(max(rejected, unanswered))
        logs["timeaware/rejected"].append(rejected)
        logs["timeaware/unanswered"].append(unanswered)
        results.append((i, res))
    if stop is not None:
        raise RunStopped(stop) from stop
    for i, res in results:
        source = items[i][0]
        # Every rollout of a data source logs the same keys, scored or not:
        # OpenRLHF splits a batch's metrics back per rollout, and a key some
        # rollouts lack makes that fail.
        keys = scoring.reward_keys(source)[1:] if source else []
        for key in keys:
            logs.setdefault(key, [0.0] * n)[i] = float(res.get(key, 0.0))
    return {"rewards": rewards, "scores": list(rewards), "extra_logs": logs}


def write_reward_file(path: str | os.PathLike[str], settings: Mapping[str, Any]) -> None:
    """Write a reward file for ``--reward.remote_url`` that imports
    `reward_func` and configures these settings (names of
    `timeaware.scoring.Settings`; the token is left to the environment,
    never written) when OpenRLHF loads it. Checked first: an unknown name or
    a bad value raises ValueError naming it and writes nothing. Written
    whole or not at all."""
    if "token" in settings:
        raise ValueError("token: set TIMEAWARE_SERVE_TOKEN in the cluster's environment; a file would leak it")
    names = {f.name for f in dataclasses.fields(scoring.Settings)}
    unknown = sorted(set(settings) - names)
    if unknown:
        raise ValueError(f"unknown setting(s) {', '.join(unknown)} (known: {', '.join(sorted(names - {'token'}))})")
    checked = dataclasses.replace(scoring.Settings(), **settings).validated()
    pinned = {k: getattr(checked, k) for k in settings}
    text = (
        "# OpenRLHF's reward function: timeaware's, with these settings. Written by\n"
        "# python -m timeaware.openrlhf; name this file in --reward.remote_url.\n"
        "from timeaware import scoring\n"
        "from timeaware.openrlhf import reward_func  # noqa: F401 - the function OpenRLHF calls\n"
        f"scoring.configure(**{pinned!r})\n"
    )
    target = os.fspath(path)
    fd, tmp = tempfile.mkstemp(prefix=".reward-", suffix=".py", dir=os.path.dirname(os.path.abspath(target)))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m timeaware.openrlhf --write FILE [--url URL] [--set NAME=VALUE ...]``."""
    p = argparse.ArgumentParser(prog="python -m timeaware.openrlhf",
                                description="Write a reward file for OpenRLHF's --reward.remote_url.")
    p.add_argument("--write", required=True, metavar="FILE", help="the reward file to write (ends in .py)")
    p.add_argument("--url", help="the verifier's URL (default: TIMEAWARE_URL where the actors run)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="another setting of timeaware.scoring.Settings, e.g. max_consecutive_fallbacks=32")
    args = p.parse_args(argv)
    if not args.write.endswith(".py"):
        p.error(f"--write {args.write}: OpenRLHF loads a reward file only when its name ends in .py")
    values: dict[str, Any] = {}
    if args.url:
        values["url"] = args.url
    for pair in args.set:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            p.error(f"--set {pair}: want NAME=VALUE")
        values[name] = value
    try:
        values = {k: scoring.coerce_setting(k, v) for k, v in values.items()}
    except ValueError as exc:
        p.error(str(exc))
    try:
        write_reward_file(args.write, values)
    except (ValueError, OSError) as exc:
        print(f"python -m timeaware.openrlhf: --write {args.write}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
