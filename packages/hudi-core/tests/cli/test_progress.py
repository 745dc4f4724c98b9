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
