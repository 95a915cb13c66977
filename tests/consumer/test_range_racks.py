"""`range` with racks (KIP-881) against Kafka's own expectations: the scenarios of the Java
client's ``RangeAssignorTest`` (kafka-clients 4.3.1), written here as data. Each builds its
cluster as Kafka's test helper does (``AbstractPartitionAssignorTest.partitionsPerTopic``:
topics in name order, partition i of a topic on brokers ``i + j + first`` for each replica j,
``first`` counting the partitions of the topics before it), consumers ``consumer0`` on, and
checks each consumer's partitions and how many a consumer with a rack holds off its rack.
The cases Kafka runs with its test-only ``preferRackAwareLogic`` switch are left out: no
consumer sets it. ``tests/integration/test_java_assignors.py`` holds the same to the Java
client itself on random groups."""

from __future__ import annotations

import pytest

from assignor import Group, Member, assign

RACKS = ["a", "b", "c", "d", "e", "f"]  # (Kafka's ALL_RACKS)
ALL3 = ["t1", "t2", "t3"]


def racks(n: int) -> list[str | None]:
    return [RACKS[i % len(RACKS)] for i in range(n)]


def no_racks(n: int) -> list[str | None]:
    return [None] * n


def group_of(topics: dict[str, int], replication: int, brokers: list[str | None], consumer_racks: list[str | None],
             consumer_topics: list[list[str]]) -> Group:
    partition_racks: dict[str, list[list[str]]] = {}
    first = 0
    for topic in sorted(topics):
        partition_racks[topic] = [
            sorted({r for j in range(replication) if (r := brokers[(i + j + first) % len(brokers)]) is not None})
            for i in range(topics[topic])]
        first += topics[topic]
    members = [Member(f"consumer{i}", subscribed, rack=rack)
               for i, (subscribed, rack) in enumerate(zip(consumer_topics, consumer_racks, strict=True))]
    return Group(topics, members, partition_racks=partition_racks)


def off_rack(group: Group, plan: dict[str, list]) -> int:
    """Partitions a consumer with a rack holds with no replica on that rack."""
    rack = {m.id: m.rack for m in group.members}
    assert group.partition_racks is not None
    return sum(1 for member, tps in plan.items() if rack[member] is not None for tp in tps
               if rack[member] not in group.partition_racks[tp.topic][tp.partition])


def plain(topics: dict[str, int], consumer_topics: list[list[str]], expected: list[str]) -> list[tuple]:
    """``verifyNonRackAwareAssignment``'s cases (less its preferRackAwareLogic one): where racks
    cannot help, are missing, or match no replica, the plain ranges."""
    return [(topics, 3, no_racks(3), racks(3), consumer_topics, expected, -1),
            (topics, 3, racks(3), no_racks(3), consumer_topics, expected, -1),
            (topics, 3, racks(3), racks(3), consumer_topics, expected, 0),
            (topics, 4, racks(4), racks(3), consumer_topics, expected, 0),
            (topics, 3, racks(3), ["d", "e", "f"], consumer_topics, expected, -1),
            (topics, 3, racks(3), [None, "e", "f"], consumer_topics, expected, -1)]


UNIFORM = {"t1": 6, "t2": 7, "t3": 2}
FIVES = {"t1": 5, "t2": 5, "t3": 5}
CO = {"t1": 6, "t2": 6, "t3": 2, "t4": 2}
CO_RACKS = ["a", "b", "b", "a"]
PAIRS = [["t1", "t2"], ["t1", "t2"], ["t3", "t4"], ["t3", "t4"]]
ALL4 = [["t1", "t2", "t3", "t4"]] * 4
NINE = ["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"]

