"""Our aiokafka consumer on KIP-848's consumer protocol (`CooperativeConsumer(...,
group_protocol="consumer")`) on Apache Kafka 4.3.1: in groups with Java's and librdkafka's
consumer-protocol members through joins, leaves and a rolling restart, fenced, frozen past its
session, static, and migrating a classic group online. Safety from every member's callbacks
(`tests.ownership.Timeline`), nothing lost from the records, and every target the broker
computed is `kip848-uniform`'s or `kip848-range`'s for the same group."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import pytest

from assignor.errors import AssignorError
from assignor.integrations.aiokafka_cooperative import CooperativeConsumer
from bench.java_members import CONSUMER
from bench.rebalance import AiokafkaMember, create_topic, produce, settle, topic_partition, wind_down
from bench.rebalance import LibrdkafkaMember as ThreadedLibrdkafkaMember
from tests.integration.test_kip848_broker import Cluster, check_targets
from tests.ownership import Timeline
from tests.scenarios import a_static_member_comes_back, joins_then_a_rolling_restart, slow_upgrade

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

COMMIT = {"enable.auto.commit": "true", "auto.commit.interval.ms": "1000"}


def ours(name: str, bootstrap: str, group: str, topic: str | list[str], timeline: Timeline, assignor: str = "uniform",
         **settings: object) -> AiokafkaMember:
    return AiokafkaMember(name, bootstrap, group, topic, timeline, CooperativeConsumer, group_protocol="consumer",
                          group_remote_assignor=assignor, enable_auto_commit=True, auto_commit_interval_ms=1000,
                          **settings)


def test_the_consumer_protocol_settings_are_checked():
    with pytest.raises(AssignorError, match="group_protocol: 'kip848' is not one of classic, consumer"):
        CooperativeConsumer("t", group_id="g", group_protocol="kip848")
    with pytest.raises(AssignorError, match="group_remote_assignor: the broker assigns only under"):
        CooperativeConsumer("t", group_id="g", group_remote_assignor="uniform")


@pytest.mark.parametrize("assignor", ["uniform", "range"])
async def test_ours_with_java_and_librdkafka_members_through_joins_leaves_and_restarts(broker, java_members,
                                                                                     assignor):
    """A consumer-protocol group of ours, Java's and librdkafka's members: each joins, then each
    is restarted in turn. After every step the group is complete and balanced, no record is lost,
    no partition is owned by two members at once, and every target the broker computed is what
    ``kip848-{assignor}`` plans for the group it had. Nothing is consumed twice."""
    partitions = 8
    topic = await create_topic(broker.bootstrap, partitions)
    cluster = Cluster(broker.bootstrap)
    cluster.adopt({topic: partitions})
    group_id = f"cp-{uuid.uuid4().hex[:8]}"
    start = broker.log_size()
    timeline = Timeline()

    def make(kind: str, name: str):
        if kind == "java":
            settings = {**CONSUMER, "group.remote.assignor": assignor, **COMMIT}
            return java_members.member(f"{group_id}.{name}", broker.bootstrap, group_id, [topic], settings, timeline)
        if kind == "librdkafka":  # (naming the assignor: the last member left alone still gets it)
            return ThreadedLibrdkafkaMember(name, broker.bootstrap, group_id, topic, timeline, protocol="consumer",
                                            remote_assignor=assignor)
        return ours(name, broker.bootstrap, group_id, topic, timeline, assignor)

    kinds = ["ours", "java", "ours", "librdkafka"]
    stop, sent = asyncio.Event(), []
    producing = asyncio.create_task(produce(broker.bootstrap, topic, partitions, stop, sent, 100.0))
    members: list[Any] = []
    everyone: list[Any] = []
    try:
        await joins_then_a_rolling_restart(make, kinds, partitions, members, everyone)
        member = members[0].consumer._coordinator.member  # (ours, on the consumer protocol)
        assert member.epoch > 0 and member.owned and member.server_assignor == assignor
        leaver = members.pop(0)  # one of ours leaves: its partitions go to the others
        await leaver.stop()
        await settle(members, partitions)
    finally:
        await wind_down(stop, producing, members, everyone, sent, timeout=60)
    consumed = [(p, o) for m in everyone for _t, p, o in m.records]
    assert len(set(consumed)) == len(sent), f"{len(sent) - len(set(consumed))} records never consumed"
    # (each member commits what it consumed before it gives a partition up, on revocation and on close)
    assert len(consumed) == len(set(consumed)), f"{len(consumed) - len(set(consumed))} records consumed twice"
    assert timeline.overlaps() == [], "a partition owned by two members at once"
    found = check_targets(broker.log_text(start), group_id, cluster, assignor)
    assert len(found) >= 10, [t.epoch for t in found]


async def test_a_member_changing_its_subscription_while_running(broker, java_members):
    """Our member, subscribed to one topic of two beside a Java member and another of ours on
    both, subscribes to both while running, then to the other alone. After each change the
    group settles with our member on its topics only, what it gave up was revoked through its
    listener, no partition of either topic was owned by two members at once, every record is
    consumed once, and every target the broker computed is ``kip848-uniform``'s."""
    per_topic = 4
    first, second = await create_topic(broker.bootstrap, per_topic), await create_topic(broker.bootstrap, per_topic)
    cluster = Cluster(broker.bootstrap)
    cluster.adopt({first: per_topic, second: per_topic})
    everything = [(t, p) for t in (first, second) for p in range(per_topic)]
    group_id = f"cp-subscribe-{uuid.uuid4().hex[:8]}"
    start = broker.log_size()
    timeline = Timeline()  # keyed by (topic, partition); the Java member's callbacks are added at the end
    java = await java_members.member(f"{group_id}.java", broker.bootstrap, group_id, [first, second],
                                     {**CONSUMER, "group.remote.assignor": "uniform", **COMMIT}).start()

    class OnBothTopics:  # the Java member as `settle` reads a member: its (topic, partition)s
        name = "java"

        def partitions(self) -> set[Any]:
            return set(java.owned)

    both = await ours("both", broker.bootstrap, group_id, [first, second], timeline, key=topic_partition).start()
    changing = await ours("changing", broker.bootstrap, group_id, first, timeline, key=topic_partition).start()
    members: list[Any] = [OnBothTopics(), both, changing]
    stop, sent = asyncio.Event(), {first: [], second: []}
    producing = [asyncio.create_task(produce(broker.bootstrap, t, per_topic, stop, sent[t], 50.0)) for t in sent]
    try:
        owned = await settle(members, everything, balanced=False)
        assert owned["changing"] and {t for t, _p in owned["changing"]} == {first}
        changing.consumer.subscribe([first, second], listener=changing.listener_object)
        owned = await settle(members, everything)  # one subscription again: balanced
        assert {t for t, _p in owned["changing"]} <= {first, second}
        changing.revoked.clear()
        changing.consumer.subscribe([second], listener=changing.listener_object)
        before = owned["changing"]
        owned = await settle(members, everything, balanced=False)
        assert owned["changing"] and {t for t, _p in owned["changing"]} == {second}
        assert {tp for tp in before if tp[0] == first} <= set().union(*changing.revoked)
    finally:
        stop.set()
        await asyncio.gather(*producing)
        total = sum(map(len, sent.values()))

        def consumed() -> list[tuple[str, int, int]]:
            ours_ = [(*tp, o) for m in (both, changing) for _at, tp, o in m.records]
            return ours_ + [tuple(r) for e in list(java.events) if e["event"] == "records" for r in e["records"]]

        deadline = time.monotonic() + 60
        while len(set(consumed())) < total and time.monotonic() < deadline:
            await asyncio.sleep(0.25)
        for m in (both, changing, java):
            await m.stop()
    for event in java.events:  # the Java member's callbacks, at the times it reported them
        partitions = {(t, p) for t, p in event.get("partitions", ())}
        if event["event"] == "assigned":
            timeline.take("java", partitions, at=event["at"])
        elif event["event"] in ("revoked", "lost"):
            timeline.release("java", partitions, at=event["at"])
    timeline.release("java", timeline.owned_by("java"))
    records = consumed()
    assert len(set(records)) == total, f"{total - len(set(records))} records never consumed"
    assert len(records) == len(set(records)), f"{len(records) - len(set(records))} records consumed twice"
    assert timeline.overlaps() == [], "a partition owned by two members at once"
    found = check_targets(broker.log_text(start), group_id, cluster, "uniform")
    assert len(found) >= 4, [t.epoch for t in found]

