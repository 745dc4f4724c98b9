"""The order the whole suite's tests are handed out in: tests marked ``slow`` first.

Each tier runs on two xdist workers, which take tests in collection order. A long test collected
late ran while the other worker, out of tests, sat idle (the first tier's last ~40 s were one
worker's S3 stress test). Handed out first, the long tests run beside the short ones, which then
fill in around them. The sort is stable: each group keeps its order, a module marked ``slow``
stays together, and a module with a few ``slow`` tests is split in two (none of those has a
module-scoped fixture, which would then be set up twice)."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
