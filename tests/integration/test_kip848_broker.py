"""KIP-848's consumer protocol on Apache Kafka: groups of Java and librdkafka consumer-protocol
members (``group.protocol=consumer``, ``group.remote.assignor`` uniform or range) through joins,
a subscription change, new partitions, a leave and a burst of changes, and a consumer group
hosting classic members (ours among them) as an online migration does; every target assignment
the broker's coordinator computed (its log, `tests.coordinator_log`) is what ``kip848-uniform`` /
``kip848-range`` plan for the same members listed in the order the coordinator logged them, with
the broker's topic ids and previous target.

Groups start as consumer groups: a classic group converted online starts its targets from the
classic assignment (``GroupMetadataManager.convertToConsumerGroup``), which the log does not show.

Partition counts come from the target itself (both assignors hand out every partition of a
subscribed topic), and must be a count the test gave the topic: a target computed before the
broker's metadata image had new partitions is computed, and replayed, without them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from assignor import Group, Member, TopicPartition, assign, whatif
from assignor.strategies.kip848 import target_assignment
from assignor.topic_ids import TopicId
from bench.java_members import CONSUMER
from tests.broker import set_assignment_interval
from tests.coordinator_log import Target, targets

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.anyio]


class LibrdkafkaMember:
    """A librdkafka consumer-protocol member polling in a thread; `subscribe` changes its topics."""

    def __init__(self, bootstrap: str, group: str, topics: list[str], assignor: str) -> None:
        self.consumer = confluent_kafka.Consumer({
            "bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
            "group.remote.assignor": assignor, "auto.offset.reset": "earliest", "enable.auto.commit": False,
            "broker.address.family": "v4"})
        self.consumer.subscribe(topics)
        self.topics: list[str] | None = None
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def _poll(self) -> None:
        while not self.stopping.is_set():
            if self.topics is not None:
                topics, self.topics = self.topics, None
                self.consumer.subscribe(topics)
            self.consumer.poll(0.05)
        self.consumer.close()

    def subscribe(self, topics: list[str]) -> None:
        self.topics = list(topics)

    async def stop(self) -> None:
        self.stopping.set()
        await asyncio.to_thread(self.thread.join, 30)


class Cluster:
    """The topics of one test, created and grown through librdkafka's admin client."""

    def __init__(self, bootstrap: str) -> None:
        self.admin = AdminClient({"bootstrap.servers": bootstrap, "broker.address.family": "v4"})
        self.counts: dict[str, set[int]] = {}  # every count a topic had
        self.ids: dict[str, str] = {}

    def create(self, partitions: dict[str, int]) -> None:
        for future in self.admin.create_topics([NewTopic(t, n, 1) for t, n in partitions.items()]).values():
            future.result(30)
        self.adopt(partitions)

    def adopt(self, partitions: dict[str, int]) -> None:
        """Topics that exist, with their partition counts: their ids from the broker."""
        deadline = time.monotonic() + 30
        while True:  # (a topic just created may not be in the broker's metadata yet)
            try:
                described = {name: future.result(30) for name, future in self.admin.describe_topics(
                    confluent_kafka.TopicCollection(list(partitions))).items()}
                break
            except confluent_kafka.KafkaException as error:
                unknown = error.args[0].code() == confluent_kafka.KafkaError.UNKNOWN_TOPIC_OR_PART
                if not unknown or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        for name, description in described.items():
            found = description.topic_id  # librdkafka prints Uuids in plain base64, Kafka in base64url
            self.ids[name] = str(TopicId(found.get_most_significant_bits(), found.get_least_significant_bits()))
            self.counts[name] = {partitions[name]}

    def grow(self, topic: str, partitions: int) -> None:
        for future in self.admin.create_partitions([NewPartitions(topic, partitions)]).values():
            future.result(30)
        self.counts[topic].add(partitions)


def replayed(target: Target, cluster: Cluster) -> tuple[Group, dict[str, dict[str, set[int]]]]:
    """The group the coordinator planned (members in its order, subscriptions, previous targets,
    topic ids, counts from the target) and what it decided, by topic name."""
    names = {topic_id: name for name, topic_id in cluster.ids.items()}
    counts: dict[str, int] = {}
    for per_topic in target.target.values():
        for topic_id, partitions in per_topic.items():
            if partitions:
                counts[names[topic_id]] = max(counts.get(names[topic_id], 0), max(partitions) + 1)
    for name, count in counts.items():
        assert count in cluster.counts[name], (target.epoch, name, count, cluster.counts[name])
    members = [Member(m, target.subscriptions[m],
                      owned=[TopicPartition(names[t], p) for t, ps in target.previous.get(m, {}).items() for p in ps])
               for m in target.target]
    group = Group(topics=counts, members=members, topic_ids={name: cluster.ids[name] for name in counts})
    decided = {m: {names[t]: set(ps) for t, ps in per_topic.items() if ps} for m, per_topic in target.target.items()}
    return group, decided


