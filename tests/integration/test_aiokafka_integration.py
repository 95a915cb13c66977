"""Our aiokafka assignor and partitioners in real consumer groups on Apache Kafka."""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import time
import uuid

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
from aiokafka.structs import TopicPartition as AioTopicPartition

from assignor import Group, Member, Plan, TopicPartition, whatif
from assignor.integrations.aiokafka import KafkaPartitioner, StickyAssignor, StickyProducer
from assignor.partitioners import partition_for_key
from assignor.protocol import decode_sticky_user_data, decode_subscription
from bench import rebalance
from tests.broker import CONSUMER_SETTINGS
from tests.conftest import check
from tests.service import Service

pytestmark = [pytest.mark.integration, pytest.mark.anyio]


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


async def create_topic(bootstrap: str, partitions: int) -> str:
    return await rebalance.create_topic(bootstrap, partitions, prefix="orders")


async def start_consumer(bootstrap, group, topic, assignor) -> AIOKafkaConsumer:
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                partition_assignment_strategy=(assignor,), **CONSUMER_SETTINGS)
    await consumer.start()
    return consumer


def partitions_of(consumer) -> set[int]:
    return {tp.partition for tp in consumer.assignment()}


async def settle(consumers: dict, partitions: int, *, extra=None, timeout: float = 60.0) -> dict[str, set[int]]:
    """Wait until the members' assignments are disjoint, cover every partition and have held
    still for a second; `extra` adds members living elsewhere (name -> callable)."""
    deadline = time.monotonic() + timeout
    previous, since = None, time.monotonic()
    while time.monotonic() < deadline:
        await asyncio.sleep(0.25)
        now = {name: partitions_of(c) for name, c in consumers.items()}
        for name, read in (extra or {}).items():
            now[name] = read()
        flat = [p for owned in now.values() for p in owned]
        complete = len(flat) == partitions and set(flat) == set(range(partitions))
        if now != previous:
            previous, since = now, time.monotonic()
        elif complete and time.monotonic() - since >= 1.0:
            return now
    raise AssertionError(f"the group did not settle within {timeout} s: {previous}")


def oracle(topic: str, partitions: int, assignment: dict[str, set[int]], before=None) -> dict:
    """Run the invariant oracle on what the group settled on."""
    members = [Member(name, [topic], owned=[TopicPartition(topic, p) for p in (before or {}).get(name, ())])
               for name in assignment]
    group = Group(topics={topic: partitions}, members=members)
    plan = Plan("sticky", {name: [TopicPartition(topic, p) for p in sorted(owned)]
                           for name, owned in assignment.items()})
    return check(group, plan)


async def stop_all(consumers) -> None:
    await asyncio.gather(*(c.stop() for c in consumers), return_exceptions=True)


async def test_three_members_balanced_and_each_record_consumed_once(broker):
    topic = await create_topic(broker.bootstrap, 6)
    group = unique("g")
    assignors = {name: StickyAssignor() for name in ("a", "b", "c")}
    consumers = {}
    try:
        for name, assignor in assignors.items():
            consumers[name] = await start_consumer(broker.bootstrap, group, topic, assignor)
        settled = await settle(consumers, 6)
        report = oracle(topic, 6, settled)
        assert report["balanced"] and sorted(map(len, settled.values())) == [2, 2, 2]

        # KIP-341: each assignor learned the broker's generation and reports it next time.
        for name, consumer in consumers.items():
            assignor = assignors[name]
            assert assignor.generation == consumer._coordinator.generation > 0
            sent = decode_subscription(assignor.metadata([topic]))
            assert sent.generation_id == assignor.generation
            sticky = decode_sticky_user_data(sent.user_data, strict=True)
            assert (sticky.generation, {tp.partition for tp in sticky.partitions}) == (assignor.generation,
                                                                                       settled[name])

        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap)
        await producer.start()
        try:
            for i in range(120):
                await producer.send(topic, b"value-%d" % i, key=b"key-%d" % i)
            await producer.flush()
        finally:
            await producer.stop()
        seen: dict[bytes, list[tuple[str, int]]] = {}
        deadline = time.monotonic() + 30
        while sum(map(len, seen.values())) < 120 and time.monotonic() < deadline:
            for name, consumer in consumers.items():
                batches = await consumer.getmany(timeout_ms=200)
                for tp, records in batches.items():
                    assert tp.partition in settled[name], "consumed a partition it was not assigned"
                    for record in records:
                        seen.setdefault(record.value, []).append((name, tp.partition))
        assert len(seen) == 120 and all(len(where) == 1 for where in seen.values())
    finally:
        await stop_all(consumers.values())


