"""The executor seam (seed 5.2.2): producer -> transform -> consumer for insert handles."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Generic, Protocol, TypeVar

__all__ = ["Consumer", "Executor", "Producers", "SimpleExecutor", "as_config", "close_iterator"]

In = TypeVar("In")
Out = TypeVar("Out")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)
Out_contra = TypeVar("Out_contra", contravariant=True)


class Consumer(Protocol[Out_contra, R_co]):
    """The write handle side: takes transformed items, then returns its result."""

    def consume(self, item: Out_contra) -> None: ...

    def finish(self) -> R_co: ...


class Producers(Generic[In]):
    """Several inputs for one execution: a threaded executor runs one producer per input.

    Order is kept within each input; items of different inputs interleave. Iterating it chains
    the inputs, so an executor that knows nothing of it (SIMPLE) still delivers every item.

    >>> list(Producers([[1, 2], [3]]))
    [1, 2, 3]
    """

    def __init__(self, inputs: Iterable[Iterable[In]]) -> None:
        self.inputs: list[Iterable[In]] = list(inputs)

    def __iter__(self) -> Iterator[In]:
        return itertools.chain.from_iterable(self.inputs)

    def __len__(self) -> int:
        return len(self.inputs)


class Executor(Protocol):
    """Runs ``consumer.consume(transform(x))`` for every ``x`` of ``producer`` and returns
    ``consumer.finish()``. Implementations may run the producer (and ``transform``) on other
    threads, but must keep order, deliver every item once, stop promptly on an error on either
    side and raise it to the caller with its original traceback, and leave no thread running.
    ``producer`` may be a :class:`Producers` (several inputs)."""

    name: str

    def execute(
        self,
        producer: Iterable[In],
        transform: Callable[[In], Out],
        consumer: Consumer[Out, R],
    ) -> R: ...


def as_config(config: object | None) -> Any:
    """A :class:`HoodieConfig` from None, a mapping of options or a HoodieConfig."""
    from hudi_core.config.property import HoodieConfig

    if isinstance(config, HoodieConfig):
        return config
    if config is None:
        return HoodieConfig()
    if isinstance(config, Mapping):
        return HoodieConfig(config)
    raise TypeError(f"executor config must be a HoodieConfig or a mapping, not {type(config).__name__}")


class SimpleExecutor:
    """Iterates the producer on the calling thread (Hudi's default SimpleExecutor)."""

    name = "SIMPLE"

    def __init__(self, config: object | None = None) -> None:
        self.config = config

    def execute(
        self,
        producer: Iterable[In],
        transform: Callable[[In], Out],
        consumer: Consumer[Out, R],
    ) -> R:
        inputs = producer.inputs if isinstance(producer, Producers) else [producer]
        for source in inputs:
            it = iter(source)
            try:
                for item in it:
                    consumer.consume(transform(item))
            finally:
                # On an error, close a generator input now so its cleanup runs promptly.
                close_iterator(it)
        return consumer.finish()


def close_iterator(it: Iterator[Any]) -> None:
    """Close ``it`` if it is a generator (or anything with ``close``); no-op otherwise."""
    close = getattr(it, "close", None)
    if callable(close):
        close()
