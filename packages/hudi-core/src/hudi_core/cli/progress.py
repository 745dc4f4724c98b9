"""A progress bar for long CLI work: drawn on a terminal, silent otherwise."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import TextIO

__all__ = ["Progress", "progress_bars"]


class Progress:
    """``with Progress(total, "compacting") as p: p.advance()``."""

    def __init__(
        self, total: int, label: str, *, stream: TextIO | None = None, enabled: bool | None = None
    ) -> None:
        self.total = max(int(total), 0)
        self.label = label
        self.done = 0
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self._last_draw = 0.0

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if self.enabled and (now - self._last_draw > 0.1 or self.done >= self.total):
            self._draw()
            self._last_draw = now

    def _draw(self) -> None:
        width = 30
        frac = (self.done / self.total) if self.total else 1.0
        filled = int(width * min(frac, 1.0))
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total}")
        self.stream.flush()

    def __enter__(self) -> Progress:
        if self.enabled:
            self._draw()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.enabled:
            self._draw()
            self.stream.write("\n")
            self.stream.flush()


@contextmanager
def progress_bars(label: str) -> Iterator[Callable[[int], Callable[[], None]]]:
    """For APIs that take ``progress(total) -> tick``: each call opens a bar, all close on exit.

    >>> with progress_bars("cleaning") as progress:  # doctest: +SKIP
    ...     clean(table, progress=progress)
    """
    bars: list[Progress] = []

    def start(total: int) -> Callable[[], None]:
        bar = Progress(total, label).__enter__()
        bars.append(bar)
        return bar.advance

    try:
        yield start
    finally:
        for bar in bars:
            bar.__exit__(None, None, None)
