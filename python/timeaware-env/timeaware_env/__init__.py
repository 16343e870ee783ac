"""The verifiers environment ``timeaware-env``: timeaware's synth rows scored
by the verifier service (see `timeaware.verifiers`)."""

from timeaware.verifiers import TimeawareEnv, TimeawareHarness, TimeawareTaskset, load_environment

__all__ = ["TimeawareEnv", "TimeawareHarness", "TimeawareTaskset", "load_environment"]
