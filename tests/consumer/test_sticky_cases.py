"""Table tests for the sticky strategy: KIP-54's examples and Java's tricky cases by name.

Each case states the failure it pins where there is one.
"""

from __future__ import annotations

import pytest

from assignor import Group, Member, TopicPartition, assign
from assignor.workloads import carry
from tests.conftest import check


def tps(*names: str) -> list[TopicPartition]:
    """tps("t0p0", "t1p1") -> TopicPartition list."""
    out = []
    for name in names:
        topic, partition = name.split("p")
        out.append(TopicPartition(topic, int(partition)))
    return out


def names(plan, member):
    return [f"{tp.topic}p{tp.partition}" for tp in plan.assignment[member]]


ALL4 = ["t0", "t1", "t2", "t3"]


def test_kip54_example1_member_leaves():
    """C1 leaves; C0 and C2 keep all 5 of their partitions and split C1's 3 (4/4)."""
    group = Group(
        topics={t: 2 for t in ALL4},
        members=[
            Member("C0", ALL4, owned=tps("t0p0", "t1p1", "t3p0"), generation=1),
            Member("C2", ALL4, owned=tps("t1p0", "t2p1"), generation=1),
        ],
    )
    plan = assign("sticky", group)
    report = check(group, plan, exact=True)
    assert report["kept"] == 5 and report["balance_score"] == 0
    assert set(names(plan, "C0")) >= {"t0p0", "t1p1", "t3p0"}
    assert set(names(plan, "C2")) >= {"t1p0", "t2p1"}


def test_kip54_example2_exact():
    """Fresh: C0 {t0}, C1 {t0,t1}, C2 {t0,t1,t2} get 1/2/3, the only optimum; C0 leaves and
    C1 takes t0p0 while nothing else moves."""
    counts = {"t0": 1, "t1": 2, "t2": 3}
    members = [Member("C0", ["t0"]), Member("C1", ["t0", "t1"]), Member("C2", ["t0", "t1", "t2"])]
    group = Group(topics=counts, members=members)
    plan = assign("sticky", group)
    check(group, plan)
    assert names(plan, "C0") == ["t0p0"]
    assert names(plan, "C1") == ["t1p0", "t1p1"]
    assert names(plan, "C2") == ["t2p0", "t2p1", "t2p2"]
    after = carry(group, plan, generation=1)
    after = Group(topics=counts, members=after.members[1:])
    plan2 = assign("sticky", after)
    report = check(after, plan2)
    assert report["moved"] == 0
    assert names(plan2, "C1") == ["t0p0", "t1p0", "t1p1"]
    assert names(plan2, "C2") == ["t2p0", "t2p1", "t2p2"]


def test_kip54_example3_exact():
    """Two members share t0, t1; a third joins and exactly one partition moves to it."""
    counts = {"t0": 2, "t1": 2}
    group = Group(topics=counts, members=[Member("C0", ["t0", "t1"]), Member("C1", ["t0", "t1"])])
    plan = assign("sticky", group)
    assert names(plan, "C0") == ["t0p0", "t1p0"] and names(plan, "C1") == ["t0p1", "t1p1"]
    joined = Group(topics=counts, members=[*carry(group, plan, 1).members, Member("C2", ["t0", "t1"])])
    plan2 = assign("sticky", joined)
    report = check(joined, plan2)
    assert report["moved"] == 1 and report["kept"] == 3
    assert names(plan2, "C0") == ["t0p0", "t1p0"]
    assert names(plan2, "C1") == ["t0p1"]
    assert names(plan2, "C2") == ["t1p1"]


def test_chain_of_moves_reaches_global_balance():
    """Java stops at 9/10/11 here: no single move between two members improves the balance
    score, but the chain m3 -> m2 -> m1 does. We reach 10/10/10 with the two moves needed."""
    group = Group(
        topics={"t1": 15, "t2": 15},
        members=[
            Member("m1", ["t1"], owned=[TopicPartition("t1", p) for p in range(9)], generation=4),
            Member("m2", ["t1", "t2"], owned=[TopicPartition("t1", p) for p in range(9, 15)]
                   + [TopicPartition("t2", p) for p in range(4)], generation=4),
            Member("m3", ["t2"], owned=[TopicPartition("t2", p) for p in range(4, 15)], generation=4),
        ],
    )
    report = check(group, assign("sticky", group), exact=True)
    assert (report["min_load"], report["max_load"]) == (10, 10)
    assert report["moved"] == 2 == report["min_moves"]


