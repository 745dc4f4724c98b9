"""Declared configuration properties and a config object that resolves them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from hudi_core.errors import ConfigError

__all__ = ["ConfigProperty", "HoodieConfig", "all_properties"]

T = TypeVar("T")

_REGISTRY: dict[str, ConfigProperty[Any]] = {}
#: option keys whose values are credentials (masked in ``repr``)
_SECRET_RE = re.compile(r"secret|password|token|access[._]?key|credential", re.IGNORECASE)


@dataclass(frozen=True)
class ConfigProperty(Generic[T]):
    """One option: its Hudi key, default, doc, the release it appeared in and its aliases."""

    key: str
    default: T
    doc: str
    since: str = "0.1.0"
    aliases: tuple[str, ...] = field(default=())
    group: str = "write"

    def __post_init__(self) -> None:
        _REGISTRY[self.key] = self

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.key, *self.aliases)

    def parse(self, raw: Any) -> T:
        """Convert a raw (usually string) value to the type of the default."""
        if raw is None:
            return self.default
        default = self.default
        try:
            if isinstance(default, bool):
                if isinstance(raw, bool):
                    return raw  # type: ignore[return-value]
                text = str(raw).strip().lower()
                if text not in ("true", "false"):
                    raise ValueError(raw)
                return text == "true"  # type: ignore[return-value]
            if isinstance(default, int):
                return int(raw)  # type: ignore[return-value]
            if isinstance(default, float):
                return float(raw)  # type: ignore[return-value]
        except (TypeError, ValueError) as e:
            raise ConfigError(f"option {self.key}={raw!r} is not a valid {type(default).__name__}") from e
        return str(raw) if default is None or isinstance(default, str) else raw  # type: ignore[return-value]


def all_properties() -> dict[str, ConfigProperty[Any]]:
    """Every declared property, by key (for docs and `hudi-py` help)."""
    return dict(_REGISTRY)


class HoodieConfig(Mapping[str, str]):
    """String options (Hudi's `hoodie.*` keys) with typed, alias-aware look-ups.

    >>> HoodieConfig({"hoodie.table.name": "trips"}).get_str(TableOptions.NAME)  # doctest: +SKIP
    'trips'
    """

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        self._props: dict[str, str] = {}
        for k, v in (options or {}).items():
            if v is not None:
                self._props[str(k)] = v if isinstance(v, str) else _to_str(v)

    def __getitem__(self, key: str) -> str:
        return self._props[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._props)

    def __len__(self) -> int:
        return len(self._props)

    def __repr__(self) -> str:
        # credentials never show: a repr ends up in logs and tracebacks
        shown = {k: "***" if _SECRET_RE.search(k) else v for k, v in self._props.items()}
        return f"HoodieConfig({shown!r})"

    def raw(self, prop: ConfigProperty[Any]) -> str | None:
        for k in prop.keys:
            if k in self._props:
                return self._props[k]
        return None

    def contains(self, prop: ConfigProperty[Any]) -> bool:
        return self.raw(prop) is not None

    def get(self, prop: ConfigProperty[T] | str, default: Any = None) -> Any:  # type: ignore[override]
        if isinstance(prop, str):
            return self._props.get(prop, default)
        return prop.parse(self.raw(prop))

    def get_str(self, prop: ConfigProperty[Any]) -> str | None:
        raw = self.raw(prop)
        if raw is None:
            return None if prop.default is None else str(prop.default)
        return raw

    def get_list(self, prop: ConfigProperty[Any]) -> list[str]:
        raw = self.get_str(prop)
        if not raw:
            return []
        return [p.strip() for p in raw.split(",") if p.strip()]

    def with_options(self, options: Mapping[str, Any]) -> HoodieConfig:
        merged: dict[str, Any] = dict(self._props)
        merged.update({k: v for k, v in options.items() if v is not None})
        return HoodieConfig(merged)

    def set(self, prop: ConfigProperty[Any] | str, value: Any) -> None:
        key = prop if isinstance(prop, str) else prop.key
        if value is None:
            self._props.pop(key, None)
        else:
            self._props[key] = value if isinstance(value, str) else _to_str(value)

    def to_dict(self) -> dict[str, str]:
        return dict(self._props)

    def items_with_prefix(self, prefix: str) -> Iterable[tuple[str, str]]:
        return ((k, v) for k, v in self._props.items() if k.startswith(prefix))


def _to_str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)
