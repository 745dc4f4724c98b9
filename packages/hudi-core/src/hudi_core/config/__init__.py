"""Configuration: declared ``hoodie.*`` properties, grouped by concept."""

from __future__ import annotations

from hudi_core.config.properties import dump_properties, load_properties
from hudi_core.config.property import ConfigProperty, HoodieConfig, all_properties
from hudi_core.config.storage import StorageOptions
from hudi_core.config.table import TableOptions
from hudi_core.config.write import IndexOptions, WriteOptions

__all__ = [
    "ConfigProperty",
    "HoodieConfig",
    "IndexOptions",
    "StorageOptions",
    "TableOptions",
    "WriteOptions",
    "all_properties",
    "dump_properties",
    "load_properties",
]
