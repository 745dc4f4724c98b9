from __future__ import annotations

import io

from hudi_core.cli.progress import Progress


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_draws_on_a_terminal() -> None:
    out = _Tty()
    with Progress(3, "cleaning", stream=out) as bar:
        for _ in range(3):
            bar.advance()
    text = out.getvalue()
    assert "cleaning [" in text and "3/3" in text and text.endswith("\n")


def test_progress_is_silent_when_not_on_a_terminal() -> None:
    out = io.StringIO()
    with Progress(3, "cleaning", stream=out) as bar:
        bar.advance(3)
    assert out.getvalue() == ""


def test_a_write_reports_progress_once_per_file_group(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import pyarrow as pa
    from hudi_core import HudiTable

    t = HudiTable.create(str(tmp_path), name="t", record_key_fields="id", partition_fields="p")
    seen: list[int] = []
    ticks: list[int] = []

    def progress(total: int):  # type: ignore[no-untyped-def]
        seen.append(total)
        return lambda: ticks.append(1)

    data = pa.table({"id": [1, 2, 3, 4], "p": ["a", "b", "c", "c"]})
    result = t._write(data, "insert", None, progress=progress)
    assert seen == [result.files_written] == [3]
    assert len(ticks) == 3


def test_a_bulk_insert_reports_progress_once_per_share_of_its_rows(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import pyarrow as pa
    from hudi_core import HudiTable

    # a bulk_insert in input order rolls its files at bytes written: it cannot count them before
    # writing, so it announces its tasks (contiguous shares of the rows, one per engine thread)
    t = HudiTable.create(str(tmp_path), name="t", record_key_fields="id", partition_fields="p",
                         options={"hoodie.local.engine.parallelism": "2"})  # fmt: skip
    seen: list[int] = []
    ticks: list[int] = []

    def progress(total: int):  # type: ignore[no-untyped-def]
        seen.append(total)
        return lambda: ticks.append(1)

    n = 200_000
    data = pa.table({"id": pa.array(range(n)), "p": pa.array(["a", "b"] * (n // 2))})
    result = t._write(data, "bulk_insert", None, progress=progress)
    assert seen == [2] and len(ticks) == 2
    assert result.inserted == n and result.files_written == 4  # a file per partition per share
    assert t.read().num_rows == n
