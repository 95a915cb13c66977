"""``java-sticky`` / ``java-cooperative-sticky`` with racks (KIP-881), as Java 4.3.0 runs them:
the constrained builder with KAFKA-15170 (apache/kafka PR #13965). Before it, owned partitions on
another rack were dropped without being counted as possibly revoked (a cooperative leader handed
them to a new owner while the old one still read them), and the rack-aware round robin did not
count the members it filled to maxQuota (Java threw "We haven't reached the expected number of
members with more than the minQuota partitions" on groups it now plans)."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given
from hypothesis import strategies as st

from assignor import Group, Member, Plan, TopicPartition, validate
from assignor.strategies.java_sticky import JavaStickyAssignor
from tests.budget import examples

TP = TopicPartition


def _two_racks_group() -> Group:
    """Java's ``testUniformSubscriptionTransferOwnershipListIsRight``: one replica per partition,
    two broker racks (partition i on rack i % 2), consumer i on rack i % 2."""
    return Group({"t1": 4}, [Member("c0", ["t1"], [TP("t1", 0), TP("t1", 1)], generation=1, rack="a"),
                             Member("c1", ["t1"], [TP("t1", 2), TP("t1", 3)], generation=1, rack="b")],
                 {"t1": [["a"], ["b"], ["a"], ["b"]]})


def test_owned_partitions_on_another_rack_change_hands_in_a_second_round():
    """Java: two partitions transfer ownership, so the cooperative plan withholds both; the eager
    plan moves each to the member on its rack."""
    group = _two_racks_group()
    cooperative = JavaStickyAssignor(cooperative=True).assign(group)
    assert cooperative.assignment == {"c0": [TP("t1", 0)], "c1": [TP("t1", 3)]}
    eager = JavaStickyAssignor().assign(group)
    assert eager.assignment == {"c0": [TP("t1", 0), TP("t1", 2)], "c1": [TP("t1", 3), TP("t1", 1)]}
    assert validate.report(group, cooperative)["unsafe_handovers"] == 0


def test_a_partition_on_another_rack_that_comes_back_to_its_owner_is_not_withheld():
    """KAFKA-15170 records the owner of each partition it does not keep: one that ends up with
    the same member (no member on its rack can take it) does not change hands."""
    group = Group({"t": 4}, [Member("a", ["t"], [TP("t", 0), TP("t", 1)], generation=1, rack="r1"),
                             Member("b", ["t"], [TP("t", 2), TP("t", 3)], generation=1, rack="r2")],
                  {"t": [["r1"], ["r3"], ["r2"], ["r2"]]})
    plan = JavaStickyAssignor(cooperative=True).assign(group)
    assert sorted(plan.assignment["a"]) == [TP("t", 0), TP("t", 1)]
    assert sorted(plan.assignment["b"]) == [TP("t", 2), TP("t", 3)]


def test_the_rack_aware_round_robin_counts_members_filled_to_max_quota():
    """A fresh group whose rack-aware pass fills members to maxQuota: Java 4.3.0 plans it (loads
    7/8 for 86 partitions over 12 members), where the builder before KAFKA-15170 threw."""
    racks = ["r0"] * 3 + ["r1"] * 3 + ["r2"] * 5 + [None]
    members = [Member(f"c{i:02d}", ["t"], rack=rack) for i, rack in enumerate(racks)]
    group = Group({"t": 86}, members, {"t": [[["r0", "r1", "r2"][p % 3]] for p in range(86)]})
    for cooperative in (False, True):
        plan = JavaStickyAssignor(cooperative).assign(group)
        assert sorted(map(len, plan.assignment.values())) == [7] * 10 + [8] * 2
        assert validate.report(group, plan)["valid"]


RACKS = ["r0", "r1", "r2"]


@st.composite
def racked_uniform_groups(draw):
    """Uniform subscriptions, brokers on three racks (1-3 replicas, some partitions with every
    replica on one rack), members on those racks or none, fresh or owning a shuffled share."""
    topics = {f"t{i}": draw(st.integers(1, 30)) for i in range(draw(st.integers(1, 4)))}
    replicas = {t: [sorted(set(draw(st.lists(st.sampled_from(RACKS), min_size=1, max_size=3)))) for _ in range(n)]
                for t, n in topics.items()}
    count = draw(st.integers(1, 14))
    owners = draw(st.lists(st.integers(-1, count - 1), min_size=sum(topics.values()),
                           max_size=sum(topics.values())))
    every = [TP(t, p) for t, n in topics.items() for p in range(n)]
    owned: dict[int, list[TP]] = {}
    for tp, owner in zip(every, owners):
        if owner >= 0:
            owned.setdefault(owner, []).append(tp)
    members = [Member(f"c{i}", list(topics), owned.get(i, []), generation=1 if owned else -1,
                      rack=draw(st.sampled_from([*RACKS, None]))) for i in range(count)]
    return Group(topics, members, replicas)


@examples(300, suppress_health_check=[HealthCheck.too_slow])
@given(racked_uniform_groups(), st.booleans())
@example(_two_racks_group(), True)
def test_racked_uniform_groups_are_planned_balanced_and_never_handed_over_while_claimed(group, cooperative):
    """What the recordings of Java 4.3.0 with racks show for every uniform group: a plan (no
    builder failure), balanced to one partition when eager, and a cooperative plan that never
    gives a partition to a new member while its owner still claims it."""
    leader = JavaStickyAssignor(cooperative)
    plan = leader.assign(group)
    assert leader.builder == "constrained"
    report = validate.report(group, plan)
    assert report["valid"], report["errors"]
    if cooperative:
        assert report["unsafe_handovers"] == 0, report["flags"]
    else:
        sizes = [len(plan.assignment[m.id]) for m in group.members]
        assert max(sizes) - min(sizes) <= 1
    plain = JavaStickyAssignor(cooperative, plain=True).assign(group)
    assert plain.assignment == plan.assignment
    assert isinstance(plan, Plan)
