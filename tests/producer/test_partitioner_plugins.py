"""librdkafka's partitioners, the plug-in interface and the region/priority examples."""

from __future__ import annotations

import zlib

import pytest

from assignor.partitioners import PartitionerError, fnv1a, partition_for_key, partition_function
from assignor.partitioners.examples import parse_mapping
from assignor.partitioners.librdkafka import LIBRDKAFKA_PARTITIONERS, LibrdkafkaPartitioner
from assignor.partitioners.plugin import Cluster, Partitioner, Record, choose, create, names, register

# librdkafka's own FNV-1a unit test values (computed with Go's hash/fnv), keys as in its test.
FNV1A = {b"kafka": 0xD33C4E1, b"giberish123456789": 0x77A58295, b"1234": 0x23BDD03, b"234": 0x2DEA3CD2,
         b"34": 0x740FA83E, b"4": 0x310CA263, b"PreAmbleWillBeRemoved,ThePrePartThatIs": 0x65CBD69C,
         b"reAmbleWillBeRemoved,ThePrePartThatIs": 0x6E49C79A, b"eAmbleWillBeRemoved,ThePrePartThatIs": 0x69EED356,
         b"AmbleWillBeRemoved,ThePrePartThatIs": 0x6ABCC023, b"": 0x7EE3623B}


@pytest.mark.parametrize(("key", "expected"), FNV1A.items())
def test_fnv1a_matches_librdkafka(key, expected):
    assert fnv1a(key) == expected


def test_fnv1a_of_null_is_that_of_no_bytes():
    assert fnv1a(None) == 0x7EE3623B


@pytest.mark.parametrize("count", [1, 3, 7, 12, 100])
def test_hash_partitioners(count):
    for i in range(200):
        key = b"key-%d" % i
        assert partition_function("consistent", key, count) == zlib.crc32(key) % count
        assert partition_function("consistent_random", key, count) == zlib.crc32(key) % count
        assert partition_function("murmur2", key, count) == partition_for_key(key, count)
        assert partition_function("murmur2_random", key, count) == partition_for_key(key, count)
        assert partition_function("fnv1a", key, count) == fnv1a(key) % count
        assert partition_function("fnv1a_random", key, count) == fnv1a(key) % count


def test_null_and_empty_key_rules():
    # consistent: NULL and empty hash as no bytes (crc32 = 0) -> partition 0.
    assert {partition_function("consistent", k, 12) for k in (None, b"")} == {0}
    # murmur2 / fnv1a: NULL and empty hash as no bytes.
    assert partition_function("murmur2", None, 12) == partition_function("murmur2", b"", 12) == \
        partition_for_key(b"", 12)
    assert partition_function("fnv1a", None, 12) == 0x7EE3623B % 12
    # _random variants: NULL is random; an empty key still hashes, except consistent_random.
    assert partition_function("murmur2_random", b"", 12) == partition_for_key(b"", 12)
    assert partition_function("fnv1a_random", b"", 12) == 0x7EE3623B % 12
    spread = {partition_function(name, key, 12) for name, key in
              [("consistent_random", b""), ("consistent_random", None), ("murmur2_random", None),
               ("fnv1a_random", None), ("random", b"k")] for _ in range(40)}
    assert len(spread) > 6


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_producer_sticks_null_keys_for_the_linger_then_renews():
    clock = Clock()
    producer = LibrdkafkaPartitioner("consistent_random", sticky_linger_ms=10, seed=4, clock=clock)
    first = {producer.partition("t", None, 50) for _ in range(20)} | {producer.partition("t", b"", 50)}
    assert len(first) == 1
    picks = set()
    for step in range(1, 30):
        clock.now = step * 0.011  # past the 10 ms linger each time
        picks.add(producer.partition("t", None, 50))
    assert len(picks) > 10
    # An unavailable sticky partition is left at once.
    current = producer.partition("t", None, 50)
    others = [p for p in range(50) if p != current]
    assert producer.partition("t", None, 50, available=others) in others
    # Keyed records never stick.
    assert producer.partition("t", b"abc", 50) == zlib.crc32(b"abc") % 50


def test_random_sticks_null_keys_and_spreads_keyed_records():
    """librdkafka's `random` picks at random, so its NULL-key records stick (librdkafka 2.16.0
    kept 200 of them on one partition of 64); keyed records still go anywhere."""
    producer = LibrdkafkaPartitioner("random", seed=1, clock=Clock())
    assert len({producer.partition("t", None, 64) for _ in range(200)}) == 1
    assert len({producer.partition("t", b"k", 64) for _ in range(200)}) > 40
    unstuck = LibrdkafkaPartitioner("random", sticky_linger_ms=0, seed=1, clock=Clock())
    assert len({unstuck.partition("t", None, 64) for _ in range(200)}) > 40


@pytest.mark.parametrize(("name", "partition"), [("consistent", 0), ("murmur2", 25), ("fnv1a", 59)])
def test_hashing_partitioners_hash_null_keys(name, partition):
    """consistent, murmur2 and fnv1a hash a NULL key as no bytes: every NULL key to one fixed
    partition (for 64 partitions: 0, 25 and 59, as librdkafka 2.16.0 placed them), no stickiness."""
    clock = Clock()
    producer = LibrdkafkaPartitioner(name, seed=3, clock=clock)
    placed = set()
    for step in range(100):
        clock.now = step * 0.011  # a sticky partition would be renewed each time
        placed.add(producer.partition("t", None, 64))
    assert placed == {partition} == {partition_function(name, None, 64)}


