"""The wiring of hudi-core's built-in components (top layer): registered through the same hooks as
external plugins, handed to the plugin manager by ``hudi_core/__init__``."""

from __future__ import annotations

from hudi_core.compaction.plugin import CoreCompaction
from hudi_core.keygen.plugin import CoreKeyGenerators
from hudi_core.plugins.hookspecs import Register, hookimpl
from hudi_core.storage.plugin import FsspecStoragePlugin, LocalStoragePlugin, MemoryStoragePlugin

__all__ = ["BUILTIN_PLUGINS"]


class CoreExecutors:
    @hookimpl
    def hudi_register_executors(self, register: Register) -> None:
        from hudi_core.executor.base import SimpleExecutor

        register("SIMPLE", SimpleExecutor)


class CoreEngines:
    @hookimpl
    def hudi_register_engines(self, register: Register) -> None:
        from hudi_core.engine.base import LocalEngine

        register("local", LocalEngine)


class CoreLockProviders:
    @hookimpl
    def hudi_register_lock_providers(self, register: Register) -> None:
        from hudi_core.lock import FileSystemLockProvider, InProcessLockProvider, NoopLockProvider

        register("noop", NoopLockProvider, aliases=("none",))
        register(
            "filesystem",
            FileSystemLockProvider,
            aliases=("org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider",),
        )
        register(
            "in-process",
            InProcessLockProvider,
            aliases=("org.apache.hudi.client.transaction.lock.InProcessLockProvider",),
        )


#: (plugin name, plugin object) of every built-in, in registration order
BUILTIN_PLUGINS: tuple[tuple[str, object], ...] = (
    ("core-storage-file", LocalStoragePlugin()),
    ("core-storage-memory", MemoryStoragePlugin()),
    ("core-storage-fsspec", FsspecStoragePlugin()),
    ("core-executors", CoreExecutors()),
    ("core-engines", CoreEngines()),
    ("core-lock-providers", CoreLockProviders()),
    ("core-key-generators", CoreKeyGenerators()),
    ("core-compaction", CoreCompaction()),
)
