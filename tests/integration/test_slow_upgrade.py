"""A slow rolling upgrade on Apache Kafka against the rehearsal (`assignor.whatif.migrate`):
three Java consumers of a classic group (cooperative-sticky, or eager range: its members not
upgraded yet revoke everything at each rejoin), each stopped, the group left to settle without
it, then started again with the consumer protocol (the broker's ``uniform``). The partitions
moved between members and revoked over the upgrade are what the rehearsal says, within two
partitions or 10% (member ids are random on the broker: ties between members fall as they may;
in its runs here both came out equal: 12 and 12 cooperative, 14 and 36 eager, and 13 and 72
for six eager members)."""

from __future__ import annotations

import pytest

from assignor import whatif
from bench.java_members import CLASSIC, RANGE
from tests.java_group import COOPERATIVE, UNIFORM, JavaGroup
from tests.scenarios import slow_upgrade

pytestmark = [pytest.mark.integration, pytest.mark.anyio]


@pytest.mark.parametrize(("classic", "settings"), [("cooperative-sticky", COOPERATIVE),
                                                   ("range", {**CLASSIC, "partition.assignment.strategy": RANGE})])
async def test_a_slow_upgrade_moves_and_revokes_what_the_rehearsal_says(broker, java_members, classic, settings):
    group = await JavaGroup(broker, java_members, "slow-upgrade", 12).create()
    members, owned = await group.classic(3, settings)
    forming = sum(len(r) for m in members for r in m.revoked)  # (while the group formed: not the upgrade's)
    total_moved, everyone = await slow_upgrade(members, lambda i: group.start(i, UNIFORM), group.partitions)
    # (a stopped member's revocations at its close are not counted: JavaMember.stopping)
    revoked = sum(len(r) for m in everyone for r in m.revoked) - forming
    upgrade = whatif.migrate(group.rehearsed(owned), [], "kip848-uniform", [classic])["upgrade"]
    for name, theirs, ours in (("moved", total_moved, upgrade["moved"]), ("revoked", revoked, upgrade["revoked"])):
        assert abs(theirs - ours) <= max(2, ours // 10), (name, theirs, ours, [s["event"] for s in upgrade["steps"]])
