"""Named-type bookkeeping for walking Avro schemas (records, enums, fixed can be referenced by name)."""

from __future__ import annotations

from typing import Any

from hudi_core.errors import SchemaMismatchError

__all__ = ["Names", "collect_names", "resolve"]

Names = dict[str, Any]

_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


def collect_names(schema: Any, names: Names | None = None, namespace: str = "") -> Names:
    """Every named type in ``schema`` under its full and its short name."""
    names = {} if names is None else names
    if isinstance(schema, list):
        for branch in schema:
            collect_names(branch, names, namespace)
    elif isinstance(schema, dict):
        kind = schema.get("type")
        if kind in ("record", "error", "enum", "fixed") and "name" in schema:
            name = schema["name"]
            ns = schema.get("namespace", namespace if "." not in name else name.rsplit(".", 1)[0])
            full = name if "." in name else (f"{ns}.{name}" if ns else name)
            names[full] = schema
            names.setdefault(full.rsplit(".", 1)[-1], schema)
            namespace = full.rsplit(".", 1)[0] if "." in full else ""
        if kind in ("record", "error"):
            for field in schema.get("fields", []):
                collect_names(field["type"], names, namespace)
        elif kind == "array":
            collect_names(schema["items"], names, namespace)
        elif kind == "map":
            collect_names(schema["values"], names, namespace)
        elif isinstance(kind, (dict, list)):
            collect_names(kind, names, namespace)
    return names


def resolve(node: Any, names: Names) -> Any:
    """``node`` with a by-name reference replaced by the named type it refers to."""
    if isinstance(node, str) and node not in _PRIMITIVES:
        found = names.get(node) or names.get(node.rsplit(".", 1)[-1])
        if found is None:
            raise SchemaMismatchError(f"Avro schema refers to unknown type {node!r}")
        return found
    if isinstance(node, dict) and isinstance(node.get("type"), str) and len(node) == 1:
        return resolve(node["type"], names)
    return node
