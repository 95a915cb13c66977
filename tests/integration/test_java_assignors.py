"""Our plans of the Java client's assignors against the Java client's own (kafka-clients 4.3.1,
called in a JVM as a leader calls them: ``jvm/src/AssignorCalls.java``), on random groups
rebalance after rebalance: ``java-sticky`` is ``StickyAssignor``, ``java-cooperative-sticky``
``CooperativeStickyAssignor``, ``range`` ``RangeAssignor`` and ``roundrobin``
``RoundRobinAssignor``; each member's partitions equal, in Java's order.

The groups go where recorded calls rarely do: members of several subscriptions (the general
builder), racks on members and replicas (KIP-881), static members, members leaving and joining,
topics growing, subscriptions to a topic the cluster lacks, stale generations claiming what
another member holds, and a few members over topics of hundreds of partitions. Each sequence
carries Java's plan into the next call, so one divergence is met where it starts. Where ours
refuses to plan (`JavaAssignorFailure`: Java would fail, or hand out a plan that is none), Java
must have thrown or given such a plan."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest

from assignor import Group, JavaAssignorFailure, Member, TopicPartition, assign
from assignor.protocol import decode_sticky_user_data, encode_sticky_user_data
from bench.java_client import driver_lines
from tests.jvm_driver import listed

pytestmark = pytest.mark.external

OURS = {"sticky": "java-sticky", "cooperative-sticky": "java-cooperative-sticky", "range": "range",
        "roundrobin": "roundrobin"}
RACKS = ["r0", "r1", "r2"]
SEQUENCES, STEPS = 60, 5


@dataclass
class State:
    """One sequence's group between calls: topics, each partition's replica racks (None: no
    racks), members' (topics, rack), and what Java's last plan gave them, with its generation."""

    topics: dict[str, int]
    racks: dict[str, list[list[str]]] | None
    members: dict[str, tuple[list[str], str | None]]
    owned: dict[str, list[TopicPartition]] = field(default_factory=dict)
    generations: dict[str, int] = field(default_factory=dict)
    instances: dict[str, str] = field(default_factory=dict)  # static members' instance ids


def _member_id(rng: random.Random) -> str:
    return rng.choice(["consumer", "c", "app-1"]) + f"-{rng.randrange(10**6)}"


def _subscription(rng: random.Random, topics: list[str], alike: bool) -> list[str]:
    chosen = list(topics) if alike else rng.sample(topics, rng.randrange(1, len(topics) + 1))
    return chosen + ["ghost"] if rng.random() < 0.05 else chosen  # (a topic the cluster does not have)


def _racks(rng: random.Random, count: int) -> list[list[str]]:
    return [rng.sample(RACKS, rng.randrange(1, 3)) if rng.random() < 0.9 else [] for _ in range(count)]


def first_state(rng: random.Random) -> State:
    names = [f"t{i}" for i in range(rng.randrange(1, 5))] + (["orders.v2"] if rng.random() < 0.3 else [])
    strided = rng.random() < 0.25  # few members, many partitions: a member's share in strides
    topics = {t: rng.choice([64, 128, 200]) if strided else rng.randrange(1, 30) for t in names}
    racked = rng.random() < 0.3
    alike = rng.random() < 0.5
    members = {_member_id(rng): (_subscription(rng, names, alike), rng.choice([*RACKS, None]) if racked else None)
               for _ in range(rng.randrange(2, 5) if strided else rng.randrange(1, 12))}
    state = State(topics, {t: _racks(rng, n) for t, n in topics.items()} if racked else None, members)
    if rng.random() < 0.2:
        state.instances = {m: f"instance-{rng.randrange(100)}-{i}" for i, m in enumerate(members) if rng.random() < 0.5}
    return state


def changed(rng: random.Random, state: State) -> None:
    """A rebalance's cause: a member leaves or joins, a topic grows, a subscription changes, or
    a member comes back a generation behind, claiming some of another's partitions."""
    names = list(state.topics)
    roll = rng.random()
    if roll < 0.25 and len(state.members) > 1:
        del state.members[rng.choice(list(state.members))]
    elif roll < 0.5:
        rack = rng.choice([*RACKS, None]) if state.racks is not None else None
        state.members[_member_id(rng)] = (_subscription(rng, names, rng.random() < 0.5), rack)
    elif roll < 0.65:
        topic = rng.choice(names)
        grown = state.topics[topic] + rng.randrange(1, 20)
        if state.racks is not None:
            state.racks[topic] += _racks(rng, grown - state.topics[topic])
        state.topics[topic] = grown
    elif roll < 0.8:
        member = rng.choice(list(state.members))
        state.members[member] = (_subscription(rng, names, False), state.members[member][1])
    elif len(state.members) > 1:
        stale, other = rng.sample(list(state.members), 2)
        taken = state.owned.get(other, [])[: rng.randrange(1, 6)]
        state.owned[stale] = list(dict.fromkeys(state.owned.get(stale, []) + taken))
        state.generations[stale] = state.generations.get(stale, 0) - 1


