"""hudi-core's built-in components come from the top layer (``hudi_core/__init__`` hands
``builtin_plugins`` to the manager): a process that imports only a low-level module still
finds them, since Python runs the package's ``__init__`` first."""

from __future__ import annotations

import subprocess
import sys


def test_a_process_importing_only_the_plugin_manager_finds_the_builtins() -> None:
    code = (
        "from hudi_core.plugins.manager import get_plugin_manager\n"
        "pm = get_plugin_manager()\n"
        "print(pm.component('lock_provider', 'filesystem').distribution,"
        " pm.component('key_generator', 'simple').distribution, pm.storage_for('/tmp/x').__class__.__name__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["hudi-core", "hudi-core", "LocalStorage"]