CASES = {
    # testRackAwareAssignmentWithUniformSubscription
    **{f"uniform-subscription-plain-{i}": case for i, case in enumerate(plain(UNIFORM, [ALL3] * 3, [
        "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"]))},
    "uniform-subscription-rf1": (UNIFORM, 1, racks(3), racks(3), [ALL3] * 3, [
        "t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0", "t1-2, t1-5, t2-2, t2-5, t3-1"], 0),
    "uniform-subscription-rf2": (UNIFORM, 2, racks(3), racks(3), [ALL3] * 3, [
        "t1-0, t1-2, t2-0, t2-2, t2-3, t3-1", "t1-1, t1-3, t2-1, t2-4, t3-0", "t1-4, t1-5, t2-5, t2-6"], 1),
    "uniform-subscription-rack-without-partitions": (UNIFORM, 3, racks(2), racks(3), [ALL3] * 3, [
        "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"], 4),
    # testRackAwareAssignmentWithNonEqualSubscription
    **{f"non-equal-plain-{i}": case for i, case in enumerate(plain(UNIFORM, [ALL3, ALL3, ["t1", "t3"]], [
        "t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0", "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1", "t1-4, t1-5"]))},
    "non-equal-rf1": (UNIFORM, 1, racks(3), racks(3), [ALL3, ALL3, ["t1", "t3"]], [
        "t1-0, t1-3, t2-0, t2-2, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t2-5, t3-0", "t1-2, t1-5, t3-1"], 2),
    "non-equal-rf2": (UNIFORM, 2, racks(3), racks(3), [ALL3, ALL3, ["t1", "t3"]], [
        "t1-0, t1-2, t2-0, t2-2, t2-3, t2-5, t3-1", "t1-1, t1-3, t2-1, t2-4, t2-6, t3-0", "t1-4, t1-5"], 0),
    "non-equal-rack-without-partitions": (UNIFORM, 3, racks(2), racks(3), [ALL3, ALL3, ["t1", "t3"]], [
        "t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0", "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1", "t1-4, t1-5"], 2),
    # testRackAwareAssignmentWithUniformPartitions: co-partitioning before racks
    **{f"uniform-partitions-{i}": case for i, case in enumerate([
        *plain(FIVES, [ALL3] * 3, ["t1-0, t1-1, t2-0, t2-1, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3",
                                   "t1-4, t2-4, t3-4"]),
        *[(FIVES, rf, racks(brokers), racks(3), [ALL3] * 3, [
            "t1-0, t1-1, t2-0, t2-1, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t2-4, t3-4"], mismatch)
          for rf, brokers, mismatch in ((1, 3, 10), (2, 3, 5), (3, 2, 3))]])},
    # testRackAwareAssignmentWithUniformPartitionsNonEqualSubscription
    **{f"uniform-partitions-non-equal-plain-{i}": case for i, case in enumerate(plain(
        FIVES, [ALL3, ALL3, ["t1", "t3"]], ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1",
                                            "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3", "t1-4, t3-4"]))},
    "uniform-partitions-non-equal-rf1": (FIVES, 1, racks(3), racks(3), [ALL3, ALL3, ["t1", "t3"]], [
        "t1-0, t1-1, t2-0, t2-1, t2-4, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t3-4"], 9),
    "uniform-partitions-non-equal-rf2": (FIVES, 2, racks(3), racks(3), [ALL3, ALL3, ["t1", "t3"]], [
        "t1-2, t2-0, t2-1, t2-3, t3-2", "t1-0, t1-3, t2-2, t2-4, t3-0, t3-3", "t1-1, t1-4, t3-1, t3-4"], 0),
    "uniform-partitions-non-equal-rack-without-partitions": (FIVES, 3, racks(2), racks(3), [ALL3, ALL3, ["t1", "t3"]], [
        "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1", "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3", "t1-4, t3-4"], 2),
    # testRackAwareAssignmentWithCoPartitioning
    **{f"co-partitioned-pairs-{i}": (CO, rf, racks(brokers), CO_RACKS, PAIRS, [
        "t1-0, t1-1, t1-2, t2-0, t2-1, t2-2", "t1-3, t1-4, t1-5, t2-3, t2-4, t2-5", "t3-0, t4-0", "t3-1, t4-1"],
        mismatch) for i, (rf, brokers, mismatch) in enumerate(((3, 2, -1), (2, 2, 0)))},
    "co-partitioned-pairs-rf1": (CO, 1, racks(2), CO_RACKS, PAIRS, [
        "t1-0, t1-2, t1-4, t2-0, t2-2, t2-4", "t1-1, t1-3, t1-5, t2-1, t2-3, t2-5", "t3-1, t4-1", "t3-0, t4-0"], 0),
    **{f"co-partitioned-all-{i}": (CO, rf, racks(brokers), CO_RACKS, ALL4, [
        "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0", "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1", "t1-4, t2-4", "t1-5, t2-5"],
        mismatch) for i, (rf, brokers, mismatch) in enumerate(((3, 2, -1), (2, 2, 0)))},
    "co-partitioned-all-rf1": (CO, 1, racks(2), CO_RACKS, ALL4, [
        "t1-0, t1-2, t2-0, t2-2, t3-0, t4-0", "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1", "t1-5, t2-5", "t1-4, t2-4"], 0),
    "co-partitioned-all-rf1-three-racks": (CO, 1, racks(3), CO_RACKS, ALL4, [
        "t1-0, t1-3, t2-0, t2-3, t3-0, t4-0", "t1-1, t1-4, t2-1, t2-4, t3-1, t4-1", "t1-2, t2-2", "t1-5, t2-5"], 6),
    # testCoPartitionedAssignmentWithSameSubscription (its first case; the others set preferRackAwareLogic)
    "co-partitioned-same-subscription": ({"t1": 6, "t2": 6, "t3": 2, "t4": 2, "t5": 4, "t6": 4}, 3, no_racks(3),
                                         ["a", "b", "c"], [NINE] * 3, [
        "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0, t5-0, t5-1, t6-0, t6-1", "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1, t5-2, t6-2",
        "t1-4, t1-5, t2-4, t2-5, t5-3, t6-3"], -1),
}


@pytest.mark.parametrize("name", list(CASES))
def test_range_with_racks_deals_as_kafkas_own_tests_expect(name):
    topics, replication, brokers, consumer_racks, consumer_topics, expected, mismatch = CASES[name]
    group = group_of(topics, replication, brokers, consumer_racks, consumer_topics)
    plan = assign("range", group).assignment
    found = [", ".join(sorted(f"{tp.topic}-{tp.partition}" for tp in plan[f"consumer{i}"]))
             for i in range(len(consumer_topics))]
    assert found == expected
    if mismatch >= 0:
        assert off_rack(group, plan) == mismatch


def test_a_rack_aware_plan_lists_each_members_partitions_sorted():
    """Java sorts each member's list by topic and partition once racks were dealt; without
    racks it lists them topic by topic in its HashMap's order (here q before b)."""
    group = group_of({"b": 2, "q": 2}, 1, racks(2), ["a", "b"], [["b", "q"], ["b", "q"]])
    for member in ("consumer0", "consumer1"):
        assert [tp.topic for tp in assign("range", group).assignment[member]] == ["b", "q"]
    plain_group = Group({"b": 2, "q": 2}, [Member("m1", ["b", "q"]), Member("m2", ["b", "q"])])
    assert [tp.topic for tp in assign("range", plain_group).assignment["m1"]] == ["q", "b"]