def test_conflicting_previous_generations():
    """KIP-341: c1 (generation 5) and c2 (generation 3) both claim t0p0-t0p2; c1's claims win
    and c2, whose claims are stale, keeps only what nobody newer claims."""
    group = Group(
        topics={"t0": 6},
        members=[
            Member("c1", ["t0"], owned=tps("t0p0", "t0p1", "t0p2"), generation=5),
            Member("c2", ["t0"], owned=tps("t0p0", "t0p1", "t0p2", "t0p3"), generation=3),
            Member("c3", ["t0"], owned=tps("t0p4", "t0p5"), generation=5),
        ],
    )
    plan = assign("sticky", group)
    report = check(group, plan, exact=True)
    assert names(plan, "c1") == ["t0p0", "t0p1"]
    assert names(plan, "c2") == ["t0p2", "t0p3"]
    assert names(plan, "c3") == ["t0p4", "t0p5"]
    assert report["moved"] == report["min_moves"] == 1


def test_same_partition_claimed_in_the_same_generation():
    """KAFKA-12984: two members claiming t0p0 in the same generation must not both keep it
    (Java's eager path kept one at random and could hand it out twice with cooperative). Both
    claims are void: the plan is valid and neither claim counts as kept."""
    group = Group(
        topics={"t0": 3},
        members=[
            Member("c1", ["t0"], owned=tps("t0p0", "t0p1"), generation=2),
            Member("c2", ["t0"], owned=tps("t0p0", "t0p2"), generation=2),
        ],
    )
    plan = assign("sticky", group)
    report = check(group, plan, exact=True)
    assert "t0p1" in names(plan, "c1") and "t0p2" in names(plan, "c2")
    assert report["kept"] == 2


def test_consumer_with_no_topic():
    group = Group(topics={"t0": 3}, members=[Member("c1", []), Member("c2", ["t0"])])
    plan = assign("sticky", group)
    check(group, plan)
    assert plan.assignment["c1"] == [] and len(plan.assignment["c2"]) == 3


def test_topic_deleted():
    """Claims on a topic that no longer exists are dropped; the rest stays."""
    group = Group(
        topics={"t1": 2},
        members=[Member("c1", ["t0", "t1"], owned=tps("t0p0", "t0p1", "t1p0"), generation=1),
                 Member("c2", ["t0", "t1"], owned=tps("t1p1"), generation=1)],
    )
    plan = assign("sticky", group)
    report = check(group, plan)
    assert names(plan, "c1") == ["t1p0"] and names(plan, "c2") == ["t1p1"] and report["moved"] == 0


def test_partitions_added():
    """New partitions go to the least loaded members; nobody loses anything."""
    group = Group(
        topics={"t0": 6},
        members=[Member("c1", ["t0"], owned=tps("t0p0", "t0p1"), generation=1),
                 Member("c2", ["t0"], owned=tps("t0p2"), generation=1)],
    )
    plan = assign("sticky", group)
    report = check(group, plan, exact=True)
    assert report["moved"] == 0 and report["spread"] == 0


def test_members_leave_and_join():
    group = Group(topics={"t0": 4, "t1": 4}, members=[Member(f"c{i}", ["t0", "t1"]) for i in range(4)])
    plan = assign("sticky", group)
    after = carry(group, plan, 1)
    changed = Group(topics=group.topics, members=[*after.members[1:], Member("c9", ["t0", "t1"])])
    report = check(changed, assign("sticky", changed), exact=True)
    assert report["moved"] == 0 and report["spread"] == 0


