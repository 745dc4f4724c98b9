"""Timeline files of Apache Hudi actions this project does not run itself (a clustering plan),
written as Hudi writes them, for tests of what our writers and services do beside
them. The interop tier checks the same against Apache Hudi's own procedures."""

from __future__ import annotations

from pathlib import Path

from hudi_core.hudi_table import HudiTable
from hudi_core.timeline.avro_files import serialize

__all__ = ["schedule_clustering"]


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
