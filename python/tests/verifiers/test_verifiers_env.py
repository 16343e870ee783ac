"""verifiers 0.4's ``vf-eval`` on the ``timeaware-env`` environment, against
the real ``timeaware serve`` and a scripted model.

The scripted model answers each row's prompt with a reply the test chose
(right, wrong, get_duration calls, negotiation messages), and every reward
verifiers reports is compared with one computed here from the row (the
puzzle's dates, TRAVELER's answer, the Timely-RL formula on the timer the
server kept, the negotiation role's table), never with the reward code
under test.
"""

from __future__ import annotations

import json
import os
import re

import pytest
from conftest import read_rows, reward_of, right_answer, write_rows
from localstack import Server
from oracles import batna_payoff, opening_payoff, read_timer, timely_general
from scripted import text, tool_call
from timeaware import verifiers as tv
from timeaware.scoring import VerifierUnreachable

WRONG_DATE = "1901-01-01"
SECONDS = re.compile(r"^\d+(\.\d+)? seconds\.$")
ACCEPT = {"text": "That works for me, I accept.", "action": {"action": "accept"}}
WALK_AWAY = {"text": "I will take my outside option.", "action": {"action": "batna"}}
TALK = {"text": "Tell me more about the start date."}


def prompt_key(messages: list[dict], n: int) -> str:
    return json.dumps([[m["role"], m.get("content")] for m in messages[:n]])


class Rows:
    """The rows of a test, and which row a model request is for (by its prompt)."""

    def __init__(self, rows: list[dict]) -> None:
        self.rows = rows
        self.index = {prompt_key(r["prompt"], len(r["prompt"])): i for i, r in enumerate(rows)}
        assert len(self.index) == len(rows), "rows with the same prompt"

    def of(self, request: dict) -> int:
        for n in {len(r["prompt"]) for r in self.rows}:
            i = self.index.get(prompt_key(request["messages"], n))
            if i is not None:
                return i
        raise AssertionError("a request for no row")


def distinct(rows: list[dict]) -> list[dict]:
    """The rows whose prompts no earlier row has (the scripted model tells rows apart by prompt)."""
    seen, out = set(), []
    for r in rows:
        key = prompt_key(r["prompt"], len(r["prompt"]))
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def single_turn_rows(name: str, synth_outputs) -> list[dict]:
    rows = distinct(read_rows(synth_outputs[name]))
    if name == "traveler":  # crisp questions only: the right answer is the ground truth's
        rows = [r for r in rows if "answer" in json.loads(r["reward_model"]["ground_truth"])]
    assert len(rows) >= 4, name
    return rows


def single_turn_reply(row: dict, right: bool) -> str:
    ds, gt = row["data_source"], row["reward_model"]["ground_truth"]
    if right:
        return right_answer(ds, gt, row["extra_info"])
    if ds == "timepuzzles":
        assert WRONG_DATE not in gt
        return f"Checked.\nMY ANSWER: {WRONG_DATE}"
    return "I cannot tell from these events."  # TRAVELER: no ANSWER line


@pytest.mark.parametrize("name", ["puzzles", "traveler"])
def test_single_turn_rewards_equal_the_rows(name, synth_outputs, server, vf_eval, fresh, tmp_path):
    rows = Rows(single_turn_rows(name, synth_outputs))
    data = write_rows(tmp_path / f"{name}.jsonl", rows.rows)

    def reply(request):
        assert "tools" not in request
        i = rows.of(request)
        return text(single_turn_reply(rows.rows[i], right=i % 2 == 0))

    traces = vf_eval(data, reply, verifier_url=server.url)
    for i, (row, trace) in enumerate(zip(rows.rows, traces)):
        # One model call, on the row's prompt as written.
        assert len(trace["requests"]) == 1, i
        assert trace["requests"][0]["messages"] == row["prompt"]
        # Time Puzzles: exact match of the dates; TRAVELER: the right answer.
        assert reward_of(trace) == (1.0 if i % 2 == 0 else 0.0), (i, trace["rewards"], trace["metrics"])
        assert trace["errors"] == [], trace["errors"]
    assert tv.stats() == {"rollouts": len(rows.rows), "scored": len(rows.rows), "unscored": 0, "unreachable": 0,
                          "fallbacks": 0, "tool_calls": 0, "tool_errors": 0}


