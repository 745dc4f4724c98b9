"""Avro container timeline files: Java's layout, round trips, resolution against older schemas."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import fastavro
import pytest
from hudi_core.avro.container import write_container
from hudi_core.errors import TimelineError
from hudi_core.storage import LocalStorage
from hudi_core.testing.corpus import corpus_root
from hudi_core.timeline.avro_files import (
    CLEAN_METADATA,
    CLEANER_PLAN,
    COMPACTION_PLAN,
    REQUESTED_REPLACE_METADATA,
    ROLLBACK_METADATA,
    ROLLBACK_PLAN,
    deserialize,
    java_schema_json,
    load_schema,
    read_avro_timeline_file,
    schema_for_instant_file,
    serialize,
    write_avro_timeline_file,
)
from hudi_core.timeline.instant import Action, State

LOG = "file:/opt/data/t/.0712b9f9-0_20250126040823628.log.1_0-33-43"
BASE = "file:/opt/data/t/0712b9f9-0_0-13-9_20250126040826878.parquet"

RECORDS: dict[str, dict[str, Any]] = {
    ROLLBACK_PLAN: {
        "instantToRollback": {"commitTime": "20250126040826878", "action": "deltacommit"},
        "RollbackRequests": [
            {
                "partitionPath": "",
                "fileId": "",
                "latestBaseInstant": "",
                "filesToBeDeleted": [BASE],
                "logBlocksToBeDeleted": {},
            },
            {
                "partitionPath": "",
                "fileId": "0712b9f9-0",
                "latestBaseInstant": "20250126040823628",
                "filesToBeDeleted": [],
                "logBlocksToBeDeleted": {LOG: 11828},
            },
        ],
        "version": 1,
    },
    ROLLBACK_METADATA: {
        "startRollbackTime": "20250126040936578",
        "timeTakenInMillis": 1234,
        "totalFilesDeleted": 1,
        "commitsRollback": ["20250126040826878"],
        "partitionMetadata": {
            "": {
                "partitionPath": "",
                "successDeleteFiles": [BASE],
                "failedDeleteFiles": [],
                "rollbackLogFiles": {LOG.replace("log.1_0-33-43", "log.2_1-0-1"): 105},
                "logFilesFromFailedCommit": {LOG: 11828},
            }
        },
        "version": 1,
        "instantsRollback": [{"commitTime": "20250126040826878", "action": "deltacommit"}],
    },
    COMPACTION_PLAN: {
        "operations": [
            {
                "baseInstantTime": "001",
                "deltaFilePaths": [".f-0_001.log.1_0-1-1"],
                "dataFilePath": "f-0_0-1-1_001.parquet",
                "fileId": "f-0",
                "partitionPath": "p=1",
                "metrics": {"TOTAL_LOG_FILES": 1.0},
                "bootstrapFilePath": None,
            }
        ],
        "extraMetadata": None,
        "version": 2,
        "strategy": None,
        "preserveHoodieMetadata": None,
    },
    CLEANER_PLAN: {
        "earliestInstantToRetain": {"timestamp": "005", "action": "commit", "state": "COMPLETED"},
        "lastCompletedCommitTimestamp": "009",
        "policy": "KEEP_LATEST_COMMITS",
        "filesToBeDeletedPerPartition": {},
        "version": 2,
        "filePathsToBeDeletedPerPartition": {
            "p=1": [{"filePath": "/t/p=1/f-0_0-1-1_001.parquet", "isBootstrapBaseFile": False}]
        },
        "partitionsToBeDeleted": [],
    },
    CLEAN_METADATA: {
        "startCleanTime": "010",
        "timeTakenInMillis": 7,
        "totalFilesDeleted": 1,
        "earliestCommitToRetain": "005",
        "lastCompletedCommitTimestamp": "009",
        "partitionMetadata": {
            "p=1": {
                "partitionPath": "p=1",
                "policy": "KEEP_LATEST_COMMITS",
                "deletePathPatterns": ["f-0_0-1-1_001.parquet"],
                "successDeleteFiles": ["f-0_0-1-1_001.parquet"],
                "failedDeleteFiles": [],
                "isPartitionDeleted": False,
            }
        },
        "version": 2,
        "bootstrapPartitionMetadata": {},
    },
    REQUESTED_REPLACE_METADATA: {
        "operationType": None,
        "clusteringPlan": None,
        "extraMetadata": None,
        "version": None,
    },
}


def _fastavro_view(data: bytes) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    reader = fastavro.reader(io.BytesIO(data))
    return dict(reader.metadata), list(reader)


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_write_then_read_back(tmp_path: Path, name: str) -> None:
    path = str(tmp_path / ".hoodie" / f"x.{name}")
    write_avro_timeline_file(LocalStorage(), path, name, RECORDS[name])
    assert read_avro_timeline_file(LocalStorage(), path, name) == RECORDS[name]
    data = Path(path).read_bytes()
    metadata, records = _fastavro_view(data)
    # Java's layout: only avro.schema in the metadata, Java's string annotations, one record
    assert set(metadata) == {"avro.schema"}
    assert metadata["avro.schema"] == java_schema_json(name)
    assert '"avro.java.string":"String"' in metadata["avro.schema"]
    assert records == [RECORDS[name]]


def test_insert_overwrite_requested_file_matches_java_bytes() -> None:
    root = corpus_root()
    if root is None:
        pytest.skip("the compat corpus is not available")
    files = sorted((root / "tables").rglob("*.replacecommit.requested"))
    assert files, "the corpus has an insert-overwrite table"
    for f in files:
        original = f.read_bytes()
        record = deserialize(REQUESTED_REPLACE_METADATA, original)
        assert record == RECORDS[REQUESTED_REPLACE_METADATA]
        ours = serialize(REQUESTED_REPLACE_METADATA, record)
        # identical except the random 16-byte sync marker (after the header and after the block)
        sync = original[-16:]
        assert ours.replace(ours[-16:], sync) == original


def test_every_corpus_avro_timeline_file_parses() -> None:
    root = corpus_root()
    if root is None:
        pytest.skip("the compat corpus is not available")
    from hudi_core.timeline.instant import parse_instant_file_name

    seen = 0
    for f in (root / "tables").rglob(".hoodie/*"):
        if not f.is_file():
            continue
        instant = parse_instant_file_name(f.name)
        if instant is None:
            continue
        name = schema_for_instant_file(instant.action, instant.state)
        if name is None or f.stat().st_size == 0:
            continue
        assert isinstance(deserialize(name, f.read_bytes()), dict)
        seen += 1
    assert seen >= 1


def test_older_writer_schema_resolves_to_defaults() -> None:
    # A cleaner plan written before 0.13 has no lastCompletedCommitTimestamp / newer fields.
    old = load_schema(CLEANER_PLAN)
    old["fields"] = [
        f
        for f in old["fields"]
        if f["name"] in ("earliestInstantToRetain", "policy", "filesToBeDeletedPerPartition", "version")
    ]
    record = {
        "earliestInstantToRetain": None,
        "policy": "KEEP_LATEST_FILE_VERSIONS",
        "filesToBeDeletedPerPartition": {"p": ["a.parquet"]},
        "version": 1,
    }
    got = deserialize(CLEANER_PLAN, write_container(old, [record]))
    assert got["policy"] == "KEEP_LATEST_FILE_VERSIONS"
    assert got["lastCompletedCommitTimestamp"] == ""
    assert got["filePathsToBeDeletedPerPartition"] is None
    assert got["filesToBeDeletedPerPartition"] == {"p": ["a.parquet"]}


def test_missing_required_field_is_a_timeline_error() -> None:
    bad = {k: v for k, v in RECORDS[ROLLBACK_METADATA].items() if k != "startRollbackTime"}
    with pytest.raises(TimelineError, match="HoodieRollbackMetadata"):
        serialize(ROLLBACK_METADATA, bad)


def test_empty_file_is_a_timeline_error() -> None:
    with pytest.raises(TimelineError, match="empty"):
        deserialize(ROLLBACK_PLAN, b"")


def test_instant_file_schema_mapping() -> None:
    assert schema_for_instant_file(Action.ROLLBACK, State.REQUESTED) == ROLLBACK_PLAN
    assert schema_for_instant_file(Action.CLEAN, State.INFLIGHT) == CLEANER_PLAN
    assert schema_for_instant_file(Action.COMMIT, State.COMPLETED) is None
    assert json.loads(java_schema_json(COMPACTION_PLAN))["name"] == COMPACTION_PLAN
