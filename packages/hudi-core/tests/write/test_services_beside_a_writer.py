"""Table services run by another process while a writer ingests (issue #20): under optimistic
concurrency control `hudi-py compact`, `clean` and `archive` run beside the writer and nothing
the writer was told is committed goes missing; in single-writer mode they are refused while the
writer holds the table's lease."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa
from hudi_core import HudiTable

OCC = {
    "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
    "hoodie.client.heartbeat.interval_in_ms": "1000",
    "hoodie.compact.inline": "false",
    "hoodie.keep.min.commits": "3",
    "hoodie.keep.max.commits": "5",
    "hoodie.cleaner.commits.retained": "2",
}

_WRITER = textwrap.dedent(
    """
    import json, sys, pyarrow as pa
    from hudi_core import HudiTable
    from hudi_core.errors import HudiError
    base, options, rounds, out = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    with open(out, "w") as log:
        for n in range(rounds):
            keys = [f"k{(n * 7 + i) % 40:02d}" for i in range(10)]
            parts = ["xy"[int(k[1:]) % 2] for k in keys]  # a key stays in its partition
            rows = pa.table({"id": keys, "ts": [n] * 10, "v": [f"r{n}"] * 10, "p": parts})
            try:
                instant = HudiTable.open(base).upsert(rows, options=options).instant
                log.write(json.dumps({"round": n, "keys": keys, "instant": instant}) + "\\n")
            except HudiError as e:
                log.write(json.dumps({"round": n, "keys": keys, "error": type(e).__name__, "message": str(e)}) + "\\n")
            log.flush()
    """
)


def _table(tmp_path: Path, options: dict[str, str]) -> str:
    base = str(tmp_path / "t")
    HudiTable.create(base, name="t", table_type="MERGE_ON_READ", record_key_fields="id", partition_fields="p",
                     ordering_field="ts", options=options)  # fmt: skip
    return base


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hudi_core.cli.main", *args], capture_output=True, text=True)


def _options(options: dict[str, str]) -> list[str]:
    return [a for k, v in options.items() for a in ("-o", f"{k}={v}")]


def test_compaction_clean_and_archival_run_beside_an_occ_writer(tmp_path: Path) -> None:
    base = _table(tmp_path, OCC)
    log = tmp_path / "writer.jsonl"
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, base, json.dumps(OCC), "24", str(log)])
    services: dict[str, int] = {"compact": 0, "clean": 0, "archive": 0}
    failures = []
    while writer.poll() is None:
        for command in ("compact", "clean", "archive"):
            done = _cli(command, base, *_options(OCC))
            if done.returncode == 0:
                services[command] += 1
            else:
                failures.append(done.stderr.strip())
        time.sleep(0.05)
    assert writer.returncode == 0
    # a service may find nothing to do, or lose to the writer's own lock holder; it never crashes
    assert not [f for f in failures if "Traceback" in f], failures
    assert services["compact"] >= 1, (services, failures)

    attempts = [json.loads(line) for line in log.read_text().splitlines()]
    ok = [a for a in attempts if "instant" in a]
    lost = [a for a in attempts if "error" in a]
    assert len(attempts) == 24 and ok
    assert {a["error"] for a in lost} <= {"WriteConflictError"}, lost  # a compaction planned meanwhile
    # one more write so that anything left behind is rolled back, then every success is visible
    HudiTable.open(base).upsert(pa.table({"id": ["z"], "ts": [99], "v": ["last"], "p": ["x"]}), options=OCC)
    table = HudiTable.open(base)
    data = table.read(columns=["_hoodie_commit_time", "id", "v"]).to_pydict()
    assert len(data["id"]) == len(set(data["id"]))
    seen = dict(zip(data["id"], zip(data["v"], data["_hoodie_commit_time"], strict=True), strict=True))
    model: dict[str, tuple[str, str]] = {}
    for a in ok:  # rounds commit in order; a later round's ts is larger
        for k in a["keys"]:
            model[k] = (f"r{a['round']}", a["instant"])
    for k, expected in model.items():
        assert seen[k] == expected, (k, seen[k], expected)
    assert not {f"r{a['round']}" for a in lost} & {v for v, _ in seen.values()}  # nothing of a lost write
    assert [i for i in table.timeline.pending() if i.action != "compaction"] == []
    completed = [i for i in table.timeline if i.action == "commit" and i.is_completed]
    archived = list((Path(base) / ".hoodie" / "archived").glob(".commits_.archive.*"))
    print(f"\nwriter: {len(ok)} commits, {len(lost)} lost conflicts; services: {services}; "
          f"{len(completed)} compactions on the active timeline, {len(archived)} archive files")  # fmt: skip
    assert services["clean"] + services["archive"] >= 2


_HOLDER = textwrap.dedent(
    """
    import json, os, sys, time, pyarrow as pa
    from hudi_core import HudiTable
    from hudi_core.write.transaction import writer_guard
    base, options, ready, go = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4]
    table = HudiTable.open(base)
    with writer_guard(table, table.write_config(options)):  # one writer's run of several writes
        table.upsert(pa.table({"id": ["b"], "ts": [1], "v": ["y"], "p": ["x"]}), options=options)
        open(ready, "w").close()
        while not os.path.exists(go):
            time.sleep(0.05)
        table.upsert(pa.table({"id": ["c"], "ts": [2], "v": ["z"], "p": ["y"]}), options=options)
    """
)


def test_single_writer_mode_refuses_a_service_while_the_writer_holds_the_lease(tmp_path: Path) -> None:
    single = {"hoodie.compact.inline": "false", "hoodie.client.heartbeat.interval_in_ms": "1000"}
    base = _table(tmp_path, single)
    HudiTable.open(base).upsert(pa.table({"id": ["a"], "ts": [0], "v": ["x"], "p": ["x"]}), options=single)
    ready, go = tmp_path / "ready", tmp_path / "go"
    writer = subprocess.Popen([sys.executable, "-c", _HOLDER, base, json.dumps(single), str(ready), str(go)])
    try:
        deadline = time.monotonic() + 120
        while not ready.exists() and writer.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready.exists(), "the writer never took its lease"
        refused = _cli("compact", base, *_options(single))
    finally:
        go.touch()
        writer.wait(timeout=120)
    assert refused.returncode != 0, refused.stdout
    message = refused.stderr.strip().splitlines()[-1]
    assert "single-writer lease" in message and "optimistic_concurrency_control" in message
    assert "Traceback" not in refused.stderr
    assert writer.returncode == 0  # the writer's own writes were not disturbed by the refused service
    table = HudiTable.open(base)
    assert sorted(table.read(columns=["id"]).column("id").to_pylist()) == ["a", "b", "c"]
    assert table.timeline.pending().timestamps() == []
    assert _cli("compact", base, *_options(single)).returncode == 0  # the lease was released
