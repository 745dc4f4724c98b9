"""Each plugin is a separate wheel: hudi-core alone has no BOUNDED_IN_MEMORY executor and says
which package to install; installing the hudi-executors wheel adds both executors."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def _uv() -> str:
    for candidate in (Path(sys.executable).parent / "uv", ROOT / ".venv" / "bin" / "uv"):
        if candidate.exists():
            return str(candidate)
    found = shutil.which("uv")
    if found is None:
        pytest.fail("uv is needed to build and install the wheels: pip install uv")
    return found


def _env() -> dict[str, str]:
    # Nothing of the dev venv (editable installs, PYTHONPATH) may leak into the fresh one.
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env["PYTHONNOUSERSITE"] = "1"
    return env


def _run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, capture_output=True, text=True, env=_env(), timeout=300)
    if check and proc.returncode != 0:
        pytest.fail(f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def _build_wheel(uv: str, package: str, tmp: Path, out: Path) -> Path:
    # Build from a copy so the shared checkout gets no build/ or egg-info churn.
    src = tmp / "src" / package
    shutil.copytree(
        ROOT / "packages" / package,
        src,
        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "tests"),
    )
    _run(uv, "build", "--wheel", "--quiet", "--out-dir", str(out), str(src))
    dist = package.replace("-", "_")
    (wheel,) = out.glob(f"{dist}-*.whl")
    return wheel


def _executors(python: Path) -> dict[str, dict[str, str]]:
    cli = python.parent / "hudi-py"
    listed = json.loads(_run(str(cli), "plugins", "--json").stdout)
    return {c["name"]: c for c in listed["executor"]}


def test_plugins_install_individually(tmp_path: Path) -> None:
    uv = _uv()
    wheels = tmp_path / "wheels"
    core_wheel = _build_wheel(uv, "hudi-core", tmp_path, wheels)
    executors_wheel = _build_wheel(uv, "hudi-executors", tmp_path, wheels)
    version = importlib.metadata.version("hudi-executors")  # the checkout's (editable) version

    venv = tmp_path / "venv"
    _run(uv, "venv", "--quiet", "--python", sys.executable, str(venv))
    python = venv / "bin" / "python"
    _run(uv, "pip", "install", "--quiet", "--python", str(python), str(core_wheel))

    where = _run(str(python), "-c", "import hudi_core; print(hudi_core.__file__)").stdout.strip()
    assert Path(where).is_relative_to(venv)  # the wheel, not the checkout

    # hudi-core alone: only SIMPLE, and asking for BOUNDED_IN_MEMORY names the package.
    executors = _executors(python)
    assert set(executors) == {"SIMPLE"}
    assert executors["SIMPLE"]["distribution"] == "hudi-core"
    select = (
        "from hudi_core.executor import executor_for\n"
        "ex = executor_for({'hoodie.write.executor.type': 'BOUNDED_IN_MEMORY'})\n"
        "print(type(ex).__module__)\n"
    )
    proc = _run(str(python), "-c", select, check=False)
    assert proc.returncode != 0
    assert "UnknownComponentError" in proc.stderr
    assert "pip install hudi-executors" in proc.stderr

    # Add the plugin wheel: both executors appear, from hudi-executors at its version.
    _run(uv, "pip", "install", "--quiet", "--python", str(python), str(executors_wheel))
    executors = _executors(python)
    assert set(executors) == {"SIMPLE", "BOUNDED_IN_MEMORY", "DISRUPTOR"}
    for name in ("BOUNDED_IN_MEMORY", "DISRUPTOR"):
        assert executors[name]["distribution"] == "hudi-executors"
        assert executors[name]["version"] == version
    proc = _run(str(python), "-c", select)
    assert proc.stdout.strip() == "hudi_executors.bounded_in_memory"
