"""`LibrdkafkaPartitioner` against real librdkafka producers (confluent-kafka) on a real broker:
for each partitioner, keyed and NULL-key records land where ours puts them."""

from __future__ import annotations

import asyncio
import os
import time

import pytest

from assignor.partitioners.librdkafka import LibrdkafkaPartitioner, partition_function
from tests.integration.test_aiokafka_integration import create_topic

confluent_kafka = pytest.importorskip("confluent_kafka")

pytestmark = pytest.mark.integration

PARTITIONS = 64
KEYS = [f"user-{i}".encode() for i in range(60)] + [b""]


def produced(bootstrap: str, topic: str, partitioner: str, keys: list[bytes | None]) -> list[int]:
    """The partition librdkafka chose for each record, from its delivery reports, in order.
    The sticky linger is long so that a NULL-key run never outlasts it."""
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "partitioner": partitioner,
                                         "sticky.partitioning.linger.ms": 60_000, "linger.ms": 5,
                                         "broker.address.family": "v4"})
    placed: dict[int, int] = {}

    def delivered(error, message, i):
        assert error is None, error
        placed[i] = message.partition()

    _wait_for_leaders(producer, topic)
    # A keyed record first, delivered: until then the producer's own handle of the topic has no
    # partition delegated to its leader, and records produced before its metadata arrived are
    # partitioned when it does, each NULL key then finding its sticky partition "unavailable"
    # and drawing a new one (62 partitions for 200 NULL keys, once in a full run). A keyed
    # record leaves the sticky partition alone.
    producer.produce(topic, value=b"warm-up", key=b"warm-up")
    assert producer.flush(30) == 0
    for i, key in enumerate(keys):
        producer.produce(topic, value=b"v", key=key, on_delivery=lambda e, m, i=i: delivered(e, m, i))
    assert producer.flush(30) == 0
    return [placed[i] for i in range(len(keys))]


def _wait_for_leaders(producer, topic: str, seconds: float = 30) -> None:
    """Until every partition of `topic` has a leader in the producer's metadata. librdkafka's
    random partitioners choose among the partitions available (with a leader) only: producing
    while some had none yet made ``test_partitions_equal_librdkafkas[random]`` fail once in a
    full run and pass alone."""
    deadline = time.monotonic() + seconds
    while True:
        metadata = producer.list_topics(topic, timeout=seconds).topics[topic]
        partitions = metadata.partitions
        if metadata.error is None and len(partitions) == PARTITIONS and all(
                p.leader >= 0 and p.error is None for p in partitions.values()):
            return
        assert time.monotonic() < deadline, f"{topic}: not every partition has a leader after {seconds} s"
        time.sleep(0.1)


@pytest.mark.parametrize("partitioner", ["consistent", "consistent_random", "murmur2", "murmur2_random", "fnv1a",
                                         "fnv1a_random", "random"])
def test_partitions_equal_librdkafkas(broker, partitioner):
    topic = asyncio.run(create_topic(broker.bootstrap, PARTITIONS))
    keys: list[bytes | None] = [*KEYS, *[None] * 200]
    real = produced(broker.bootstrap, topic, partitioner, keys)
    ours = LibrdkafkaPartitioner(partitioner, sticky_linger_ms=60_000, seed=int.from_bytes(os.urandom(4)))
    mine = [ours.partition(topic, key, PARTITIONS) for key in keys]
    null_real, null_mine = set(real[len(KEYS):]), set(mine[len(KEYS):])
    if partitioner == "random":
        # Keyed records anywhere (both spread them); NULL keys stick to one partition each.
        assert len(set(real[: len(KEYS)])) > 20 and len(set(mine[: len(KEYS)])) > 20
        assert len(null_real) == 1 and len(null_mine) == 1
        return
    # Keyed records (the empty key included) land where librdkafka's hash puts them.
    for key, r, m in zip(KEYS, real, mine, strict=False):
        if key or partitioner != "consistent_random":
            assert r == m == partition_function(partitioner.removesuffix("_random"), key, PARTITIONS), key
    if partitioner.endswith("_random"):  # NULL keys stick to one random partition
        assert len(null_real) == 1 and len(null_mine) == 1
        if partitioner == "consistent_random":  # where an empty key counts as NULL
            assert {real[len(KEYS) - 1]} == null_real and {mine[len(KEYS) - 1]} == null_mine
    else:  # hashed as no bytes: one fixed partition, the same
        assert null_real == null_mine == {partition_function(partitioner, None, PARTITIONS)}
