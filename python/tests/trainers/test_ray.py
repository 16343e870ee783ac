"""timeaware.ray on a real local Ray cluster (2 CPUs): sharded runs
reproduce the single-process outputs row for row, the merged manifest sums
to the same counts, a shard killed once is retried with the result
unchanged, and the parts load as one dataset in the gate, Hugging Face
datasets and Ray Data."""

import hashlib
import json
import os
import stat
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ray = pytest.importorskip("ray")

from timeaware.ray import ShardFailed, main, run_sharded  # noqa: E402


@pytest.fixture(scope="module")
def ray_cluster(timeaware_bin):
    # The workers find the binary the way a user's driver does: on PATH.
    path = os.environ.get("PATH", "")
    os.environ["PATH"] = f"{Path(timeaware_bin).parent}{os.pathsep}{path}"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()
    os.environ["PATH"] = path


def rows_of(path) -> list:
    """Every row of a Parquet file or directory, as sorted JSON text."""
    table = pq.read_table(str(path))
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in table.to_pylist())


def direct_side_file(work, v1_files) -> Path:
    side = work / "ray_direct.jsonl"
    if not side.exists():
        ids = sorted({r["id"] for p in v1_files for r in json.loads(p.read_text(encoding="utf-8"))})
        side.write_text("".join(json.dumps({"id": i, "direct_answer": f"Still current for {i}."}) + "\n" for i in ids))
    return side


def test_pairs_build_in_four_shards_is_the_single_run(ray_cluster, run_timeaware, work, v1_files):
    side = direct_side_file(work, v1_files)
    inputs = [a for p in v1_files for a in ("--input", str(p))]
    command = ["pairs", "build", *inputs, "--direct-answers", str(side)]
    single = work / "ray-single.parquet"
    run_timeaware(*command, "--out", single)
    out = work / "ray-pairs"
    m = run_sharded(command, shards=4, out=str(out))

    assert rows_of(out) == rows_of(single)
    assert sorted(p.name for p in out.glob("part-*")) == [f"part-{i:05d}-of-00004.parquet" for i in range(4)]
    single_manifest = json.loads((work / "ray-single.parquet.manifest.json").read_text())
    only = single_manifest["outputs"][0]
    assert m["rows"] == {only["role"]: only["rows"]}
    assert m["summary"]["pairs"] == single_manifest["summary"]["pairs"]
    assert {o["shard"] for o in m["outputs"]} == {0, 1, 2, 3}
    assert all(len(o["sha256"]) == 64 for o in m["outputs"])
    assert "shard" not in m["config"]
    assert json.loads((work / "ray-pairs.manifest.json").read_text()) == m
    assert sorted(p.name for p in out.iterdir()) == [f"part-{i:05d}-of-00004.parquet" for i in range(4)], \
        "nothing but the parts: the trainers' loaders read every file of the directory"

    # The directory is one dataset for the trainers' loaders.
    from datasets import load_dataset

    ds = load_dataset("parquet", data_dir=str(out), split="train")
    assert ds.num_rows == only["rows"]
    assert ray.data.read_parquet(str(out)).count() == only["rows"]


def test_group_split_in_four_shards_agrees_and_passes_the_gate(ray_cluster, run_timeaware, work, v1_files):
    side = direct_side_file(work, v1_files)
    inputs = [a for p in v1_files for a in ("--input", str(p))]
    command = ["pairs", "build", *inputs, "--direct-answers", str(side), "--split", "group", "--seed", "7"]
    run_timeaware(*command, "--out", work / "ray-split.parquet")
    out = work / "ray-split"
    m = run_sharded(command, shards=4, out=str(out))
    assert rows_of(out / "train") == rows_of(work / "ray-split-train.parquet")
    assert rows_of(out / "test") == rows_of(work / "ray-split-test.parquet")
    assert set(m["rows"]) == {"train", "test"}

    gate = run_timeaware("splits", "check", out / "train", out / "test")
    assert "FAIL" not in gate.stdout
    # The merged manifest is one the gate reads and verifies, hashes included.
    gate = run_timeaware("splits", "check", work / "ray-split.manifest.json")
    assert "FAIL" not in gate.stdout

    from datasets import load_dataset

    dd = load_dataset("parquet", data_dir=str(out))
    assert {k: v.num_rows for k, v in dd.items()} == m["rows"]


