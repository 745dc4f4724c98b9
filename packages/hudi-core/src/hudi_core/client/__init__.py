"""The write client (Apache Hudi's ``BaseHoodieWriteClient``): one write through the pipeline of
:mod:`hudi_core.write`, then the table services due after its commit (inline compaction, the
automatic clean, archival)."""

from __future__ import annotations

from hudi_core.client.services import run_post_commit_services
from hudi_core.client.write_client import WriteClient, WriteResult

__all__ = ["WriteClient", "WriteResult", "run_post_commit_services"]
