"""Quick restarts on Apache Kafka, against the rehearsal's timing (`assignor.whatif.timing`): a
member back before the coordinator acts on its leave takes its predecessor's place in one
rebalance, and gets exactly what its predecessor held.

Java consumers of a consumer-protocol group (the broker's ``uniform``), and of a classic
cooperative-sticky group upgraded member by member to the consumer protocol, each restarted
right after the target before it (as a rolling restart goes on once a member is back). The group
sets ``consumer.assignment.interval.ms`` (the broker's ``group.consumer.assignment.interval.ms``,
per group) to 2 s, so no target can come between a leave and a return half a second later; the
upgrade's first return comes before the classic rebalance the leave started can complete (the
others rejoin at their next heartbeat, every 3 s). The rehearsal of the same group with the
measured time away says one step per restart and nothing moved, as the broker did.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from assignor import whatif
from bench.rebalance import settle
from tests.broker import set_assignment_interval
from tests.java_group import COOPERATIVE as CLASSIC_COOPERATIVE
from tests.java_group import UNIFORM, JavaGroup

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

PARTITIONS = 12
INTERVAL_MS = 2000
#: Our test broker's ``group.consumer.heartbeat.interval.ms`` (`bench.broker`).
BROKER_HEARTBEAT_MS = 500
#: Classic members at Java's default heartbeat (3 s) and a session that allows it.
COOPERATIVE = {**CLASSIC_COOPERATIVE, "heartbeat.interval.ms": "3000", "session.timeout.ms": "10000"}


async def whole(members, timeout: float = 30.0) -> dict[int, set[int]]:
    """As soon as every partition is owned once and the members hold equal shares (not waiting
    for the group to stay still, as `settle` does: the next restart must follow the target)."""
    deadline = time.monotonic() + timeout
    while True:
        now = {i: m.partitions() for i, m in enumerate(members)}
        if sorted(p for ps in now.values() for p in ps) == list(range(PARTITIONS)) and \
                len({len(ps) for ps in now.values()}) == 1:
            return now
        if time.monotonic() > deadline:
            raise AssertionError(f"the group was not whole within {timeout} s: {now}")
        await asyncio.sleep(0.02)


async def restart_each(members, make, held: dict[int, set[int]]) -> list[float]:
    """Restart each member in turn as soon as the group is whole again, then stop them all: each
    new member holds exactly what its predecessor `held`, and nobody else's holdings changed.
    Returns the seconds each was away (closed, until its successor started)."""
    away, after = [], []
    try:
        for i in range(len(members)):
            await members[i].stop()
            left = time.monotonic()
            members[i] = await make(i)
            away.append(time.monotonic() - left)
            after.append(await whole(members))
    finally:
        for member in members:
            await member.stop()
    for i, everyone in enumerate(after):
        assert everyone[i] == held[i] and everyone == held, (i, held, after)
    return away


async def test_consumer_protocol_members_back_within_the_interval_take_their_predecessors_place(broker,
                                                                                                java_members):
    group = await JavaGroup(broker, java_members, "quick", PARTITIONS).create()
    set_assignment_interval(broker.bootstrap, group.group, INTERVAL_MS)
    members = [await group.start(i, UNIFORM) for i in range(3)]
    try:
        settled = await settle(members, PARTITIONS, timeout=90)
        first = {i: settled[m.name] for i, m in enumerate(members)}
        members.append(await group.start(3, UNIFORM))  # a target computed now: the rolling restart follows it
        before = await whole(members)
    except BaseException:
        for member in members:
            await member.stop()
        raise
    away = await restart_each(members, lambda i: group.start(i, UNIFORM), before)
    timing = whatif.Timing(restart_seconds=max(away), consumer_heartbeat_ms=BROKER_HEARTBEAT_MS,
                           assignment_interval_ms=INTERVAL_MS)
    steps = whatif.run(group.rehearsed(first),
                       [whatif.parse_event(f"member_join:m3:{group.topic}"), whatif.parse_event("rolling_restart")],
                       ["kip848-uniform"], timing=timing)["strategies"]["kip848-uniform"]["steps"]
    assert [(s["moved"], s["revoked"]) for s in steps[2:]] == [(0, 0)] * 4, (away, steps)


async def test_an_upgrade_of_members_back_in_time_moves_nothing(broker, java_members):
    group = await JavaGroup(broker, java_members, "quick-upgrade", PARTITIONS).create()
    set_assignment_interval(broker.bootstrap, group.group, INTERVAL_MS)
    members, owned = await group.classic(3, COOPERATIVE)
    away = await restart_each(members, lambda i: group.start(i, UNIFORM), owned)
    timing = whatif.Timing(restart_seconds=max(away), consumer_heartbeat_ms=BROKER_HEARTBEAT_MS,
                           classic_heartbeat_ms=3000, assignment_interval_ms=INTERVAL_MS)
    migration = whatif.migrate(group.rehearsed(owned), [], "kip848-uniform", ["cooperative-sticky"], timing=timing)
    steps = migration["upgrade"]["steps"]
    assert len(steps) == 3 and [(s["moved"], s["revoked"]) for s in steps] == [(0, 0)] * 3, (away, steps)
