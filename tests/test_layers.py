"""One-way layers (docs/architecture.md, "Layers"): every import in hudi_core goes to its own
layer or one below, and no two of its subpackages (nor two modules of hudi_spark) import each
other in a circle. Imports are read with ``ast`` as a linter reads them: every import counts,
also one inside a function; only those under ``if TYPE_CHECKING:`` (annotations) do not."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "packages"

#: hudi_core's layers, bottom first: a unit is a subpackage or a module directly under hudi_core
#: (``__init__`` is the package itself). Mirrors the table in docs/architecture.md.
CORE_LAYERS: list[tuple[str, set[str]]] = [
    ("values", {"errors", "config", "schema", "avro", "bloom", "keymatch", "java_text"}),
    ("plugins", {"plugins"}),
    ("storage and execution", {"storage", "engine", "executor"}),
    ("timeline", {"timeline"}),
    ("table", {"table"}),
    ("files", {"log", "io", "fs_view", "keygen", "lock"}),
    ("read", {"read"}),
    ("write", {"write"}),
    ("table services", {"compaction", "clustering", "clean", "archival", "savepoint"}),
    ("write client", {"client"}),
    ("facade", {"hudi_table", "builtin_plugins", "cli", "testing", "__init__"}),
]


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                out |= {id(n) for n in ast.walk(node)}
    return out


def imports(package: str) -> Iterator[tuple[str, int, str]]:
    """``(module, line, imported module)`` of every import of ``package`` by its own modules."""
    src = next(ROOT.glob(f"*/src/{package}"))
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src.parent).with_suffix("")
        parts = list(rel.parts)
        is_init = parts[-1] == "__init__"
        module = ".".join(parts[:-1] if is_init else parts)
        tree = ast.parse(path.read_text(), str(path))
        skip = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = module.split(".") if is_init else module.split(".")[:-1]
                    base = base[: len(base) - node.level + 1]
                    mod = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    mod = node.module or ""
                # ``from pkg import sub`` imports the module ``pkg.sub``, ``from pkg import name`` pkg
                targets = [
                    f"{mod}.{a.name}" if _is_module(src.parent, f"{mod}.{a.name}") else mod
                    for a in node.names
                ]
            else:
                continue
            for target in targets:
                if target == package or target.startswith(package + "."):
                    yield module, node.lineno, target


def _is_module(root: Path, dotted: str) -> bool:
    path = root.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _core_unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_every_hudi_core_unit_has_a_layer() -> None:
    src = next(ROOT.glob("*/src/hudi_core"))
    units = {p.stem for p in src.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
    layered = set().union(*(units for _, units in CORE_LAYERS))
    assert units - layered == set(), "give each new subpackage a layer here and in docs/architecture.md"


def test_hudi_core_imports_go_down_the_layers() -> None:
    layer = {unit: n for n, (_, units) in enumerate(CORE_LAYERS) for unit in units}
    upward = [
        f"{module}:{line} imports {target} ({CORE_LAYERS[layer[_core_unit(module)]][0]} -> "
        f"{CORE_LAYERS[layer[_core_unit(target)]][0]})"
        for module, line, target in imports("hudi_core")
        if layer[_core_unit(target)] > layer[_core_unit(module)]
    ]
    assert upward == [], "imports up a layer:\n" + "\n".join(upward)


@pytest.mark.parametrize(("package", "unit"), [("hudi_core", _core_unit), ("hudi_spark", lambda m: m)])
def test_no_import_cycles(package: str, unit: object) -> None:
    edges: dict[str, set[str]] = {}
    for module, _, target in imports(package):
        a, b = unit(module), unit(target)  # type: ignore[operator]
        if a != b:
            edges.setdefault(a, set()).add(b)
    assert _cycles(edges) == []


def test_the_checker_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    """The rule's reader itself: a function-level import up a layer is found, one under
    TYPE_CHECKING is not."""
    code = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from hudi_core.write.client import X\n"
        "def f():\n    from hudi_core.read import read_table\n"
    )
    tree = ast.parse(code)
    skip = _type_checking_nodes(tree)
    seen = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and id(n) not in skip]
    assert seen == ["typing", "hudi_core.read"]