def call(state: State, assignor: str) -> tuple[list[str], Group]:
    """The driver's lines for one call (`bench.java_client.driver_lines`, as the benchmark's
    Java figure sends them), and our group of it: an eager member's previous assignment as a
    leader reads it from its sticky user data (topics in Java's order)."""
    members = []
    for member_id, (topics, rack) in state.members.items():
        owned = state.owned.get(member_id, [])
        generation = state.generations.get(member_id, -1)
        if assignor == "sticky" and (owned or generation != -1):
            sent = encode_sticky_user_data(owned, None if generation == -1 else generation)
            owned = list(decode_sticky_user_data(sent).partitions)
        members.append(Member(member_id, topics, owned=owned, generation=generation, rack=rack,
                              group_instance_id=state.instances.get(member_id)))
    group = Group(dict(state.topics), members, partition_racks=state.racks)
    return [*driver_lines(group, assignor), f"assign {assignor}"], group


def _parsed(line: list[str]) -> dict[str, list[TopicPartition]]:
    found = {}
    for entry in line:
        member, _, tps = entry.partition("=")
        found[member] = [TopicPartition(t, int(p)) for t, _, p in (tp.rpartition(":") for tp in tps.split(",") if tp)]
    return found


def _not_a_plan(group: Group, plan: dict[str, list[TopicPartition]]) -> bool:
    """Whether `plan` gives a member a partition of a topic it does not subscribe to, or gives
    some partition of a subscribed topic to no member or to two."""
    topics = {m.id: set(m.topics) for m in group.members}
    given = [tp for tps in plan.values() for tp in tps]
    wanted = {TopicPartition(t, p) for m in group.members for t in m.topics for p in range(group.topics.get(t, 0))}
    return (any(tp.topic not in topics[m] for m, tps in plan.items() for tp in tps)
            or len(given) != len(set(given)) or set(given) != wanted)


@pytest.mark.parametrize("assignor", sorted(OURS))
def test_our_plans_are_the_java_clients(assignor):
    rng = random.Random(f"java-assignors-{assignor}")
    states = [first_state(rng) for _ in range(SEQUENCES)]
    failures = 0
    for step in range(STEPS):
        calls = [call(state, assignor) for state in states]
        jvm = listed("AssignorCalls", [line for lines, _ in calls for line in lines])
        assert len(jvm) == len(calls)
        for state, (lines, group), theirs in zip(states, calls, jvm, strict=True):
            threw = theirs[0].startswith("!") if theirs else False
            java = {} if threw else _parsed(theirs)
            try:
                ours = {m: list(tps) for m, tps in assign(OURS[assignor], group).assignment.items()}
            except JavaAssignorFailure:  # what Java does there is no plan: it throws, or its plan is not one
                failures += 1
                assert threw or _not_a_plan(group, java), (step, lines, theirs)
            else:
                assert ours == java, (step, lines)
            state.owned = java
            state.generations = dict.fromkeys(java, step + 1)
            changed(rng, state)
    assert failures < SEQUENCES * STEPS // 20, failures


def test_java_never_returns_where_ours_says_it_loops():
    """The group ours refuses as a loop Java never leaves (`test_java_sticky.LOOPING`): the Java
    client's ``StickyAssignor`` has not answered after 15 seconds (it plans groups of this size
    in milliseconds, and ours finds its loop back in the same state after one pass)."""
    import subprocess

    from tests.consumer.test_java_sticky import LOOPING

    with pytest.raises(subprocess.TimeoutExpired):
        listed("AssignorCalls", [*driver_lines(LOOPING, "sticky"), "assign sticky"], timeout=15)


def test_the_benchmarks_java_figure_times_the_java_clients_plan():
    """`bench.java_client.java_time` (the Java column of the benchmark's KIP-54 tables) times
    the Java client's plan of the group: a time, and the loads ours gives that group."""
    from bench.java_client import java_time
    from tests.consumer.test_java_sticky import LOOPING

    group = Group(LOOPING.topics, [m for m in LOOPING.members if m.id != "consumer-310329"])  # (one that ends)
    found = java_time(group, "sticky", runs=2, limit=60)
    loads = sorted(len(tps) for tps in assign("java-sticky", group).assignment.values())
    assert found["seconds"] is not None and found["seconds"] < 60
    assert found["loads"] == f"{loads[0]}-{loads[-1]}"
    assert java_time(LOOPING, "sticky", runs=1, limit=3) == {"seconds": None, "loads": "-"}  # (Java's loop)
