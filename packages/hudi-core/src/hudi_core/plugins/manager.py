"""The plugin manager: an object that loads the ``hudi_py`` entry points and the built-ins,
collects every registered component and selects them by name."""

from __future__ import annotations

import importlib.metadata
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pluggy

from hudi_core.errors import UnknownComponentError
from hudi_core.plugins import hookspecs

__all__ = [
    "COMPONENT_KINDS",
    "Component",
    "PluginManager",
    "add_builtin_plugins",
    "get_plugin_manager",
    "reset_plugin_manager",
]

# kind -> the registration hook that fills it
COMPONENT_KINDS: dict[str, str] = {
    "key_generator": "hudi_register_key_generators",
    "executor": "hudi_register_executors",
    "engine": "hudi_register_engines",
    "compaction_trigger": "hudi_register_compaction_triggers",
    "compaction_plan_strategy": "hudi_register_compaction_plan_strategies",
    "lock_provider": "hudi_register_lock_providers",
}

# Components that live in optional distributions: named in errors when they are missing.
_KNOWN_ELSEWHERE: dict[tuple[str, str], str] = {
    ("executor", "BOUNDED_IN_MEMORY"): "hudi-executors",
    ("executor", "DISRUPTOR"): "hudi-executors",
    ("engine", "SPARK"): "hudi-spark",
    ("storage", "S3"): "hudi-storage-s3",
    ("storage", "S3A"): "hudi-storage-s3",
}


@dataclass(frozen=True)
class Component:
    kind: str
    name: str
    factory: Callable[..., Any]
    aliases: tuple[str, ...]
    plugin: str
    distribution: str
    version: str


#: (plugin name, plugin object) of hudi-core's own components, registered in every manager
#: before the entry points; handed over by ``hudi_core/__init__`` (the top layer, imported
#: before any module of the package), so this layer imports none of the implementations
_BUILTINS: list[tuple[str, object]] = []


def add_builtin_plugins(plugins: Iterable[tuple[str, object]]) -> None:
    """Make ``plugins`` part of every manager created from now on (hudi-core's built-ins), and
    of the process-wide one if something asked for it already."""
    new = list(plugins)
    _BUILTINS.extend(new)
    with _LOCK:
        if _DEFAULT is not None:
            for name, plugin in new:
                _DEFAULT.register(plugin, name=name, distribution=("hudi-core", _core_version()))


def _core_version() -> str:
    try:
        return importlib.metadata.version("hudi-core")
    except importlib.metadata.PackageNotFoundError:  # running from a source tree
        return "unknown"