async def test_a_member_frozen_past_its_session_loses_its_partitions_before_any_record(broker, java_members):
    """Our member's event loop blocked for 9 s past the broker's 6 s session
    (``group.consumer.session.timeout.ms``), beside a Java and a librdkafka member: the broker
    fences it and gives its partitions to them. Waking, it finds on its own clock that no
    heartbeat was answered for longer than ``session_timeout_ms``: its partitions are lost
    (``on_partitions_lost``) before it returns a record, and it joins again."""
    from tests.integration.test_aiokafka_cooperative import _produce_on_a_thread

    partitions = 6
    topic = await create_topic(broker.bootstrap, partitions)
    group_id = f"cp-frozen-{uuid.uuid4().hex[:8]}"
    timeline = Timeline()
    stop, sent = asyncio.Event(), []
    producing = asyncio.create_task(asyncio.to_thread(_produce_on_a_thread, broker.bootstrap, topic, partitions,
                                                      stop, sent, 400.0))
    member = await ours("ours", broker.bootstrap, group_id, topic, timeline).start()
    members = [member,
               await java_members.member(f"{group_id}.java", broker.bootstrap, group_id, [topic],
                                         {**CONSUMER, "group.remote.assignor": "uniform", **COMMIT}, timeline).start(),
               await ThreadedLibrdkafkaMember("rdk", broker.bootstrap, group_id, topic, timeline,
                                              protocol="consumer").start()]
    try:
        before = await settle(members, partitions)
        assert before["ours"]
        time.sleep(9)  # the whole event loop stops: no heartbeat, no poll  # noqa: ASYNC251
        woke = time.monotonic()
        after = await settle(members, partitions, timeout=60)
        assert sorted(map(len, after.values())) == [2, 2, 2]
    finally:
        await wind_down(stop, producing, members, members, sent, timeout=60)
    others = [(p, start, end) for p, start, end, m in timeline.intervals() if m != "ours"]
    late = [(t, p) for t, p, _o in member.records
            if t >= woke and any(q == p and start <= t <= end for q, start, end in others)]
    assert late == [], f"{len(late)} records returned after waking of partitions another member owned then"
    assert member.lost and member.lost[0] == before["ours"], member.lost
    # (By its callbacks a frozen member owns its partitions until it wakes, after the others took
    # them: what it must not do is return their records, above.)
    assert len({(p, o) for m in members for _t, p, o in m.records}) == len(sent)


