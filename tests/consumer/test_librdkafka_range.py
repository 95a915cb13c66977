"""`librdkafka-range` and `librdkafka-roundrobin` against librdkafka's own expectations.

The rack tables are librdkafka's unit tests of its range assignor (``rdkafka_range_assignor.c``,
after Java's ``RangeAssignorTest``): replica r of the topics' p-th partition, counted on across
the topics, on broker (p + r) % brokers, broker b on rack b % racks
(``rd_kafka_metadata_new_topic_with_partition_replicas_mock``), consumers
``consumer1..3`` on racks a, b, c. Each member's partitions are compared as a set, as there. The
member order, and dealing topics alike by rack where Java would not, were seen on live
librdkafka groups (`tests/integration/test_snapshot.py`).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignor import Group, Member, assign, validate
from assignor.strategies.librdkafka_range import RANGE_NAME, ROUNDROBIN_NAME
from tests.budget import examples

RACKS = "abcdef"


def _racks(counts: dict[str, int], replicas: int, racks: int) -> dict[str, list[list[str]]] | None:
    """The unit tests' replica racks (no racks on the brokers when `racks` is 0): partitions are
    numbered on across the topics, in their order."""
    if racks == 0:
        return None
    brokers, first = replicas * racks, 0
    found = {}
    for t, n in counts.items():
        found[t] = [sorted({RACKS[(first + p + r) % brokers % racks] for r in range(replicas)}) for p in range(n)]
        first += n
    return found


def _plan(counts: dict[str, int], subscriptions: list[list[str]], replicas: int, racks: int,
          consumer_racks: str | None = "abc") -> list[list[tuple[str, int]]]:
    members = [Member(f"consumer{i + 1}", topics, rack=None if consumer_racks is None else consumer_racks[i])
               for i, topics in enumerate(subscriptions)]
    plan = assign(RANGE_NAME, Group(counts, members, _racks(counts, replicas, racks)))
    return [sorted(tuple(tp) for tp in plan.assignment[m.id]) for m in members]


def _p(*pairs: object) -> list[tuple[str, int]]:
    return sorted(zip(pairs[::2], pairs[1::2], strict=True))  # type: ignore[arg-type]


T3 = ["t1", "t2", "t3"]
T13 = ["t1", "t3"]

#: (librdkafka's test, partitions per topic, subscriptions, replication factor, broker racks, plan)
RACKED = [
    ("UniformSubscription rf1", {"t1": 6, "t2": 7, "t3": 2}, [T3, T3, T3], 1, 3,
     [_p("t1", 0, "t1", 3, "t2", 0, "t2", 3, "t2", 6), _p("t1", 1, "t1", 4, "t2", 1, "t2", 4, "t3", 0),
      _p("t1", 2, "t1", 5, "t2", 2, "t2", 5, "t3", 1)]),
    ("UniformSubscription rf2", {"t1": 6, "t2": 7, "t3": 2}, [T3, T3, T3], 2, 3,
     [_p("t1", 0, "t1", 2, "t2", 0, "t2", 2, "t2", 3, "t3", 1), _p("t1", 1, "t1", 3, "t2", 1, "t2", 4, "t3", 0),
      _p("t1", 4, "t1", 5, "t2", 5, "t2", 6)]),
    ("UniformSubscription one rack without partitions", {"t1": 6, "t2": 7, "t3": 2}, [T3, T3, T3], 3, 2,
     [_p("t1", 0, "t1", 1, "t2", 0, "t2", 1, "t2", 2, "t3", 0), _p("t1", 2, "t1", 3, "t2", 3, "t2", 4, "t3", 1),
      _p("t1", 4, "t1", 5, "t2", 5, "t2", 6)]),
    ("NonEqualSubscription rf1", {"t1": 6, "t2": 7, "t3": 2}, [T3, T3, T13], 1, 3,
     [_p("t1", 0, "t1", 3, "t2", 0, "t2", 2, "t2", 3, "t2", 6),
      _p("t1", 1, "t1", 4, "t2", 1, "t2", 4, "t2", 5, "t3", 0), _p("t1", 2, "t1", 5, "t3", 1)]),
    ("NonEqualSubscription rf2", {"t1": 6, "t2": 7, "t3": 2}, [T3, T3, T13], 2, 3,
     [_p("t1", 0, "t1", 2, "t2", 0, "t2", 2, "t2", 3, "t2", 5, "t3", 1),
      _p("t1", 1, "t1", 3, "t2", 1, "t2", 4, "t2", 6, "t3", 0), _p("t1", 4, "t1", 5)]),
    ("NonEqualSubscription one rack without partitions", {"t1": 6, "t2": 7, "t3": 2}, [T3, T3, T13], 3, 2,
     [_p("t1", 0, "t1", 1, "t2", 0, "t2", 1, "t2", 2, "t2", 3, "t3", 0),
      _p("t1", 2, "t1", 3, "t2", 4, "t2", 5, "t2", 6, "t3", 1), _p("t1", 4, "t1", 5)]),
    *[(f"UniformPartitions co-partitioned rf{rf}", {"t1": 5, "t2": 5, "t3": 5}, [T3, T3, T3], rf, 3 if rf < 3 else 2,
       [_p("t1", 0, "t1", 1, "t2", 0, "t2", 1, "t3", 0, "t3", 1),
        _p("t1", 2, "t1", 3, "t2", 2, "t2", 3, "t3", 2, "t3", 3), _p("t1", 4, "t2", 4, "t3", 4)]) for rf in (1, 2, 3)],
    ("UniformPartitionsNonEqualSubscription rf1", {"t1": 5, "t2": 5, "t3": 5}, [T3, T3, T13], 1, 3,
     [_p("t1", 0, "t1", 1, "t2", 0, "t2", 1, "t2", 4, "t3", 0, "t3", 1),
      _p("t1", 2, "t1", 3, "t2", 2, "t2", 3, "t3", 2, "t3", 3), _p("t1", 4, "t3", 4)]),
    ("UniformPartitionsNonEqualSubscription rf2", {"t1": 5, "t2": 5, "t3": 5}, [T3, T3, T13], 2, 3,
     [_p("t1", 2, "t2", 0, "t2", 1, "t2", 3, "t3", 2), _p("t1", 0, "t1", 3, "t2", 2, "t2", 4, "t3", 0, "t3", 3),
      _p("t1", 1, "t1", 4, "t3", 1, "t3", 4)]),
]


@pytest.mark.parametrize(("test", "counts", "subscriptions", "replicas", "racks", "expected"), RACKED,
                         ids=[r[0] for r in RACKED])
def test_librdkafkas_own_rack_plans(test, counts, subscriptions, replicas, racks, expected):
    assert _plan(counts, subscriptions, replicas, racks) == expected


#: Where racks cannot help (``verifyNonRackAwareAssignment``): no broker racks, no consumer
#: racks, every partition on every rack, racks that do not meet; always plain ranges.
PLAIN = [(3, 0, "abc"), (3, 3, None), (3, 3, "abc"), (4, 4, "abc"), (3, 3, "def"), (3, 3, "de")]


@pytest.mark.parametrize(("replicas", "racks", "consumer_racks"), PLAIN)
def test_where_racks_cannot_help_the_plan_is_plain_ranges(replicas, racks, consumer_racks):
    counts = {"t1": 6, "t2": 7, "t3": 2}
    if consumer_racks == "de":  # (RACKS_ONE_NULL: the first consumer has none)
        members = [Member("consumer1", T3), Member("consumer2", T3, rack="d"), Member("consumer3", T3, rack="e")]
        plan = assign(RANGE_NAME, Group(counts, members, _racks(counts, replicas, racks)))
        got = [sorted(tuple(tp) for tp in plan.assignment[m.id]) for m in members]
    else:
        got = _plan(counts, [T3, T3, T3], replicas, racks, consumer_racks)
    assert got == [_p("t1", 0, "t1", 1, "t2", 0, "t2", 1, "t2", 2, "t3", 0),
                   _p("t1", 2, "t1", 3, "t2", 3, "t2", 4, "t3", 1), _p("t1", 4, "t1", 5, "t2", 5, "t2", 6)]


def test_a_member_without_a_rack_takes_no_co_partitioned_partition_by_rack():
    """Two topics alike on one rack-a broker (racks cannot help: Java deals plain ranges): two
    members on rack-a take them first, partition by partition, the member without a rack what
    is left (``rd_kafka_assign_co_partitioned`` skips it)."""
    racks = {"x": [["a"]] * 6, "y": [["a"]] * 6}
    members = [Member("m0", ["x", "y"]), Member("m1", ["x", "y"], rack="a"), Member("m2", ["x", "y"], rack="a")]
    group = Group({"x": 6, "y": 6}, members, racks)
    def of_x(strategy: str) -> dict[str, list[int]]:
        return {m: sorted(tp.partition for tp in tps if tp.topic == "x")
                for m, tps in assign(strategy, group).assignment.items()}

    assert of_x(RANGE_NAME) == {"m0": [4, 5], "m1": [0, 1], "m2": [2, 3]}
    assert of_x("range") == {"m0": [0, 1], "m1": [2, 3], "m2": [4, 5]}


def test_members_go_in_member_id_order_static_or_not():
    """``rd_kafka_group_member_cmp``: instance ids only between two static members; Java deals
    to static members first."""
    members = [Member("s1-x", ["t"], group_instance_id="s1"), Member("a-x", ["t"]),
               Member("s0-x", ["t"], group_instance_id="s0")]
    group = Group({"t": 3}, members)
    for name in (RANGE_NAME, ROUNDROBIN_NAME):
        assert {m: [tp.partition for tp in tps] for m, tps in assign(name, group).assignment.items()} == {
            "s1-x": [2], "a-x": [0], "s0-x": [1]}
    assert {m: [tp.partition for tp in tps] for m, tps in assign("range", group).assignment.items()} == {
        "s1-x": [1], "a-x": [2], "s0-x": [0]}


@examples(100)
@given(counts=st.dictionaries(st.sampled_from(["x", "y", "z"]), st.integers(1, 8), min_size=1),
       subscriptions=st.lists(st.sets(st.sampled_from(["x", "y", "z"]), min_size=1), min_size=1, max_size=5),
       racked=st.booleans())
def test_every_plan_is_valid_and_without_static_members_or_racks_is_javas(counts, subscriptions, racked):
    members = [Member(f"m{i}", sorted(s), rack="a" if racked and i % 2 else None) for i, s in enumerate(subscriptions)]
    racks = {t: [["a"] if p % 2 else ["b"] for p in range(n)] for t, n in counts.items()} if racked else None
    group = Group(counts, members, racks)
    for name, java in ((RANGE_NAME, "range"), (ROUNDROBIN_NAME, "roundrobin")):
        plan = assign(name, group)
        report = validate.report(group, plan)
        assert report["valid"], report["errors"]
        if not racked:
            assert {m: sorted(tps) for m, tps in plan.assignment.items()} == {
                m: sorted(tps) for m, tps in assign(java, group).assignment.items()}
