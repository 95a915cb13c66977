"""KIP-794's built-in partitioner: byte-counted switching (both rules), adaptive weights,
availability timeout, ignore.keys."""

from __future__ import annotations

from collections import Counter

import pytest

from assignor.partitioners import BuiltInPartitioner, PartitionerError, partition_for_key


def produce(p, topic, records, size, partitions=6, open_batch=False):
    seen = []
    for _ in range(records):
        part = p.partition(topic, None, partitions)
        p.on_append(topic, part, size, open_batch=open_batch, num_partitions=partitions)
        seen.append(part)
    return seen


def test_kip_rule_switches_at_batch_size_even_with_an_open_batch():
    p = BuiltInPartitioner(batch_size=1000, switch_rule="kip", seed=1)
    seen = produce(p, "t", 10, 250, open_batch=True)
    assert len(set(seen[:4])) == 1 and seen[4] != seen[3]  # 4 x 250 bytes, then a new partition


def test_deferred_rule_waits_for_the_open_batch_but_not_past_twice_batch_size():
    """KAFKA-14156: switching while the partition's batch is still open leaves a fractional
    batch behind; 3.3+ waits, but never past 2 x batch.size."""
    p = BuiltInPartitioner(batch_size=1000, seed=1)
    open_run = produce(p, "t", 9, 250, open_batch=True)
    assert len(set(open_run[:8])) == 1 and open_run[8] != open_run[7]  # switched at 2000 bytes
    q = BuiltInPartitioner(batch_size=1000, seed=1)
    closed_run = produce(q, "t", 5, 250, open_batch=False)
    assert len(set(closed_run[:4])) == 1 and closed_run[4] != closed_run[3]  # at 1000 bytes


def test_keyed_records_never_touch_the_counter():
    p = BuiltInPartitioner(batch_size=100, seed=3)
    sticky = p.partition("t", None, 8)
    for i in range(50):
        keyed = p.partition("t", b"k%d" % i, 8)
        assert keyed == partition_for_key(b"k%d" % i, 8)
        if keyed != sticky:  # the accumulator reports keyed appends too; they must not count
            p.on_append("t", keyed, 1000, open_batch=False, num_partitions=8)
    assert p.partition("t", None, 8) == sticky


def test_ignore_keys_makes_keyed_records_sticky():
    p = BuiltInPartitioner(ignore_keys=True, seed=4)
    assert {p.partition("t", b"k%d" % i, 8) for i in range(20)} == {p.partition("t", None, 8)}


def test_adaptive_weights_follow_queue_sizes():
    """The KIP's example: queues 0, 3, 1 -> weights 4, 1, 3 -> cumulative 4, 5, 8."""
    p = BuiltInPartitioner(batch_size=1, seed=5)
    p.update_load("t", {0: 0, 1: 3, 2: 1})
    assert p._load["t"].cumulative == [4, 5, 8]
    picks = Counter(produce(p, "t", 16000, 1, partitions=3))
    assert abs(picks[0] / 16000 - 4 / 8) < 0.02
    assert abs(picks[1] / 16000 - 1 / 8) < 0.02
    assert abs(picks[2] / 16000 - 3 / 8) < 0.02


def test_equal_queues_or_adaptive_off_are_uniform():
    for p in (BuiltInPartitioner(batch_size=1, seed=6), BuiltInPartitioner(batch_size=1, adaptive=False, seed=6)):
        p.update_load("t", {0: 2, 1: 2, 2: 2} if p.adaptive else {0: 0, 1: 9, 2: 0})
        assert p._load.get("t") is None
        picks = Counter(produce(p, "t", 9000, 1, partitions=3))
        assert all(abs(picks[i] - 3000) < 250 for i in range(3))


def test_availability_timeout_leaves_slow_partitions_out():
    p = BuiltInPartitioner(batch_size=1, availability_timeout_ms=5, seed=7)
    p.update_load("t", {0: 1, 1: 1, 2: 1}, waiting_ms={1: 12.0})
    assert set(produce(p, "t", 500, 1, partitions=3)) == {0, 2}
    off = BuiltInPartitioner(batch_size=1, availability_timeout_ms=5, adaptive=False, seed=7)
    off.update_load("t", {0: 1, 1: 1, 2: 1}, waiting_ms={1: 12.0})  # ignored without adaptive
    assert set(produce(off, "t", 500, 1, partitions=3)) == {0, 1, 2}


@pytest.mark.parametrize(
    ("make", "message"),
    [(lambda: BuiltInPartitioner(batch_size=0), "batch.size"),
     (lambda: BuiltInPartitioner(switch_rule="sometimes"), "switch_rule"),
     (lambda: BuiltInPartitioner().partition("t", None, 0), "at least one partition"),
     (lambda: BuiltInPartitioner().partition("t", None, None), "no metadata")],
)
def test_bad_configuration_or_metadata(make, message):
    with pytest.raises(PartitionerError, match=message):
        make()


def test_switch_without_metadata_uses_what_partition_was_given():
    """Regression: on_append without num_partitions used to guess partition + 1 partitions, so a
    producer sticky on partition 0 could only ever switch to partition 0."""
    p = BuiltInPartitioner(batch_size=1, seed=8)
    seen = set()
    for _ in range(200):
        part = p.partition("t", None, 6)
        p.on_append("t", part, 1, open_batch=False)
        seen.add(part)
    assert seen == set(range(6))
