"""When Kafka refuses to convert a classic group (`assignor.whatif.refusals`): the rehearsal says
where, why and what to change, stops the upgrade there (the group stays classic), and says so in
the CLI, the service and the fleet job. The broker's side is in
tests/integration/test_refused_conversion.py."""

from __future__ import annotations

import json

import pytest

from assignor import Group, Member, TopicPartition, cli
from assignor.errors import WhatIfError
from assignor.whatif import DEFAULT_CONVERSION, Conversion, Timing, consumer_member_id, conversion_of, migrate

T = "orders"
OWNED = {"c0": [0, 1, 2, 3], "c1": [4, 5, 6, 7], "c2": [8, 9, 10, 11]}


def group_of(static: bool = False) -> Group:
    return Group({T: 12}, [Member(m, [T], [TopicPartition(T, p) for p in ps], 2,
                                  group_instance_id=f"i-{m}" if static else None) for m, ps in OWNED.items()])


def test_nothing_refuses_with_kafkas_defaults():
    assert DEFAULT_CONVERSION.refusal("step", 10**9) is None
    assert migrate(group_of(), [], "kip848-uniform", ["cooperative-sticky"])["refused"] is None


@pytest.mark.parametrize(("rules", "reason", "change"), [
    (Conversion(migration_policy="disabled"), "group.consumer.migration.policy=disabled allows no online upgrade",
     "set group.consumer.migration.policy to upgrade or bidirectional"),
    (Conversion(migration_policy="downgrade"), "group.consumer.migration.policy=downgrade", "upgrade or bidirectional"),
    # The first member has left: the classic group it returns to has 2 members.
    (Conversion(consumer_max_size=1), "has 2 members, more than group.consumer.max.size=1",
     "raise group.consumer.max.size to at least 2"),
    (Conversion(assignment_user_data=True), "user data into assignments", "an assignor that writes none"),
])
def test_a_refused_conversion_says_where_why_and_what_to_change_and_the_group_stays_classic(rules, reason, change):
    m = migrate(group_of(), [], "kip848-uniform", ["cooperative-sticky"], conversion_rules=rules, check=True)
    refused = m["refused"]
    assert refused is not None and reason in refused["reason"] and change in refused["change"]
    assert refused["step"] == f"restart c0: rejoin as {consumer_member_id('c0')}"
    leave, stop = m["upgrade"]["steps"]
    assert leave["event"] == "restart c0: leave (classic)" and stop is m["conversion"]
    assert stop["event"].endswith(": refused under the consumer protocol") and "max_unowned" not in stop
    assert m["events"] == [] and m["upgrade"]["restarts"] == 1


def test_the_size_that_counts_is_the_classic_groups_when_the_member_returns():
    assert migrate(group_of(), [], "kip848-uniform", ["cooperative-sticky"],
                   conversion_rules=Conversion(consumer_max_size=2))["refused"] is None
    # A static member's old instance is still in the group: 3 members.
    static = migrate(group_of(static=True), [], "kip848-uniform", ["cooperative-sticky"],
                     conversion_rules=Conversion(consumer_max_size=2))
    assert static["refused"] is not None and "has 3 members" in static["refused"]["reason"]
    assert [s["moved"] for s in static["upgrade"]["steps"]] == [0]


def test_a_quick_return_refused_leaves_the_classic_rebalance_its_leave_started():
    """Back before the classic rebalance completes, then refused: that rebalance goes on without
    it (cooperative-sticky hands its 4 partitions to the others)."""
    m = migrate(group_of(), [], "kip848-uniform", ["cooperative-sticky"], timing=Timing(restart_seconds=0.1),
                conversion_rules=Conversion(assignment_user_data=True), check=True, include_plans=True)
    (stop,) = m["upgrade"]["steps"]
    assert stop["reassigned"] == 4 and stop["revoked"] == 0 and set(stop["assignment"]) == {"c1", "c2"}


def test_a_group_without_members_converts_unless_refused():
    empty = Group({T: 3}, [])
    assert migrate(empty, [], "kip848-uniform", ["cooperative-sticky"])["refused"] is None
    m = migrate(empty, [], "kip848-uniform", ["cooperative-sticky"], conversion_rules=Conversion("disabled"))
    assert m["refused"] is not None and m["conversion"]["event"] == "convert to kip848-uniform: refused"


