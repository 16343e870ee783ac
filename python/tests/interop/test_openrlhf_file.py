"""``python -m timeaware.openrlhf``: the reward file OpenRLHF loads from
``--reward.remote_url``, holding the settings its Ray actors cannot read
from the driver's environment. (The trainers tier runs the file through
OpenRLHF's own executor.)"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from timeaware import scoring


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "timeaware.openrlhf", *args], capture_output=True, text=True,
                          check=False)


def test_the_written_file_configures_its_settings_when_loaded(tmp_path):
    path = tmp_path / "reward.py"
    res = run("--write", str(path), "--url", "http://10.0.0.7:8080/", "--set", "max_consecutive_fallbacks=32",
              "--set", "on_unreachable=fallback")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "" and res.stderr == ""
    assert list(tmp_path.iterdir()) == [path], "no temporary file left"
    # Loaded as OpenRLHF loads it: from its path, under another name.
    spec = importlib.util.spec_from_file_location("reward_func", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        import timeaware.openrlhf

        assert module.reward_func is timeaware.openrlhf.reward_func
        s = scoring.settings()
        assert (s.url, s.max_consecutive_fallbacks, s.on_unreachable) == ("http://10.0.0.7:8080", 32, "fallback")
    finally:
        scoring.configure(reset=True)


@pytest.mark.parametrize("args, message", [
    (["--set", "bogus=1"], "unknown setting 'bogus'"),
    (["--set", "retries=x"], "retries must be a number, got 'x'"),
    (["--set", "retries"], "--set retries: want NAME=VALUE"),
    (["--url", "ftp://x"], "url 'ftp://x' is not an http(s) URL"),
    (["--set", "token=s3cret"], "token: set TIMEAWARE_SERVE_TOKEN in the cluster's environment"),
    (["--set", "max_consecutive_fallbacks=0"], "max_consecutive_fallbacks must be an integer >= 1"),
])
def test_a_bad_setting_is_named_and_nothing_is_written(tmp_path, args, message):
    path = tmp_path / "reward.py"
    res = run("--write", str(path), *args)
    assert res.returncode == 2 and message in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_file_openrlhf_would_not_load_is_refused(tmp_path):
    res = run("--write", str(tmp_path / "reward.txt"), "--url", "http://127.0.0.1:8080")
    assert res.returncode == 2
    assert "--write " + str(tmp_path / "reward.txt") + ": OpenRLHF loads a reward file only when its name ends in .py" \
        in res.stderr
    assert list(tmp_path.iterdir()) == []