class PluginManager:
    """Loads plugins and answers "which component is called X?".

    >>> pm = PluginManager(load_entry_points=False)
    >>> pm.component("key_generator", "simple").name
    'SIMPLE'
    """

    def __init__(self, *, load_entry_points: bool = True, builtins: bool = True) -> None:
        self._pm = pluggy.PluginManager(hookspecs.PROJECT)
        self._pm.add_hookspecs(hookspecs)
        self._dist: dict[str, tuple[str, str]] = {}
        self._components: dict[str, dict[str, Component]] | None = None
        if builtins:
            version = _core_version()
            for name, plugin in _BUILTINS:
                self.register(plugin, name=name, distribution=("hudi-core", version))
        if load_entry_points:
            self._pm.load_setuptools_entrypoints(hookspecs.PROJECT)
            for plugin, dist in self._pm.list_plugin_distinfo():
                plugin_name = self._pm.get_name(plugin)
                if plugin_name is not None:
                    self._dist[plugin_name] = (dist.project_name, dist.version)
        self._pm.check_pending()

    # -- registration ----------------------------------------------------------------------------

    def register(
        self, plugin: object, *, name: str | None = None, distribution: tuple[str, str] | None = None
    ) -> str:
        """Register a plugin object (a module or an instance with ``@hookimpl`` methods)."""
        registered = self._pm.register(plugin, name=name)
        if registered is None:  # pragma: no cover - pluggy returns None only when blocked
            raise ValueError(f"plugin {name!r} is blocked")
        if distribution is not None:
            self._dist[registered] = distribution
        self._pm.check_pending()
        self._components = None
        return registered

    @property
    def hook(self) -> Any:
        return self._pm.hook

    def plugin_names(self) -> list[str]:
        return [n for n, _ in self._pm.list_name_plugin()]

    def distribution_of(self, plugin_name: str) -> tuple[str, str]:
        return self._dist.get(plugin_name, ("unknown", "unknown"))

    # -- components ------------------------------------------------------------------------------

    def _collect(self) -> dict[str, dict[str, Component]]:
        if self._components is not None:
            return self._components
        table: dict[str, dict[str, Component]] = {kind: {} for kind in COMPONENT_KINDS}
        for kind, hook_name in COMPONENT_KINDS.items():
            caller = getattr(self._pm.hook, hook_name)
            # Oldest registration first so a later plugin may override a built-in name.
            for impl in reversed(caller.get_hookimpls()):
                plugin_name = self._pm.get_name(impl.plugin) or repr(impl.plugin)
                dist, version = self.distribution_of(plugin_name)

                def register(
                    name: str,
                    factory: Callable[..., Any],
                    aliases: Iterable[str] = (),
                    *,
                    _kind: str = kind,
                    _plugin: str = plugin_name,
                    _dist: str = dist,
                    _version: str = version,
                ) -> None:
                    comp = Component(_kind, name.upper(), factory, tuple(aliases), _plugin, _dist, _version)
                    table[_kind][comp.name] = comp

                impl.function(register=register)
        self._components = table
        return table

    def components(self, kind: str) -> list[Component]:
        if kind not in COMPONENT_KINDS:
            raise UnknownComponentError(
                f"unknown component kind {kind!r}; kinds: {', '.join(COMPONENT_KINDS)}"
            )
        return list(self._collect()[kind].values())

    def component(self, kind: str, name: str) -> Component:
        """The component of ``kind`` registered as ``name`` (or one of its aliases)."""
        wanted = name.strip().upper()
        comps = self.components(kind)
        for comp in comps:
            if comp.name == wanted or wanted in (a.upper() for a in comp.aliases):
                return comp
        installed = ", ".join(sorted(c.name for c in comps)) or "none"
        hint = ""
        if (kind, wanted) in _KNOWN_ELSEWHERE:
            hint = f" It is provided by the {_KNOWN_ELSEWHERE[(kind, wanted)]} package: pip install {_KNOWN_ELSEWHERE[(kind, wanted)]}."
        raise UnknownComponentError(
            f"no {kind.replace('_', ' ')} named {name!r} is installed (installed: {installed}).{hint}"
        )

    def create(self, kind: str, name: str, *args: Any, **kwargs: Any) -> Any:
        """Instantiate the named component: ``factory(*args, **kwargs)``."""
        return self.component(kind, name).factory(*args, **kwargs)

    # -- storage ---------------------------------------------------------------------------------

    def storage_plugins(self) -> list[Component]:
        """Plugins implementing ``hudi_storage_for_uri``, in the order they are asked."""
        out = []
        for impl in self._pm.hook.hudi_storage_for_uri.get_hookimpls()[::-1]:
            plugin_name = self._pm.get_name(impl.plugin) or repr(impl.plugin)
            dist, version = self.distribution_of(plugin_name)
            names = getattr(impl.plugin, "STORAGE_NAME", plugin_name)
            out.append(Component("storage", str(names), impl.function, (), plugin_name, dist, version))
        return out

    def storage_for(self, uri: str, options: Mapping[str, str] | None = None) -> Any:
        storage = self._pm.hook.hudi_storage_for_uri(uri=uri, options=dict(options or {}))
        if storage is None:
            scheme = uri.split("://", 1)[0] if "://" in uri else "file"
            names = ", ".join(c.name for c in self.storage_plugins())
            hint = ""
            if ("storage", scheme.upper()) in _KNOWN_ELSEWHERE:
                pkg = _KNOWN_ELSEWHERE[("storage", scheme.upper())]
                hint = f" Install {pkg}: pip install {pkg}."
            raise UnknownComponentError(
                f"no storage plugin serves {scheme!r} URIs like {uri!r} (installed: {names}).{hint}"
            )
        return storage

    # -- listing ---------------------------------------------------------------------------------

    def describe(self) -> dict[str, list[dict[str, str]]]:
        """What `hudi-py plugins --json` prints: every component per kind with its distribution."""
        out: dict[str, list[dict[str, str]]] = {}
        out["storage"] = [
            {"name": c.name, "distribution": c.distribution, "version": c.version}
            for c in self.storage_plugins()
        ]
        for kind in COMPONENT_KINDS:
            out[kind] = [
                {"name": c.name, "distribution": c.distribution, "version": c.version}
                for c in sorted(self.components(kind), key=lambda c: c.name)
            ]
        return out


_DEFAULT: PluginManager | None = None
_LOCK = threading.Lock()


def get_plugin_manager() -> PluginManager:
    """The process-wide manager (entry points and built-ins), created on first use."""
    global _DEFAULT
    with _LOCK:
        if _DEFAULT is None:
            _DEFAULT = PluginManager()
        return _DEFAULT


def reset_plugin_manager(manager: PluginManager | None = None) -> None:
    """Replace (or drop) the process-wide manager; for tests."""
    global _DEFAULT
    with _LOCK:
        _DEFAULT = manager