def test_timely_tool_calls_read_the_rollouts_timer_and_the_reward_reads_it(
    synth_outputs, server, vf_eval, fresh, tmp_path
):
    rows = Rows(distinct(read_rows(synth_outputs["budget"]))[:4])
    data = write_rows(tmp_path / "budget.jsonl", rows.rows)
    broken = ["{not json", '{"unit": "minutes"}']

    def reply(request):
        assert [t["function"]["name"] for t in request["tools"]] == ["get_duration"]
        i = rows.of(request)
        tool_turns = sum(m["role"] == "tool" for m in request["messages"])
        if tool_turns == 0:
            return tool_call("get_duration", "{}")
        if tool_turns == 1:  # broken arguments: refused, the timer is not read
            return tool_call("get_duration", broken[i % 2])
        if tool_turns == 2:
            return tool_call("get_duration", "")  # no arguments at all is a call with none
        gt = rows.rows[i]["reward_model"]["ground_truth"]
        return text(f"Working it out.\n<answer>{gt if i % 2 == 0 else '-1'}</answer>")

    traces = vf_eval(data, reply, verifier_url=server.url)
    for i, (row, trace) in enumerate(zip(rows.rows, traces)):
        assert trace["errors"] == [], trace["errors"]
        # The rollout's tool results, as the model read them in its last call.
        results = [m["content"] for m in trace["requests"][-1]["messages"] if m["role"] == "tool"]
        assert len(results) == 3, results
        assert SECONDS.match(results[0]), results
        assert results[1].startswith("Error: ") and broken[i % 2] in results[1], results
        assert SECONDS.match(results[2]), results
        # The timer the rollout ran on: the row's options, stopped at the end.
        timer = read_timer(server.url, trace["info"]["timeaware_timer"])
        opts = row["extra_info"]["tools_kwargs"]["get_duration"]["create_kwargs"]
        assert timer["stopped"] is True
        assert (timer["speed_factor"], timer["jitter"], timer["time_limit_s"]) == (
            opts["speed_factor"], opts["jitter"], opts["time_limit_s"])
        # A reading the model got is at most the final one, give or take the row's jitter.
        assert float(results[2].split()[0]) <= timer["elapsed_s"] * (1 + opts["jitter"]) + 0.01
        want = timely_general(i % 2 == 0, timer["elapsed_s"], opts["time_limit_s"])
        assert reward_of(trace) == pytest.approx(want, abs=1e-9), (i, trace["rewards"], trace["metrics"])
        assert trace["metrics"]["timeaware/elapsed_s"] == pytest.approx(timer["elapsed_s"], abs=1e-9)
    s = tv.stats()
    assert (s["tool_calls"], s["tool_errors"], s["scored"]) == (3 * len(rows.rows), len(rows.rows), len(rows.rows))


def test_negotiation_episodes_are_rewarded_the_payoff_of_the_rows_table(
    synth_outputs, server, vf_eval, fresh, tmp_path
):
    rows = Rows(distinct(read_rows(synth_outputs["negotiation"])))
    truths = [json.loads(r["reward_model"]["ground_truth"]) for r in rows.rows]
    opens_other = [g["first_speaker"] != g["role"] for g in truths]
    assert any(opens_other) and not all(opens_other), opens_other
    data = write_rows(tmp_path / "negotiation.jsonl", rows.rows)

    def reply(request):
        i = rows.of(request)
        turn = sum(m["role"] == "assistant" for m in request["messages"])
        if opens_other[i]:  # accept the other side's opening offer at once
            return text(json.dumps(ACCEPT))
        # Where the model opens: talk first (the episode goes on), then walk away.
        return text(json.dumps(TALK if turn == 0 else WALK_AWAY))

    traces = vf_eval(data, reply, verifier_url=server.url)
    for i, (g, trace) in enumerate(zip(truths, traces)):
        assert trace["errors"] == [], trace["errors"]
        # No model call after the episode ended.
        assert len(trace["requests"]) == (1 if opens_other[i] else 2), i
        if not opens_other[i]:
            second = trace["requests"][1]["messages"]
            assert second[-2] == {"role": "assistant", "content": json.dumps(TALK)}
            # The other side's answer, as the model reads it.
            assert second[-1]["role"] == "user" and second[-1]["content"], second[-1]
        want = opening_payoff(g) if opens_other[i] else batna_payoff(g)
        assert reward_of(trace) == pytest.approx(want, abs=1e-9), (i, trace["rewards"], trace["metrics"])
        assert trace["metrics"]["timeaware/deal"] == (1.0 if opens_other[i] else 0.0)


