"""Round-robin and KIP-480 sticky partitioners (Java semantics, state per instance)."""

from __future__ import annotations

from collections import Counter

import pytest

from assignor.partitioners import (
    DefaultPartitioner,
    PartitionerError,
    RoundRobinPartitioner,
    StickyPartitioner,
    partition_for_key,
)


def test_round_robin_spreads_evenly_without_the_kafka_9965_skip():
    """KAFKA-9965: Java counted the first record of every new batch twice, so with batches of
    one record it skipped every other partition. One count per record spreads exactly."""
    rr = RoundRobinPartitioner()
    counts = Counter(rr.partition("t", 7) for _ in range(7000))
    assert set(counts.values()) == {1000}


def test_round_robin_uses_available_partitions_and_counts_per_topic():
    rr = RoundRobinPartitioner()
    assert [rr.partition("a", 4, available=[2, 0]) for _ in range(4)] == [0, 2, 0, 2]
    assert rr.partition("b", 4) == 0  # another topic, its own counter
    assert rr.partition("c", 3, available=[]) in {0, 1, 2}  # none available: any partition
    assert RoundRobinPartitioner().partition("a", 4) == 0  # instances share nothing


def test_sticky_switches_only_when_its_batch_fills():
    sticky = StickyPartitioner(seed=1)
    first = sticky.partition("t", 8)
    assert {sticky.partition("t", 8) for _ in range(50)} == {first}
    stale = (first + 1) % 8
    assert sticky.on_new_batch("t", 8, stale) == first  # a batch of another partition: no switch
    second = sticky.on_new_batch("t", 8, first)
    assert second != first and sticky.partition("t", 8) == second


def test_sticky_available_rules():
    sticky = StickyPartitioner(seed=2)
    assert sticky.partition("one", 5, available=[3]) == 3
    assert sticky.on_new_batch("one", 5, 3, available=[3]) == 3  # the only available one
    assert sticky.partition("none", 5, available=[]) in range(5)  # none available: any partition
    seen = Counter()
    current = sticky.partition("spread", 6)
    for _ in range(6000):
        current = sticky.on_new_batch("spread", 6, current)
        seen[current] += 1
    assert len(seen) == 6 and min(seen.values()) > 800  # every partition, roughly evenly


def test_sticky_is_deterministic_with_a_seed():
    def run(seed):
        sticky = StickyPartitioner(seed=seed)
        out = [sticky.partition("t", 9)]
        for _ in range(20):
            out.append(sticky.on_new_batch("t", 9, out[-1]))
        return out

    assert run(5) == run(5)


def test_default_partitioner_keyed_and_keyless():
    default = DefaultPartitioner(seed=3)
    assert default.partition("t", b"order-7", 12) == partition_for_key(b"order-7", 12)
    assert default.partition("t", b"order-7", 12, available=[0]) == partition_for_key(b"order-7", 12)  # all partitions
    keyless = default.partition("t", None, 12)
    assert default.partition("t", None, 12) == keyless


@pytest.mark.parametrize("make", [RoundRobinPartitioner, StickyPartitioner])
@pytest.mark.parametrize(("count", "message"), [(0, "at least one partition"), (None, "no metadata"),
                                                (-2, "at least one partition")])
def test_no_partitions_or_no_metadata_is_a_clear_error(make, count, message):
    with pytest.raises(PartitionerError, match=message):
        make().partition("t", count)
