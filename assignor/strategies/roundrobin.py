"""The ``roundrobin`` strategy, exactly as Java's RoundRobinAssignor.

All partitions of subscribed topics, topics sorted, are dealt in turn over the members sorted by
id; a member not subscribed to the partition's topic is skipped and the deal goes on from the
member after the one that took the partition.
"""

from __future__ import annotations

from assignor._layout import java_sorted, topic_partitions
from assignor.model import Group, Plan

__all__ = ["assign"]

NAME = "roundrobin"


def assign(group: Group) -> Plan:
    """Deal partitions over members in turn, skipping members not subscribed to the topic.

    Examples
    --------
    >>> from assignor import Group, Member
    >>> plan = assign(Group(topics={"t0": 1, "t1": 2},
    ...                     members=[Member("a", ["t0"]), Member("b", ["t0", "t1"])]))
    >>> {m: [tuple(tp) for tp in tps] for m, tps in plan.assignment.items()}
    {'a': [('t0', 0)], 'b': [('t1', 0), ('t1', 1)]}
    """
    members = java_sorted(m.id for m in group.members)
    subscribed = {m.id: set(m.topics) for m in group.members}
    names: dict[str, list[str]] = {m: [] for m in members}
    parts: dict[str, list[int]] = {m: [] for m in members}
    wanted = set().union(*subscribed.values()) if subscribed else set()
    topics = [t for t in java_sorted(group.topics) if t in wanted]
    turn = 0
    for topic in topics:
        for partition in range(group.topics[topic]):
            while topic not in subscribed[members[turn]]:
                turn = (turn + 1) % len(members)
            names[members[turn]].append(topic)
            parts[members[turn]].append(partition)
            turn = (turn + 1) % len(members)
    return Plan(NAME, {m: topic_partitions(names[m], parts[m]) for m in members})
