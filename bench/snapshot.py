"""Reading live groups (`assignor.cluster`): a cluster of 1,000 small groups read on the test
broker (Apache Kafka 4.3.1, one node), and the largest group a snapshot may meet, decoded and
built from its Metadata and DescribeGroups responses (2,000 members holding 1,000,000 partitions: no broker
here holds that many, so the response's bytes are written by our tables, which tests hold to
Java's), beside the time to plan that group with its own strategy.

The 1,000 groups hold committed offsets and no members (each made by one OffsetCommit): what a
snapshot pays per group (FindCoordinator, ListGroups, DescribeGroups in batches), not per member.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any


def large(repeat: int = 3) -> dict[str, Any]:
    """Decode a 2,000-member, 1M-partition DescribeGroups response and build its snapshot."""
    from assignor import assign, protocol
    from assignor.cluster.snapshot import classic_group, topics_of
    from assignor.topic_ids import derived_topic_id
    from assignor.wire import admin, codec, compiled
    from assignor.workloads import java_large

    group = java_large("uniform", 500, 2000, 2000)
    started = time.perf_counter()
    plan = assign("cooperative-sticky", group)
    planning = time.perf_counter() - started
    members = []
    for m in group.members:
        owned = plan.assignment[m.id]
        metadata = protocol.encode_subscription(protocol.Subscription(m.topics, owned_partitions=owned,
                                                                      generation_id=5), version=3)
        members.append((m.id, None, "client", "/10.0.0.1", metadata,
                        protocol.encode_assignment(protocol.Assignment(owned))))
    response = codec.encode(admin.DESCRIBE_GROUPS.response, {"throttle_time_ms": 0, "groups": [
        (0, "big", "Stable", "consumer", "cooperative-sticky", members, 0)]}, admin.DESCRIBE_GROUPS.version)
    topics = codec.encode(admin.METADATA.response, {
        "throttle_time_ms": 0, "brokers": [(1, "h", 9092, None)], "cluster_id": "c", "controller_id": 1,
        "topics": [(0, name, str(derived_topic_id(name)), False, [(0, p, 1, 0, [1], [1], []) for p in range(count)],
                    -2147483648) for name, count in group.topics.items()]},
        admin.METADATA.version)
    best = float("inf")
    for _ in range(repeat):  # the two responses as the client reads them (`assignor.cluster.connection`)
        started = time.perf_counter()
        metadata = compiled.decode(admin.METADATA.response, topics, admin.METADATA.version)
        described = compiled.decode(admin.DESCRIBE_GROUPS.response, response, admin.DESCRIBE_GROUPS.version)
        built = classic_group(described["groups"][0], topics_of(metadata))
        best = min(best, time.perf_counter() - started)
    assert isinstance(built, dict) and sum(len(m["owned"]) for m in built["members"]) == 1_000_000
    return {"bytes": len(response) + len(topics), "snapshot_s": best, "plan_s": planning}


def fleet(groups: int = 1000, repeat: int = 3) -> dict[str, Any]:
    """Read `groups` groups of the test broker with ``snapshot --all``."""
    import asyncio

    from confluent_kafka import ConsumerGroupTopicPartitions
    from confluent_kafka import TopicPartition as Offset
    from confluent_kafka.admin import AdminClient

    from assignor.cluster import read_snapshot, settings_of
    from bench.broker import Broker
    from bench.rebalance import create_topic

    with tempfile.TemporaryDirectory() as directory:
        broker = Broker(Path(directory) / "kafka")
        try:
            topic = asyncio.run(create_topic(broker.bootstrap, 1))
            admin = AdminClient({"bootstrap.servers": broker.bootstrap, "broker.address.family": "v4"})
            futures = [admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(
                f"fleet-{i:04d}", [Offset(topic, 0, 0)])]) for i in range(groups)]
            for batch in futures:
                for future in batch.values():
                    future.result(60)
            best, found = float("inf"), None
            for _ in range(repeat):
                started = time.perf_counter()
                found = asyncio.run(read_snapshot(settings_of(broker.bootstrap), None))
                best = min(best, time.perf_counter() - started)
        finally:
            broker.stop()
    assert found is not None and len(found["groups"]) >= groups, found
    return {"groups": len(found["groups"]), "seconds": best}


def main(quick: bool, repeat: int) -> None:
    print("snapshot | groups / members / partitions | seconds | beside", flush=True)
    row = fleet(repeat=repeat)
    print(f"a cluster's groups (`snapshot --all`, test broker) | {row['groups']:,} / 0 / 0 | {row['seconds']:.2f} | "
          f"{row['groups'] / row['seconds']:,.0f} groups/s", flush=True)
    if not quick:
        big = large(repeat)
        print(f"one group from its Metadata and DescribeGroups responses ({big['bytes'] / 1e6:.0f} MB): decode "
              f"and build | "
              f"1 / 2,000 / 1,000,000 | {big['snapshot_s']:.2f} | planning it (cooperative-sticky): "
              f"{big['plan_s']:.2f} s ({big['snapshot_s'] / big['plan_s']:.1f}x)", flush=True)
