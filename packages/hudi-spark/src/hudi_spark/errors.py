"""Errors raised inside Spark tasks, raised again on the driver as what they were.

A task's exception reaches the driver as PySpark's ``PythonException``, whose message is the
task's whole traceback under a generic first line. When the task raised one of hudi_core's
errors (a null record key, a schema that does not fit, a corrupt log block, ...), the caller gets
that error, with the task's message, as the local engine would raise it; Spark's exception is
its cause. Any other failure passes unchanged.
"""

from __future__ import annotations

import re

from hudi_core import errors

__all__ = ["task_error"]

#: the last line of a task's traceback when it raised a hudi_core error
_RAISED = re.compile(r"^hudi_core\.errors\.(\w+): (.+)$", re.MULTILINE)


def task_error(exc: BaseException) -> BaseException:
    """The hudi_core error a Spark task raised, rebuilt from ``exc``; else ``exc`` itself."""
    if isinstance(exc, errors.HudiError):
        return exc
    found = _RAISED.findall(str(exc))
    if not found:
        return exc
    name, message = found[-1]
    cls = getattr(errors, name, None)
    if not (isinstance(cls, type) and issubclass(cls, errors.HudiError)):
        return exc
    return cls(message)
