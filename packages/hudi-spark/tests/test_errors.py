"""``hudi_spark.errors.task_error``: a task's hudi_core error rebuilt on the driver (the Spark
end-to-end case is in test_writer.py)."""

from __future__ import annotations

from hudi_core.errors import HudiError, SchemaMismatchError
from hudi_spark.errors import task_error


def test_task_error_rebuilds_only_hudi_core_errors() -> None:
    trace = "Traceback (most recent call last):\n  File \"x.py\", line 1\nhudi_core.errors.SchemaMismatchError: field 'x' is int, not string"
    got = task_error(RuntimeError("An exception was thrown from the Python worker:\n" + trace))
    assert type(got) is SchemaMismatchError and str(got) == "field 'x' is int, not string"
    for other in (
        RuntimeError("no hudi error here"),
        RuntimeError("hudi_core.errors.Nothing: x"),
        KeyboardInterrupt(),
    ):
        assert task_error(other) is other
    own = HudiError("raised on the driver")
    assert task_error(own) is own
