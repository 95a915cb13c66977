"""The assertions the peers' sticky test suites make, in our words, for the translated cases
(`test_peer_sticky_suite.py`): Java's ``verifyValidityAndBalance`` and ``isFullyBalanced``, the
cooperative follow-up rounds of ``CooperativeStickyAssignorTest``, and ``isSticky`` (no cycle of
moves within a topic)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from assignor import Group, Member, TopicPartition, assign, validate

STICKY = ["sticky", "cooperative-sticky", "java-sticky", "java-cooperative-sticky"]
JAVA = {"java-sticky", "java-cooperative-sticky"}
COOPERATIVE = {"cooperative-sticky", "java-cooperative-sticky"}
EAGER_OF = {"java-cooperative-sticky": "java-sticky", "cooperative-sticky": "sticky"}
GENERATION = 1  # the generation Java's cases give every member that owns something

Assignment = dict[str, list[TopicPartition]]

# The racks of Java's ``RackConfig``: three broker racks and replication factor 3, so every
# partition has a replica on every rack; consumer i on ``"abc"[i % 3]`` when consumers have racks.
RACK_CONFIGS = ["no-broker-rack", "no-consumer-rack", "broker-and-consumer-rack"]


def tp(name: str) -> TopicPartition:
    topic, partition = name.rsplit("-", 1)
    return TopicPartition(topic, int(partition))


def tps(names: str) -> list[TopicPartition]:
    """``"t1-0, t2-3"`` as partitions, in that order."""
    return [tp(n.strip()) for n in names.split(",") if n.strip()]


def racked(topics: Mapping[str, int], members: Sequence[Member], config: str) -> Group:
    """The group as Java's test builds it under one ``RackConfig`` (members indexed in order)."""
    consumer_racks = config != "no-consumer-rack"
    broker_racks = config != "no-broker-rack"
    people = [Member(m.id, m.topics, m.owned, m.generation, "abc"[i % 3] if consumer_racks else None)
              for i, m in enumerate(members)]
    racks = {t: [["a", "b", "c"]] * n for t, n in topics.items()} if broker_racks else None
    return Group(dict(topics), people, racks)


def java_valid_and_balanced(group: Group, assignment: Mapping[str, Sequence[TopicPartition]]) -> None:
    """Java's ``verifyValidityAndBalance``: every member has an answer and only partitions of its
    topics, no partition twice, and two members whose loads differ by more than one share no
    topic in what they were given (else a partition could have moved to the lighter one)."""
    subscribed = {m.id: set(m.topics) for m in group.members}
    assert set(assignment) == set(subscribed)
    seen: set[TopicPartition] = set()
    for member, partitions in assignment.items():
        for p in partitions:
            assert p.topic in subscribed[member], (member, p)
            assert p not in seen, p
            seen.add(p)
    members = sorted(assignment)
    for i, a in enumerate(members):
        for b in members[i + 1:]:
            if abs(len(assignment[a]) - len(assignment[b])) > 1:
                shared = {p.topic for p in assignment[a]} & {p.topic for p in assignment[b]}
                assert not shared, f"{a} ({len(assignment[a])}) and {b} ({len(assignment[b])}) share {shared}"


def fully_balanced(assignment: Mapping[str, Sequence[TopicPartition]]) -> bool:
    sizes = [len(p) for p in assignment.values()]
    return max(sizes) - min(sizes) <= 1


def sticky_moves(group: Group, assignment: Mapping[str, Sequence[TopicPartition]]) -> bool:
    """Java's ``isSticky``: among partitions that moved from a member still in the group, no
    topic's moves form a cycle (a partition from a to b and another of the same topic from b
    back to a is a pointless exchange)."""
    previous = {p: m.id for m in group.members for p in m.owned}
    edges: dict[str, set[tuple[str, str]]] = {}
    for member, partitions in assignment.items():
        for p in partitions:
            before = previous.get(p)
            if before is not None and before != member and before in assignment:
                edges.setdefault(p.topic, set()).add((before, member))
    for pairs in edges.values():
        graph: dict[str, set[str]] = {}
        for a, b in pairs:
            graph.setdefault(a, set()).add(b)
        state: dict[str, int] = {}

        def cyclic(node: str) -> bool:
            state[node] = 1
            for nxt in graph.get(node, ()):
                if state.get(nxt) == 1 or (nxt not in state and cyclic(nxt)):
                    return True
            state[node] = 2
            return False

        if any(node not in state and cyclic(node) for node in list(graph)):
            return False
    return True


def moved(group: Group, assignment: Mapping[str, Sequence[TopicPartition]]) -> int:
    """Partitions taken from a member that stays and still subscribes to their topic."""
    kept = {m.id: set(assignment.get(m.id, ())) for m in group.members}
    return sum(1 for m in group.members for p in m.owned
               if p.topic in m.topics and p.topic in group.topics and p.partition < group.topics[p.topic]
               and p not in kept[m.id])


def owning(group: Group, assignment: Mapping[str, Sequence[TopicPartition]],
           generation: int = GENERATION) -> Group:
    """The next rebalance's group: each member owns what it was given."""
    return Group(group.topics, [Member(m.id, m.topics, list(assignment[m.id]), generation, m.rack)
                                for m in group.members], group.partition_racks)


def first_round(strategy: str, group: Group) -> Assignment:
    """One plan, valid by the oracle. Ours never hands a partition to a member while another
    still claims it; Java's cooperative leader is held to its own suite's weaker rule (no
    partition both added to one member and revoked from another): Java lets a claimant of a
    lower generation keep a partition that a higher one also claims."""
    plan = assign(strategy, group)
    report = validate.report(group, plan)
    assert report["valid"], report["errors"]
    assignment = {m: list(p) for m, p in plan.assignment.items()}
    if strategy not in JAVA:
        assert report["unsafe_handovers"] == 0, report["flags"]
    elif strategy in COOPERATIVE:
        added = {p for m in group.members for p in assignment[m.id] if p not in set(m.owned)}
        revoked = {p for m in group.members for p in m.owned if p not in set(assignment[m.id])}
        assert not added & revoked, added & revoked
    return assignment


def transferring(strategy: str, group: Group) -> dict[TopicPartition, str]:
    """Java's ``partitionsTransferringOwnership`` for a cooperative strategy: what the eager
    plan gives a new owner and the cooperative plan withholds for a second round."""
    eager = assign(EAGER_OF[strategy], group).assignment
    held = {p for ps in assign(strategy, group).assignment.values() for p in ps}
    return {p: m for m, ps in eager.items() for p in ps if p not in held}


def settle(strategy: str, group: Group) -> tuple[Group, Assignment]:
    """One rebalance as Java's suites verify it: a cooperative strategy rebalances again while it
    revoked something (``CooperativeStickyAssignorTest.verifyValidityAndBalance``, at most 4
    follow-ups); returns the group of the last round and its assignment."""
    assignment = first_round(strategy, group)
    rounds = 0
    while strategy in COOPERATIVE and _revoked(group, assignment):
        group = owning(group, assignment)
        assignment = first_round(strategy, group)
        rounds += 1
        assert rounds <= 4
    java_valid_and_balanced(group, assignment)
    return group, assignment


def _revoked(group: Group, assignment: Mapping[str, Sequence[TopicPartition]]) -> bool:
    return any(p not in set(assignment.get(m.id, ())) for m in group.members for p in m.owned)
