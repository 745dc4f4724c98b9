"""Key generators (spec 7): record keys and partition paths of a batch, vectorised with Arrow.

>>> from hudi_core.config import HoodieConfig
>>> kg = key_generator_for(HoodieConfig({
...     "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator",
...     "hoodie.table.recordkey.fields": "id,name", "hoodie.table.partition.fields": "p"}))
>>> import pyarrow as pa
>>> kg.record_keys(pa.table({"id": [1], "name": ["Alice"], "p": [10]})).to_pylist()
['id:1,name:Alice']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hudi_core.config.keygen import KeyGenOptions
from hudi_core.config.property import HoodieConfig
from hudi_core.config.table import TableOptions
from hudi_core.config.write import WriteOptions
from hudi_core.errors import ConfigError
from hudi_core.keygen.auto import PENDING_INSTANT, AutoRecordKeys, generates_keys
from hudi_core.keygen.base import KeyGenerator
from hudi_core.keygen.custom import CustomKeyGenerator
from hudi_core.keygen.partition import DEFAULT_PARTITION_PATH, escape_path_name
from hudi_core.keygen.simple import ComplexKeyGenerator, NonpartitionedKeyGenerator, SimpleKeyGenerator
from hudi_core.keygen.timestamp import TimestampBasedKeyGenerator

if TYPE_CHECKING:
    from hudi_core.plugins.manager import PluginManager

__all__ = [
    "DEFAULT_PARTITION_PATH",
    "AutoRecordKeys",
    "ComplexKeyGenerator",
    "CustomKeyGenerator",
    "KeyGenerator",
    "NonpartitionedKeyGenerator",
    "SimpleKeyGenerator",
    "TimestampBasedKeyGenerator",
    "escape_path_name",
    "key_generator_for",
    "key_generator_name",
    "write_key_generator",
]


def _inferred_name(config: HoodieConfig) -> str:
    # Hudi's inference when no class is configured: partition fields decide.
    keys = config.raw(WriteOptions.RECORDKEY_FIELD) or config.raw(TableOptions.RECORDKEY_FIELDS) or ""
    parts = config.raw(WriteOptions.PARTITIONPATH_FIELD) or config.raw(TableOptions.PARTITION_FIELDS) or ""
    part_list = [p for p in parts.split(",") if p.strip()]
    if not part_list:
        return "NON_PARTITION"
    if len(part_list) > 1 or len([k for k in keys.split(",") if k.strip()]) > 1:
        return "COMPLEX"
    return "SIMPLE"


def key_generator_name(config: HoodieConfig, manager: PluginManager | None = None) -> str:
    """The registered name of the generator the config asks for (table config wins; a write
    config naming a different generator is an error, as in Java)."""
    from hudi_core.plugins.manager import get_plugin_manager

    pm = manager or get_plugin_manager()
    table_choice = config.raw(TableOptions.KEYGEN_CLASS) or config.raw(TableOptions.KEYGEN_TYPE)
    write_choice = config.raw(WriteOptions.KEYGEN_CLASS) or config.raw(WriteOptions.KEYGEN_TYPE)
    table_name = pm.component("key_generator", table_choice).name if table_choice else None
    write_name = pm.component("key_generator", write_choice).name if write_choice else None
    if table_name and write_name and table_name != write_name:
        raise ConfigError(
            f"the table uses key generator {table_choice!r} but the write asks for {write_choice!r}; "
            "drop hoodie.datasource.write.keygenerator.class or make it match the table"
        )
    return table_name or write_name or _inferred_name(config)


def key_generator_for(config: HoodieConfig, *, manager: PluginManager | None = None) -> KeyGenerator:
    """The key generator for a table/write config, chosen through the plugin manager."""
    from hudi_core.plugins.manager import get_plugin_manager

    pm = manager or get_plugin_manager()
    kg: KeyGenerator = pm.create("key_generator", key_generator_name(config, pm), config)
    return kg


def write_key_generator(config: HoodieConfig, *, task: int = 0) -> KeyGenerator | AutoRecordKeys:
    """The key generator of a write's records: the table's, or, when neither the table nor the
    write names a record key field, one that makes the keys up (:mod:`hudi_core.keygen.auto`)
    for the instant in ``_hoodie.record.key.gen.instant`` (else one to stamp later), ``task``
    numbering the write's tasks."""
    keygen = key_generator_for(config)
    if not generates_keys(config):
        return keygen
    return AutoRecordKeys(keygen, config.get_str(KeyGenOptions.AUTO_KEY_INSTANT) or PENDING_INSTANT, task)
