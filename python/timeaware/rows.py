"""What a row's ``extra_info`` says about its rollout's timer.

Kept apart from `timeaware.tools`, which imports VeRL when it can, so that
the environments that only read a row (the OpenEnv front among them) do
not import VeRL and torch with it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["TIMER_OPTIONS", "mapping", "timer_options"]

#: The timer options a row may set: ``POST /v1/timers`` takes them.
TIMER_OPTIONS = ("speed_factor", "jitter", "ttl_s", "time_limit_s")


def mapping(value: Any) -> Mapping[str, Any]:
    """A mapping, or a JSON object's text, as a mapping; anything else
    empty. Text that is not JSON raises ValueError."""
    if isinstance(value, str) and value:
        value = json.loads(value)
    return value if isinstance(value, Mapping) else {}


def timer_options(extra_info: Any, tool_name: str = "get_duration") -> dict[str, Any]:
    """The timer options of a ``synth budget`` row, from its ``extra_info``
    (a mapping or its JSON text): ``extra_info.timer`` and
    ``extra_info.time_limit_s``, overridden by
    ``extra_info.tools_kwargs[tool_name].create_kwargs``. Missing (None)
    values are left out, so one source does not erase another. The TRL,
    OpenEnv and verifiers environments start a rollout's timer with these,
    as VeRL does from ``create_kwargs``."""
    ei = mapping(extra_info)
    tool = mapping(mapping(ei.get("tools_kwargs")).get(tool_name))
    opts: dict[str, Any] = {}
    for src in (mapping(ei.get("timer")), {"time_limit_s": ei.get("time_limit_s")}, mapping(tool.get("create_kwargs"))):
        opts.update({k: v for k, v in src.items() if k in TIMER_OPTIONS and v is not None})
    return opts
