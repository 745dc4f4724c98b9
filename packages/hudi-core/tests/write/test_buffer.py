from __future__ import annotations

import pyarrow as pa
from hudi_core.config.property import HoodieConfig
from hudi_core.write.buffer import WriteBuffer


def test_bucket_and_total_limits_flush_full_then_largest_bucket() -> None:
    rows = pa.table({"x": pa.array(range(100), pa.int64())})  # 800 bytes
    flushed: list[tuple[str, int]] = []
    cfg = HoodieConfig({"hoodie.write.buffer.bucket.max.bytes": "2000",
                        "hoodie.write.buffer.total.max.bytes": "2500"})  # fmt: skip
    buf = WriteBuffer(cfg, lambda b, t: flushed.append((str(b), t.num_rows)), seed=1)
    buf.add("a", rows)
    buf.add("a", rows)
    assert flushed == []
    buf.add("b", rows)  # total 2400: still under
    assert flushed == []
    buf.add("b", rows.slice(0, 50))  # total 2800 > 2500: the largest bucket ("a", 1600) goes
    assert flushed == [("a", 200)]
    buf.add("b", rows)  # b reaches 2000: flushed on its own limit
    assert flushed == [("a", 200), ("b", 250)]
    buf.add("c", rows.slice(0, 10))
    buf.flush_all()
    assert flushed[-1] == ("c", 10) and buf.total_bytes == 0
