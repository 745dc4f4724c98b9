from __future__ import annotations

import re
from pathlib import Path

import pytest
from hudi_core import hookimpl
from hudi_core.errors import UnknownComponentError
from hudi_core.plugins import hookspecs
from hudi_core.plugins.manager import COMPONENT_KINDS, PluginManager

DOCS = Path(__file__).resolve().parents[4] / "docs" / "hooks.md"


class FakeKeygen:
    def __init__(self, config: object) -> None:
        self.config = config


class FakePlugin:
    @hookimpl
    def hudi_register_key_generators(self, register) -> None:  # type: ignore[no-untyped-def]
        register("REVERSED", FakeKeygen, aliases=("com.example.ReversedKeyGenerator",))

    @hookimpl
    def hudi_register_executors(self, register) -> None:  # type: ignore[no-untyped-def]
        register("BOUNDED_IN_MEMORY", lambda config: "fake-executor")


def test_a_fake_plugin_on_a_fresh_manager_registers_components() -> None:
    pm = PluginManager(load_entry_points=False)
    pm.register(FakePlugin(), name="fake", distribution=("fake-dist", "9.9"))
    comp = pm.component("key_generator", "com.example.ReversedKeyGenerator")
    assert (comp.name, comp.distribution, comp.version, comp.plugin) == (
        "REVERSED",
        "fake-dist",
        "9.9",
        "fake",
    )
    assert isinstance(pm.create("key_generator", "reversed", {"a": 1}), FakeKeygen)
    listing = pm.describe()
    assert {"name": "REVERSED", "distribution": "fake-dist", "version": "9.9"} in listing["key_generator"]
    # a later plugin may override a name; the built-in SIMPLE executor stays
    assert pm.create("executor", "BOUNDED_IN_MEMORY", None) == "fake-executor"
    assert pm.component("executor", "SIMPLE").distribution == "hudi-core"


def test_an_unknown_name_lists_what_is_installed() -> None:
    pm = PluginManager(load_entry_points=False)
    with pytest.raises(UnknownComponentError) as e:
        pm.component("engine", "flink")
    assert "'flink'" in str(e.value) and "LOCAL" in str(e.value)


def test_a_missing_optional_component_names_the_package_to_install() -> None:
    pm = PluginManager(load_entry_points=False)
    with pytest.raises(UnknownComponentError, match="hudi-executors"):
        pm.component("executor", "disruptor")
    with pytest.raises(UnknownComponentError, match="hudi-spark"):
        pm.component("engine", "spark")


def test_a_misspelled_hook_is_caught_at_registration() -> None:
    class Typo:
        @hookimpl
        def hudi_register_key_generator(self, register) -> None:  # type: ignore[no-untyped-def]  # missing "s"
            pass

    pm = PluginManager(load_entry_points=False)
    with pytest.raises(Exception, match="unknown hook"):
        pm.register(Typo(), name="typo")


def test_storage_plugins_claim_their_schemes_and_fsspec_comes_last() -> None:
    pm = PluginManager(load_entry_points=False)
    assert type(pm.storage_for("/tmp/x")).__name__ == "LocalStorage"
    assert type(pm.storage_for("file:///tmp/x")).__name__ == "LocalStorage"
    assert type(pm.storage_for("memory://x")).__name__ == "MemoryStorage"
    names = [c.name for c in pm.storage_plugins()]
    assert names[-1] == "fsspec"
    with pytest.raises(UnknownComponentError, match="no storage plugin serves 'nosuch'"):
        pm.storage_for("nosuch://bucket/t")


def test_installed_entry_points_are_loaded_with_their_distribution() -> None:
    pm = PluginManager()
    comp = pm.component("executor", "DISRUPTOR")
    assert comp.distribution == "hudi-executors"
    assert pm.component("engine", "spark").distribution == "hudi-spark"


def test_every_hook_is_documented() -> None:
    text = DOCS.read_text()
    hooks = [n for n in dir(hookspecs) if n.startswith("hudi_") and callable(getattr(hookspecs, n))]
    assert len(hooks) >= 7
    for name in hooks:
        assert re.search(rf"^## `{name}\(", text, re.M), f"{name} is not documented in docs/hooks.md"
        assert getattr(hookspecs, name).__doc__, f"{name} has no docstring"
    for kind, hook in COMPONENT_KINDS.items():
        assert hook in hooks, kind