def test_nothing_changes_nothing_moves():
    group = Group(topics={"a": 7, "b": 3}, members=[Member("x", ["a"]), Member("y", ["a", "b"]), Member("z", ["b"])])
    plan = assign("sticky", group)
    again = assign("sticky", carry(group, plan, 2))
    assert again.assignment == plan.assignment


def test_topic_spread_when_trimming_owned():
    """KAFKA-16277: a member giving up partitions keeps a spread of its topics, not all of
    one topic; a new member then gets partitions of both topics."""
    group = Group(
        topics={"a": 2, "b": 2},
        members=[Member("c1", ["a", "b"], owned=tps("ap0", "ap1", "bp0", "bp1"), generation=1),
                 Member("c2", ["a", "b"])],
    )
    plan = assign("sticky", group)
    assert names(plan, "c1") == ["ap0", "bp0"] and names(plan, "c2") == ["ap1", "bp1"]


HOSTILE_CLAIMS = [
    pytest.param([TopicPartition("t0", 99)], id="partition-beyond-count"),
    pytest.param([TopicPartition("t0", -1)], id="negative-partition"),
    pytest.param([TopicPartition("nope", 0)], id="unknown-topic"),
    pytest.param([TopicPartition("t0", 0)] * 3, id="same-claim-three-times"),
    pytest.param([TopicPartition("t1", 0)], id="topic-not-subscribed"),
    pytest.param([TopicPartition("empty", 0)], id="topic-with-zero-partitions"),
    pytest.param(["t0p0", None, 7, ("t0",), ("t0", 1, 2)], id="odd-shapes"),
    pytest.param([("t0", True), ("t0", 1.0), ("t0", "1"), (["t0"], 1)], id="odd-types"),
    pytest.param([("t0", 2**80)], id="huge-partition"),
    pytest.param([["t0", 1], ("t0", 2)], id="lists-and-tuples"),
]


@pytest.mark.parametrize("claims", HOSTILE_CLAIMS)
def test_hostile_claims_never_raise_nor_duplicate(claims):
    group = Group(
        topics={"t0": 3, "t1": 2, "empty": 0},
        members=[Member("evil", ["t0", "t0", "empty"], owned=claims, generation=7),
                 Member("good", ["t0", "t1"], owned=tps("t0p0"), generation=7)],
    )
    plan = assign("sticky", group)
    report = check(group, plan, exact=True)
    assert report["balance_score"] == report["optimal_balance_score"]
    assert report["moved"] == report["min_moves"]


@pytest.mark.parametrize("strategy", ["sticky", "range", "roundrobin"])
@pytest.mark.parametrize(
    "group",
    [
        pytest.param(Group(topics={"t0": 3}), id="zero-members"),
        pytest.param(Group(topics={}, members=[Member("c", ["t0"])]), id="no-topics"),
        pytest.param(Group(topics={"t0": 0}, members=[Member("c", ["t0"])]), id="zero-partitions"),
        pytest.param(Group(topics={"t0": 2}, members=[Member("c", [])]), id="empty-subscription"),
        pytest.param(Group(topics={"t0": 2}, members=[Member("c", ["t0", "t0"]), Member("d", ["t0"])]),
                     id="duplicated-topic"),
    ],
)
def test_degenerate_groups(strategy, group):
    check(group, assign(strategy, group))


@pytest.mark.parametrize("strategy", ["range", "roundrobin"])
def test_range_and_roundrobin_with_topics_each_in_one_subscription(strategy):
    """Two subscriptions with no topic in common: each topic's subscribers are one
    subscription's members (found without a (topic, member) pair each), in member order."""
    group = Group(topics={"t1": 3, "t2": 2}, members=[Member("d", ["t1"]), Member("c", ["t2"]), Member("b", ["t1"]),
                                                      Member("a", ["t1"])])
    plan = assign(strategy, group)
    check(group, plan)
    assert {m: [tuple(tp) for tp in tps] for m, tps in plan.assignment.items()} == {
        "a": [("t1", 0)], "b": [("t1", 1)], "c": [("t2", 0), ("t2", 1)], "d": [("t1", 2)]}
