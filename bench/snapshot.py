"""Reading live groups (`assignor.cluster`): a cluster of 1,000 small groups read on the test
broker (Apache Kafka 4.3.1, one node), and the largest group a snapshot may meet, on either
protocol, decoded and built from its responses (Metadata, and DescribeGroups or
ConsumerGroupDescribe: 2,000 members holding 1,000,000 partitions; no broker here holds that many,
so the responses' bytes are written by our tables, which tests hold to Java's), beside the time to
plan the group that snapshot describes with its own strategy.

The 1,000 groups hold committed offsets and no members (each made by one OffsetCommit): what a
snapshot pays per group (FindCoordinator, ListGroups, DescribeGroups in batches), not per member.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.protocol import best_of


def _large_group() -> Any:
    from assignor.workloads import java_large

    return java_large("uniform", 500, 2000, 2000)


def _metadata_response(group: Any) -> bytes:
    from assignor.topic_ids import derived_topic_id
    from assignor.wire import admin, codec

    return codec.encode(admin.METADATA.response, {
        "throttle_time_ms": 0, "brokers": [(1, "h", 9092, None)], "cluster_id": "c", "controller_id": 1,
        "topics": [(0, name, str(derived_topic_id(name)), False, [(0, p, 1, 0, [1], [1], []) for p in range(count)],
                    -2147483648) for name, count in group.topics.items()]},
        admin.METADATA.version)


def large(repeat: int = 3) -> dict[str, Any]:
    """A 2,000-member, 1M-partition classic group (`classic_case`), beside planning it with
    cooperative-sticky (`_measured`)."""
    return _measured(classic_case(), "cooperative-sticky", "owned", repeat)


def large_consumer(repeat: int = 3) -> dict[str, Any]:
    """The same group on the consumer protocol (`consumer_case`), beside planning it with its
    assignor (`_measured`)."""
    return _measured(consumer_case(), "kip848-uniform", "target", repeat)


def _measured(case: tuple[Callable[[], Any], int], strategy: str, planned_from: str, repeat: int) -> dict[str, Any]:
    """The snapshot `case` decodes and builds (best of `repeat`), and beside it:

    - ``command_s``: what ``plan --group G --strategy S`` does with that snapshot once it has it
      (`cli.plan_output`: the group read from its JSON, checked, planned with `strategy`, the
      plan validated and written as the JSON it prints), the snapshot's share being of the two
      together (the command's time but for its requests and its printing);
    - ``plan_s``: the plan alone (``assign`` on the group read from the JSON);
    - ``whatif_s``: the what-if a snapshot is taken for, one member's leave under `strategy`
      (``whatif.run``, as ``whatif --group`` runs it: every rebalance until the group settles).

    Each member's `planned_from` (``owned`` or ``target``) holds the million partitions."""
    from assignor import assign, whatif
    from assignor.cli import plan_output
    from assignor.json_format import group_from_json

    build, size = case
    seconds, built = best_of(build, repeat)
    assert isinstance(built, dict) and sum(len(m[planned_from]) for m in built["members"]) == 1_000_000
    command, _output = best_of(lambda: plan_output(built, strategy), repeat)
    del _output
    planned = group_from_json(built)
    planning, _plan = best_of(lambda: assign(strategy, planned), repeat)
    leave = [whatif.parse_event(f"member_leave:{planned.members[len(planned.members) // 2].id}")]
    asking, _answer = best_of(lambda: whatif.run(planned, leave, [strategy]), repeat)
    return {"bytes": size, "snapshot_s": seconds, "command_s": command, "plan_s": planning, "whatif_s": asking}


def classic_case() -> tuple[Callable[[], Any], int]:
    """`large`'s snapshot: its DescribeGroups response (each member holding what
    cooperative-sticky gave it) and Metadata response decoded and built, and their size."""
    from assignor import assign, protocol
    from assignor.cluster.snapshot import classic_group, topics_of
    from assignor.wire import admin, codec, compiled

    group = _large_group()
    plan = assign("cooperative-sticky", group)
    members = []
    for m in group.members:
        owned = plan.assignment[m.id]
        metadata = protocol.encode_subscription(protocol.Subscription(m.topics, owned_partitions=owned,
                                                                      generation_id=5), version=3)
        members.append((m.id, None, "client", "/10.0.0.1", metadata,
                        protocol.encode_assignment(protocol.Assignment(owned))))
    response = codec.encode(admin.DESCRIBE_GROUPS.response, {"throttle_time_ms": 0, "groups": [
        (0, "big", "Stable", "consumer", "cooperative-sticky", members, 0)]}, admin.DESCRIBE_GROUPS.version)
    topics = _metadata_response(group)

    def build() -> Any:  # the two responses as the client reads them (`assignor.cluster.connection`)
        metadata = compiled.decode(admin.METADATA.response, topics, admin.METADATA.version)
        described = compiled.decode(admin.DESCRIBE_GROUPS.response, response, admin.DESCRIBE_GROUPS.version)
        return classic_group(described["groups"][0], topics_of(metadata))

    return build, len(response) + len(topics)


def consumer_case() -> tuple[Callable[[], Any], int]:
    """`large_consumer`'s snapshot: its ConsumerGroupDescribe response (each member's 500
    subscribed topics, its assignment and its target, as the uniform assignor gave them) and
    Metadata response decoded and built, and their size."""
    from assignor import assign
    from assignor.cluster.snapshot import consumer_group, topics_of
    from assignor.topic_ids import derived_topic_id
    from assignor.wire import admin, codec, compiled

    group = _large_group()
    plan = assign("kip848-uniform", group)
    ids = {name: str(derived_topic_id(name)) for name in group.topics}

    def assigned(partitions: Any) -> tuple[Any, ...]:
        by_topic: dict[str, list[int]] = {}
        for tp in partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        return ([(ids[t], t, ps) for t, ps in by_topic.items()],)

    members = [(m.id, None, None, 7, "client", "/10.0.0.1", list(m.topics), None, assigned(plan.assignment[m.id]),
                assigned(plan.assignment[m.id]), 1) for m in group.members]
    response = codec.encode(admin.CONSUMER_GROUP_DESCRIBE.response, {"throttle_time_ms": 0, "groups": [
        (0, None, "big", "Stable", 7, 7, "uniform", members, 0)]}, admin.CONSUMER_GROUP_DESCRIBE.version)
    topics = _metadata_response(group)

    def build() -> Any:
        metadata = compiled.decode(admin.METADATA.response, topics, admin.METADATA.version)
        described = compiled.decode(admin.CONSUMER_GROUP_DESCRIBE.response, response,
                                    admin.CONSUMER_GROUP_DESCRIBE.version)
        return consumer_group(described["groups"][0], topics_of(metadata))

    return build, len(response) + len(topics)


def fleet(groups: int = 1000, repeat: int = 3) -> dict[str, Any]:
    """Read `groups` groups of the test broker with ``snapshot --all``."""
    import asyncio

    from assignor.cluster import read_snapshot, settings_of
    from bench.broker import Broker
    from bench.rebalance import commit_offsets, create_topic

    with tempfile.TemporaryDirectory() as directory:
        broker = Broker(Path(directory) / "kafka")
        try:
            topic = asyncio.run(create_topic(broker.bootstrap, 1))
            commit_offsets(broker.bootstrap, [f"fleet-{i:04d}" for i in range(groups)], topic)
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
        for protocol, request, strategy, measure in (("classic", "DescribeGroups", "cooperative-sticky", large),
                                                     ("consumer", "ConsumerGroupDescribe", "kip848-uniform",
                                                      large_consumer)):
            big = measure(repeat)
            whole = big["snapshot_s"] + big["command_s"]
            print(f"one {protocol} group from its Metadata and {request} responses ({big['bytes'] / 1e6:.0f} MB): "
                  f"decode and build | 1 / 2,000 / 1,000,000 | {big['snapshot_s']:.2f} | `plan --group "
                  f"--strategy {strategy}` with it: {whole:.2f} s, the snapshot {big['snapshot_s'] / whole:.0%} "
                  f"of it; the plan alone: {big['plan_s']:.2f} s ({big['snapshot_s'] / big['plan_s']:.1f}x); "
                  f"a what-if of one member's leave: {big['whatif_s']:.2f} s "
                  f"({big['snapshot_s'] / big['whatif_s']:.2f}x)", flush=True)
