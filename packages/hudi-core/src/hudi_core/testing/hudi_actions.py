"""Timeline files of Apache Hudi actions this project does not run itself (a clustering plan, a
savepoint), written as Hudi writes them, for tests of what our writers and services do beside
them. The interop tier checks the same against Apache Hudi's own procedures."""

from __future__ import annotations

from pathlib import Path

from hudi_core.hudi_table import HudiTable
from hudi_core.timeline.avro_files import serialize

__all__ = ["create_savepoint", "schedule_clustering"]


def schedule_clustering(t: HudiTable, partition: str) -> str:
    """A requested clustering (``<instant>.replacecommit.requested`` holding
    ``HoodieRequestedReplaceMetadata`` with a ``clusteringPlan``, the file Hudi's
    ``run_clustering(op => 'schedule')`` writes) over every file group of ``partition`` of a
    local table; returns its instant."""
    slices = [
        {
            "dataFilePath": s.base_file.name if s.base_file else None,
            "deltaFilePaths": [f.name for f in s.log_files],
            "fileId": s.file_id,
            "partitionPath": s.partition_path,
            "bootstrapFilePath": "",
            "version": 1,
        }
        for s in t.file_slices()
        if s.partition_path == partition
    ]
    plan = {
        "operationType": "CLUSTER",
        "clusteringPlan": {
            "inputGroups": [
                {
                    "slices": slices,
                    "metrics": {},
                    "numOutputFileGroups": 1,
                    "extraMetadata": None,
                    "version": 1,
                }
            ],
            "strategy": {
                "strategyClassName": "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy",
                "strategyParams": {},
                "version": 1,
            },
            "extraMetadata": {},
            "version": 1,
            "preserveHoodieMetadata": True,
        },
        "extraMetadata": {},
        "version": 1,
    }
    instant = t.timeline.new_instant_time()
    (Path(t.base_uri) / ".hoodie" / f"{instant}.replacecommit.requested").write_bytes(
        serialize("HoodieRequestedReplaceMetadata", plan)
    )
    return instant


def create_savepoint(t: HudiTable, instant: str) -> None:
    """A savepoint of the completed commit ``instant`` (``<instant>.savepoint.inflight``, then
    ``<instant>.savepoint`` holding ``HoodieSavepointMetadata``), as Hudi's ``create_savepoint``
    writes it: per partition the names of the latest slices' base and log files as of
    ``instant``."""
    per_partition: dict[str, list[str]] = {}
    for s in t.file_slices(as_of=instant):
        names = per_partition.setdefault(s.partition_path, [])
        names.extend([*([s.base_file.name] if s.base_file else []), *(f.name for f in s.log_files)])
    meta = {
        "savepointedBy": "",
        "savepointedAt": 0,
        "comments": "",
        "partitionMetadata": {
            p: {"partitionPath": p, "savepointDataFile": names} for p, names in per_partition.items()
        },
        "version": 1,
    }
    hoodie = Path(t.base_uri) / ".hoodie"
    (hoodie / f"{instant}.savepoint.inflight").write_bytes(b"")
    (hoodie / f"{instant}.savepoint").write_bytes(serialize("HoodieSavepointMetadata", meta))
