"""A heartbeat renewed well within its expiry must not read as expired, on every store.

Found by the S3 stress run (issue #20): with ``hoodie.client.heartbeat.interval_in_ms=500`` and 2
tolerable misses, OCC writers on the moto S3 server rolled back each other's live instants
(``TimelineError: cannot move [T__deltacommit__REQUESTED] to INFLIGHT: it is not on the
timeline``). S3 reports ``Last-Modified`` in whole seconds, so a heartbeat written at x.9 s reads
as written at x.0 s: up to a second older than it is. Expiry is judged by that time alone.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hudi_core.lock.heartbeat import heartbeat_expired, heartbeat_path
from hudi_core.storage import storage_for
from hudi_core.testing.s3 import S3Bucket

INSTANT = "20261125000000000"


def _beat_late_in_a_second_then_check(base: str, options: dict[str, str]) -> tuple[bool, float]:
    storage = storage_for(base, options)
    meta = f"{base}/.hoodie"
    storage.makedirs(f"{meta}/.heartbeat")
    storage.write_bytes(f"{meta}/.heartbeat/warm-up", b"")  # the first request opens the connection
    for _ in range(5):
        while time.time() % 1 < 0.85:  # write the beat late in a wall-clock second
            time.sleep(0.01)
        written = time.time()
        storage.write_bytes(heartbeat_path(meta, INSTANT), b"")
        if int(time.time()) == int(written):  # a slow write that ended in the next second proves nothing
            break
    time.sleep(0.3)
    return heartbeat_expired(storage, meta, INSTANT, 1.0), time.time() - written


def test_a_fresh_heartbeat_is_alive_on_local_disk(tmp_path: Path) -> None:
    expired, age = _beat_late_in_a_second_then_check(str(tmp_path / "t"), {})
    assert not expired, f"a heartbeat written {age:.2f} s ago read as older than 1 s"


@pytest.mark.s3
def test_a_fresh_heartbeat_is_alive_on_s3(s3_bucket: S3Bucket) -> None:
    expired, age = _beat_late_in_a_second_then_check(f"{s3_bucket.uri}/t", s3_bucket.options)
    assert not expired, f"a heartbeat written {age:.2f} s ago read as older than 1 s"
