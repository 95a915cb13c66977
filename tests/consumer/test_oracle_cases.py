"""The oracle handed plans made wrong by hand, one fault each: the fast check refuses every one,
the plain check names it in exactly these words, and the report is invalid. Without these, a
broken oracle (one that stopped reporting a partition assigned twice) passed 709 tests: every
other test hands it plans made by the strategies, which are right."""

from __future__ import annotations

import numpy as np
import pytest

from assignor import Group, Member, Plan, TopicPartition, validate
from assignor.group_spec import of_objects
from assignor.solver import dense
from assignor.strategies import strategy_named

TP = TopicPartition
GROUP = Group({"a": 2, "b": 1}, [Member("m1", ("a", "b")), Member("m2", ("a",))])
GOOD = {"m1": [TP("a", 0), TP("b", 0)], "m2": [TP("a", 1)]}

CASES = [
    ("a partition twice, across members", {"m1": [TP("a", 0), TP("b", 0)], "m2": [TP("a", 1), TP("a", 0)]},
     ["TopicPartition(topic='a', partition=0) assigned more than once"]),
    ("a partition twice, within one member", {"m1": [TP("a", 0), TP("b", 0), TP("b", 0)], "m2": [TP("a", 1)]},
     ["TopicPartition(topic='b', partition=0) assigned more than once"]),
    ("a partition missing", {"m1": [TP("a", 0)], "m2": [TP("a", 1)]},
     ["1 partitions unassigned, e.g. TopicPartition(topic='b', partition=0)"]),
    ("a topic its member does not subscribe to", {"m1": [TP("a", 0)], "m2": [TP("a", 1), TP("b", 0)]},
     ["m2: TopicPartition(topic='b', partition=0) of a topic it does not subscribe to"]),
    ("a partition past the topic's count", {"m1": [TP("a", 0), TP("b", 0), TP("a", 2)], "m2": [TP("a", 1)]},
     ["m1: TopicPartition(topic='a', partition=2) does not exist"]),
    ("a topic without metadata", {"m1": [TP("a", 0), TP("b", 0), TP("zz", 0)], "m2": [TP("a", 1)]},
     ["m1: TopicPartition(topic='zz', partition=0) does not exist"]),
    ("a negative partition", {"m1": [TP("a", 0), TP("b", 0), TP("a", -1)], "m2": [TP("a", 1)]},
     ["m1: TopicPartition(topic='a', partition=-1) does not exist"]),
    ("an entry that is no TopicPartition", {"m1": [TP("a", 0), TP("b", 0), ("a", 1)], "m2": [TP("a", 1)]},
     ["m1: ('a', 1) is not a TopicPartition"]),
    ("an unknown member", {**GOOD, "stranger": [TP("a", 0)]},
     ["assignment for unknown member 'stranger'"]),
    # Every fault is named, not only the first of a member or of the plan (mutation testing
    # found a `continue` turned into `break` unnoticed).
    ("an unknown member, then a partition twice", {"stranger": [TP("a", 0)], "m1": [TP("a", 0), TP("b", 0)],
                                                   "m2": [TP("a", 1), TP("a", 1)]},
     ["assignment for unknown member 'stranger'", "TopicPartition(topic='a', partition=1) assigned more than once"]),
    ("an odd entry, then a partition twice", {"m1": [("a", 1), TP("a", 0), TP("b", 0), TP("b", 0)],
                                             "m2": [TP("a", 1)]},
     ["m1: ('a', 1) is not a TopicPartition", "TopicPartition(topic='b', partition=0) assigned more than once"]),
    ("a member missing", {"m1": [TP("a", 0), TP("b", 0), TP("a", 1)]},
     ["member 'm2' missing from the assignment"]),
]


def test_the_good_plan_is_valid():
    report = validate.report(GROUP, Plan("sticky", GOOD))
    assert report["valid"] and report["errors"] == [] and report["assigned"] == 3


@pytest.mark.parametrize(("fault", "assignment", "errors"), CASES, ids=[case[0] for case in CASES])
def test_each_fault_is_named_by_both_checks(fault, assignment, errors):
    plan = Plan("sticky", assignment)
    spec = of_objects(GROUP)
    subscribed = validate._subscriptions(spec)
    named: list[str] = []
    validate._assignment_errors(spec, plan, subscribed, named)
    fast = validate._unassigned_if_valid(spec, plan, subscribed)
    report = validate.report(GROUP, plan)
    assert not report["valid"], fault
    assert report["errors"] == errors, fault
    # The fast check refuses every plan the plain check faults for an entry (a missing partition
    # or member is no fault of an entry: the fast check counts it, the report names it).
    if named:
        assert fast is None, fault