def check_targets(log: str, group_id: str, cluster: Cluster, assignor: str) -> list[Target]:
    """Every target of `group_id` replayed through ``assign`` (the plan as sets) and through
    `target_assignment` (each topic's partitions in the coordinator's order).

    Two orders are not compared. The members': the logged map is the assignor's output, a
    ``HashMap`` sized for the group (``RangeAssignor.assign``: ``memberIds().size() / 0.75 + 1``),
    whose order can differ from the member map the assignor went through. A member's topics: they
    follow its subscription set, which the coordinator builds anew from the topic list of the
    member's latest heartbeat (``ConsumerGroupMember.Builder.maybeUpdateSubscribedTopicNames``:
    ``new HashSet<>(list)``) and hands the assignor in that form (``maybeUpdateTargetAssignment``:
    ``addOrUpdateMember(updatedMember)``), so names sharing a bucket iterate in that list's order,
    which the log shows only when the set changed. Seen here: a Java member's two topics in one
    bucket of its per-member map, listed [b, a] when it subscribed and planned as [a, b] later."""
    computed = targets(log, group_id)
    for target in computed:
        check_target(target, cluster, assignor)
    return computed


def check_target(target: Target, cluster: Cluster, assignor: str) -> None:
    """One target of `check_targets`: the members in its order, their subscriptions, the
    previous target and topic ids as logged (`replayed`)."""
    names = {topic_id: name for name, topic_id in cluster.ids.items()}
    assert target.assignor == assignor, target
    group, decided = replayed(target, cluster)
    plan = assign(f"kip848-{assignor}", group)
    ours: dict[str, dict[str, set[int]]] = {m: {} for m in decided}
    for member, partitions in plan.assignment.items():
        for tp in partitions:
            ours[member].setdefault(tp.topic, set()).add(tp.partition)
    assert ours == decided, (target.epoch, group, decided)
    in_order = target_assignment(f"kip848-{assignor}", group)
    for member, per_topic in target.target.items():
        logged = {names[t]: ps for t, ps in per_topic.items() if ps}
        assert {t: ps for t, ps in in_order[member].items() if ps} == logged, (target.epoch, member)


async def until(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout} s: {what}"
        await asyncio.sleep(0.1)


@pytest.mark.parametrize("assignor", ["uniform", "range"])
async def test_every_target_the_broker_computed_is_ours(broker, java_members, assignor):
    group_id = f"kip848-{assignor}-{uuid.uuid4().hex[:8]}"
    suffix = uuid.uuid4().hex[:6]
    a, b, c = (f"{name}-{suffix}" for name in "abc")
    cluster = Cluster(broker.bootstrap)
    cluster.create({a: 6, b: 4, c: 3})  # before anyone subscribes (see the module docstring)
    start = broker.log_size()

    def computed() -> list[Target]:
        return targets(broker.log_text(start), group_id)

    def latest_members() -> int:
        found = computed()
        return len(found[-1].target) if found else 0

    settings = {**CONSUMER, "group.remote.assignor": assignor}
    java = [java_members.member(f"{group_id}.j{i}", broker.bootstrap, group_id, topics, settings)
            for i, topics in enumerate([[a, b], [a, b], [a], [a, c]])]
    rdk: list[LibrdkafkaMember] = []
    try:
        # Joins, one at a time, Java and librdkafka in turn (a homogeneous group).
        await java[0].start()
        await until(lambda: latest_members() == 1, "the first member's target")
        rdk.append(LibrdkafkaMember(broker.bootstrap, group_id, [a, b], assignor))
        await until(lambda: latest_members() == 2, "the second member's target")
        await java[1].start()
        await until(lambda: latest_members() == 3, "the third member's target")
        # A subscription change makes it heterogeneous.
        java[0].subscribe([a, b, c])
        await until(lambda: any(c in topics for topics in computed()[-1].subscriptions.values()),
                    "a target after the new subscription")
        # New partitions of a subscribed topic.
        cluster.grow(a, 9)
        await until(lambda: any(8 in ps for per in computed()[-1].target.values() for ps in per.values()),
                    "a target with the new partitions")
        # A leave.
        await java[1].stop()
        await until(lambda: latest_members() == 2, "the target after the leave")
        # A burst: three join and one leaves at once.
        await asyncio.gather(java[2].start(), java[3].start())
        rdk.append(LibrdkafkaMember(broker.bootstrap, group_id, [a, b, c], assignor))
        await rdk[0].stop()
        await until(lambda: latest_members() == 4, "the target after the burst")
        await asyncio.sleep(2)  # the targets the burst's last heartbeats set off
    finally:
        for member in java:
            if member._started.is_set() and not member._closed.is_set():
                await member.stop()
        for member in rdk:
            await member.stop()
    found = check_targets(broker.log_text(start), group_id, cluster, assignor)
    assert len(found) >= 8, [t.epoch for t in found]
    assert any(len({tuple(s) for s in t.subscriptions.values()}) > 1 for t in found), "a heterogeneous target"