def test_an_episode_that_does_not_finish_gets_no_reward_and_is_counted(
    synth_outputs, server, vf_eval, fresh, tmp_path
):
    rows = distinct(read_rows(synth_outputs["negotiation"]))[:2]
    data = write_rows(tmp_path / "negotiation.jsonl", rows)
    traces = vf_eval(data, lambda request: text(json.dumps(TALK)), "--env.taskset.max-turns", "2",
                     verifier_url=server.url)
    for trace in traces:
        assert len(trace["requests"]) == 2
        assert reward_of(trace) is None, trace["rewards"]
        (error,) = trace["errors"]
        assert "did not finish" in json.dumps(error), error
    assert tv.stats()["unscored"] == len(rows)


def unknown_rows(synth_outputs) -> list[dict]:
    rows = distinct(read_rows(synth_outputs["puzzles"]))[:3]
    return [{**r, "data_source": "nosuch/source"} for r in rows]


def test_a_row_whose_data_source_has_no_reward_fails_clearly_and_is_counted(
    synth_outputs, server, vf_eval, fresh, tmp_path
):
    data = write_rows(tmp_path / "unknown.jsonl", unknown_rows(synth_outputs))
    traces = vf_eval(data, lambda request: text("MY ANSWER: 2000-01-01"), verifier_url=server.url)
    for trace in traces:
        # No reward at all, never a silent zero: the trace carries the error.
        assert reward_of(trace) is None, trace["rewards"]
        (error,) = trace["errors"]
        assert "no score for this 'nosuch/source' rollout" in json.dumps(error), error
    assert tv.stats()["unscored"] == len(traces)
    assert tv.stats()["scored"] == 0


def test_the_fallback_for_unscored_rows_is_the_fallback_score_counted(
    synth_outputs, timeaware_bin, vf_eval, fresh, tmp_path
):
    # A server whose fallback score is -1, which no reward gives.
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIMEAWARE_")}
    env["TIMEAWARE_REWARDS_FALLBACK_SCORE"] = "-1"
    server = Server(timeaware_bin, tmp_path / "serve.log", env)
    try:
        data = write_rows(tmp_path / "unknown.jsonl", unknown_rows(synth_outputs))
        traces = vf_eval(data, lambda request: text("MY ANSWER: 2000-01-01"), "--env.taskset.unscored", "fallback",
                         verifier_url=server.url)
    finally:
        server.stop()
    for trace in traces:
        assert reward_of(trace) == -1.0
        assert trace["metrics"]["timeaware/unscored"] == 1.0
        assert trace["errors"] == []
    s = tv.stats()
    assert (s["unscored"], s["fallbacks"], s["scored"]) == (len(traces), len(traces), 0)


def test_a_verifier_that_is_down_stops_the_load_naming_its_url(synth_outputs, vf_eval, fresh, tmp_path):
    down = "http://127.0.0.1:9"  # discard: nothing listens
    with pytest.raises(VerifierUnreachable, match=re.escape(down)):
        tv.load_environment("puzzles", data=synth_outputs["puzzles"], verifier_url=down)
    with pytest.raises(VerifierUnreachable, match=re.escape(down)):
        vf_eval(synth_outputs["puzzles"], lambda request: text("never asked"), verifier_url=down)


def test_load_environment_refuses_rows_of_another_family(synth_outputs, server, fresh):
    with pytest.raises(ValueError, match=r"row 0 of .* is 'timepuzzles', not a timely row"):
        tv.load_environment("timely", data=synth_outputs["puzzles"], verifier_url=server.url)
    with pytest.raises(ValueError, match="must be one of"):
        tv.load_environment("calendar", data=synth_outputs["puzzles"], verifier_url=server.url)
    env = tv.load_environment("puzzles", data=synth_outputs["puzzles"], verifier_url=server.url)
    assert isinstance(env, tv.TimeawareEnv)