def test_the_columns_check_refuses_what_it_cannot_vouch_for():
    """`report_of_layout` (a leader's plan checked on its arrays) answers None, never a clean
    report, for an owner array that leaves a partition out or gives one to a non-subscriber."""
    planned = strategy_named("sticky").planned(GROUP)
    layout, owner = planned.layout, planned.owner
    assert validate.report_of_layout(GROUP, layout, owner, "sticky")["valid"]
    b0 = int(layout.offsets[layout.topics.index("b")])
    m2 = [m.id for m in layout.members].index("m2")
    missing, unsubscribed = owner.copy(), owner.copy()
    missing[b0] = -1
    unsubscribed[b0] = m2
    for wrong in (missing, unsubscribed):
        assert validate.report_of_layout(GROUP, layout, wrong, "sticky") is None
        assert not validate.report(GROUP, Plan("sticky", layout.assignment(wrong)))["valid"]
    assert isinstance(dense.build(GROUP), dense.Layout) and isinstance(owner, np.ndarray)


def test_a_cooperative_plan_may_not_hand_over_a_claimed_partition():
    """KIP-429: a partition another member still claims is withheld this round, never given."""
    group = Group({"t": 2}, [Member("a", ("t",), owned=(TP("t", 0), TP("t", 1)), generation=1),
                             Member("b", ("t",))])
    handed = Plan("cooperative-sticky", {"a": [TP("t", 1)], "b": [TP("t", 0)]})
    report = validate.report(group, handed)
    assert report["errors"] == ["TopicPartition(topic='t', partition=0) given to b while a still owns it"]
    withheld = validate.report(group, Plan("cooperative-sticky", {"a": [TP("t", 1)], "b": []}))
    assert withheld["valid"] and withheld["revoking"] == 1


def test_a_partition_kept_from_its_earlier_owner_is_an_error_of_ours_only():
    """KIP-341's preference: t1-0 was m3's in an earlier generation; m3 was given t0-2 where m2
    (which keeps t1-0) could take t0-2 and m3 t1-0 with as few moves. Ours promise the swap;
    Java's strategies do not."""
    from assignor import TopicPartition as TP
    from assignor import assign

    group = Group({"t0": 3, "t1": 1}, [
        Member("m0", ["t0"], [TP("t0", 2), TP("t1", 0)], -1),
        Member("m1", ["t0"], [TP("t0", 0), TP("t0", 2), TP("t0", 1)], 2),
        Member("m2", ["t0", "t1"], [TP("t0", 2), TP("t0", 1), TP("t1", 0)], 3),
        Member("m3", ["t1", "t0"], [TP("t0", 0), TP("t1", 0)], 0)])
    held = {"m0": [TP("t0", 1)], "m1": [TP("t0", 0)], "m2": [TP("t1", 0)], "m3": [TP("t0", 2)]}
    report = validate.report(group, Plan("sticky", held))
    assert report["errors"] == [
        "TopicPartition(topic='t1', partition=0) given to m2 while its earlier owner m3 (KIP-341) was given "
        "TopicPartition(topic='t0', partition=2) that m2 could take instead"]
    assert validate.report(group, Plan("java-sticky", held))["valid"]
    swapped = {**held, "m2": [TP("t0", 2)], "m3": [TP("t1", 0)]}
    assert validate.report(group, Plan("sticky", swapped))["valid"]
    for strategy in ("sticky", "cooperative-sticky"):
        assert validate.report(group, assign(strategy, group))["valid"]


def test_a_malformed_plan_is_named_not_crashed_on_where_earlier_owners_exist():
    """The KIP-341 check reads topics: it runs only over well-formed plans."""
    from assignor import TopicPartition as TP

    group = Group({"t": 2}, [Member("a", ["t"], [TP("t", 0), TP("t", 1)], 1), Member("b", ["t"], [TP("t", 1)], 2)])
    report = validate.report(group, Plan("sticky", {"a": [5, TP("t", 0)], "b": [TP("t", 1)]}))
    assert report["errors"] == ["a: 5 is not a TopicPartition"]