@pytest.mark.parametrize("assignor", ["uniform", "range"])
async def test_a_stream_of_changes_without_waiting(broker, java_members, assignor):
    """Twenty changes to a group of Java members over five topics, each sent as soon as the last
    (joins, leaves, subscription changes, new partitions): the coordinator folds several into
    one epoch or computes one per heartbeat; every target it computed is ours all the same."""
    rng = random.Random(848)
    group_id = f"kip848-stream-{assignor}-{uuid.uuid4().hex[:8]}"
    suffix = uuid.uuid4().hex[:6]
    topics = [f"s{i}-{suffix}" for i in range(5)]
    cluster = Cluster(broker.bootstrap)
    cluster.create({t: rng.randint(2, 9) for t in topics})
    start = broker.log_size()
    settings = {**CONSUMER, "group.remote.assignor": assignor}
    running: list = []
    made = 0

    async def join() -> None:
        nonlocal made
        member = java_members.member(f"{group_id}.m{made}", broker.bootstrap, group_id,
                                     rng.sample(topics, rng.randint(1, 3)), settings)
        made += 1
        running.append(await member.start())

    try:
        for _ in range(4):
            await join()
        for _ in range(20):
            change = rng.choice(["join", "leave", "subscribe", "subscribe", "grow"])
            if change == "join" or (change == "leave" and len(running) <= 2):
                await join()
            elif change == "leave":
                await running.pop(rng.randrange(len(running))).stop()
            elif change == "subscribe":
                rng.choice(running).subscribe(rng.sample(topics, rng.randint(1, 4)))
            else:
                topic = rng.choice(topics)
                count = max(cluster.counts[topic]) + rng.randint(1, 3)
                cluster.grow(topic, count)
            await asyncio.sleep(rng.choice([0.0, 0.05, 0.3]))
        await asyncio.sleep(2)
    finally:
        for member in running:
            await member.stop()
    found = check_targets(broker.log_text(start), group_id, cluster, assignor)
    assert len(found) >= 15, [t.epoch for t in found]


