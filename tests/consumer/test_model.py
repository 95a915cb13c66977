"""The public surface and the model's refusal of groups no broker could produce."""

import pytest

import assignor
from assignor import Group, InvalidGroupError, Member, TopicPartition, UnknownStrategyError, assign, model


def test_public_surface_is_pinned():
    assert assignor.__all__ == sorted(assignor.__all__)
    assert set(assignor.__all__) == {
        "STRATEGIES", "AssignorError", "Claims", "Group", "InvalidGroupError", "JavaAssignorFailure",
        "LibrdkafkaAssignorFailure", "Member", "Plan", "TopicPartition", "UnknownStrategyError", "assign",
        "assign_columns",
    }
    assert sorted(assignor.STRATEGIES) == ["cooperative-sticky", "java-cooperative-sticky", "java-sticky",
                                           "kip848-range", "kip848-uniform", "librdkafka-cooperative-sticky",
                                           "librdkafka-range", "librdkafka-roundrobin", "range", "roundrobin", "sticky"]


def test_issue_example():
    group = Group(
        topics={"t0": 2, "t1": 2},
        members=[Member("c0", topics=["t0", "t1"], owned=[TopicPartition("t0", 0)], generation=3, rack=None)],
    )
    plan = assign("sticky", group)
    assert plan.assignment == {"c0": [TopicPartition(t, p) for t in ("t0", "t1") for p in (0, 1)]}
    assert plan.strategy == "sticky"


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Group(topics={"t": -1}), "partition count"),
        (lambda: Group(topics={"t": 1.5}), "partition count"),
        (lambda: Group(topics={"t": True}), "partition count"),
        (lambda: Group(topics=[("t", 1)]), "topics must map"),
        (lambda: Group(topics={1: 1}), "topic names"),
        (lambda: Group(topics={}, members=[Member("a"), Member("a")]), "duplicate member id"),
        (lambda: Group(topics={}, members=["a"]), "Member objects"),
        (lambda: Member(7), "member id"),
        (lambda: Member("a", topics="t0"), "topics must be a list"),
        (lambda: Member("a", topics=[1]), "topic must be a string"),
        (lambda: Member("a", generation=2**31), "32-bit"),
        (lambda: Member("a", generation="3"), "32-bit"),
        (lambda: Member("a", rack=5), "rack"),
    ],
)
def test_malformed_groups_raise_our_error(build, message):
    with pytest.raises(InvalidGroupError, match=message):
        build()


def test_unknown_strategy():
    known = ("known: cooperative-sticky, java-cooperative-sticky, java-sticky, kip848-range, kip848-uniform, "
             "librdkafka-cooperative-sticky, librdkafka-range, librdkafka-roundrobin, range, roundrobin, sticky")
    with pytest.raises(UnknownStrategyError, match=known):
        assign("cooperative-stickyish", Group(topics={}))
    assert issubclass(UnknownStrategyError, ValueError)


def test_members_built_at_once_equal_checked_members():
    ids, topics, generations, racks = ["a", "b", "c"], [("t0",), (), ("t0", "t1")], [3, -1, 0], [None, "r1", None]
    assert Member.decoded_many(ids, topics, generations, racks) == [
        Member(*fields) for fields in zip(ids, topics, [()] * 3, generations, racks)]
    assert Member.decoded_many([], [], [], []) == []
    # a few members are filled one by one, more slot by slot (`_FEW_MEMBERS`): the same members
    for n in (model._FEW_MEMBERS, model._FEW_MEMBERS + 1):
        many = [f"m{i}" for i in range(n)], [("t0",)] * n, list(range(n)), [None, "r"] * (n // 2) + [None] * (n % 2)
        assert Member.decoded_many(*many) == [Member(*fields) for fields in zip(many[0], many[1], [()] * n, *many[2:])]
