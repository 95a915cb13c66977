"""`kip848-uniform` and `kip848-range` against the broker's own assignors (kafka-group-coordinator
4.3.1's ``UniformAssignor`` and ``RangeAssignor``, called in a JVM as ``TargetAssignmentBuilder``
calls them: ``jvm/src/Kip848Calls.java``), on random groups target after target: each member's
new target equal, partition for partition, in the order the coordinator would write its record.

Recorded calls and the broker's logged targets (`test_kip848_broker.py`) hold the model on the
groups they saw; here the groups are drawn: members of one subscription and of many, members
leaving, joining and changing their subscriptions, topics growing, static members, topic ids
sharing the low bits of their hashes, and groups converted from a classic round-robin plan (each
member holding every n-th partition: the bins Java makes red-black trees). Each sequence carries
the broker's target into the next call."""

from __future__ import annotations

import base64
import random
from dataclasses import dataclass, field

import pytest

from assignor import Group, Member, TopicPartition, assign
from assignor.topic_ids import TopicId
from tests.jvm_driver import listed

pytestmark = pytest.mark.external

SEQUENCES, STEPS = 60, 5


@dataclass
class State:
    """One sequence's group between targets: topics and their ids, members in the member map's
    order with (subscription, instance id), and each one's current target in record order."""

    topics: dict[str, int]
    ids: dict[str, TopicId]
    members: dict[str, tuple[list[str], str | None]]
    targets: dict[str, list[TopicPartition]] = field(default_factory=dict)


def _member_id(rng: random.Random) -> str:
    """As Kafka's ``Uuid.randomUuid().toString()`` looks (what a consumer-protocol member sends)."""
    return base64.urlsafe_b64encode(rng.randbytes(16)).decode().rstrip("=")


def _topic_id(rng: random.Random, low: int | None) -> TopicId:
    """A random id, or (`low`) one whose hash shares its low six bits with the others'."""
    from assignor.java_hash import spread
    from assignor.strategies.kip848.coordinator import topic_hash

    while True:
        found = TopicId(rng.randrange(-(1 << 63), 1 << 63), rng.randrange(-(1 << 63), 1 << 63))
        if low is None or spread(topic_hash(found)) & 63 == low:
            return found


def _subscription(rng: random.Random, topics: list[str], alike: bool) -> list[str]:
    return list(topics) if alike else rng.sample(topics, rng.randrange(1, len(topics) + 1))


def first_state(rng: random.Random) -> State:
    converted = rng.random() < 0.3  # a classic round-robin group carried over: strided targets
    names = [f"topic-{i}" for i in range(rng.randrange(1, 4 if converted else 12))]
    low = rng.randrange(64) if rng.random() < 0.3 else None
    topics = {t: rng.choice([320, 640, 1000]) if converted else rng.randrange(1, 64) for t in names}
    ids = {t: _topic_id(rng, low) for t in names}
    alike = converted or rng.random() < 0.5
    members = {_member_id(rng): (_subscription(rng, names, alike),
                                 f"instance-{i}" if rng.random() < 0.15 else None)
               for i in range(rng.choice([8, 16, 32]) if converted else rng.randrange(1, 20))}
    state = State(topics, ids, members)
    if converted:
        plan = assign("roundrobin", _group(state))
        state.targets = {m: _grouped(tps) for m, tps in plan.assignment.items()}
    return state


def _grouped(tps: list[TopicPartition]) -> list[TopicPartition]:
    """`tps` as a target record lists them: topic by topic, in order of first appearance."""
    by_topic: dict[str, list[TopicPartition]] = {}
    for tp in tps:
        by_topic.setdefault(tp.topic, []).append(tp)
    return [tp for run in by_topic.values() for tp in run]


def changed(rng: random.Random, state: State) -> None:
    """What the next target follows: a member leaves, joins (last in the member map), changes
    its subscription, or a topic grows."""
    names = list(state.topics)
    roll = rng.random()
    if roll < 0.3 and len(state.members) > 1:
        gone = rng.choice(list(state.members))
        del state.members[gone]
        state.targets.pop(gone, None)
    elif roll < 0.6:
        state.members[_member_id(rng)] = (_subscription(rng, names, rng.random() < 0.6), None)
    elif roll < 0.8:
        member = rng.choice(list(state.members))
        state.members[member] = (_subscription(rng, names, False), state.members[member][1])
    else:
        topic = rng.choice(names)
        state.topics[topic] += rng.randrange(1, 40)


def _group(state: State) -> Group:
    return Group(dict(state.topics), [Member(m, topics, owned=state.targets.get(m, []), group_instance_id=instance)
                                      for m, (topics, instance) in state.members.items()],
                 topic_ids={t: str(i) for t, i in state.ids.items()})


def call(state: State, assignor: str) -> list[str]:
    lines = [f"topic {t} {state.ids[t]} {n}" for t, n in state.topics.items()]
    for member, (topics, instance) in state.members.items():
        runs: dict[str, list[int]] = {}
        for tp in state.targets.get(member, []):
            runs.setdefault(tp.topic, []).append(tp.partition)
        target = ",".join(f"{state.ids[t]}:{'+'.join(map(str, ps))}" for t, ps in runs.items()) or "-"
        lines.append(f"member {member} {instance or '-'} - {','.join(topics)} {target}")
    lines.append(f"assign {assignor}")
    return lines


def _parsed(line: list[str], names: dict[str, str]) -> dict[str, list[TopicPartition]]:
    found = {}
    for entry in line:
        member, _, runs = entry.partition("=")
        found[member] = [TopicPartition(names[topic], int(p)) for run in runs.split(",") if run
                         for topic, _, ps in [run.partition(":")] for p in ps.split("+")]
    return found


@pytest.mark.parametrize("assignor", ["range", "uniform"])
def test_our_targets_are_the_brokers(assignor):
    rng = random.Random(f"kip848-assignors-{assignor}")
    states = [first_state(rng) for _ in range(SEQUENCES)]
    for step in range(STEPS):
        calls = [call(state, assignor) for state in states]
        jvm = listed("Kip848Calls", [line for lines in calls for line in lines])
        assert len(jvm) == len(calls)
        for state, lines, theirs in zip(states, calls, jvm, strict=True):
            assert not (theirs and theirs[0].startswith("!")), (step, lines, theirs)
            broker = _parsed(theirs, {str(i): t for t, i in state.ids.items()})
            ours = assign(f"kip848-{assignor}", _group(state)).assignment
            assert {m: list(ours.get(m, [])) for m in broker} == broker, (step, lines)
            state.targets = broker
            changed(rng, state)
