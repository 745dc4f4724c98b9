"""Producer threads shared by the threaded executors: one thread per input."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from hudi_core.executor.base import Producers, close_iterator

__all__ = ["ProducerThreads", "inputs_of"]

In = TypeVar("In")
Out = TypeVar("Out")


def inputs_of(producer: Iterable[In]) -> list[Iterable[In]]:
    """The inputs to run one thread each for: a :class:`Producers`' inputs, else the one."""
    return list(producer.inputs) if isinstance(producer, Producers) else [producer]


class ProducerThreads(Generic[In, Out]):
    """Runs ``publish(transform(x))`` for each ``x`` of each input on its own thread.

    ``publish`` returns False when the executor was halted; the thread then stops. The first
    exception raised by an input or by ``transform`` is kept in :attr:`error` (the original
    object, with its traceback) and ``halt()`` is called so the consumer stops promptly.
    ``done()`` is called once per thread when it ends, whatever the outcome.
    """

    def __init__(
        self,
        inputs: list[Iterable[In]],
        transform: Callable[[In], Out],
        *,
        publish: Callable[[Out], bool],
        done: Callable[[], None],
        halt: Callable[[], None],
        name: str,
    ) -> None:
        self._transform = transform
        self._publish = publish
        self._done = done
        self._halt = halt
        self._lock = threading.Lock()
        self.error: BaseException | None = None
        self._threads = [
            threading.Thread(target=self._run, args=(src,), name=f"hudi-{name}-producer-{i}", daemon=True)
            for i, src in enumerate(inputs)
        ]

    def __len__(self) -> int:
        return len(self._threads)

    def start(self) -> None:
        for t in self._threads:
            t.start()

    def join(self) -> None:
        for t in self._threads:
            if t.ident is not None:
                t.join()

    def _run(self, source: Iterable[In]) -> None:
        it: Any = None
        try:
            it = iter(source)
            for item in it:
                if not self._publish(self._transform(item)):
                    break
        except BaseException as e:
            with self._lock:
                if self.error is None:
                    self.error = e
            self._halt()
        finally:
            try:
                if it is not None:
                    close_iterator(it)
            except BaseException as e:
                with self._lock:
                    if self.error is None:
                        self.error = e
                self._halt()
            self._done()
