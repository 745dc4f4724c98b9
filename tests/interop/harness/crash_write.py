"""A write of ours that dies the way a killed process does: every data file written, the
instant inflight, the process gone (``os._exit``) just before the commit. Run as a child process:
``python crash_write.py BASE_URI INPUT_PARQUET OPERATION OPTIONS_JSON``."""

from __future__ import annotations

import json
import os
import sys

import hudi_core.write.transaction as transaction_module
import pyarrow.parquet as pq
from hudi_core import HudiTable


def _die(*_args: object, **_kwargs: object) -> None:
    os._exit(137)


def main() -> None:
    base, source, operation, options = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    transaction_module.commit = _die  # the commit step of every write (hudi_core.write.transaction)
    table = HudiTable.open(base, options=options)
    getattr(table, operation)(pq.read_table(source), options=options)
    sys.exit("the write committed: the crash was not injected")


if __name__ == "__main__":
    main()
