"""The oracle's figures, by table: what `validate.report` measures of a plan (balance score,
the exact optimum's figures and flag, rack locality, Java's handover flag, a missing member,
dropped claims). Found by a mutation run: each of these could change unnoticed before."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignor import Group, Member, Plan, TopicPartition, validate

TP = TopicPartition


@pytest.mark.parametrize(("loads", "score"), [([], 0), ([5], 0), ([9, 10, 11], 4), ([0, 0, 3], 6),
                                              ([1, 2, 3, 4], 10), ([2, 2, 5, 5], 12), ([7, 7, 7], 0)])
def test_balance_score_table(loads, score):
    assert validate.balance_score(loads) == score


@given(st.lists(st.integers(0, 50), max_size=30))
def test_balance_score_is_the_sum_over_pairs(loads):
    assert validate.balance_score(loads) == sum(abs(a - b) for a, b in combinations(loads, 2))


def test_the_exact_report_names_the_optimum_and_flags_a_worse_plan():
    group = Group({"t": 4}, [Member("a", ["t"], [TP("t", 0), TP("t", 1), TP("t", 2)], 1), Member("b", ["t"])])
    report = validate.report(group, Plan("sticky", {"a": [TP("t", 0), TP("t", 1), TP("t", 2)], "b": [TP("t", 3)]}),
                             exact=True)
    assert (report["optimal_balance_score"], report["min_moves"], report["max_rack_local"]) == (0, 1, 0)
    assert report["balance_score"] == 2 and report["spread"] == 2 and (report["min_load"], report["max_load"]) == (1, 3)
    assert report["flags"] == ["not balanced (KIP-54): a member holds a partition a member two or more lighter "
                               "could take", "not optimally balanced: balance score 2 where 0 is reachable"]
    best = validate.report(group, Plan("sticky", {"a": [TP("t", 0), TP("t", 1)], "b": [TP("t", 2), TP("t", 3)]}),
                           exact=True)
    assert best["flags"] == [] and (best["moved"], best["kept"]) == (1, 2)


def test_a_cooperative_round_is_not_flagged_for_the_balance_it_reaches_next():
    group = Group({"t": 4}, [Member("a", ["t"], [TP("t", p) for p in range(4)], 1), Member("b", ["t"])])
    report = validate.report(group, Plan("cooperative-sticky", {"a": [TP("t", 0), TP("t", 1)], "b": []}), exact=True)
    assert report["valid"] and report["revoking"] == 2
    assert not any(f.startswith("not optimally balanced") for f in report["flags"])
    # It reads as a round of two, not as a failure (`balanced: false`, 2 of 4 assigned).
    assert report["flags"] == ["first of two rounds (KIP-429): 2 partition(s) withheld until their owners revoke "
                               "them; the next rebalance assigns them, so `balanced` and `assigned` are this round's"]
    layout_report = validate.report_of_layout(group, *_layout_of(group, report), "cooperative-sticky")
    assert layout_report is not None and layout_report["flags"] == report["flags"]


def _layout_of(group: Group, _report: dict) -> tuple:
    """The cooperative first round of `group` on arrays, as a leader plans it."""
    from assignor.strategies import strategy_named

    planned = strategy_named("cooperative-sticky").planned(group)
    return planned.layout, planned.owner


def test_rack_locality_counts_members_on_a_replica_rack():
    group = Group({"t": 3}, [Member("a", ["t"], rack="r1"), Member("b", ["t"], rack="r2")],
                  {"t": [["r1"], ["r2"], ["r1", "r2"]]})
    local = validate.report(group, Plan("sticky", {"a": [TP("t", 0), TP("t", 2)], "b": [TP("t", 1)]}))
    assert (local["rack_local"], local["rack_locality"]) == (3, 1.0)
    crossed = validate.report(group, Plan("sticky", {"a": [TP("t", 1)], "b": [TP("t", 0), TP("t", 2)]}))
    assert (crossed["rack_local"], crossed["rack_locality"]) == (1, 0.3333)
    assert validate.report(Group({"t": 1}, [Member("a", ["t"])]), Plan("sticky", {"a": [TP("t", 0)]}))[
        "rack_locality"] is None


def test_a_handover_while_claimed_is_javas_flag_and_our_error():
    group = Group({"t": 2}, [Member("a", ["t"], [TP("t", 0), TP("t", 1)], 1), Member("b", ["t"], [TP("t", 1)], 1)])
    handed = {"a": [TP("t", 0)], "b": [TP("t", 1)]}  # t-1: a and b claim it in one generation
    java = validate.report(group, Plan("java-cooperative-sticky", handed))
    assert java["valid"] and java["unsafe_handovers"] == 1
    assert java["flags"] == ["1 partition(s) handed over while still claimed, "
                             "e.g. TopicPartition(topic='t', partition=1) given to b while a still owns it"]
    ours = validate.report(group, Plan("cooperative-sticky", handed))
    assert ours["errors"] == ["TopicPartition(topic='t', partition=1) given to b while a still owns it"]
    # A strategy the oracle does not know is eager: nothing withheld, nothing flagged.
    unknown = validate.report(group, Plan("custom", handed))
    assert unknown["valid"] and unknown["flags"] == [] and unknown["revoking"] == 0
    withheld = validate.report(group, Plan("custom", {"a": [TP("t", 0)], "b": []}))
    assert withheld["errors"] == ["1 partitions unassigned, e.g. TopicPartition(topic='t', partition=1)"]


def test_a_member_missing_from_the_plan_counts_with_no_partitions():
    group = Group({"t": 2}, [Member("a", ["t"]), Member("b", ["t"])])
    report = validate.report(group, Plan("sticky", {"a": [TP("t", 0), TP("t", 1)]}))
    assert report["errors"] == ["member 'b' missing from the assignment"]
    assert (report["min_load"], report["max_load"], report["spread"]) == (0, 2, 2)


def test_dropped_claims_are_counted_whole_and_shown_first_five_per_reason():
    claims = [TP("gone", p) for p in range(7)] + [TP("t", 9)]
    summary = validate.dropped_claims(Group({"t": 1}, [Member("a", ["t"], claims, 1)]))
    assert summary["count"] == 8
    gone = summary["by_reason"]["unknown_topic"]
    assert gone["count"] == 7 and len(gone["first"]) == 5
    assert gone["first"][0] == {"member": "a", "claim": ["gone", 0]}
    assert summary["by_reason"]["no_such_partition"] == {"count": 1, "first": [{"member": "a", "claim": ["t", 9]}]}
    assert list(validate.dropped_claims(Group({"t": 1}, [Member("a", ["t"], claims, 1)]), first=2)[
        "by_reason"]["unknown_topic"]["first"]) == [{"member": "a", "claim": ["gone", 0]},
                                                     {"member": "a", "claim": ["gone", 1]}]
