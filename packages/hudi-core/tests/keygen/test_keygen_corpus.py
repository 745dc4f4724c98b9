"""Key generators reproduce the keys and partition paths Hudi Spark wrote into the corpus."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hudi_core.config import HoodieConfig, load_properties
from hudi_core.keygen import key_generator_for
from hudi_core.testing.corpus import corpus_root


def _tables() -> list[Path]:
    root = corpus_root()
    if root is None:
        return []
    return sorted(p.parent.parent for p in (root / "tables").glob("*/*/.hoodie/hoodie.properties"))


def _properties(table: Path) -> HoodieConfig:
    return HoodieConfig(load_properties((table / ".hoodie" / "hoodie.properties").read_text()))


def _base_files(table: Path) -> list[Path]:
    return sorted(table.rglob("*.parquet"))


TABLES = [t for t in _tables() if _base_files(t)]


@pytest.mark.skipif(not TABLES, reason="compat corpus not available")
@pytest.mark.parametrize("table", TABLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_keys_and_partitions_match_hudi(table: Path) -> None:
    config = _properties(table)
    kg = key_generator_for(config)
    meta_fields = config.get("hoodie.populate.meta.fields", "true") != "false"
    checked = 0
    for f in _base_files(table):
        data = pq.read_table(f)
        partitions = kg.partition_paths(data).to_pylist()
        keys = kg.record_keys(data).to_pylist()
        rel_dir = f.parent.relative_to(table).as_posix()
        assert set(partitions) == {"" if rel_dir == "." else rel_dir}
        if meta_fields:
            assert keys == data.column("_hoodie_record_key").to_pylist()
            assert partitions == data.column("_hoodie_partition_path").to_pylist()
        else:
            assert keys == [str(v) for v in data.column("id").to_pylist()]
        checked += data.num_rows
    assert checked > 0