async def test_classic_members_in_a_consumer_group(broker, java_members):
    """Both protocols in one group, as during an online migration: a consumer group (its first
    member speaks KIP-848) hosting classic members, ours (cooperative aiokafka), Java's and
    librdkafka's ``cooperative-sticky``, beside Java and librdkafka consumer-protocol members,
    through a rolling restart. The broker plans for all of them with its ``uniform`` assignor,
    handing classic members their targets through JoinGroup/SyncGroup: after every step the group
    is complete and balanced, no record is lost, no partition is owned twice at once, and every
    target it computed is what ``kip848-uniform`` plans."""
    from assignor.integrations.aiokafka import CooperativeStickyAssignor
    from assignor.integrations.aiokafka_cooperative import CooperativeConsumer
    from bench.java_members import CLASSIC, COOPERATIVE_STICKY
    from bench.rebalance import AiokafkaMember, create_topic, produce, wind_down
    from bench.rebalance import LibrdkafkaMember as ThreadedLibrdkafkaMember
    from tests.ownership import Timeline
    from tests.scenarios import joins_then_a_rolling_restart

    partitions = 10
    topic = await create_topic(broker.bootstrap, partitions)
    cluster = Cluster(broker.bootstrap)
    cluster.adopt({topic: partitions})
    group_id = f"both-{uuid.uuid4().hex[:8]}"
    start = broker.log_size()
    timeline = Timeline()
    commit = {"enable.auto.commit": "true", "auto.commit.interval.ms": "1000"}

    def make(kind: str, name: str):
        if kind == "java-consumer":
            settings = {**CONSUMER, "group.remote.assignor": "uniform", **commit}
            return java_members.member(f"{group_id}.{name}", broker.bootstrap, group_id, [topic], settings, timeline)
        if kind == "java-classic":
            settings = {**CLASSIC, "partition.assignment.strategy": COOPERATIVE_STICKY, **commit}
            return java_members.member(f"{group_id}.{name}", broker.bootstrap, group_id, [topic], settings, timeline)
        if kind.startswith("librdkafka"):
            protocol = "consumer" if kind.endswith("consumer") else "classic"
            return ThreadedLibrdkafkaMember(name, broker.bootstrap, group_id, topic, timeline, protocol=protocol)
        return AiokafkaMember(name, broker.bootstrap, group_id, topic, timeline, CooperativeConsumer,
                              partition_assignment_strategy=(CooperativeStickyAssignor(),), enable_auto_commit=True,
                              auto_commit_interval_ms=1000)

    kinds = ["java-consumer", "ours", "java-classic", "librdkafka-classic", "librdkafka-consumer"]
    stop, sent = asyncio.Event(), []
    producing = asyncio.create_task(produce(broker.bootstrap, topic, partitions, stop, sent, 100.0))
    members: list[Any] = []
    everyone: list[Any] = []
    try:
        await joins_then_a_rolling_restart(make, kinds, partitions, members, everyone)
    finally:
        await wind_down(stop, producing, members, everyone, sent, timeout=60)
    consumed = {(p, o) for m in everyone for _t, p, o in m.records}
    assert len(consumed) == len(sent), f"{len(sent) - len(consumed)} records never consumed"
    assert timeline.overlaps() == [], "a partition owned by two members at once"
    found = check_targets(broker.log_text(start), group_id, cluster, "uniform")
    assert len(found) >= 10, [t.epoch for t in found]



async def test_joins_sent_together_get_the_targets_the_rehearsal_says(broker, java_members):
    """Three Java members started at once into a group of one whose assignment interval is 4 s
    (``consumer.assignment.interval.ms``): the first joining heartbeat computes a target at once,
    the other two joins wait for the interval and share the next one. The rehearsal of the same
    batch (``member_join:...+...+...``) with that interval has the same two steps, each with the
    broker's members."""
    group_id = f"kip848-batch-{uuid.uuid4().hex[:8]}"
    topic = f"batch-{uuid.uuid4().hex[:6]}"
    cluster = Cluster(broker.bootstrap)
    cluster.create({topic: 12})
    set_assignment_interval(broker.bootstrap, group_id, 4000)
    start = broker.log_size()

    def computed() -> list[Target]:
        return targets(broker.log_text(start), group_id)

    settings = {**CONSUMER, "group.remote.assignor": "uniform"}
    members = [java_members.member(f"{group_id}.m{i}", broker.bootstrap, group_id, [topic], settings)
               for i in range(4)]
    def partitions(target: Target) -> int:
        return sum(len(p) for topics in target.target.values() for p in topics.values())

    try:
        await members[0].start()
        # Until the first member's target holds the topic: a member joining before the broker's
        # metadata has the new topic gets an empty target, and the one with the topic comes later
        # for it alone (held back by the interval); the batch is what follows.
        await until(lambda: any(partitions(t) == 12 for t in computed()), "the first member's target with the topic")
        at_rest = len(computed())
        await asyncio.sleep(4.5)  # past the interval: the batch finds the group at rest
        await asyncio.gather(*(m.start() for m in members[1:]))
        await until(lambda: len(computed()[-1].target) == 4, "a target with all four")
        await asyncio.sleep(1)
    finally:
        for member in members:
            await member.stop()
    burst = [len(t.target) for t in check_targets(broker.log_text(start), group_id, cluster, "uniform")[at_rest:]]
    group = Group({topic: 12}, [Member("m0", [topic], [TopicPartition(topic, p) for p in range(12)])])
    batch = "+".join(f"member_join:m{i}:{topic}" for i in (1, 2, 3))
    steps = whatif.run(group, [whatif.parse_event(batch)], ["kip848-uniform"], include_plans=True,
                       timing=whatif.Timing(consumer_heartbeat_ms=500, assignment_interval_ms=4000))
    rehearsed = [len(s["assignment"]) for s in steps["strategies"]["kip848-uniform"]["steps"][1:]]
    assert burst == rehearsed == [2, 4]


