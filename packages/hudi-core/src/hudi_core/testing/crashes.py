"""Writes that die the way a killed process does, at a chosen point, for tests of what the next
writer and every reader make of the table afterwards."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pyarrow as pa

from hudi_core.hudi_table import HudiTable

__all__ = ["KilledWrite", "killed_at_log_create"]


class KilledWrite(BaseException):
    """The injected death (a BaseException, so no ``except Exception`` of the writer cleans up)."""


@contextmanager
def _dying_at_log_link() -> Iterator[None]:
    """Local storage's exclusive create of a log file dies after its temporary file holds every
    byte and before ``link`` names it; a dead process removes nothing, so neither does this."""
    link, remove = os.link, os.remove
    dead: set[str] = set()

    def dying_link(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        if ".log." in os.path.basename(str(dst)):
            dead.add(str(src))
            raise KilledWrite(f"killed before {dst} got its name")
        link(src, dst, *args, **kwargs)

    def keeping_remove(path: Any, *args: Any, **kwargs: Any) -> None:
        if str(path) not in dead:
            remove(path, *args, **kwargs)

    with mock.patch("os.link", dying_link), mock.patch("os.remove", keeping_remove):
        yield


def killed_at_log_create(table: HudiTable, data: pa.Table, options: Mapping[str, Any] | None = None) -> str:
    """Upsert ``data`` into ``table`` (on local disk) and die while a new log file is created:
    its bytes written to the storage's temporary file, not yet under their name. Returns the
    write's instant, left pending with its markers, heartbeat and temporary file."""
    before = {i.timestamp for i in table.timeline.commits()}
    try:
        with _dying_at_log_link():
            table.upsert(data, options=options)
    except KilledWrite:
        pass
    else:
        raise AssertionError("the upsert created no log file: nothing was killed")
    pending = [i.timestamp for i in HudiTable.open(table.base_uri).timeline.commits()
               if i.timestamp not in before and not i.is_completed]  # fmt: skip
    assert len(pending) == 1, f"expected the killed write's instant pending, found {pending}"
    return pending[0]
