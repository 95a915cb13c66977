"""Partitioners for records without a key: round-robin and KIP-480's sticky partitioner.

Metadata is given per call: ``num_partitions`` (all partitions of the topic, None when the
topic has no metadata) and ``available`` (partitions whose leader is known; None means all).
State lives on the instance, one per producer, never on the class.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from assignor.partitioners.murmur import PartitionerError, partition_for_key, to_positive

__all__ = ["DefaultPartitioner", "RoundRobinPartitioner", "StickyPartitioner"]


def _count(topic: str, num_partitions: int | None) -> int:
    """`num_partitions`, checked: a topic with metadata and at least one partition."""
    if num_partitions is None:
        raise PartitionerError(f"topic {topic!r} has no metadata")
    if not isinstance(num_partitions, int) or isinstance(num_partitions, bool) or num_partitions <= 0:
        raise PartitionerError(f"topic {topic!r}: a topic needs at least one partition, got {num_partitions!r}")
    return num_partitions


def _choices(topic: str, num_partitions: int | None, available: Sequence[int] | None) -> list[int]:
    """The partitions a keyless record may go to: the available ones, or all."""
    num_partitions = _count(topic, num_partitions)
    if available is None:
        return list(range(num_partitions))
    usable = sorted({p for p in available if 0 <= p < num_partitions})
    return usable


class RoundRobinPartitioner:
    """Java's RoundRobinPartitioner: a counter per topic, over the available partitions (all
    partitions when none is available). One count per record: Java called ``partition`` twice for
    the first record of a new batch (KAFKA-9965), skipping partitions and skewing the spread.

    Examples
    --------
    >>> rr = RoundRobinPartitioner()
    >>> [rr.partition("t", 3) for _ in range(5)]
    [0, 1, 2, 0, 1]
    >>> [rr.partition("t", 4, available=[1, 3]) for _ in range(3)]  # the topic's counter goes on
    [3, 1, 3]
    """

    def __init__(self) -> None:
        self._counters: dict[str, int] = {}

    def partition(self, topic: str, num_partitions: int | None, available: Sequence[int] | None = None) -> int:
        num_partitions = _count(topic, num_partitions)
        choices = _choices(topic, num_partitions, available)
        value = self._counters.get(topic, 0)
        self._counters[topic] = (value + 1) & 0xFFFFFFFF  # Java's AtomicInteger wraps; toPositive below
        value = to_positive(value)
        return choices[value % len(choices)] if choices else value % num_partitions


class StickyPartitioner:
    """KIP-480: keyless records stick to one partition until a new batch is needed, then move
    to a *different* available partition (the only one when one is available; any partition
    when none is). This is Java's StickyPartitionCache behind UniformStickyPartitioner.

    `on_new_batch` changes the sticky partition only when the batch that filled up belongs to
    it, so a late call for an older partition does not make the producer switch twice.

    Examples
    --------
    >>> sticky = StickyPartitioner(seed=7)
    >>> first = sticky.partition("t", 6)
    >>> sticky.partition("t", 6) == first
    True
    >>> sticky.on_new_batch("t", 6, first) != first
    True
    """

    def __init__(self, *, seed: int | None = None, rng: random.Random | None = None) -> None:
        self._rng = rng if rng is not None else random.Random(seed)
        self._sticky: dict[str, int] = {}

    def partition(self, topic: str, num_partitions: int | None, available: Sequence[int] | None = None) -> int:
        current = self._sticky.get(topic)
        if current is None or not 0 <= current < (num_partitions or 0):
            return self._next(topic, num_partitions, available, None)
        _choices(topic, num_partitions, available)  # still validates the metadata
        return current

    def on_new_batch(self, topic: str, num_partitions: int | None, prev_partition: int,
                     available: Sequence[int] | None = None) -> int:
        current = self._sticky.get(topic)
        if current is not None and current != prev_partition:
            _choices(topic, num_partitions, available)
            return current
        return self._next(topic, num_partitions, available, current)

    def _next(self, topic: str, num_partitions: int | None, available: Sequence[int] | None,
              old: int | None) -> int:
        choices = _choices(topic, num_partitions, available)
        if not choices:
            new = self._rng.randrange(_count(topic, num_partitions))
        elif len(choices) == 1:
            new = choices[0]
        else:
            others = [p for p in choices if p != old]
            new = others[self._rng.randrange(len(others))]
        self._sticky[topic] = new
        return new


class DefaultPartitioner:
    """Java's DefaultPartitioner since KIP-480: keyed records by murmur2 over all partitions,
    keyless records sticky."""

    def __init__(self, *, seed: int | None = None) -> None:
        self.sticky = StickyPartitioner(seed=seed)

    def partition(self, topic: str, key: bytes | None, num_partitions: int | None,
                  available: Sequence[int] | None = None) -> int:
        if key is None:
            return self.sticky.partition(topic, num_partitions, available)
        return partition_for_key(key, _count(topic, num_partitions))

    def on_new_batch(self, topic: str, num_partitions: int | None, prev_partition: int,
                     available: Sequence[int] | None = None) -> int:
        return self.sticky.on_new_batch(topic, num_partitions, prev_partition, available)
