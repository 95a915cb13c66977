"""The migration rehearsal (`assignor.whatif.migrate`) and KIP-848 steps in what-if, read by
hand against Kafka's rules on small groups."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from assignor import Group, Member, TopicPartition
from assignor.cli import main
from assignor.errors import WhatIfError
from assignor.whatif import MIGRATE_FROM, apply_event, consumer_member_id, migrate, parse_event, rehearsed_from, run
from assignor.whatif.steps import _expand

GROUP = Group({"orders": 12, "payments": 6}, [Member(f"c{i}", ["orders", "payments"]) for i in range(3)])


def test_kip848_steps_are_reconciliations():
    """Under kip848-* a step reports heartbeat intervals, pauses and unowned time, and the
    plans pass the oracle (`check`)."""
    result = run(GROUP, [parse_event("member_join:c3:orders,payments")], ["kip848-uniform", "kip848-range"], check=True)
    for name in ("kip848-uniform", "kip848-range"):
        join = result["strategies"][name]["steps"][1]
        assert {"max_unowned", "paused_members", "waiting_members"} <= set(join)
        assert join["revoked"] == join["moved"] > 0
        assert join["paused_members"] <= 3  # only members that lose something pause


def test_the_first_restart_converts_the_group():
    """Kafka converts a classic group online when a member joins with the consumer protocol
    (``convertToConsumerGroup``: "the upgrade is always triggered by a new member joining"). So
    the first member to restart leaves a classic group (a classic rebalance: cooperative-sticky
    hands its 4 partitions to the others, nobody revokes), and its rejoin is the conversion: the
    others' current partitions become their targets and the broker's assignor plans with the
    rejoining member in the group, which takes its 4 back from the 2 members above quota."""
    owned = {"c0": [0, 1, 2, 3], "c1": [4, 5, 6, 7], "c2": [8, 9, 10, 11]}
    group = Group({"orders": 12}, [Member(m, ["orders"], [TopicPartition("orders", p) for p in ps])
                                   for m, ps in owned.items()])
    m = migrate(group, [], "kip848-uniform", ["cooperative-sticky"], check=True)
    leave, rejoin, *rest = m["upgrade"]["steps"]
    assert leave["event"] == "restart c0: leave (classic)" and "max_unowned" not in leave
    assert leave["revoked"] == 0 and leave["reassigned"] == 4
    assert rejoin is m["conversion"]
    assert rejoin["event"] == f"restart c0: rejoin as {consumer_member_id('c0')}, converting to kip848-uniform"
    assert rejoin["moved"] == rejoin["revoked"] == 4 and rejoin["paused_members"] == 2
    assert m["upgrade"]["restarts"] == 3 and len(rest) == 4 and all("max_unowned" in s for s in rest)


def test_eager_classic_members_of_the_converted_group_revoke_everything_at_each_rejoin():
    """Until it restarts, a member is a classic member of the converted group: told to rejoin at
    every change (``classicGroupHeartbeatToConsumerGroup``: the group epoch passed its own),
    and under an eager protocol it revokes all it holds before its JoinGroup. The same upgrade
    from cooperative-sticky pauses only the members that lose something."""
    owned = {"c0": [0, 1, 2, 3], "c1": [4, 5, 6, 7], "c2": [8, 9, 10, 11]}
    group = Group({"orders": 12}, [Member(m, ["orders"], [TopicPartition("orders", p) for p in ps])
                                   for m, ps in owned.items()])
    cooperative = migrate(group, [], "kip848-uniform", ["cooperative-sticky"], check=True)
    eager = migrate(group, [], "kip848-uniform", ["sticky"], check=True)
    steps = {"cooperative": cooperative["upgrade"]["steps"], "eager": eager["upgrade"]["steps"]}
    # the rejoin that converts the group: c1 and c2 are still classic and eager, so both give up
    # all 6 they hold (the 4 that go back to c0's new member among them), and take 4 back
    conversion = steps["eager"][1]
    assert conversion["revoked"] == 12 and conversion["moved"] == 4 and conversion["paused_members"] == 2
    assert steps["cooperative"][1]["revoked"] == 4
    # the last restart's rejoin: nobody is classic any more, the two runs agree
    assert steps["eager"][-1]["revoked"] == steps["cooperative"][-1]["revoked"]
    # every step with classic members left revokes at least what they hold
    assert all(e["revoked"] >= c["revoked"] for e, c in zip(steps["eager"][1:], steps["cooperative"][1:]))
    assert eager["upgrade"]["revoked"] > cooperative["upgrade"]["revoked"]


def test_restarted_members_rejoin_as_new_members():
    """Under the consumer protocol the client draws its member id at start (KIP-1082), so a
    member restarted during the upgrade rejoins as a new member (range, which sorts members by
    id, then cuts the topic elsewhere); a later event naming it applies to the member it became."""
    m = migrate(GROUP, [parse_event("member_leave:c1")], "kip848-range", ["cooperative-sticky"], check=True,
                include_plans=True)
    new_ids = {consumer_member_id(f"c{i}") for i in range(3)}
    assert set(m["upgrade"]["steps"][-1]["assignment"]) == new_ids
    assert all(len(i) == 22 for i in new_ids)
    leave = m["events"][0]
    assert leave["event"] == "member_leave:c1"
    assert set(leave["consumer"]["assignment"]) == new_ids - {consumer_member_id("c1")}


def test_a_group_without_members_converts_as_it_is():
    m = migrate(Group({"orders": 12}, []), [], "kip848-uniform", ["cooperative-sticky"])
    assert m["upgrade"]["restarts"] == 0 and m["upgrade"]["steps"] == [m["conversion"]]
    assert m["conversion"]["event"] == "convert to kip848-uniform" and m["conversion"]["moved"] == 0


def test_migration_compares_every_later_event():
    m = migrate(GROUP, [parse_event("member_join:c3:orders,payments"), parse_event("member_leave:c0")],
                "kip848-range", ["cooperative-sticky", "range"], check=True)
    assert [e["event"] for e in m["events"]] == ["member_join:c3:orders,payments", "member_leave:c0"]
    for event in m["events"]:
        assert set(event["saved"]) == {"cooperative-sticky", "range"}
        assert event["saved"]["range"]["classic_paused_members"] is not None  # eager: everyone pauses
        assert event["saved"]["cooperative-sticky"]["classic_paused_members"] is None
    assert set(m["vs_optimum"]) >= {"balance_score", "sticky_balance_score"}


def test_migrate_refuses_what_is_not_a_migration():
    with pytest.raises(WhatIfError, match="consumer protocol"):
        migrate(GROUP, [], "sticky")
    with pytest.raises(WhatIfError, match="not a classic strategy"):
        migrate(GROUP, [], "kip848-uniform", ["kip848-range"])


@pytest.mark.parametrize(("described", "named", "expected"), [
    ({"protocol": "classic", "assignor": "range"}, None, ("range", "cooperative-sticky", "java-cooperative-sticky")),
    ({"protocol": "classic", "assignor": "sticky"}, None,
     ("java-sticky", "cooperative-sticky", "java-cooperative-sticky")),
    ({"protocol": "classic", "assignor": "cooperative-sticky"}, None,
     ("java-cooperative-sticky", "cooperative-sticky")),
    ({"protocol": "classic", "assignor": "roundrobin"}, ["sticky"], ("sticky",)),  # named: as named
    ({"protocol": "classic", "assignor": "my-custom"}, None, MIGRATE_FROM),  # no strategy of ours plans it
    ({"protocol": "classic", "assignor": None}, None, MIGRATE_FROM),  # an empty group chose none
    ({"assignor": "range"}, None, MIGRATE_FROM),  # written by hand: no snapshot's protocol
    ({}, None, MIGRATE_FROM),
])
def test_a_live_groups_rehearsal_starts_from_the_strategy_it_runs(described, named, expected):
    """A snapshot of a classic group names the assignor its members chose: the rehearsal's
    "today" is the strategy Kafka's clients run under that name (Java's where ours shares it)."""
    assert rehearsed_from(described, named) == expected


def test_a_group_on_the_consumer_protocol_has_no_move_to_rehearse(tmp_path, capsys):
    described = {"group_id": "billing", "protocol": "consumer", "assignor": "uniform", "topics": {"t": 2},
                 "members": [{"id": "m", "topics": ["t"], "target": [["t", 0], ["t", 1]]}]}
    with pytest.raises(WhatIfError, match="group 'billing' is on KIP-848's consumer protocol already "
                                          r"\(assignor 'uniform'\): nothing to rehearse"):
        rehearsed_from(described, ["range"])
    path = tmp_path / "billing.json"
    path.write_text(json.dumps(described))
    assert main(["whatif", str(path), "--migrate", "kip848-uniform"]) == 2
    assert capsys.readouterr().err == (
        "assignor: error: group 'billing' is on KIP-848's consumer protocol already (assignor 'uniform'): nothing "
        "to rehearse; replay events without migrating\n")


@pytest.mark.external
def test_cli_migrate(tmp_path):
    path = tmp_path / "group.json"
    path.write_text(json.dumps({"topics": {"orders": 12}, "members": [{"id": f"c{i}", "topics": ["orders"]}
                                                                       for i in range(3)]}))
    out = subprocess.run([sys.executable, "-m", "assignor.cli", "whatif", str(path), "--migrate", "kip848-uniform",
                          "--event", "member_leave:c1", "--json"], capture_output=True, text=True, check=True)
    answer = json.loads(out.stdout)
    assert answer["target"] == "kip848-uniform" and answer["classic"] == "cooperative-sticky"
    assert answer["events"][0]["event"] == "member_leave:c1"
    table = subprocess.run([sys.executable, "-m", "assignor.cli", "whatif", str(path), "--migrate", "kip848-range"],
                           capture_output=True, text=True, check=True)
    assert "rolling upgrade: 3 restarts" in table.stdout


def test_topic_ids_last_through_every_event():
    """Ids given with the group stay through events and restarts (the broker's tie-breaks use them)."""
    ids = {"orders": "AAAAAAAAAAAAAAAAAAAAAA", "payments": "AAAAAAAAAAAAAAAAAAAAAQ"}
    group = Group(GROUP.topics, GROUP.members, topic_ids=ids)
    after = apply_event(group, parse_event("member_leave:c0"))
    assert after.topic_ids == ids
    assert all(step.group.topic_ids == ids for step in _expand(group, parse_event("rolling_restart")))


@pytest.mark.parametrize("classic", ["cooperative-sticky", "range"])
def test_static_members_upgrade_without_moving_a_partition(classic):
    """Apache Kafka 4.3 upgraded the README's group with instance ids without moving or revoking
    a partition: each consumer-protocol member replaced its static predecessor (no new epoch, no
    target computed), where the rehearsal said 7 moved and 7 revoked. Each restart is now one step
    that rebalances nothing, the first of them converting the group; a later event is planned by
    the broker's assignor from what the members hold."""
    owned = {"c0": [0, 1, 2, 3], "c1": [4, 5, 6, 7], "c2": [8, 9, 10, 11]}
    group = Group({"orders": 12}, [Member(m, ["orders"], [TopicPartition("orders", p) for p in ps], generation=4,
                                          group_instance_id=f"instance-{m}") for m, ps in owned.items()])
    m = migrate(group, [parse_event("member_join:c3:orders")], "kip848-uniform", [classic], include_plans=True)
    steps = m["upgrade"]["steps"]
    assert [s["event"] for s in steps] == [
        "restart c0: static, back within its session under the consumer protocol, converting to kip848-uniform",
        "restart c1: static, back within its session under the consumer protocol",
        "restart c2: static, back within its session under the consumer protocol"]
    assert [(s["moved"], s["revoked"]) for s in steps] == [(0, 0)] * 3
    assert m["conversion"] == steps[0]
    assert {k: sorted(p for _, p in v) for k, v in steps[-1]["assignment"].items()} == owned
    join = m["events"][0]["consumer"]
    assert join["moved"] == join["revoked"] == 3  # the broker's uniform gives c3 three, one from each
