"""Apache Hudi (table version 6) tables in Python."""

from __future__ import annotations

__version__ = "0.1.0"

from hudi_core.builtin_plugins import BUILTIN_PLUGINS
from hudi_core.errors import (
    CommitConflictError,
    ConfigError,
    CorruptedLogBlockError,
    HudiError,
    InvalidRecordKeyError,
    SchemaMismatchError,
    StorageError,
    TableNotFoundError,
    TimelineError,
    UnknownComponentError,
    UnsafePathError,
    UnsupportedTableVersionError,
)
from hudi_core.hudi_table import HudiTable
from hudi_core.plugins.hookspecs import hookimpl
from hudi_core.plugins.manager import add_builtin_plugins

add_builtin_plugins(BUILTIN_PLUGINS)

__all__ = [
    "CommitConflictError",
    "ConfigError",
    "CorruptedLogBlockError",
    "HudiError",
    "HudiTable",
    "InvalidRecordKeyError",
    "SchemaMismatchError",
    "StorageError",
    "TableNotFoundError",
    "TimelineError",
    "UnknownComponentError",
    "UnsafePathError",
    "UnsupportedTableVersionError",
    "__version__",
    "hookimpl",
]