async def test_a_static_member_restarted_within_its_session_gets_its_partitions_back(broker):
    """A static member (``group_instance_id``) closes, leaving with epoch -2 (it will come back),
    and a new consumer with its instance id joins within the session: the broker hands it the same
    partitions and the others revoke nothing."""
    topic = await create_topic(broker.bootstrap, 6)
    group_id = f"cp-static-{uuid.uuid4().hex[:8]}"
    timeline = Timeline()
    await a_static_member_comes_back(lambda name: ours(name, broker.bootstrap, group_id, topic, timeline,
                                                       group_instance_id=f"instance-{name}"))
    assert timeline.overlaps() == []


async def test_an_aiokafka_group_migrated_online_moves_and_revokes_what_the_rehearsal_says(broker):
    """Three of our cooperative classic consumers (``cooperative-sticky``), each stopped, the group
    left to settle without it, then started again on the consumer protocol (the broker's
    ``uniform``), as a slow rolling upgrade does: the group converts to a consumer group at the
    first upgraded member and back to none of the classic members at the last, never two owners
    of a partition, and the partitions moved and revoked over the upgrade are what the rehearsal
    (`assignor.whatif.migrate`) says, within two partitions or 10% (member ids are random on the
    broker: ties between members fall as they may)."""
    from assignor import Group, Member, TopicPartition, whatif
    from assignor.integrations.aiokafka import CooperativeStickyAssignor

    partitions = 12
    topic = await create_topic(broker.bootstrap, partitions)
    group_id = f"cp-upgrade-{uuid.uuid4().hex[:8]}"
    timeline = Timeline()
    started = 0

    async def start(i: int, protocol: str) -> AiokafkaMember:
        nonlocal started
        started += 1
        name = f"m{i}.{started}"
        if protocol == "consumer":
            return await ours(name, broker.bootstrap, group_id, topic, timeline).start()
        return await AiokafkaMember(name, broker.bootstrap, group_id, topic, timeline, CooperativeConsumer,
                                    partition_assignment_strategy=(CooperativeStickyAssignor(),)).start()

    members = [await start(0, "classic")]
    await settle(members, partitions)
    members += [await start(i, "classic") for i in (1, 2)]
    formed = await settle(members, partitions)
    owned = {i: formed[m.name] for i, m in enumerate(members)}
    forming = sum(len(r) for m in members for r in m.revoked)
    total_moved, everyone = await slow_upgrade(members, lambda i: start(i, "consumer"), partitions)
    assert timeline.overlaps() == []
    revoked = sum(len(r) for m in everyone for r in m.revoked) - forming
    group = Group({topic: partitions}, [Member(f"m{i}", [topic], [TopicPartition(topic, p) for p in sorted(ps)], 1)
                                        for i, ps in owned.items()])
    upgrade = whatif.migrate(group, [], "kip848-uniform", ["cooperative-sticky"])["upgrade"]
    for name, theirs, predicted in (("moved", total_moved, upgrade["moved"]), ("revoked", revoked, upgrade["revoked"])):
        assert abs(theirs - predicted) <= max(2, predicted // 10), (name, theirs, predicted)

