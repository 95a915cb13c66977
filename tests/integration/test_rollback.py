"""A rollback on Apache Kafka, against the rehearsal's (``rollback:ID``): three Java consumers of
a consumer-protocol group (the broker's ``uniform``), each restarted with the classic protocol
(cooperative-sticky), the next one once the group has settled. Each rejoins as a classic member
of the consumer group; the last one's leave converts the group back to a classic group (the
broker logs it then, not before), which rebalances under cooperative-sticky. Member by member,
what the rehearsal says moves at each leave and each return is what moved on the broker."""

from __future__ import annotations

import pytest

from assignor import whatif
from bench.rebalance import settle
from tests.java_group import COOPERATIVE, UNIFORM, JavaGroup, moved

pytestmark = [pytest.mark.integration, pytest.mark.anyio]


async def test_rolling_back_every_member_converts_the_group_back_at_the_last(broker, java_members):
    group = await JavaGroup(broker, java_members, "rollback", 6).create()

    def converted_back() -> int:
        log = broker.log_path.read_text(errors="replace")
        return log.count(f"[GroupId {group.group}] Converted the consumer group to a classic group.")

    # The group starts as a consumer group: what the rollback does is the same as after an
    # upgrade, and the upgrade is tested elsewhere (test_quick_restarts.py, test_slow_upgrade.py).
    members = [await group.start(i, UNIFORM) for i in range(3)]
    figures: list[int] = []
    conversions: list[int] = []
    try:
        start = await settle(members, group.partitions)
        owned = {i: start[m.name] for i, m in enumerate(members)}
        for i in range(3):  # a leave and a return each, the group settled between
            before = {j: m.partitions() for j, m in enumerate(members)}
            await members[i].stop()
            left = await settle(members[:i] + members[i + 1 :], group.partitions)
            after_leave = {j: left[m.name] for j, m in enumerate(members) if j != i}
            conversions.append(converted_back())
            members[i] = await group.start(i, COOPERATIVE)
            back = await settle(members, group.partitions)
            after = {j: back[m.name] for j, m in enumerate(members)}
            figures += [moved(before, after_leave), moved(after_leave, after)]
    finally:
        for member in members:
            await member.stop()
    assert conversions == [0, 0, 1], conversions
    migration = whatif.migrate(group.rehearsed(owned), [whatif.parse_event(f"rollback:m{i}") for i in range(3)],
                               "kip848-uniform", ["cooperative-sticky"])
    steps = [e["consumer"] for e in migration["events"]]
    assert ["converting the group back to classic" in s["event"] for s in steps] == [False] * 4 + [True, False]
    assert [s["moved"] for s in steps] == figures, (figures, [s["event"] for s in steps])
