"""KIP-794's built-in partitioner (Kafka 3.3+), the logic the producer runs when no
``partitioner.class`` is set.

Keyless records (and keyed ones with ``partitioner.ignore.keys``) stick to a partition until
``batch.size`` bytes were produced to it, then switch. The next partition is uniform among the
available ones, or, with ``partitioner.adaptive.partitioning.enable`` (the default), weighted by
queue sizes: weight = max queue + 1 - queue (in batches), picked through a cumulative frequency
table, so partitions on slower brokers are chosen less. With ``partitioner.availability.timeout.ms``
> 0, partitions whose ready data has waited longer than the timeout are left out.

Two switch rules: the KIP's original one switches as soon as ``batch.size`` bytes were produced;
Kafka 3.3+ (KAFKA-14156) defers the switch while the partition still has an open batch (to avoid
fractional batches), but switches at ``2 x batch.size`` regardless. Keyed records never touch the
byte counter. Call `partition` for each record, then `on_append` with the bytes the accumulator
counted for it (a record that opened a new batch counts the batch header too).
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from assignor.partitioners.keyless import _choices, _count
from assignor.partitioners.murmur import PartitionerError, partition_for_key

__all__ = ["BuiltInPartitioner"]

SWITCH_RULES = ("deferred", "kip")


@dataclass
class _Sticky:
    partition: int
    num_partitions: int  # metadata seen when the partition was chosen, for the next switch
    available: Sequence[int] | None
    produced: int = 0


@dataclass(frozen=True)
class _Load:
    cumulative: list[int]  # running sums of weights
    partitions: list[int]


class BuiltInPartitioner:
    """One producer's built-in partitioning state (per instance, seeded for repeatable runs).

    Examples
    --------
    >>> p = BuiltInPartitioner(batch_size=100, seed=1)
    >>> first = p.partition("t", None, 4)
    >>> p.on_append("t", first, 60, open_batch=False); p.partition("t", None, 4) == first
    True
    >>> p.on_append("t", first, 60, open_batch=False); p.partition("t", None, 4) != first
    True
    """

    def __init__(self, batch_size: int = 16384, *, adaptive: bool = True, availability_timeout_ms: float = 0,
                 ignore_keys: bool = False, switch_rule: str = "deferred", seed: int | None = None) -> None:
        if batch_size <= 0:
            raise PartitionerError(f"batch.size must be positive, got {batch_size}")
        if switch_rule not in SWITCH_RULES:
            raise PartitionerError(f"switch_rule must be one of {SWITCH_RULES}, got {switch_rule!r}")
        self.batch_size = batch_size
        self.adaptive = adaptive
        self.availability_timeout_ms = availability_timeout_ms
        self.ignore_keys = ignore_keys
        self.switch_rule = switch_rule
        self._rng = random.Random(seed)
        self._sticky: dict[str, _Sticky] = {}
        self._load: dict[str, _Load | None] = {}

    def partition(self, topic: str, key: bytes | None, num_partitions: int | None,
                  available: Sequence[int] | None = None) -> int:
        """The partition for the next record of `topic` (keyed: murmur2 over all partitions)."""
        num_partitions = _count(topic, num_partitions)
        choices = _choices(topic, num_partitions, available)
        if key is not None and not self.ignore_keys:
            return partition_for_key(key, num_partitions)
        sticky = self._sticky.get(topic)
        if sticky is None or sticky.partition >= num_partitions:
            first = self._next(topic, num_partitions, choices)
            sticky = self._sticky[topic] = _Sticky(first, num_partitions, available)
        else:
            sticky.num_partitions, sticky.available = num_partitions, available
        return sticky.partition

    def on_append(self, topic: str, partition: int, appended_bytes: int, *, open_batch: bool,
                  num_partitions: int | None = None, available: Sequence[int] | None = None) -> None:
        """Count bytes produced to the sticky partition; switch once enough went there.

        `open_batch`: the partition still has a batch that can take more records (the deferred
        rule waits for it to fill, up to 2 x batch.size). Appends to another partition (keyed
        records) are not counted. Without `num_partitions`, the switch uses the metadata given to
        the last `partition` call for this topic.
        """
        sticky = self._sticky.get(topic)
        if sticky is None or sticky.partition != partition:
            return
        sticky.produced += appended_bytes
        full = sticky.produced >= self.batch_size
        if self.switch_rule == "deferred":
            switch = (full and not open_batch) or sticky.produced >= 2 * self.batch_size
        else:
            switch = full
        if switch:
            if num_partitions is None:
                num_partitions, available = sticky.num_partitions, sticky.available
            choices = _choices(topic, num_partitions, available)
            self._sticky[topic] = _Sticky(self._next(topic, num_partitions, choices), num_partitions, available)

    def update_load(self, topic: str, queue_sizes: Mapping[int, int],
                    waiting_ms: Mapping[int, float] | None = None) -> None:
        """Give the partitioner each partition's queue size in batches (the accumulator's view)
        and, for the availability timeout, how long its ready data has waited to be sent."""
        if not self.adaptive:
            self._load[topic] = None
            return
        candidates = sorted(queue_sizes)
        if self.availability_timeout_ms > 0 and waiting_ms:
            candidates = [p for p in candidates if waiting_ms.get(p, 0) <= self.availability_timeout_ms]
        sizes = [queue_sizes[p] for p in candidates]
        # Fewer than 2 partitions in the topic: nothing to adapt. All queues equal and none left
        # out: uniform choice (Java drops the table in both cases).
        if not candidates or len(queue_sizes) < 2 or (len(set(sizes)) == 1 and len(candidates) == len(queue_sizes)):
            self._load[topic] = None
            return
        top = max(sizes) + 1
        running, cumulative = 0, []
        for size in sizes:
            running += top - size
            cumulative.append(running)
        self._load[topic] = _Load(cumulative, candidates)

    def _next(self, topic: str, num_partitions: int, choices: list[int]) -> int:
        load = self._load.get(topic)
        if load is not None:
            pick = self._rng.randrange(load.cumulative[-1])
            return load.partitions[bisect.bisect_right(load.cumulative, pick)]
        if choices:
            return choices[self._rng.randrange(len(choices))]
        return self._rng.randrange(num_partitions)