async def test_survivors_keep_their_partitions_after_a_leave_and_a_kill(broker):
    topic = await create_topic(broker.bootstrap, 8)
    group = unique("g")
    consumers = {}
    victim = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.aiokafka_member", broker.bootstrap, group, topic,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    victim_view: list[set[int]] = [set()]

    async def follow():
        async for line in victim.stdout:
            victim_view[0] = set(json.loads(line)["partitions"])

    follower = asyncio.create_task(follow())
    try:
        for name in ("a", "b", "leaver"):
            consumers[name] = await start_consumer(broker.bootstrap, group, topic, StickyAssignor())
        before = await settle(consumers, 8, extra={"victim": lambda: victim_view[0]})
        assert sorted(map(len, before.values())) == [2, 2, 2, 2]

        victim.kill()  # no LeaveGroup: the broker notices after the session timeout
        await victim.wait()
        await consumers.pop("leaver").stop()  # graceful: LeaveGroup
        after = await settle(consumers, 8)
        oracle(topic, 8, after, before)
        for name in ("a", "b"):
            assert before[name] <= after[name], f"{name} lost partitions it had: {before[name]} -> {after[name]}"
        assert sorted(map(len, after.values())) == [4, 4]
    finally:
        follower.cancel()
        if victim.returncode is None:
            victim.kill()
            await victim.wait()
        await stop_all(consumers.values())


class RecordingAssignor(StickyAssignor):
    """Keeps what each generation gave this member."""

    def __init__(self) -> None:
        super().__init__()
        self.by_generation: dict[int, set[int]] = {}

    def on_assignment(self, assignment) -> None:
        super().on_assignment(assignment)
        self.by_generation[self.generation] = {tp.partition for tp in self.owned}


async def test_two_joiners_move_only_what_balance_needs(broker):
    topic = await create_topic(broker.bootstrap, 12)
    group = unique("g")
    assignors = {name: RecordingAssignor() for name in "abcde"}
    consumers = {}
    try:
        for name in "abc":
            consumers[name] = await start_consumer(broker.bootstrap, group, topic, assignors[name])
        before = await settle(consumers, 12)
        joined = await asyncio.gather(*(start_consumer(broker.bootstrap, group, topic, assignors[n]) for n in "de"))
        consumers.update(zip("de", joined))
        after = await settle(consumers, 12)
        report = oracle(topic, 12, after, before)
        assert report["balanced"] and sorted(map(len, after.values())) == [2, 2, 2, 3, 3]
        assert all(after[name] <= before[name] for name in before), "old members only hand partitions over"
        # Every rebalance on the way moved the fewest partitions that balance allowed (the two
        # joiners may arrive in one rebalance or in two).
        generations = sorted({g for a in assignors.values() for g in a.by_generation})
        steps = 0
        for previous, current in itertools.pairwise(generations):
            members = {n: a.by_generation[current] for n, a in assignors.items() if current in a.by_generation}
            if sum(map(len, members.values())) != 12:
                continue  # a generation some member never completed
            owned = {n: a.by_generation.get(previous, set()) for n, a in assignors.items() if n in members}
            group_then = Group({topic: 12}, [Member(n, [topic], owned=[TopicPartition(topic, p) for p in owned[n]])
                                             for n in members])
            plan = Plan("sticky", {n: [TopicPartition(topic, p) for p in sorted(ps)] for n, ps in members.items()})
            step = check(group_then, plan, exact=True)
            assert step["moved"] == step["min_moves"], (previous, current, step)
            steps += 1
        assert steps >= 1
    finally:
        await stop_all(consumers.values())


def aiokafka_sticky():
    """aiokafka's own StickyPartitionAssignor keeps its state on the class; a subclass per
    consumer keeps two of them in one process apart. Records whether it planned."""

    class Theirs(StickyPartitionAssignor):
        plans = 0

        @classmethod
        def assign(cls, cluster, members):
            cls.plans += 1
            return super().assign(cluster, members)

    return Theirs