def test_synth_puzzles_in_four_shards_through_the_cli(ray_cluster, run_timeaware, work, capsys):
    command = ["synth", "puzzles", "--count", "40", "--seed", "3"]
    run_timeaware(*command, "--out", work / "ray-puzzles.parquet")
    out = work / "ray-puzzles"
    assert main(["--shards", "4", "--out", str(out), "--", *command]) == 0
    assert "synth puzzles in 4 shards: 4 parts (" in capsys.readouterr().out
    assert rows_of(out) == rows_of(work / "ray-puzzles.parquet")


def test_a_shard_killed_once_is_retried(ray_cluster, timeaware_bin, run_timeaware, work):
    mark = work / "killed-once"
    wrapper = work / "timeaware-killer.sh"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'case "$*" in *"--shard 2/4"*) if [ ! -e "{mark}" ]; then touch "{mark}"; kill -9 $$; fi;; esac\n'
        f'exec "{timeaware_bin}" "$@"\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    command = ["synth", "traveler", "--count", "24", "--seed", "5"]
    run_timeaware(*command, "--out", work / "ray-traveler.parquet")
    out = work / "ray-traveler"
    m = run_sharded(command, shards=4, out=str(out), binary=str(wrapper))
    assert mark.exists(), "shard 2 was killed once"
    assert rows_of(out) == rows_of(work / "ray-traveler.parquet")
    assert sum(m["rows"].values()) == 24

    # With no retries the kill fails the run, naming the shard.
    mark.unlink()
    with pytest.raises(ShardFailed, match=r"--shard 2/4: exit -9"):
        run_sharded(command, shards=4, out=str(work / "ray-traveler-noretry"), binary=str(wrapper), retries=0)
    assert not (work / "ray-traveler-noretry.manifest.json").exists()


def test_bad_commands_are_refused_before_any_task(ray_cluster):
    with pytest.raises(ValueError, match="cannot be sharded"):
        run_sharded(["splits", "check", "a", "b"], shards=2, out="x")
    with pytest.raises(ValueError, match="leave --out out of the command"):
        run_sharded(["synth", "puzzles", "--count", "4", "--out", "y.parquet"], shards=2, out="x")
    with pytest.raises(ValueError, match="--format 'csv'"):
        run_sharded(["synth", "puzzles", "--count", "4", "--format", "csv"], shards=2, out="x")
    assert main(["--shards", "2", "--out", "x", "synth", "puzzles"]) == 2


def test_synth_timestamps_and_score_write_jsonl_parts(ray_cluster, run_timeaware, work, v1_files):
    inputs = [a for p in v1_files for a in ("--input", str(p))]
    command = ["synth", "timestamps", *inputs, "--seed", "2"]
    run_timeaware(*command, "--out", work / "ray-stamped.jsonl")
    out = work / "ray-stamped"
    run_sharded(command, shards=3, out=str(out))
    parts = sorted(out.glob("part-*-of-00003.jsonl"))
    assert len(parts) == 3
    lines = sorted(line for p in parts for line in p.read_text().splitlines())
    assert lines == sorted((work / "ray-stamped.jsonl").read_text().splitlines())


def synth_items(synth_outputs) -> list:
    """Right answers to every synth row, as the adapter's calls."""
    from conftest import right_answer

    items = []
    for name in ("puzzles", "traveler", "negotiation", "budget"):
        for row in pq.read_table(str(synth_outputs[name])).to_pylist():
            gt = row["reward_model"]["ground_truth"]
            ei = dict(row["extra_info"])
            if name == "budget":
                ei = {"time_limit_s": ei["time_limit_s"], "elapsed_s": 1.5}
            items.append((row["data_source"], right_answer(row["data_source"], gt, row["extra_info"]), gt, ei))
    return items


def test_verifier_replicas_on_ray_lose_no_item_when_one_is_killed(ray_cluster, adapter, synth_outputs):
    import signal
    import time

    from timeaware import verl as tv

    items = synth_items(synth_outputs) * 3
    want = [tv.compute_score_sync(*it) for it in items]  # the single server
    assert sum(w["score"] for w in want) > 0

    from timeaware.ray import start_verifiers

    v = start_verifiers(per_node=2)
    try:
        assert len(v.urls) == 2 and len(set(v.urls)) == 2
        assert all(not u.startswith("http://127.") for u in v.urls), "each listens on its node's address"
        adapter.shutdown()
        adapter.configure(reset=True, url=v.env()["TIMEAWARE_URL"], token=v.token, retries=1, max_wait_ms=1)
        got = []
        killed = False
        for k, it in enumerate(items):
            if k == len(items) // 2:
                os.kill(v.infos[0]["pid"], signal.SIGKILL)  # the replica used first dies mid-run
                killed = True
            got.append(tv.compute_score_sync(*it))
        assert killed
        assert got == want, "every score equals the single server's"
        assert tv.stats()["fallbacks"] == 0, "no item lost to the fallback"
        assert tv.stats()["item_errors"] == 0
    finally:
        v.stop()
        adapter.shutdown()


