"""``rollback:ID`` (`assignor.whatif.migration._rollback`): after a migration, a member restarts
with the classic protocol. It rejoins as a classic member of the consumer group, and the last
consumer-protocol member's rollback converts the group back to classic, which rebalances under
the classic strategy, unless the policy forbids downgrades. The broker's side is in
tests/integration/test_rollback.py."""

from __future__ import annotations

import pytest

from assignor import Group, Member, TopicPartition, whatif
from assignor.errors import WhatIfError
from assignor.whatif import Conversion, consumer_member_id, migrate, parse_event

T = "t"
GROUP = Group({T: 6}, [Member(f"m{i}", [T], [TopicPartition(T, 2 * i), TopicPartition(T, 2 * i + 1)], 3)
                       for i in range(3)])
ALL_BACK = [parse_event(f"rollback:m{i}") for i in range(3)]


def labels(migration):
    return [e["event"] for e in migration["events"]]


def test_the_last_rollback_converts_the_group_back_to_classic():
    m = migrate(GROUP, [*ALL_BACK, parse_event("member_leave:m0")], "kip848-uniform", ["cooperative-sticky"],
                check=True, include_plans=True)
    steps = [e["consumer"] for e in m["events"]]
    names = [consumer_member_id(f"m{i}") for i in range(3)]
    assert labels(m)[:6] == [f"rollback {names[0]}: leave", f"rollback {names[0]}: rejoin as {names[0]}-classic, "
                             "a classic member", f"rollback {names[1]}: leave",
                             f"rollback {names[1]}: rejoin as {names[1]}-classic, a classic member",
                             f"rollback {names[2]}: leave, converting the group back to classic",
                             f"rollback {names[2]}: rejoin as {names[2]}-classic, a classic member"]
    # Consumer-protocol steps until the conversion back (reconciliation figures), classic after.
    assert ["max_unowned" in s for s in steps] == [True, True, True, True, False, False, False]
    # Each rolled-back member takes two partitions back as a new member; nothing else moves.
    assert [s["moved"] for s in steps] == [0, 2, 0, 2, 0, 2, 0]
    assert sorted(steps[-1]["assignment"]) == sorted(f"{n}-classic" for n in names[1:])
    # A later event names members as the user does: m0 is now its classic self.
    assert labels(m)[-1] == "member_leave:m0"


@pytest.mark.parametrize(("policy", "converts"), [("bidirectional", True), ("upgrade", False)])
def test_the_policy_decides_the_conversion_back(policy, converts):
    """``upgrade`` allows no downgrade: the group stays a consumer group of classic members (the
    other policies that allow downgrades, ``downgrade``, allows no upgrade to start with)."""
    m = migrate(GROUP, ALL_BACK, "kip848-uniform", ["cooperative-sticky"],
                conversion_rules=Conversion(migration_policy=policy), check=True)
    assert any("converting the group back" in label for label in labels(m)) is converts
    assert all("max_unowned" in e["consumer"] for e in m["events"]) is not converts


def test_an_eager_classic_member_of_the_consumer_group_revokes_all_it_holds_at_each_rejoin():
    """Rolled back under ``range`` (eager), the classic member gives up everything when the next
    member's leave makes it rejoin: more revoked than moved."""
    m = migrate(GROUP, ALL_BACK[:2], "kip848-uniform", ["range"], check=True)
    second_leave = m["events"][2]["consumer"]
    assert second_leave["revoked"] > second_leave["moved"]


def test_a_rollback_is_a_restart_in_a_classic_run_and_refused_in_a_consumer_run():
    classic = whatif.run(GROUP, [parse_event("rollback:m1")], ["cooperative-sticky"])
    assert [s["event"] for s in classic["strategies"]["cooperative-sticky"]["steps"]] == [
        "current", "restart m1: leave", "restart m1: rejoin"]
    with pytest.raises(WhatIfError, match="kip848-uniform runs the consumer protocol from the start"):
        whatif.run(GROUP, [parse_event("rollback:m1")], ["kip848-uniform"])
    with pytest.raises(WhatIfError, match="rollback: no member 'nobody'"):
        migrate(GROUP, [parse_event("rollback:nobody")], "kip848-uniform", ["cooperative-sticky"])


def test_a_member_rolled_back_twice_is_refused():
    with pytest.raises(WhatIfError, match="runs the classic protocol already"):
        migrate(GROUP, [ALL_BACK[0], ALL_BACK[0]], "kip848-uniform", ["cooperative-sticky"])


def test_a_static_member_comes_back_as_its_classic_self():
    static = Group(GROUP.topics, [Member(m.id, m.topics, m.owned, 3, group_instance_id=f"i{i}")
                                  for i, m in enumerate(GROUP.members)])
    m = migrate(static, ALL_BACK, "kip848-uniform", ["cooperative-sticky"], check=True)
    assert labels(m) == ["rollback m0: static, back as a classic member", "rollback m1: static, back as a classic "
                         "member", "rollback m2: static, back as a classic member, converting the group back to "
                         "classic"]
    assert [e["consumer"]["moved"] for e in m["events"]] == [0, 0, 0]
