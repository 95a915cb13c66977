"""Classic groups (KIP-429) mixing three clients on Apache Kafka: Java's
``CooperativeStickyAssignor`` consumers (our member driver, `bench.java_members`), librdkafka's
``cooperative-sticky`` and our cooperative aiokafka consumers, each kind leading in turn (the
leader plans for all: Java's assignor plans for our members, ours for Java's), through a rolling
restart where each member is replaced at once, and (ours leading first) one where the group
settles without it first.

After every step the group is complete and balanced; a survivor revokes only partitions it
hands over; no record is lost and no partition is ever owned by two members at once (each
member's callbacks, on one clock)."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from bench.java_members import CLASSIC, COOPERATIVE_STICKY, JavaMember
from bench.rebalance import AiokafkaMember, LibrdkafkaMember, create_topic, produce, settle, wind_down
from tests.ownership import Timeline

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

KINDS = ("java", "librdkafka", "ours")
PARTITIONS = 6


def _maker(kind: str, bootstrap: str, group: str, topic: str, timeline: Timeline, java_members):
    from assignor.integrations.aiokafka import CooperativeStickyAssignor
    from assignor.integrations.aiokafka_cooperative import CooperativeConsumer

    def make(name: str):
        if kind == "java":
            settings = {**CLASSIC, "partition.assignment.strategy": COOPERATIVE_STICKY, "enable.auto.commit": "true",
                        "auto.commit.interval.ms": "1000"}
            return java_members.member(f"{group}.{name}", bootstrap, group, [topic], settings, timeline)
        if kind == "librdkafka":
            return LibrdkafkaMember(name, bootstrap, group, topic, timeline)
        return AiokafkaMember(name, bootstrap, group, topic, timeline, CooperativeConsumer,
                              partition_assignment_strategy=(CooperativeStickyAssignor(),), enable_auto_commit=True,
                              auto_commit_interval_ms=1000)
    return make


#: Each kind leads a rolling restart where each member is replaced at once; one where the group
#: settles without it first is run once, ours leading (the leadership moves as the members
#: restart, so every kind leads some of its rebalances; each run waits a settled group out).
VARIANTS = [*((kind, "restart") for kind in KINDS), ("ours", "settled")]


@pytest.mark.parametrize(("leader", "variant"), VARIANTS, ids=[f"{k}-{v}" for k, v in VARIANTS])
async def test_a_group_of_java_librdkafka_and_our_consumers_through_a_rolling_restart(broker, java_members, leader,
                                                                                      variant):
    topic = await create_topic(broker.bootstrap, PARTITIONS)
    group = f"mixed-{uuid.uuid4().hex[:8]}"
    timeline = Timeline()
    kinds = (leader, *(k for k in KINDS if k != leader))
    makers = [_maker(k, broker.bootstrap, group, topic, timeline, java_members) for k in kinds]
    stop, sent = asyncio.Event(), []
    producing = asyncio.create_task(produce(broker.bootstrap, topic, PARTITIONS, stop, sent, 100.0))
    members = [await makers[0](f"{kinds[0]}-0").start()]
    everyone = list(members)
    try:
        await settle(members, PARTITIONS)  # alone first: the coordinator's first member leads
        for i in (1, 2):
            members.append(await makers[i](f"{kinds[i]}-0").start())
            everyone.append(members[-1])
        settled = await settle(members, PARTITIONS)
        assert sorted(map(len, settled.values())) == [2, 2, 2], settled
        for index in range(len(members)):
            for m in members:
                m.revoked.clear()
            before = settled
            await members[index].stop()
            if variant == "settled":
                without = await settle(members[:index] + members[index + 1:], PARTITIONS)
                assert sorted(map(len, without.values())) == [3, 3], without
            members[index] = await makers[index](f"{kinds[index]}-{len(everyone)}").start()
            everyone.append(members[index])
            settled = await settle(members, PARTITIONS)
            assert sorted(map(len, settled.values())) == [2, 2, 2], settled
            for m in members:
                if m.name in before:  # a survivor: it revoked only what it no longer has
                    gone = set().union(*m.revoked)
                    assert not gone & settled[m.name], (m.name, gone, settled[m.name])
    finally:
        await wind_down(stop, producing, members, everyone, sent, timeout=60)
    consumed = {(p, o) for m in everyone for _t, p, o in m.records}
    assert len(consumed) == len(sent), f"{len(sent) - len(consumed)} records never consumed"
    assert timeline.overlaps() == [], "a partition owned by two members at once"
    java = [m for m in everyone if isinstance(m, JavaMember)]
    assert java and all(not m.errors for m in java), [m.errors for m in java]
    for m in java:  # each callback names the generation it belongs to, never an older one
        generations = [generation for _event, generation, _partitions in m.callbacks()]
        assert generations and generations == sorted(generations) and generations[0] >= 1, (m.name, generations)