def test_a_rerun_into_the_same_directory_leaves_only_its_parts(ray_cluster, run_timeaware, work):
    command = ["synth", "negotiation", "--count", "12", "--seed", "2"]
    run_timeaware(*command, "--out", work / "ray-neg.parquet")
    out = work / "ray-neg"
    run_sharded(command, shards=4, out=str(out))
    (out / "notes.txt").write_text("the user's own file stays")
    run_sharded(command, shards=2, out=str(out))
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "part-00000-of-00002.parquet", "part-00001-of-00002.parquet"]
    assert rows_of(out / "part-00000-of-00002.parquet") + rows_of(out / "part-00001-of-00002.parquet") != []
    assert sorted(rows_of(out / "part-00000-of-00002.parquet") + rows_of(out / "part-00001-of-00002.parquet")) == rows_of(work / "ray-neg.parquet")


def test_summaries_merge_counts_extremes_and_drop_what_does_not_add_up():
    from timeaware.ray import _sum_counts

    parts = [
        {"rows": 3, "events_min": 6, "events_max": 40, "events_mean": 20.5, "by_category": {"vague": 1, "explicit": 2},
         "skipped_other_shards": 9, "years": "1900-2030", "lunar": True},
        {"rows": 4, "events_min": 9, "events_max": 100, "events_mean": 30.0, "by_category": {"vague": 4},
         "skipped_other_shards": 8, "years": "1900-2030", "lunar": True},
    ]
    assert _sum_counts(parts) == {
        "rows": 7, "events_min": 6, "events_max": 100, "by_category": {"vague": 5, "explicit": 2},
        "years": "1900-2030", "lunar": True,
    }


def test_merged_traveler_summary_matches_the_single_run(ray_cluster, run_timeaware, work):
    command = ["synth", "traveler", "--count", "60", "--seed", "8"]
    run_timeaware(*command, "--out", work / "ray-trav.parquet")
    single = json.loads((work / "ray-trav.parquet.manifest.json").read_text())["summary"]
    m = run_sharded(command, shards=3, out=str(work / "ray-trav"))
    for k in ("rows", "events_min", "events_max", "by_category", "by_template", "did_answers"):
        assert m["summary"][k] == single[k], k
    assert "skipped_other_shards" not in m["summary"]


