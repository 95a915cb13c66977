"""Rack awareness (KIP-881): balance first, then rack locality, then stickiness."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from assignor import Group, InvalidGroupError, Member, TopicPartition, assign
from assignor.json_format import group_from_json
from assignor.solver import racks
from tests.budget import examples
from tests.conftest import check


def test_fresh_plan_is_fully_local_when_balance_allows():
    group = Group(
        topics={"t": 6},
        members=[Member("a", ["t"], rack="r1"), Member("b", ["t"], rack="r2"), Member("c", ["t"], rack="r3")],
        partition_racks={"t": [["r1"], ["r2"], ["r3"], ["r1"], ["r2"], ["r3"]]},
    )
    for strategy in ("sticky", "cooperative-sticky"):
        report = check(group, assign(strategy, group), exact=True)
        assert report["rack_locality"] == 1.0 and report["spread"] == 0


def test_balance_outranks_locality():
    """Every replica is on r1: balance still splits 2/2, so half the partitions are remote."""
    group = Group(topics={"t": 4}, members=[Member("a", ["t"], rack="r1"), Member("b", ["t"], rack="r2")],
                  partition_racks={"t": [["r1", "r3"]] * 4})
    report = check(group, assign("sticky", group), exact=True)
    assert report["spread"] == 0 and report["rack_local"] == 2 == report["max_rack_local"]


def test_locality_outranks_stickiness():
    """a holds b's local partitions and b holds a's: both move to be local (2 moves)."""
    group = Group(
        topics={"t": 2},
        members=[Member("a", ["t"], owned=[TopicPartition("t", 0)], generation=2, rack="r1"),
                 Member("b", ["t"], owned=[TopicPartition("t", 1)], generation=2, rack="r2")],
        partition_racks={"t": [["r2"], ["r1"]]},
    )
    plan = assign("sticky", group)
    report = check(group, plan, exact=True)
    assert plan.assignment == {"a": [TopicPartition("t", 1)], "b": [TopicPartition("t", 0)]}
    assert report["moved"] == 2 and report["rack_locality"] == 1.0


@pytest.mark.parametrize(
    ("member_racks", "partition_racks", "expected"),
    [
        (["r1", "r2"], [["r1"], ["r2"]], True),
        ([None, None], [["r1"], ["r2"]], False),  # no member has a rack
        (["r8", "r9"], [["r1"], ["r2"]], False),  # no member rack holds a replica
        (["r1", "r2"], [["r1", "r2"], ["r2", "r1", "r3"]], False),  # every partition local to all
    ],
)
def test_racks_apply_only_when_they_can_help(member_racks, partition_racks, expected):
    group = Group(topics={"t": 2}, members=[Member(f"m{i}", ["t"], rack=r) for i, r in enumerate(member_racks)],
                  partition_racks={"t": partition_racks})
    assert racks.applies(group) is expected
    if not expected:
        plain = Group(topics=group.topics, members=group.members)
        assert assign("sticky", group).assignment == assign("sticky", plain).assignment


def test_json_form_and_bad_racks():
    group = group_from_json({"topics": {"t": 1}, "members": [{"id": "a", "topics": ["t"], "rack": "r1"}],
                             "partition_racks": {"t": [["r1"]]}})
    assert check(group, assign("sticky", group))["rack_locality"] == 1.0
    with pytest.raises(InvalidGroupError, match=r"partition_racks\['t'\]\[0\]"):
        Group(topics={"t": 1}, partition_racks={"t": ["r1"]})


RACKS = ["r1", "r2", "r3"]


@st.composite
def racked_groups(draw):
    counts = {t: draw(st.integers(1, 5)) for t in ["a", "b", "c"]}
    members = []
    for i in range(draw(st.integers(1, 6))):
        topics = draw(st.lists(st.sampled_from(list(counts)), min_size=1, max_size=3, unique=True))
        claims = draw(st.lists(st.tuples(st.sampled_from(list(counts)), st.integers(0, 4)), max_size=6))
        members.append(Member(f"m{i}", topics, owned=[TopicPartition(t, p) for t, p in claims], generation=1,
                              rack=draw(st.none() | st.sampled_from(RACKS))))
    placement = {t: [draw(st.lists(st.sampled_from(RACKS), max_size=2, unique=True)) for _ in range(n)]
                 for t, n in counts.items()}
    return Group(topics=counts, members=members, partition_racks=placement)


@examples(200, suppress_health_check=[HealthCheck.too_slow])
@given(racked_groups())
def test_racked_groups_reach_the_exact_optimum(group):
    report = check(group, assign("sticky", group), exact=True)
    assert report["balance_score"] == report["optimal_balance_score"]
    if racks.applies(group):
        assert report["rack_local"] == report["max_rack_local"]
    assert report["moved"] == report["min_moves"]
