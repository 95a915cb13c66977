"""A consumer-protocol member without I/O (`assignor.kip848_member`): what each heartbeat says,
what each answer does, as Kafka 4.3.1's Java consumer (its ``HeartbeatState.buildRequestData``
and ``AbstractMembershipManager``). The member on a real broker is
tests/integration/test_consumer_protocol_member.py."""

from __future__ import annotations

import pytest

from assignor.kip848_member import Change, Member, MemberState, new_member_id
from assignor.wire import codec
from assignor.wire.membership import CONSUMER_GROUP_HEARTBEAT

T, U = "NHvsffp9Ed3fxWJQh-gJsQ", "AAAAAAAAAAAAAAAAAAAAAQ"


def answer(epoch: int, assignment: list[tuple[str, list[int]]] | None = None, code: int = 0,
           interval: int = 3000) -> dict[str, object]:
    return {"throttle_time_ms": 0, "error_code": code, "error_message": None, "member_id": None,
            "member_epoch": epoch, "heartbeat_interval_ms": interval,
            "assignment": None if assignment is None else (assignment,)}


def joined(**options: object) -> Member:
    member = Member("g", rack="r1", server_assignor="uniform", **options)  # type: ignore[arg-type]
    member.subscribe(["orders", "audit"])
    return member


def test_the_first_heartbeat_says_everything_and_the_next_only_what_changed():
    member = joined()
    first = member.request()
    assert first == {"group_id": "g", "member_id": member.member_id, "member_epoch": 0, "instance_id": None,
                     "rack_id": "r1", "rebalance_timeout_ms": 300_000, "subscribed_topic_names": ["audit", "orders"],
                     "subscribed_topic_regex": None, "server_assignor": "uniform", "topic_partitions": []}
    codec.encode(CONSUMER_GROUP_HEARTBEAT.request, first, 1)  # (what the wire takes)
    assert member.answered(answer(1)).kind == "ok" and member.epoch == 1 and member.state == MemberState.STABLE
    assert member.heartbeat_interval_ms == 3000
    second = member.request()
    assert (second["member_epoch"], second["rack_id"], second["rebalance_timeout_ms"]) == (1, None, -1)
    assert [second[k] for k in ("subscribed_topic_names", "server_assignor", "topic_partitions")] == [None] * 3
    member.subscribe(["orders"])
    assert member.request()["subscribed_topic_names"] == ["orders"]


def test_a_target_is_reconciled_then_acknowledged_at_once():
    member = joined()
    member.request()
    member.answered(answer(3, [(T, [0, 1]), (U, [2])]))
    assert member.state == MemberState.RECONCILING
    change = member.change([T])  # U's name not known yet: its partition waits
    assert change == Change(frozenset(), frozenset({(T, 0), (T, 1)}), unresolved=1)
    member.reconciled(change)
    assert member.state == MemberState.ACKNOWLEDGING and member.heartbeat_now()
    ack = member.request()
    assert ack["topic_partitions"] == [(T, [0, 1])] and member.state == MemberState.STABLE
    # The next target drops T-1: revoked first, then nothing taken.
    member.answered(answer(4, [(T, [0])]))
    change = member.change([T, U])
    assert change is not None and change.revoke == {(T, 1)} and not change.take
    member.reconciled(change)
    assert member.request()["topic_partitions"] == [(T, [0])]
    # The same partitions with a new epoch: nothing to reconcile.
    member.answered(answer(5, [(T, [0])]))
    assert member.state == MemberState.STABLE and member.change([T]) is None


@pytest.mark.parametrize("code", [110, 25])  # FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID
def test_a_fenced_member_loses_its_partitions_and_joins_again_with_the_same_id(code):
    member = joined()
    member.request()
    member.answered(answer(2, [(T, [0])]))
    member.reconciled(member.change([T]))  # type: ignore[arg-type]
    member.request()
    member_id = member.member_id
    fenced = member.answered(answer(2, code=code))
    assert fenced.kind == "fenced" and fenced.lost == {(T, 0)}
    again = member.request()
    assert (again["member_id"], again["member_epoch"], again["topic_partitions"]) == (member_id, 0, [])
    assert again["subscribed_topic_names"] == ["audit", "orders"] and again["rack_id"] == "r1"


@pytest.mark.parametrize(("code", "kind"), [(14, "retry"), (15, "find-coordinator"), (16, "find-coordinator"),
                                            (29, "error"), (30, "fatal"), (111, "fatal"), (112, "fatal")])
def test_what_each_error_does(code, kind):
    member = joined()
    member.request()
    member.answered(answer(1))
    assert member.answered(answer(1, code=code)).kind == kind
    assert member.request()["subscribed_topic_names"] == ["audit", "orders"]  # everything again after an error


@pytest.mark.parametrize(("instance", "epoch"), [(None, -1), ("i-1", -2)])
def test_leaving_sends_its_epoch_after_giving_up_what_it_owns(instance, epoch):
    member = joined(instance_id=instance)
    member.request()
    member.answered(answer(2, [(T, [0])]))
    member.reconciled(member.change([T]))  # type: ignore[arg-type]
    assert member.leave() == {(T, 0)}
    leave = member.request()
    assert (leave["member_epoch"], leave["instance_id"]) == (epoch, instance)
    assert member.answered(answer(epoch)).kind == "ok" and member.state == MemberState.UNSUBSCRIBED
    assert member.leave() == frozenset()


def test_a_regex_subscription_is_sent_and_removed_with_an_empty_one():
    member = Member("g")
    member.subscribe([], regex="orders-.*")
    assert member.request()["subscribed_topic_regex"] == "orders-.*"
    member.answered(answer(1))
    member.subscribe(["orders"])
    assert member.request()["subscribed_topic_regex"] == ""


def test_member_ids_are_javas_form():
    ids = {new_member_id() for _ in range(100)}
    assert len(ids) == 100 and all(len(i) == 22 and "=" not in i for i in ids)


def test_partitions_given_up_by_the_client_are_said_and_taken_again_if_still_targeted():
    """A subscription change drops the client's assignment at once (aiokafka's): the member no
    longer owns it, says so at the next heartbeat, and takes again what the target keeps."""
    member = joined()
    member.request()
    member.answered(answer(2, [(T, [0]), (U, [1])]))
    member.reconciled(member.change([T, U]))  # type: ignore[arg-type]
    member.request()
    member.released([(T, 0), (U, 1)])
    assert member.owned == frozenset() and member.state == MemberState.RECONCILING
    assert member.change([U]) == Change(frozenset(), frozenset({(U, 1)}), unresolved=1)
