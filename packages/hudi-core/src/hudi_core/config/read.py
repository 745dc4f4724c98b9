"""Reader options: how a query reads file slices (``hudi_core.read``)."""

from __future__ import annotations

from hudi_core.config.property import ConfigProperty

__all__ = ["ReaderOptions"]


class ReaderOptions:
    PARALLELISM = ConfigProperty(
        "hoodie.read.parallelism",
        0,
        "File slices read at the same time by one query (threads; parquet decode and Arrow "
        "joins release the GIL). 0 picks min(4, CPUs). read() holds the whole result anyway; "
        "iter_batches() holds at most this many slices in memory (1: one slice at a time).",
        since="0.1.0",
        group="read",
    )
