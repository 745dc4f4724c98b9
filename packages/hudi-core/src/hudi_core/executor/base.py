"""The executor seam (seed 5.2.2): producer -> transform -> consumer for insert handles."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Generic, Protocol, TypeVar

__all__ = ["Consumer", "Executor", "SimpleExecutor"]

I = TypeVar("I")
O = TypeVar("O")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class Consumer(Protocol[O, R_co]):
    """The write handle side: takes transformed items, then returns its result."""

    def consume(self, item: O) -> None: ...

    def finish(self) -> R_co: ...


class Executor(Protocol):
    """Runs ``consumer.consume(transform(x))`` for every ``x`` of ``producer`` and returns
    ``consumer.finish()``. Implementations may run the producer on other threads, but must
    keep order, deliver every item once, stop promptly on an error on either side and raise
    it to the caller with its original traceback, and leave no thread running."""

    name: str

    def execute(
        self,
        producer: Iterable[I],
        transform: Callable[[I], O],
        consumer: Consumer[O, R],
    ) -> R: ...


class SimpleExecutor(Generic[I, O, R]):
    """Iterates the producer on the calling thread (Hudi's default SimpleExecutor)."""

    name = "SIMPLE"

    def __init__(self, config: object | None = None) -> None:
        self.config = config

    def execute(
        self,
        producer: Iterable[I],
        transform: Callable[[I], O],
        consumer: Consumer[O, R],
    ) -> R:
        for item in producer:
            consumer.consume(transform(item))
        return consumer.finish()
