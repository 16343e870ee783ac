"""timeaware: Python side of the timeaware verifier service.

* `timeaware.client.Client`: a standard-library HTTP client for the service.
* `timeaware.verl`: VeRL reward functions (``compute_score`` and its sync and
  batch variants) that micro-batch calls into ``POST /v1/score/batch``.
* `timeaware.tools.GetDurationTool`: the ``get_duration`` timer tool with
  VeRL's tool interface.

Importing the package imports neither VeRL nor the tool module.
"""

from timeaware.client import Client, ServerUnavailable, TimeawareError

__all__ = ["Client", "ServerUnavailable", "TimeawareError", "__version__"]
__version__ = "0.1.0"