def tree(root: Path) -> dict:
    """Every file under root (hidden ones included), by relative path, with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def failing_binary(work: Path, timeaware_bin, shard: str) -> Path:
    """A timeaware that runs the command, so that the shard's part is written,
    then fails that shard with exit 3, as a shard that crashes after writing
    would."""
    wrapper = work / f"timeaware-fails-{shard.replace('/', '-of-')}.sh"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'"{timeaware_bin}" "$@" || exit $?\n'
        f'case "$*" in *"--shard {shard}"*) echo "shard {shard} broke after writing" >&2; exit 3;; esac\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return wrapper


@pytest.mark.parametrize("shards", [3, 2], ids=["same-shard-count", "other-shard-count"])
def test_a_failed_run_leaves_the_previous_output_and_manifest(ray_cluster, timeaware_bin, run_timeaware, work, shards):
    # A split run, so that the previous output has train/ and test/ as well.
    base = ["synth", "puzzles", "--count", "30", "--test-fraction", "0.3"]
    top = work / f"ray-keep-{shards}"
    top.mkdir()
    out, manifest = top / "puzzles", top / "puzzles.manifest.json"
    first = run_sharded([*base, "--seed", "4"], shards=3, out=str(out))
    (out / "notes.txt").write_text("the user's own file")
    broken = failing_binary(work, timeaware_bin, f"1/{shards}")
    before, manifest_before = tree(top), manifest.read_bytes()
    assert len(before) == 2 * 3 + 2

    # Every shard but one succeeds, and the one that fails has written its
    # part first; with another seed every part would differ.
    with pytest.raises(ShardFailed, match=r"exit 3.*broke after writing"):
        run_sharded([*base, "--seed", "5"], shards=shards, out=str(out), binary=str(broken), retries=0)
    assert tree(top) == before, "the previous parts and manifest, byte for byte, and nothing else beside them"
    for o in json.loads(manifest_before)["outputs"]:  # the previous manifest still vouches for every part
        assert hashlib.sha256((top / o["path"]).read_bytes()).hexdigest() == o["sha256"], o["path"]

    # A run that succeeds replaces the parts and the manifest, and keeps the user's file.
    single = work / f"ray-keep-{shards}-single.parquet"
    run_timeaware(*base, "--seed", "5", "--out", single)
    second = run_sharded([*base, "--seed", "5"], shards=shards, out=str(out))
    assert sum(first["rows"].values()) == sum(second["rows"].values()) == 30
    assert rows_of(out / "train") == rows_of(work / f"ray-keep-{shards}-single-train.parquet")
    assert rows_of(out / "test") == rows_of(work / f"ray-keep-{shards}-single-test.parquet")
    assert (out / "notes.txt").read_text() == "the user's own file"
    parts = {f"puzzles/{side}/{_part(i, shards)}" for side in ("train", "test") for i in range(shards)}
    assert set(tree(top)) == parts | {"puzzles/notes.txt", "puzzles.manifest.json"}
    assert json.loads(manifest.read_text()) == second


def test_a_failed_run_stops_its_other_shards(ray_cluster, timeaware_bin, work):
    """When one shard fails, the others are cancelled with every process
    their command started, and what a shard still writes after the run gave
    up is taken back: nothing stays beside the previous output."""
    import time

    top = work / "ray-stop"
    top.mkdir()
    out = top / "puzzles"
    run_sharded(["synth", "puzzles", "--count", "8", "--seed", "1"], shards=2, out=str(out))
    before = tree(top)
    wrapper = work / "timeaware-slow-and-failing.sh"
    # Shard 1 fails at once; shard 0 runs the command from a subshell, a
    # process of its own that outlives the wrapper's shell if only that is
    # killed, and that writes its part 2 s later.
    wrapper.write_text(
        "#!/bin/sh\n"
        'case "$*" in *"--shard 1/2"*) echo "shard 1/2 failed at once" >&2; exit 3;; esac\n'
        f'(sleep 2; exec "{timeaware_bin}" "$@")\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    t0 = time.monotonic()
    with pytest.raises(ShardFailed, match="failed at once"):
        run_sharded(["synth", "puzzles", "--count", "8", "--seed", "2"], shards=2, out=str(out),
                    binary=str(wrapper), retries=0)
    # Past the time shard 0's command would have written: cancelled, it has
    # not; or (Ray cancels at best effort) its task took back what it wrote.
    time.sleep(max(0.0, t0 + 5 - time.monotonic()))
    while tree(top) != before and time.monotonic() < t0 + 15:
        time.sleep(0.1)
    assert tree(top) == before, "nothing written beside the output, not even a staging directory"


def _part(i: int, n: int) -> str:
    return f"part-{i:05d}-of-{n:05d}.parquet"


def test_verifier_replicas_start_from_the_address_file_whatever_the_log_says(ray_cluster, timeaware_bin, work):
    """The replica learns its bound address from --addr-file: a service whose
    log goes elsewhere (here: nowhere) still starts, and serves."""
    import urllib.request

    from timeaware.ray import start_verifiers

    quiet = work / "timeaware-quiet.sh"
    quiet.write_text(f'#!/bin/sh\nexec "{timeaware_bin}" "$@" 2>/dev/null\n')
    quiet.chmod(quiet.stat().st_mode | stat.S_IXUSR)
    v = start_verifiers(per_node=1, binary=str(quiet))
    try:
        (url,) = v.urls
        req = urllib.request.Request(url + "/v1/rewards", headers={"Authorization": f"Bearer {v.token}"})
        with urllib.request.urlopen(req, timeout=5) as r:
            assert r.status == 200 and json.load(r)["rewards"]
    finally:
        v.stop()
    with pytest.raises(ValueError, match="--addr-file"):
        start_verifiers(serve_args=["--addr-file", str(work / "mine.addr")])
