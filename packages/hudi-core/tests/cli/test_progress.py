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
