"""timeaware: Python side of the timeaware verifier service.

* `timeaware.client.Client`: a standard-library HTTP client for the service.
* `timeaware.verl`: VeRL reward functions (``compute_score`` and its sync and
  batch variants) that micro-batch calls into ``POST /v1/score/batch``.
* `timeaware.tools.GetDurationTool`: the ``get_duration`` timer tool with
  VeRL's tool interface.
* `timeaware.token_counts`: the token counts of a response (its length,
  and with a tokenizer its thinking and answer at the closing think tag)
  that the service's ``length/*`` rewards read from ``extra_info``.
* `timeaware.ray`: a timeaware command as Ray tasks, one shard each, with
  one merged manifest (``python -m timeaware.ray``; extra ``timeaware[ray]``).

Importing the package imports neither VeRL, Ray nor the tool module.
"""

from timeaware.client import Client, InvalidAnswer, ServerUnavailable, TimeawareError
from timeaware.tokens import token_counts

__all__ = ["Client", "InvalidAnswer", "ServerUnavailable", "TimeawareError", "__version__", "token_counts"]
__version__ = "0.1.0"