@pytest.mark.parametrize(("values", "message"), [
    ({"migration_policy": "sometimes"}, "migration_policy: expected one of bidirectional, upgrade, downgrade"),
    ({"consumer_max_size": 0}, "consumer_max_size: expected members in [1, 2147483647]"),
    ({"assignment_user_data": "yes"}, "assignment_user_data: expected true or false"),
    ({"max_size": 3}, "max_size: not a conversion setting"),
])
def test_settings_kafka_would_refuse_are_refused(values, message):
    with pytest.raises(WhatIfError, match=message.replace("[", r"\[").replace("]", r"\]")):
        conversion_of(values)


def test_the_cli_says_the_refusal_and_needs_migrate_for_its_flags(tmp_path, capsys):
    path = tmp_path / "group.json"
    path.write_text(json.dumps({"topics": {T: 12}, "members": [{"id": m, "topics": [T], "owned": [[T, p] for p in ps]}
                                                              for m, ps in OWNED.items()]}))
    assert cli.main(["whatif", str(path), "--migrate", "kip848-uniform", "--migration-policy", "disabled"]) == 0
    out = capsys.readouterr().out
    assert "Kafka refuses the conversion at" in out and "stays classic. To upgrade: set group.consumer" in out
    assert cli.main(["whatif", str(path), "--assignment-user-data"]) == 2
    assert capsys.readouterr().err == ("assignor: error: assignment_user_data: only in a migration rehearsal "
                                       "(migrate): it decides whether Kafka converts the group\n")


def test_a_group_led_by_librdkafkas_cooperative_sticky_is_refused_once_it_rebalanced():
    """librdkafka's ``cooperative-sticky`` leader sends each member its own user data back in
    its assignment: the sticky user data of a member assigned before. The rolling upgrade's
    first leave rebalances the classic group, so the first member back under the consumer
    protocol finds assignments with user data and is refused, without being told; a static
    member back within its session finds today's assignments, which a snapshot says
    (``assignment_user_data``); from librdkafka's range (empty user data) nothing refuses."""
    m = migrate(group_of(), [], "kip848-uniform", ["librdkafka-cooperative-sticky"], check=True)
    assert m["refused"] is not None and "user data into assignments" in m["refused"]["reason"]
    assert "librdkafka's range or roundrobin" in m["refused"]["change"]
    assert migrate(group_of(), [], "kip848-uniform", ["librdkafka-range"], check=True)["refused"] is None
    static = migrate(group_of(static=True), [], "kip848-uniform", ["librdkafka-cooperative-sticky"], check=True)
    assert static["refused"] is None
    told = migrate(group_of(static=True), [], "kip848-uniform", ["librdkafka-cooperative-sticky"], check=True,
                   conversion_rules=conversion_of({}, described={"assignment_user_data": True}))
    assert told["refused"] is not None


def test_a_snapshot_whose_assignments_carry_user_data_is_refused_by_the_cli_and_the_service(tmp_path, capsys):
    """A classic group's snapshot says ``assignment_user_data``: ``whatif --migrate`` on it, and
    ``POST /v1/whatif`` with it, are refused at the conversion as Kafka would be, unasked."""
    snapshot = {"group_id": "g", "protocol": "classic", "assignor": "cooperative-sticky", "assignment_user_data": True,
                "topics": {T: 12}, "members": [{"id": m, "topics": [T], "owned": [[T, p] for p in ps]}
                                               for m, ps in OWNED.items()]}
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(snapshot))
    assert cli.main(["whatif", str(path), "--migrate", "kip848-uniform", "--json"]) == 0
    assert "KAFKA-18134" in json.loads(capsys.readouterr().out)["refused"]["reason"]
    pytest.importorskip("fastapi")
    from api.handlers.whatif import _whatif
    from assignor.limits import Limits

    body = json.dumps({"group": snapshot, "events": [], "migrate": "kip848-uniform"}).encode()
    answer, _meta = _whatif(body, Limits(), str(tmp_path / "registry"), {})
    assert "KAFKA-18134" in answer["migration"]["refused"]["reason"]