async def test_a_round_robin_group_migrated_online_keeps_what_the_broker_says(broker, java_members):
    """Sixteen classic members (aiokafka's round-robin assignor) share a topic of 640 partitions:
    member i holds i, i + 16, i + 32, ..., forty partitions in four bins of ten of a 64-bucket
    set, which Java makes red-black trees (`tree_bin`). A consumer-protocol member joins (the
    group is converted online, ``GroupMetadataManager.convertToConsumerGroup``, each member's
    assignment a ``new HashSet<>(partitions)``), then three more: the first target, planned by
    ``kip848-uniform`` from the snapshot taken before the join with the members in the order the
    coordinator logged them, is the broker's, partitions in its order; so is every target after
    (each member keeps the first of its partitions in its sets' order: a bin's tree root first,
    where a plain bin would start with its first key)."""
    from aiokafka import AIOKafkaConsumer
    from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

    from assignor.cluster import read_snapshot, settings_of
    from bench.ownership import Timeline
    from bench.rebalance import AiokafkaMember, create_topic, settle

    partitions, count = 640, 16
    topic = await create_topic(broker.bootstrap, partitions)
    cluster = Cluster(broker.bootstrap)
    cluster.adopt({topic: partitions})
    group_id = f"migrated-{uuid.uuid4().hex[:8]}"
    classic = [AiokafkaMember(f"r{i:02d}", broker.bootstrap, group_id, topic, Timeline(), AIOKafkaConsumer,
                              partition_assignment_strategy=(RoundRobinPartitionAssignor,)) for i in range(count)]
    settings = {**CONSUMER, "group.remote.assignor": "uniform"}
    joining = [java_members.member(f"{group_id}.j{i}", broker.bootstrap, group_id, [topic], settings)
               for i in range(4)]
    try:
        # Until the coordinator's metadata image has the topic: a group converted before then is
        # planned without it (its first target empty, every member revoking all it held).
        probe, at = LibrdkafkaMember(broker.bootstrap, f"{group_id}-probe", [topic], "uniform"), broker.log_size()
        try:
            await until(lambda: any(sum(map(len, per.values())) == partitions for t in targets(
                broker.log_text(at), f"{group_id}-probe") for per in t.target.values()), "the topic in the image", 60)
        finally:
            await probe.stop()
        await asyncio.gather(*(m.start() for m in classic))
        await settle(classic, partitions, timeout=120)
        found = await read_snapshot(settings_of(broker.bootstrap), [group_id])
        owned = {m["id"]: [TopicPartition(t, p) for t, p in m["owned"]] for m in found["groups"][0]["members"]}
        assert all(len({tp.partition % 64 for tp in tps}) == 4 for tps in owned.values()), owned
        start = broker.log_size()

        def computed() -> list[Target]:
            return targets(broker.log_text(start), group_id)

        await joining[0].start()
        await until(lambda: any(len(t.target) == count + 1 for t in computed()), "the target after the conversion", 60)
        await asyncio.gather(*(m.start() for m in joining[1:]))
        await until(lambda: any(len(t.target) == count + 4 for t in computed()), "the target with four joined", 60)
        await asyncio.sleep(1)
    finally:
        for member in joining:
            if member._started.is_set() and not member._closed.is_set():
                await member.stop()
        for member in classic:
            await member.stop()
    every = computed()
    first = every[0]
    assert len(first.target) == count + 1 and first.previous == {}, first  # (the converted assignment is not logged)
    migrated = Group({topic: partitions}, [Member(m, [topic], owned.get(m, [])) for m in first.target],
                     topic_ids={topic: cluster.ids[topic]})
    ours = target_assignment("kip848-uniform", migrated)
    assert {m: ours[m].get(topic, []) for m in first.target} == \
        {m: per.get(cluster.ids[topic], []) for m, per in first.target.items()}
    # Converted members' subscriptions are not logged (they never sent a heartbeat saying them).
    for target in every[1:]:
        check_target(dataclasses.replace(target, subscriptions={m: target.subscriptions.get(m) or [topic]
                                                                  for m in target.target}), cluster, "uniform")
    assert any(len(t.target) == count + 4 for t in every), [len(t.target) for t in every]
