"""A rollback on Apache Kafka, against the rehearsal's (``rollback:ID``): three Java consumers of
a consumer-protocol group (the broker's ``uniform``), each restarted with the classic protocol
(cooperative-sticky), the next one once the group has settled. Each rejoins as a classic member
of the consumer group; the last one's leave converts the group back to a classic group (the
broker logs it then, not before), which rebalances under cooperative-sticky. Member by member,
what the rehearsal says moves at each leave and each return is what moved on the broker."""

from __future__ import annotations

import uuid

import pytest

from assignor import Group, Member, TopicPartition, whatif
from bench.java_members import CLASSIC, CONSUMER, COOPERATIVE_STICKY
from bench.rebalance import create_topic, settle

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

PARTITIONS = 6
UNIFORM = {**CONSUMER, "group.remote.assignor": "uniform"}
COOPERATIVE = {**CLASSIC, "partition.assignment.strategy": COOPERATIVE_STICKY}


def moved(before: dict[str, set[int]], after: dict[str, set[int]]) -> int:
    """Partitions taken from a member that is in the group before and after."""
    return sum(len(before[m] - after[m]) for m in before if m in after)


async def test_rolling_back_every_member_converts_the_group_back_at_the_last(broker, java_members):
    topic = await create_topic(broker.bootstrap, PARTITIONS)
    group = f"rollback-{uuid.uuid4().hex[:8]}"
    count = 0

    async def make(i: int, settings: dict[str, str]):
        nonlocal count
        count += 1
        return await java_members.member(f"{group}.m{i}.{count}", broker.bootstrap, group, [topic], settings).start()

    def converted_back() -> int:
        log = broker.log_path.read_text(errors="replace")
        return log.count(f"[GroupId {group}] Converted the consumer group to a classic group.")

    # The group starts as a consumer group: what the rollback does is the same as after an
    # upgrade, and the upgrade is tested elsewhere (test_quick_restarts.py, test_static_members.py).
    members = [await make(i, UNIFORM) for i in range(3)]
    figures: list[int] = []
    conversions: list[int] = []
    try:
        start = await settle(members, PARTITIONS)
        owned = {i: start[m.name] for i, m in enumerate(members)}
        for i in range(3):  # the rollback, a leave and a return each, the group settled between
            before = {str(j): m.partitions() for j, m in enumerate(members)}
            await members[i].stop()
            left = await settle(members[:i] + members[i + 1 :], PARTITIONS)
            after_leave = {str(j): left[m.name] for j, m in enumerate(members) if j != i}
            conversions.append(converted_back())
            members[i] = await make(i, COOPERATIVE)
            back = await settle(members, PARTITIONS)
            after = {str(j): back[m.name] for j, m in enumerate(members)}
            figures += [moved(before, after_leave), moved(after_leave, after)]
    finally:
        for member in members:
            await member.stop()
    assert conversions == [0, 0, 1], conversions
    rehearsed = Group({topic: PARTITIONS}, [Member(f"m{i}", [topic], [TopicPartition(topic, p) for p in sorted(ps)], 1)
                                            for i, ps in owned.items()])
    migration = whatif.migrate(rehearsed, [whatif.parse_event(f"rollback:m{i}") for i in range(3)], "kip848-uniform",
                               ["cooperative-sticky"])
    steps = [e["consumer"] for e in migration["events"]]
    assert ["converting the group back to classic" in s["event"] for s in steps] == [False] * 4 + [True, False]
    assert [s["moved"] for s in steps] == figures, (figures, [s["event"] for s in steps])
