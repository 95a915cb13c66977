"""`assign_columns`: the plans of `assign` as columns, for every strategy, owned partitions read
from the members or given as columns; and the clear errors of columns that cannot be a group's."""

from __future__ import annotations

import re

import numpy as np
import pytest

from assignor import (
    STRATEGIES,
    Claims,
    Group,
    InvalidGroupError,
    JavaAssignorFailure,
    LibrdkafkaAssignorFailure,
    Member,
    TopicPartition,
    assign,
    assign_columns,
)

TOPICS = {"orders": 7, "payments": 4, "audit": 3}


def _lists(group: Group, plan: Claims) -> dict[str, list[TopicPartition]]:
    found: dict[str, list[TopicPartition]] = {m.id: [] for m in group.members}
    for m, t, p in zip(plan.member.tolist(), plan.topic.tolist(), plan.partition.tolist()):
        found[group.members[m].id].append(TopicPartition(plan.names[t], p))
    return found


def _columns_of(group: Group) -> Claims:
    """The members' owned partitions as columns, dealt round the members (each member's own
    rows keep their order), topic names in another order than the group's."""
    rows = [(k, i, tp) for i, m in enumerate(group.members) for k, tp in enumerate(m.owned)]
    rows.sort(key=lambda row: (row[0], -row[1]))
    names = sorted({tp.topic for _, _, tp in rows}, reverse=True)
    return Claims(np.array([i for _, i, _ in rows], dtype=np.int64),
                  np.array([names.index(tp.topic) for _, _, tp in rows], dtype=np.int64),
                  np.array([tp.partition for _, _, tp in rows], dtype=np.int64), names)


def _without_owned(group: Group) -> Group:
    return Group(group.topics, [Member(m.id, m.topics, (), m.generation, m.rack) for m in group.members])


GROUPS = [
    Group(TOPICS, [Member(f"c{i}", ["orders", "payments"]) for i in range(3)]),
    Group(TOPICS, [Member("c0", ["orders", "payments", "audit"], [TopicPartition("orders", p) for p in range(7)], 4),
                   Member("c1", ["orders", "audit"], [TopicPartition("audit", 2), TopicPartition("audit", 0)], 4),
                   Member("c2", ["payments", "orders"])]),
    # hostile claims: past a topic's count, a topic the group lacks, a partition claimed twice
    Group(TOPICS, [Member("c0", ["orders"], [TopicPartition("orders", 9), TopicPartition("ghost", 0),
                                             TopicPartition("orders", 1)], 2),
                   Member("c1", ["orders"], [TopicPartition("orders", 1), TopicPartition("orders", 2)], 2)]),
]


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize("group", GROUPS, ids=["fresh", "owning", "hostile"])
def test_columns_are_the_plan_of_assign(strategy, group):
    """Whatever the strategy, the columns list each member's partitions as `assign` does, with
    the owned partitions read from the members or given as columns (and fails where `assign`
    fails: Java's and librdkafka's assignors on claims of partitions a topic lacks)."""
    try:
        expected = assign(strategy, group).assignment
    except (JavaAssignorFailure, LibrdkafkaAssignorFailure) as failure:
        for call in (lambda: assign_columns(strategy, group),
                     lambda: assign_columns(strategy, _without_owned(group), _columns_of(group))):
            with pytest.raises(type(failure), match=re.escape(str(failure))):
                call()
        return
    assert _lists(group, assign_columns(strategy, group)) == expected
    owned = _columns_of(group)
    assert _lists(group, assign_columns(strategy, _without_owned(group), owned)) == expected


def test_the_plan_as_columns_is_the_next_call_s_owned():
    """The broker's assignors: a plan's columns are the members' current targets in the next
    call, as `Plan.assignment` is as objects (a member joins)."""
    group = Group({"t": 100, "u": 30}, [Member(f"m{i:02d}", ["t", "u"]) for i in range(9)])
    plan = assign_columns("kip848-uniform", group)
    joined = Group(group.topics, [*group.members, Member("joiner", ["t", "u"])])
    as_objects = Group(group.topics, [Member(m.id, m.topics, owned) for m, owned in
                                      zip(joined.members, [*_lists(group, plan).values(), []])])
    assert _lists(joined, assign_columns("kip848-uniform", joined, plan)) == assign("kip848-uniform",
                                                                                     as_objects).assignment


def _claims(member: object = (0,), topic: object = (0,), partition: object = (0,), names: object = None) -> Claims:
    def column(values: object) -> object:
        return np.array(values, dtype=np.int64) if isinstance(values, tuple) else values
    return Claims(column(member), column(topic), column(partition), ["t"] if names is None else names)


@pytest.mark.parametrize(("owned", "message"), [
    ({"a": [("t", 0)]}, "owned must be Claims"),
    (_claims(member=[0]), "owned.member must be a one-dimensional integer array"),
    (_claims(topic=np.zeros((1, 1), dtype=np.int64)), "owned.topic must be a one-dimensional integer array"),
    (_claims(partition=np.array([0.5])), "owned.partition must be a one-dimensional integer array"),
    (_claims(member=(0, 1)), "must have one length"),
    (_claims(member=(2,)), "owned.member must index the group's 2 members (0 to 1)"),
    (_claims(member=(-1,)), "owned.member must index"),
    (_claims(topic=(1,)), "owned.topic must index owned.names (0 to 0)"),
    (_claims(names=("t",)), "owned.names must be a list of topic names"),
    (_claims(names=[b"t"]), "owned.names must be a list of topic names"),
    (_claims(partition=(2**31,)), "owned.partition must be partition numbers in [0, 2**31)"),
    (_claims(partition=(-1,)), "owned.partition must be partition numbers"),
])
def test_columns_that_cannot_be_the_group_s_are_refused(owned, message):
    group = Group({"t": 4}, [Member("a", ["t"]), Member("b", ["t"])])
    for strategy in ("kip848-uniform", "sticky"):
        with pytest.raises(InvalidGroupError, match=message.replace("(", r"\(").replace(")", r"\)").replace(
                "[", r"\[").replace("*", r"\*")):
            assign_columns(strategy, group, owned)


def test_no_claims_and_no_members():
    empty = Claims(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), [])
    group = Group({"t": 3}, [Member("a", ["t"])])
    for strategy in sorted(STRATEGIES):
        assert _lists(group, assign_columns(strategy, group, empty)) == assign(strategy, group).assignment
        assert len(assign_columns(strategy, Group({"t": 3})).member) == 0