@pytest.mark.parametrize("leader", ["ours", "theirs"])
async def test_mixed_group_with_aiokafka_sticky_members(broker, leader):
    topic = await create_topic(broker.bootstrap, 9)
    group = unique("g")
    ours, theirs = StickyAssignor(), aiokafka_sticky()
    ours.plans = 0
    real_assign = ours.assign

    def counting_assign(cluster, members):
        ours.plans += 1
        return real_assign(cluster, members)

    ours.assign = counting_assign
    order = [("ours", ours), ("theirs", theirs)] if leader == "ours" else [("theirs", theirs), ("ours", ours)]
    consumers = {}
    try:
        for name, assignor in order:  # the first member to join leads the group
            consumers[name] = await start_consumer(broker.bootstrap, group, topic, assignor)
        two = await settle(consumers, 9)
        oracle(topic, 9, two)
        consumers["third"] = await start_consumer(broker.bootstrap, group, topic, StickyAssignor())
        three = await settle(consumers, 9)
        report = oracle(topic, 9, three, two)
        assert report["balanced"] and sorted(map(len, three.values())) == [3, 3, 3]
        assert all(three[name] <= two[name] for name in two), "sticky: the old members only hand over"
        assert (ours.plans > 0, theirs.plans > 0) == ((True, False) if leader == "ours" else (False, True))
    finally:
        await stop_all(consumers.values())


async def read_back(bootstrap: str, topic: str, partitions: int, expected: int) -> dict[int, list]:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                enable_auto_commit=False, request_timeout_ms=15000)
    await consumer.start()
    try:
        consumer.assign([AioTopicPartition(topic, p) for p in range(partitions)])
        await consumer.seek_to_beginning()
        found: dict[int, list] = {}
        deadline = time.monotonic() + 30
        while sum(map(len, found.values())) < expected and time.monotonic() < deadline:
            for tp, records in (await consumer.getmany(timeout_ms=300)).items():
                found.setdefault(tp.partition, []).extend(records)
        return found
    finally:
        await consumer.stop()


async def test_keyed_records_land_where_java_puts_them_and_keyless_stick(broker):
    topic = await create_topic(broker.bootstrap, 7)
    producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, partitioner=KafkaPartitioner(seed=3),
                                linger_ms=0)
    await producer.start()
    try:
        for i in range(200):
            await producer.send(topic, b"keyed-%d" % i, key=b"user-%d" % i)
        keyless = [await producer.send(topic, b"keyless-%d" % i) for i in range(60)]
        await producer.flush()
        keyless_partitions = [(await future).partition for future in keyless]
    finally:
        await producer.stop()
    found = await read_back(broker.bootstrap, topic, 7, 260)
    landed = {record.key: partition for partition, records in found.items() for record in records if record.key}
    assert len(landed) == 200
    assert all(partition == partition_for_key(key, 7) for key, partition in landed.items())
    # KIP-480: keyless records stick; a switch happens only when a batch is finished.
    switches = sum(1 for a, b in itertools.pairwise(keyless_partitions) if a != b)
    assert switches < len(keyless_partitions) / 2


async def test_sticky_producer_switches_after_a_batch_of_bytes(broker):
    topic = await create_topic(broker.bootstrap, 4)
    inner = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, max_batch_size=4096, linger_ms=5)
    await inner.start()
    producer = StickyProducer(inner, adaptive=False, seed=11)
    try:
        futures = [await producer.send(topic, b"x" * 500) for _ in range(160)]
        keyed = [await producer.send(topic, b"k", key=b"key-%d" % i) for i in range(20)]
        await inner.flush()
        partitions = [(await f).partition for f in futures]
        keyed_partitions = [(await f).partition for f in keyed]
    finally:
        await inner.stop()
    # Records of ~507 bytes: a switch comes after 4,096 bytes (8 records) at the earliest and
    # 8,192 at the latest. The next partition is drawn among all four, the same one included
    # (as Java does), so a visible run can span several switches.
    runs = [1]
    for a, b in itertools.pairwise(partitions):
        if a == b:
            runs[-1] += 1
        else:
            runs.append(1)
    assert all(run >= 8 for run in runs[:-1]), runs
    assert len(runs) >= 4 and len(set(partitions)) >= 3, runs
    assert keyed_partitions == [partition_for_key(b"key-%d" % i, 4) for i in range(20)]
    found = await read_back(broker.bootstrap, topic, 4, 180)
    assert sum(map(len, found.values())) == 180