def test_a_verifier_killed_mid_run_stops_it_at_the_limit_and_is_scored_again_once_back(
    synth_outputs, restartable, vf_eval, fresh, tmp_path
):
    """The verifier dies once the rollouts have started: each rollout it
    does not answer is an error of its trace, with the metric
    timeaware/verifier_unreachable, and counts in the adapters' run of
    fallbacks; the one past max_consecutive_fallbacks (3) raises RunStopped,
    which verifiers does not swallow, so vf-eval stops naming the URL.
    Restarted, it scores the next run's rollouts and the run of fallbacks ends."""
    from timeaware import scoring

    scoring.configure(max_consecutive_fallbacks=3)
    rows = Rows(single_turn_rows("puzzles", synth_outputs)[:4])
    data = write_rows(tmp_path / "puzzles.jsonl", rows.rows)
    stopped = []

    def reply(request):
        if not stopped:  # the first model call: the rollouts have started
            restartable.stop()
            stopped.append(True)
        return text(single_turn_reply(rows.rows[rows.of(request)], True))

    with pytest.raises(scoring.RunStopped, match=r"4 items in a row got no answer from the verifier at "
                       + re.escape(restartable.url)) as err:
        vf_eval(data, reply, verifier_url=restartable.url)
    assert err.value.url == restartable.url
    assert isinstance(err.value.__cause__, VerifierUnreachable)
    st = scoring.stats()
    assert (st["fallbacks"], st["consecutive_fallbacks"], st["fallback_alarms"]) == (4, 4, 1), st
    assert tv.stats()["unreachable"] == 3, "the three below the limit were scored as unanswered"

    restartable.start()
    traces = vf_eval(data, lambda request: text(single_turn_reply(rows.rows[rows.of(request)], True)),
                     verifier_url=restartable.url)
    assert [reward_of(t) for t in traces] == [1.0] * 4
    assert all(t["errors"] == [] and "timeaware/verifier_unreachable" not in t["metrics"] for t in traces)
    assert scoring.stats()["consecutive_fallbacks"] == 0


class TimersDown:
    """A proxy in front of a verifier that answers 503 to every timer it is
    asked to start, and forwards everything else: a verifier that lists its
    rewards and scores, but cannot start a rollout's timer."""

    def __init__(self, upstream: str) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        import threading
        import urllib.error
        import urllib.request

        class Handler(BaseHTTPRequestHandler):
            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.command == "POST" and self.path.rstrip("/") == "/v1/timers":
                    out, status = b'{"error": {"code": "unavailable", "message": "down"}}', 503
                else:
                    req = urllib.request.Request(upstream + self.path, data=body or None, method=self.command,
                                                 headers={"Content-Type": "application/json"})
                    try:
                        with urllib.request.urlopen(req, timeout=30) as r:
                            status, out = r.status, r.read()
                    except urllib.error.HTTPError as e:
                        status, out = e.code, e.read()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            do_GET = do_POST = _forward

            def log_message(self, *args) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def test_a_rollout_whose_timer_could_not_start_is_not_scored_and_counts(
    synth_outputs, server, vf_eval, fresh, tmp_path, monkeypatch
):
    """A timely rollout played without its timer has no measured time: its
    reward is never computed (not even by a verifier that answers the
    score), the trace's error says why, and it counts as unanswered."""
    from timeaware import scoring

    monkeypatch.setenv("TIMEAWARE_RETRIES", "0")
    rows = Rows(distinct(read_rows(synth_outputs["budget"]))[:2])
    data = write_rows(tmp_path / "budget.jsonl", rows.rows)
    proxy = TimersDown(server.url)
    try:
        traces = vf_eval(data, lambda request: text("<answer>42</answer>"), verifier_url=proxy.url)
    finally:
        proxy.close()
    for trace in traces:
        assert reward_of(trace) is None, trace["rewards"]
        (error,) = trace["errors"]
        assert "could not be reached to start the rollout's timer" in json.dumps(error), error
        assert trace["metrics"]["timeaware/verifier_unreachable"] == 1.0
        assert "timeaware_timer" not in trace["info"]
    s = tv.stats()
    assert (s["unscored"], s["unreachable"], s["scored"]) == (2, 2, 0), s
    assert scoring.stats()["consecutive_fallbacks"] == 2
