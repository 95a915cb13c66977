"""A slow rolling upgrade on Apache Kafka against the rehearsal (`assignor.whatif.migrate`):
three Java consumers of a classic cooperative-sticky group, each stopped, the group left to
settle without it, then started again with the consumer protocol (the broker's ``uniform``).
The partitions moved between members and revoked over the upgrade are what the rehearsal says,
within two partitions or 10% (member ids are random on the broker: ties between members fall as
they may)."""

from __future__ import annotations

import uuid

import pytest

from assignor import Group, Member, TopicPartition, whatif
from bench.java_members import CLASSIC, CONSUMER, COOPERATIVE_STICKY
from bench.rebalance import create_topic, settle

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

PARTITIONS = 12
UNIFORM = {**CONSUMER, "group.remote.assignor": "uniform"}
COOPERATIVE = {**CLASSIC, "partition.assignment.strategy": COOPERATIVE_STICKY}


def moved(before: dict[int, set[int]], after: dict[int, set[int]]) -> int:
    """Partitions taken from a member in the group before and after."""
    return sum(len(before[i] - after[i]) for i in before if i in after)


async def test_a_slow_upgrade_moves_and_revokes_what_the_rehearsal_says(broker, java_members):
    topic = await create_topic(broker.bootstrap, PARTITIONS)
    group = f"slow-upgrade-{uuid.uuid4().hex[:8]}"
    count = 0

    async def make(i: int, settings: dict[str, str]):
        nonlocal count
        count += 1
        return await java_members.member(f"{group}.m{i}.{count}", broker.bootstrap, group, [topic], settings).start()

    members = [await make(0, COOPERATIVE)]
    total_moved = 0
    try:
        await settle(members, PARTITIONS)  # alone first: it leads
        members += [await make(i, COOPERATIVE) for i in (1, 2)]
        start = await settle(members, PARTITIONS)
        owned = {i: start[m.name] for i, m in enumerate(members)}
        revoked_before = sum(len(r) for m in members for r in m.revoked)
        everyone = list(members)  # every consumer that took part, for its revocations
        now = dict(owned)
        for i in range(3):
            await members[i].stop()
            others = [m for j, m in enumerate(members) if j != i]
            left = await settle(others, PARTITIONS)
            after_leave = {j: left[m.name] for j, m in enumerate(members) if j != i}
            members[i] = await make(i, UNIFORM)
            everyone.append(members[i])
            back = await settle(members, PARTITIONS)
            after = {j: back[m.name] for j, m in enumerate(members)}
            total_moved += moved(now, after_leave) + moved(after_leave, after)
            now = after
        # (the stopped members' own revocations at close are not counted: JavaMember.stopping)
        revoked = sum(len(r) for m in everyone for r in m.revoked) - revoked_before
    finally:
        for member in members:
            await member.stop()
    rehearsed = Group({topic: PARTITIONS}, [Member(f"m{i}", [topic], [TopicPartition(topic, p) for p in sorted(ps)], 1)
                                            for i, ps in owned.items()])
    upgrade = whatif.migrate(rehearsed, [], "kip848-uniform", ["cooperative-sticky"])["upgrade"]
    for name, theirs, ours in (("moved", total_moved, upgrade["moved"]), ("revoked", revoked, upgrade["revoked"])):
        assert abs(theirs - ours) <= max(2, ours // 10), (name, theirs, ours, [s["event"] for s in upgrade["steps"]])
