"""One writer of the concurrency stress test, run as its own process by ``test_stress.py``::

    python stress_writer.py --json-args '{"base": ..., "options": {...}, "writer": "w0", ...}'

It opens the table, runs ``commits`` upserts and writes one JSON line per event to ``out``
(flushed at once, so a writer killed mid-commit leaves everything up to that moment):

- ``{"event": "start", "attempt", "writer", "keys", "ts", "payload_len"}`` before the upsert;
- ``{"event": "instant", "attempt", "instant"}`` each time the write creates an instant (a retry
  after a lost conflict creates another), so the test knows a killed attempt's instant;
- ``{"event": "retry", "attempt", "message"}`` for each conflict the client retried;
- ``{"event": "paused", "attempt", "instant"}`` when a commit from ``pause_before_commit`` on has
  written its files and is about to commit: the writer then sleeps until it is killed (the test
  kills it there, with certainty, instead of racing a commit that may finish first);
- ``{"event": "writing", "attempt", "instant"}`` when a commit from ``big["from"]`` on, given
  ``big["pause_s"]``, has created its second data file's marker: the writer then sleeps that
  long (a slow disk), so the test can kill it with files written and more to come (a 100,000-row
  BUCKET commit otherwise completes about 0.1 s after its instant turns inflight);
- ``{"event": "end", "attempt", "success", "instant", "error", "message", "conflict", "seconds"}``;
- ``{"event": "warning", "attempt", "logger", "message"}`` for each warning hudi_core or the S3
  storage logged (a heartbeat not renewed, a request retried).

Keys: ``disjoint`` mode uses only ``<writer>-NNNNN`` keys; ``overlapping`` draws from one key
space shared by every writer (``k000``..), revealed a few keys per commit: each commit updates
keys that probably exist and inserts the newest keys, which the other writers are inserting at
about the same time (the hard case for duplicates). A key always lands in the same partition.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import time
import zlib
from typing import Any, TextIO

import pyarrow as pa

PARTITIONS = 3


def partition_of(key: str) -> str:
    return f"p{zlib.crc32(key.encode()) % PARTITIONS}"


def overlapping_keys(rng: random.Random, commit: int, *, key_space: int, rows: int) -> list[str]:
    """``rows`` keys of the shared space: the newest few (probably nobody's yet) and older ones."""
    frontier = min(key_space, 12 + 2 * commit)
    fresh_from = max(0, frontier - 4)
    fresh = rng.sample(range(fresh_from, frontier), min(3, frontier - fresh_from))
    older = rng.sample(range(fresh_from), min(max(0, rows - len(fresh)), fresh_from)) if fresh_from else []
    return [f"k{i:03d}" for i in sorted({*fresh, *older})]


def disjoint_keys(rng: random.Random, writer: str, *, rows: int) -> list[str]:
    """``rows`` keys of this writer only, about a third of them updates of earlier commits."""
    return sorted(f"{writer}-{i:05d}" for i in rng.sample(range(3 * rows), rows))


def rows_for(keys: list[str], *, writer: str, attempt: str, payload_len: int) -> pa.Table:
    now = time.time_ns()
    pad = "x" * max(0, payload_len - 24)
    return pa.table(
        {
            "key": pa.array(keys, pa.string()),
            "part": pa.array([partition_of(k) for k in keys], pa.string()),
            # unique per row and increasing in generation order within a process
            "ts": pa.array([now + i for i in range(len(keys))], pa.int64()),
            "writer": pa.array([writer] * len(keys), pa.string()),
            "attempt": pa.array([attempt] * len(keys), pa.string()),
            "payload": pa.array([f"{attempt}:{k}:{pad}" for k in keys], pa.string()),
        }
    )


class _Log:
    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.attempt = ""

    def write(self, event: str, **fields: Any) -> None:
        self.out.write(json.dumps({"event": event, "attempt": self.attempt, **fields}) + "\n")
        self.out.flush()


class _RetryHandler(logging.Handler):
    """The write client logs each conflict it retries (``hoodie.write.num.retries.on.conflict.failures``);
    every warning (a heartbeat not renewed, an S3 request retried...) goes to the log too, for
    the test to show when the table comes out wrong."""

    def __init__(self, log: _Log) -> None:
        super().__init__(logging.INFO)
        self.log = log

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "retrying" in message and "conflict" in message:
            self.log.write("retry", message=message)
        elif record.levelno >= logging.WARNING:
            self.log.write("warning", logger=record.name, message=message[:500])


def _record_instants(log: _Log) -> None:
    """Log every instant this process creates, the moment it exists (instrumentation only: the
    test needs the instant of an attempt that is killed before ``upsert`` returns it)."""
    try:
        from hudi_core.write import transaction
    except ImportError:  # a hudi-core from before concurrency control: no instants to report
        return
    original = transaction.WriteTransaction.start

    def start(self: Any, operation: str, **kwargs: Any) -> Any:
        instant = original(self, operation, **kwargs)
        log.write("instant", instant=instant.timestamp, action=instant.action)
        return instant

    transaction.WriteTransaction.start = start  # type: ignore[method-assign]


def _pause_before_commit(log: _Log, from_commit: int) -> None:
    """From commit ``from_commit`` on, stop each write between its files and its commit forever."""
    from hudi_core.write import transaction

    original = transaction.WriteTransaction.commit

    def commit(self: Any, *args: Any, **kwargs: Any) -> Any:
        if int(log.attempt.rsplit("-c", 1)[1]) >= from_commit:
            log.write("paused", instant=self.instant)
            time.sleep(3600)
        return original(self, *args, **kwargs)

    transaction.WriteTransaction.commit = commit  # type: ignore[method-assign]


def _pause_mid_write(log: _Log, from_commit: int, pause_s: float) -> None:
    """From commit ``from_commit`` on, each write sleeps ``pause_s`` once, after the marker of its
    second data file (its first file is written or being written by then)."""
    from hudi_core.write import markers

    original = markers.MarkerFiles.create
    seen: dict[str, int] = {}

    def create(self: Any, *args: Any, **kwargs: Any) -> Any:
        marker = original(self, *args, **kwargs)
        instant = self.dir.rstrip("/").rsplit("/", 1)[1]
        seen[instant] = seen.get(instant, 0) + 1
        if seen[instant] == 2 and int(log.attempt.rsplit("-c", 1)[1]) >= from_commit:
            log.write("writing", instant=instant)
            time.sleep(pause_s)
        return marker

    markers.MarkerFiles.create = create  # type: ignore[method-assign]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json-args", required=True)
    args: dict[str, Any] = json.loads(parser.parse_args(argv).json_args)
    from hudi_core import HudiTable
    from hudi_core.errors import CommitConflictError, HudiError

    base, options, writer = args["base"], dict(args["options"]), args["writer"]
    commits, mode, rows = int(args["commits"]), args["mode"], int(args["rows"])
    big = dict(args.get("big") or {})  # {"from": i, "rows": n}: commits i.. carry many more rows
    # a job refused by the single-writer lease tries its next commit this much later
    busy_pause_s = float(args.get("busy_pause_s", 0))
    rng = random.Random(f"{args.get('seed', 0)}-{writer}")
    with open(args["out"], "a", encoding="utf-8") as out:
        log = _Log(out)
        _record_instants(log)
        if big.get("pause_s"):
            _pause_mid_write(log, int(big["from"]), float(big["pause_s"]))
        if "pause_before_commit" in args:
            _pause_before_commit(log, int(args["pause_before_commit"]))
        for name in ("hudi_core", "hudi_storage_s3"):
            logging.getLogger(name).addHandler(_RetryHandler(log))
        logging.getLogger("hudi_core").setLevel(logging.INFO)
        for c in range(commits):
            log.attempt = f"{writer}-c{c}"
            if mode == "overlapping":
                keys = overlapping_keys(rng, c, key_space=int(args.get("key_space", 60)), rows=rows)
            else:
                keys = disjoint_keys(rng, writer, rows=rows)
            payload_len = 40
            if big and c >= int(big["from"]):
                keys = sorted({*keys, *(f"{writer}-big{c}-{i:06d}" for i in range(int(big["rows"])))})
                payload_len = int(big.get("payload_len", 400))
            data = rows_for(keys, writer=writer, attempt=log.attempt, payload_len=payload_len)
            log.write("start", writer=writer, keys=keys, ts=data.column("ts").to_pylist(),
                      payload_len=payload_len)  # fmt: skip
            started = time.monotonic()
            try:
                instant = HudiTable.open(base, options=options).upsert(data, options=options).instant
            except Exception as e:  # the test decides which errors are allowed (a non-HudiError never is)
                log.write("end", success=False, instant=None, error=type(e).__name__, message=str(e),
                          hudi_error=isinstance(e, HudiError), conflict=isinstance(e, CommitConflictError),
                          seconds=round(time.monotonic() - started, 3))  # fmt: skip
                if type(e).__name__ == "WriterBusyError":
                    time.sleep(busy_pause_s)
            else:
                log.write("end", success=True, instant=instant, error=None, message=None, conflict=False,
                          seconds=round(time.monotonic() - started, 3))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
