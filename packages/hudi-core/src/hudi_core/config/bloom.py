"""Bloom filter options of base files (spec 6.3); Hudi's ``hoodie.index.bloom.*`` keys."""

from __future__ import annotations

from hudi_core.config.property import ConfigProperty

__all__ = ["BloomOptions"]


def _b(key: str, default: object, doc: str, *aliases: str) -> ConfigProperty:  # type: ignore[type-arg]
    return ConfigProperty(key, default, doc, aliases=aliases, group="index")


class BloomOptions:
    NUM_ENTRIES = _b(
        "hoodie.index.bloom.num_entries",
        60000,
        "Keys per bloom filter row; sizes the bit vector together with the fpp.",
    )
    FPP = _b("hoodie.index.bloom.fpp", 0.000000001, "Target false positive probability.")
    FILTER_TYPE = _b(
        "hoodie.bloom.index.filter.type", "DYNAMIC_V0", "Bloom filter type: DYNAMIC_V0 or SIMPLE."
    )
    DYNAMIC_MAX_ENTRIES = _b(
        "hoodie.bloom.index.filter.dynamic.max.entries",
        100000,
        "DYNAMIC_V0: keys after which rows are reused round-robin instead of added.",
    )
