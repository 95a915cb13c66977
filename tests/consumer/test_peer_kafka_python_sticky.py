"""kafka-python's sticky tests (``test/test_assignors.py``), translated. kafka-python ports an
older Java algorithm: two of its exact expectations are not what the Java client 4.3.0 plans
(``test_sticky_assignor1`` after C1 leaves, ``test_sticky_add_remove_topic_two_consumers`` once
t2 appears); those are left out for ``java-*`` and, not being forced by balance and movement,
for ours too; every strategy is held to kafka-python's validity, balance and stickiness checks.
(``test_assignment_with_multiple_generations2`` is in ``test_peer_generations.py``; the cases
kafka-python shares with Java are in ``test_peer_sticky_suite.py``.)"""

from __future__ import annotations

import pytest

from assignor import Group, Member, TopicPartition
from tests.consumer.peer_rules import JAVA, STICKY, fully_balanced, settle, sticky_moves


def kp(*names: str) -> set[TopicPartition]:
    """kafka-python's ``t0p1`` names."""
    return {TopicPartition(n.split("p")[0], int(n.split("p")[1])) for n in names}


def _as_sets(plan: dict[str, list[TopicPartition]]) -> dict[str, set[TopicPartition]]:
    return {m: set(p) for m, p in plan.items()}


@pytest.mark.parametrize("strategy", STICKY)
def test_sticky_assignor1(strategy):
    topics = {f"t{i}": 2 for i in range(4)}
    every = list(topics)
    _, first = settle(strategy, Group(topics, [Member(c, every) for c in ("C0", "C1", "C2")]))
    if strategy in JAVA:
        assert _as_sets(first) == {"C0": kp("t0p0", "t1p1", "t3p0"), "C1": kp("t0p1", "t2p0", "t3p1"),
                                   "C2": kp("t1p0", "t2p1")}
    group, second = settle(strategy, Group(topics, [Member(c, every, first[c], 1) for c in ("C0", "C2")]))
    # kafka-python: C0 [t0p0, t1p1, t2p0, t3p0], C2 [t0p1, t1p0, t2p1, t3p1]; Java hands C1's three
    # partitions over otherwise, equally balanced and moving nothing else.
    assert sorted(map(len, second.values())) == [4, 4]
    assert all(set(first[c]) <= set(second[c]) for c in second)
    assert sticky_moves(group, second)


@pytest.mark.parametrize("strategy", STICKY)
def test_sticky_assignor2(strategy):
    """Forced by the subscriptions: every strategy gives kafka-python's plans."""
    topics = {"t0": 1, "t1": 2, "t2": 3}
    subscriptions = {"C0": ["t0"], "C1": ["t0", "t1"], "C2": ["t0", "t1", "t2"]}
    _, first = settle(strategy, Group(topics, [Member(c, t) for c, t in subscriptions.items()]))
    assert _as_sets(first) == {"C0": kp("t0p0"), "C1": kp("t1p0", "t1p1"), "C2": kp("t2p0", "t2p1", "t2p2")}
    _, second = settle(strategy, Group(topics, [Member(c, subscriptions[c], first[c], 1) for c in ("C1", "C2")]))
    assert _as_sets(second) == {"C1": kp("t0p0", "t1p0", "t1p1"), "C2": kp("t2p0", "t2p1", "t2p2")}


@pytest.mark.parametrize("strategy", STICKY)
def test_sticky_add_remove_topic_two_consumers(strategy):
    topics = {"t1": 3, "t2": 3}
    _, first = settle(strategy, Group(topics, [Member(c, ["t1"]) for c in ("C1", "C2")]))
    if strategy in JAVA:
        assert _as_sets(first) == {"C1": kp("t1p0", "t1p2"), "C2": kp("t1p1")}
    assert sorted(map(len, first.values())) == [1, 2]
    group, second = settle(strategy, Group(topics, [Member(c, ["t1", "t2"], first[c], 1) for c in first]))
    # kafka-python: C1 [t1p0, t1p2, t2p1], C2 [t1p1, t2p0, t2p2]; Java gives C1 t2p0 instead.
    assert all(len(second[c]) == 3 and set(first[c]) <= set(second[c]) for c in first)
    assert sticky_moves(group, second)
    group, third = settle(strategy, Group({"t2": 3}, [Member(c, ["t2"], second[c], 1) for c in first]))
    assert sorted(map(len, third.values())) == [1, 2]
    assert all(set(third[c]) <= set(second[c]) for c in first)


@pytest.mark.parametrize("strategy", STICKY)
def test_conflicting_previous_assignments(strategy):
    """Both members claim t-0 (twice each) in generation 1."""
    t0 = TopicPartition("t", 0)
    group, plan = settle(strategy, Group({"t": 2}, [Member(c, ["t"], [t0, t0], 1) for c in ("C1", "C2")]))
    assert sorted(map(len, plan.values())) == [1, 1]


@pytest.mark.parametrize("strategy", STICKY)
def test_assignment_with_multiple_generations1(strategy):
    topics = {"t": 6}
    _, first = settle(strategy, Group(topics, [Member(c, ["t"]) for c in ("C1", "C2", "C3")]))
    assert sorted(map(len, first.values())) == [2, 2, 2]
    group, second = settle(strategy, Group(topics, [Member(c, ["t"], first[c]) for c in ("C1", "C2")]))
    assert all(len(second[c]) == 3 and set(first[c]) <= set(second[c]) for c in second)
    assert sticky_moves(group, second)
    group, third = settle(strategy, Group(topics, [Member("C2", ["t"], second["C2"], 2),
                                                   Member("C3", ["t"], first["C3"], 1)]))
    assert sorted(map(len, third.values())) == [3, 3]
    assert sticky_moves(group, third)


@pytest.mark.parametrize("strategy", STICKY)
def test_assignment_with_conflicting_previous_generations(strategy):
    """C1 and C2 (generation 1) both claim t-0; C3 (generation 2) claims t-3 and t-4 that C2
    and C1 also claim: C3 keeps two of its own (two each is the balance)."""
    t = [TopicPartition("t", p) for p in range(6)]
    group = Group({"t": 6}, [Member("C1", ["t"], [t[0], t[1], t[4]], 1), Member("C2", ["t"], [t[0], t[2], t[3]], 1),
                             Member("C3", ["t"], [t[3], t[4], t[5]], 2)])
    group, plan = settle(strategy, group)
    assert fully_balanced(plan) and sticky_moves(group, plan)
    assert len(plan["C3"]) == 2 and set(plan["C3"]) <= {t[3], t[4], t[5]}
