"""Static members (KIP-345) restarting on Apache Kafka, against the what-if's rule: a static
member back within its session moves nothing. Three Java consumers with ``group.instance.id``s,
under the classic protocol (``CooperativeStickyAssignor``), under the consumer protocol (KIP-848,
the broker's ``uniform``), and upgraded from the first to the second, each closed and started
again at once under the same instance id: the new consumer gets exactly its predecessor's
partitions, no other member holds them meanwhile or changes its own, and the rehearsal of the
same group's rolling restart or upgrade (`assignor.whatif`) says 0 moved and 0 revoked at every
step."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from assignor import Group, Member, TopicPartition, assign, whatif
from bench.java_members import CLASSIC, CONSUMER, COOPERATIVE_STICKY, RANGE
from bench.rebalance import create_topic, settle
from tests.ownership import Timeline

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

PARTITIONS = 6
SETTINGS = {"classic": ({**CLASSIC, "partition.assignment.strategy": COOPERATIVE_STICKY}, "cooperative-sticky"),
            "consumer": ({**CONSUMER, "group.remote.assignor": "uniform"}, "kip848-uniform")}
#: (the protocol the members start under, the one they come back under)
PROTOCOLS = [("classic", "classic"), ("consumer", "consumer"), ("classic", "consumer")]


@pytest.mark.parametrize(("protocol", "back_under"), PROTOCOLS, ids=["classic", "consumer", "upgrade"])
async def test_a_static_member_restarted_at_once_gets_its_partitions_back_and_nothing_moves(broker, java_members,
                                                                                           protocol, back_under):
    """``upgrade``: each member comes back under the consumer protocol (the rolling upgrade of
    KIP-848's migration), as the same instance; the rehearsal (`whatif.migrate`) says the same."""
    strategy = SETTINGS[protocol][1]
    topic = await create_topic(broker.bootstrap, PARTITIONS)
    group = f"static-{uuid.uuid4().hex[:8]}"
    timeline = Timeline()
    instance_of: dict[str, int] = {}

    def make(name: str, instance: int, under: str = protocol):
        member = java_members.member(f"{group}.{name}", broker.bootstrap, group, [topic],
                                     {**SETTINGS[under][0], "group.instance.id": f"instance-{instance}"}, timeline)
        instance_of[member.name] = instance
        return member

    members = [await make("m0", 0).start()]
    try:
        await settle(members, PARTITIONS)  # alone first: under the classic protocol it leads
        members += [await make(f"m{i}", i).start() for i in (1, 2)]
        before = await settle(members, PARTITIONS)
        assert sorted(map(len, before.values())) == [2, 2, 2], before
        owned = {i: before[m.name] for i, m in enumerate(members)}
        settled_at = timeline.clock()
        for i in range(len(members)):
            await members[i].stop()
            members[i] = await make(f"m{i}-again", i, back_under).start()
            after = await settle(members, PARTITIONS)
            assert {j: after[m.name] for j, m in enumerate(members)} == owned, (i, owned, after)
    finally:
        for member in members:
            await member.stop()
    # Once settled, no partition belonged to a member of another instance (the callbacks' timeline).
    strangers = [(p, member) for p, _start, end, member in timeline.intervals()
                 if end > settled_at and p not in owned[instance_of[member]]]
    assert not strangers, strangers
    rehearsed = Group({topic: PARTITIONS}, [
        Member(f"m{i}", [topic], owned=[TopicPartition(topic, p) for p in sorted(owned[i])], generation=1,
               group_instance_id=f"instance-{i}") for i in owned])
    if back_under == protocol:
        steps = whatif.run(rehearsed, [whatif.parse_event("rolling_restart")], [strategy])["strategies"][strategy]
        restarts = steps["steps"][1:]
    else:
        restarts = whatif.migrate(rehearsed, [], SETTINGS[back_under][1], [strategy])["upgrade"]["steps"]
    assert [(s["moved"], s["revoked"]) for s in restarts] == [(0, 0)] * len(owned)



async def test_java_deals_to_static_members_first_as_our_range_does(broker, java_members):
    """Two dynamic and two static Java members under the client's range: the static members' ids
    start with their instance ids (``z-...``) and sort after the dynamic ones (client ids ``a0``,
    ``a1``), yet the Java leader deals to them first (KIP-345's ``MemberInfo`` order). `assign` on
    the group as the broker holds it (its member ids, the instance ids) gives the leader's plan
    exactly; without the instance ids it would not. (Round-robin sorts members by the same
    ``MemberInfo`` order: Kafka's own cases for it are tests/consumer/test_static_order.py's.)"""
    java_assignor, strategy = RANGE, "range"
    partitions = 7
    topic = await create_topic(broker.bootstrap, partitions)
    group = f"static-order-{uuid.uuid4().hex[:8]}"
    settings = {**CLASSIC, "partition.assignment.strategy": java_assignor}
    members = [java_members.member(f"{group}.a{i}", broker.bootstrap, group, [topic],
                                   {**settings, "client.id": f"a{i}"}) for i in range(2)]
    members += [java_members.member(f"{group}.z{i}", broker.bootstrap, group, [topic],
                                    {**settings, "group.instance.id": f"z-instance-{i}"}) for i in range(2)]
    try:
        for member in members:
            await member.start()
        owned = await settle(members, partitions)
        ids = {m.name: next(e["member_id"] for e in reversed(m.events) if e.get("member_id")) for m in members}
    finally:
        for member in members:
            await member.stop()
    instance = {m.name: m.config.get("group.instance.id") for m in members}
    assert all(ids[m.name].startswith("z-instance-") for m in members[2:]), ids
    group_now = Group({topic: partitions}, [Member(ids[m.name], [topic], group_instance_id=instance[m.name])
                                            for m in members])
    planned = assign(strategy, group_now).assignment
    assert {m.name: {tp.partition for tp in planned[ids[m.name]]} for m in members} == owned
    dynamic = Group({topic: partitions}, [Member(ids[m.name], [topic]) for m in members])
    assert {m.name: {tp.partition for tp in assign(strategy, dynamic).assignment[ids[m.name]]}
            for m in members} != owned


async def test_a_static_member_away_longer_than_its_session_is_removed_and_joins_again(broker, java_members):
    """Away 8 s with a 6 s session (the broker's ``group.consumer.session.timeout.ms``): the
    coordinator removes it (the others take its partitions), and its return is a join that takes
    two back. The rehearsal with the same times (`whatif.Timing`) says the same, step by step. (The
    classic protocol's session expiry is the same rule; each run of this waits past a session.)"""
    settings, strategy = SETTINGS["consumer"]
    topic = await create_topic(broker.bootstrap, PARTITIONS)
    group = f"static-away-{uuid.uuid4().hex[:8]}"

    def make(name: str, instance: int):
        return java_members.member(f"{group}.{name}", broker.bootstrap, group, [topic],
                                   {**settings, "group.instance.id": f"instance-{instance}"})

    members = [await make("m0", 0).start()]
    try:
        await settle(members, PARTITIONS)
        members += [await make(f"m{i}", i).start() for i in (1, 2)]
        before = await settle(members, PARTITIONS)
        owned = {i: before[m.name] for i, m in enumerate(members)}
        await members[0].stop()
        away = await settle(members[1:], PARTITIONS, timeout=30)
        await asyncio.sleep(max(0.0, 8.0 - 1.5))  # (settle held still 1.5 s of it)
        members[0] = await make("m0-again", 0).start()
        after = await settle(members, PARTITIONS)
    finally:
        for member in members:
            await member.stop()
    broker_moved = [sum(len(owned[i] - away[m.name]) for i, m in enumerate(members) if i),
                    sum(len(away[m.name] - after[m.name]) for m in members[1:])]
    rehearsed = Group({topic: PARTITIONS}, [
        Member(f"m{i}", [topic], owned=[TopicPartition(topic, p) for p in sorted(owned[i])], generation=1,
               group_instance_id=f"instance-{i}") for i in owned])
    timing = whatif.Timing(restart_seconds=8, session_timeout_ms=6000)
    steps = whatif.run(rehearsed, [whatif.parse_event("rolling_restart")], [strategy],
                       timing=timing)["strategies"][strategy]["steps"]
    assert [s["event"] for s in steps[1:3]] == ["restart m0: static, away longer than its session: leave",
                                                "restart m0: rejoin"]
    assert [s["moved"] for s in steps[1:3]] == broker_moved == [0, 2], (broker_moved, owned, away, after)
