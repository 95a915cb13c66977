"""The ``range`` strategy, exactly as Java's RangeAssignor (without racks).

Per topic, the subscribers sorted by member id get consecutive ranges; the first
``partitions % subscribers`` of them get one extra partition.
"""

from __future__ import annotations

from assignor._layout import java_sorted, topic_partitions
from assignor.model import Group, Plan

__all__ = ["assign"]

NAME = "range"


def assign(group: Group) -> Plan:
    """Assign each topic's partitions in ranges over its subscribers.

    Examples
    --------
    >>> from assignor import Group, Member
    >>> plan = assign(Group(topics={"t": 3}, members=[Member("b", ["t"]), Member("a", ["t"])]))
    >>> [(m, [tp.partition for tp in tps]) for m, tps in plan.assignment.items()]
    [('a', [0, 1]), ('b', [2])]
    """
    members = java_sorted(m.id for m in group.members)
    subscribers_of = _subscribers(group, members)
    names: dict[str, list[str]] = {m: [] for m in members}
    parts: dict[str, list[int]] = {m: [] for m in members}
    for topic in java_sorted(group.topics):
        subscribers = subscribers_of.get(topic, [])
        if not subscribers:
            continue
        per_member, extra = divmod(group.topics[topic], len(subscribers))
        for i, member in enumerate(subscribers):
            start = per_member * i + min(i, extra)
            length = per_member + (1 if i < extra else 0)
            names[member].extend([topic] * length)
            parts[member].extend(range(start, start + length))
    return Plan(NAME, {m: topic_partitions(names[m], parts[m]) for m in members})


def _subscribers(group: Group, members: list[str]) -> dict[str, list[str]]:
    """Topic -> its subscribers in member order (each topic once per member)."""
    topics_of = {m.id: set(m.topics) for m in group.members}
    out: dict[str, list[str]] = {}
    for member in members:
        for topic in topics_of[member]:
            out.setdefault(topic, []).append(member)
    return out