async def test_remote_mode_plans_come_from_the_service_and_fall_back_when_it_is_gone(broker, tmp_path):
    import httpx

    service = Service(tmp_path, token="t0ken")
    topic = await create_topic(broker.bootstrap, 6)
    group = unique("g")
    assignors = {name: StickyAssignor(service_url=service.url, token="t0ken", timeout=2.0) for name in "ab"}
    consumers = {}
    try:
        for name, assignor in assignors.items():
            consumers[name] = await start_consumer(broker.bootstrap, group, topic, assignor)
        before = await settle(consumers, 6)
        assert sum(a.remote_plans for a in assignors.values()) >= 1
        assert sum(a.fallbacks for a in assignors.values()) == 0
        async with httpx.AsyncClient(headers={"Authorization": "Bearer t0ken"}) as client:
            history = (await client.get(f"{service.url}/v1/groups/{group}/history")).json()["generations"]
        current = consumers["a"]._coordinator.generation
        assert history[-1]["generation"] == current and history[-1]["members"] == 2

        service.stop()  # the leader must now plan by itself
        assignors["c"] = StickyAssignor(service_url=service.url, token="t0ken", timeout=2.0)
        consumers["c"] = await start_consumer(broker.bootstrap, group, topic, assignors["c"])
        after = await settle(consumers, 6)
        oracle(topic, 6, after, before)
        assert sorted(map(len, after.values())) == [2, 2, 2]
        assert sum(a.fallbacks for a in assignors.values()) >= 1
    finally:
        service.stop()
        await stop_all(consumers.values())


class _Counted(StickyAssignor):
    """Our assignor, counting the plans it made as its group's leader and keeping the instance
    ids of the members it planned."""

    def __init__(self) -> None:
        super().__init__()
        self.plans = 0
        self.instances: dict[str, str | None] = {}

    def assign(self, cluster, members):
        self.plans += 1
        return super().assign(cluster, members)

    def lead(self, generation, topics, metadata, instance_ids=None):
        result = super().lead(generation, topics, metadata, instance_ids)
        self.instances = {m.id: m.group_instance_id for m in result.planned.members}
        return result


async def test_a_static_member_restarted_within_its_session_gets_its_partitions_back(broker):
    """KIP-345 with our assignor: three aiokafka members with ``group_instance_id``; a follower
    stops (a static member sends no LeaveGroup) and starts again as the same instance before
    its session expires: the coordinator hands it its assignment back, nobody rebalances (the
    others keep their generation and partitions), as the rehearsal says of the same group."""
    topic = await create_topic(broker.bootstrap, 6)
    group = unique("g")
    assignors = {name: _Counted() for name in ("a", "b", "c")}

    async def start(name: str) -> AIOKafkaConsumer:
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=broker.bootstrap, group_id=group,
                                    group_instance_id=f"instance-{name}",
                                    partition_assignment_strategy=(assignors[name],),
                                    **{**CONSUMER_SETTINGS, "session_timeout_ms": 30000})
        await consumer.start()
        return consumer

    consumers = {}
    try:
        for name in assignors:
            consumers[name] = await start(name)
        before = await settle(consumers, 6)
        follower = next(name for name, assignor in assignors.items() if assignor.plans == 0)
        generations = {name: c._coordinator.generation for name, c in consumers.items() if name != follower}
        planned = sum(a.plans for a in assignors.values())
        # the leader planned with every member's instance id, as the JoinGroup response listed them
        leader = next(a for a in assignors.values() if a.plans)
        assert sorted(leader.instances.values()) == [f"instance-{name}" for name in assignors]
        await consumers.pop(follower).stop()
        consumers[follower] = await start(follower)
        after = await settle(consumers, 6)
        assert after == before
        assert {name: c._coordinator.generation for name, c in consumers.items() if name != follower} == generations
        # no plan since: the leader made one per generation while the group formed, none after
        assert sum(a.plans for a in assignors.values()) == planned
    finally:
        await stop_all(consumers.values())
    rehearsed = Group({topic: 6}, [Member(name, [topic], [TopicPartition(topic, p) for p in sorted(owned)],
                                          generation=generations.get(name, 1), group_instance_id=f"instance-{name}")
                                   for name, owned in before.items()])
    steps = whatif.run(rehearsed, [whatif.parse_event(f"rollback:{follower}")], ["sticky"])["strategies"]["sticky"]
    assert [(s["moved"], s["revoked"], s["rounds"]) for s in steps["steps"][1:]] == [(0, 0, 0)]