@pytest.mark.parametrize("name", ["consistent_random", "murmur2_random", "fnv1a_random"])
def test_random_variants_stick_null_keys_only(name):
    producer = LibrdkafkaPartitioner(name, seed=2, clock=Clock())
    assert len({producer.partition("t", None, 64) for _ in range(100)}) == 1
    empty = {producer.partition("t", b"", 64) for _ in range(100)}
    if name == "consistent_random":  # an empty key is treated as NULL there
        assert empty == {producer.partition("t", None, 64)}
    else:  # hashed as no bytes
        assert empty == {partition_function(name.removesuffix("_random"), b"", 64)}


@pytest.mark.parametrize("name", LIBRDKAFKA_PARTITIONERS)
def test_errors_for_no_partitions_and_no_metadata(name):
    producer = LibrdkafkaPartitioner(name)
    for count in (0, None, -3):
        with pytest.raises(PartitionerError):
            producer.partition("t", b"k", count)
    with pytest.raises(PartitionerError, match="partitioner"):
        LibrdkafkaPartitioner("crc64")


def test_plugins_by_name_with_checked_answers():
    assert {"default", "roundrobin", "uniform_sticky", "builtin", "region", "priority",
            "librdkafka:murmur2_random"} <= set(names())
    cluster = Cluster({"orders": 6})
    default = create("default", {"seed": 1})
    assert choose(default, Record("orders", b"user-7"), cluster) == partition_for_key(b"user-7", 6)
    roundrobin = create("roundrobin")
    assert [choose(roundrobin, Record("orders"), cluster) for _ in range(7)] == [0, 1, 2, 3, 4, 5, 0]
    librdkafka = create("librdkafka:fnv1a")
    assert choose(librdkafka, Record("orders", b"kafka"), cluster) == 0xD33C4E1 % 6
    with pytest.raises(PartitionerError, match="no metadata"):
        choose(default, Record("payments", b"k"), cluster)
    with pytest.raises(PartitionerError, match="unknown partitioner 'nope'"):
        create("nope")


def test_a_partitioner_returning_a_bad_partition_is_named():
    @register("test-broken")
    class Broken(Partitioner):
        def partition(self, record, cluster):
            return 99

    with pytest.raises(PartitionerError, match="Broken returned 99"):
        choose(create("test-broken"), Record("t"), Cluster({"t": 3}))
    with pytest.raises(PartitionerError, match="already registered"):
        register("test-broken")(Broken)


def test_region_partitioner_keeps_each_region_in_its_range():
    region = create("region", {"region.partition.mapping": "US:0-2,EU:3-5,APAC:6-8"})
    cluster = Cluster({"orders": 9})
    for i in range(100):
        key = b"customer-%d" % i
        eu = choose(region, Record("orders", key, {"region": "EU"}), cluster)
        assert eu == [3, 4, 5][partition_for_key(key, 3)]
        assert choose(region, Record("orders", key, {"region": "MARS"}), cluster) == partition_for_key(key, 9)

    class Order:
        region = "APAC"

    keyless = [choose(region, Record("orders", None, Order()), cluster) for _ in range(6)]
    assert keyless == [6, 7, 8, 6, 7, 8]
    with pytest.raises(PartitionerError, match="partition 8 does not exist"):
        choose(region, Record("orders", b"k", {"region": "US"}), Cluster({"orders": 8}))


def test_priority_partitioner_bands():
    priority = create("priority")
    cluster = Cluster({"events": 10})
    for i in range(100):
        key = b"e-%d" % i
        assert choose(priority, Record("events", key, {"priority": "HIGH"}), cluster) in (0, 1)
        assert 2 <= choose(priority, Record("events", key, {"priority": "normal"}), cluster) <= 7
        assert choose(priority, Record("events", key, {"priority": "LOW"}), cluster) in (8, 9)
        assert choose(priority, Record("events", key, {}), cluster) == partition_for_key(key, 10)
    assert choose(priority, Record("events", None, {"priority": "LOW"}), cluster) == 8


@pytest.mark.parametrize(("text", "message"), [
    ("", "expected NAME"), ("US:2-1", "FIRST <= LAST"), ("US:a-b", "not NAME"), ("US:0,US:1", "twice"),
    (None, "expected NAME"),
])
def test_bad_mappings_are_named(text, message):
    with pytest.raises(PartitionerError, match=message):
        parse_mapping(text, "region.partition.mapping")


@pytest.mark.parametrize("name", ["consistent", "murmur2", "fnv1a"])
def test_vectorised_partitioners_equal_the_per_key_ones(name):
    """The service's vectorised hashing (`partitions_for_keys_as`) against librdkafka's formula
    key by key, over keys of every length from 0 to 40 bytes."""
    import random

    from assignor.partitioners.librdkafka import partitions_for_keys_as

    rng = random.Random(name)
    keys = [bytes(rng.randrange(256) for _ in range(rng.randrange(41))) for _ in range(3000)]
    for count in (1, 7, 64, 1000):
        assert partitions_for_keys_as(name, keys, count).tolist() == [partition_function(name, k, count) for k in keys]
