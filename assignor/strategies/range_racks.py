"""Java's ``RangeAssignor`` with racks (KIP-881, Kafka 3.5 and later), as kafka-clients 4.3.1
deals: ``RangeAssignor.assignPartitions`` and its ``TopicAssignmentState``.

A topic is dealt rack-aware when some subscriber has a rack, the subscribers' racks meet its
replicas' racks, and its partitions do not all have the same racks (there, racks could not
help: ``AbstractPartitionAssignor.useRackAwareAssignment``). When any topic is, Java first gives
each subscriber, in range order (static members first), partitions on its rack up to its range
size, topics of the same subscribers and the same partition count together (partition i of each
to one member, so co-partitioned topics stay joined), then deals what is left of every topic in
plain ranges; and it sorts each member's list by topic and partition. When no topic is, the
plan is plain ranges (`range`).

Plain Python over each topic's partitions, as Java's own loops: groups with racks are what
people run across availability zones, not the million-partition benchmarks.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice

import numpy as np

from assignor._arrays import filled
from assignor.model import Group
from assignor.solver import dense

__all__ = ["Subscribers", "rack_owners"]

#: Each topic's subscribers in range order, as `dense.topic_subscribers` gives them:
#: ``(first, count, member)``.
Subscribers = tuple[np.ndarray, np.ndarray, np.ndarray]


class _Topic:
    """One topic's ``TopicAssignmentState``: its subscribers in range order, their racks, each
    partition's replica racks (None: no subscriber has a rack, Java's empty map), what is left
    to deal and how much each subscriber may still take."""

    def __init__(self, index: int, count: int, consumers: list[int], racks: dict[int, str],
                 replicas: list[set[str]] | None) -> None:
        self.index, self.consumers, self.replicas = index, consumers, replicas
        self.rack = {c: racks.get(c) for c in consumers}
        self.unassigned = dict.fromkeys(range(count))  # (an ordered set: Java's LinkedHashSet)
        self.taken = dict.fromkeys(consumers, 0)
        self.per, self.extra = divmod(count, len(consumers))
        consumer_racks = {r for r in self.rack.values() if r is not None}
        every = set().union(*replicas) if replicas else set()
        self.needs_racks = bool(consumer_racks & every) and any(r != every for r in replicas or ())

    def racks_match(self, consumer: int, partition: int) -> bool:
        rack = self.rack[consumer]
        return rack is None or (self.replicas is not None and rack in self.replicas[partition])

    def max_assignable(self, consumer: int) -> int:
        return max(0, self.per + (1 if self.extra > 0 else 0) - self.taken[consumer])

    def assign(self, consumer: int, partitions: list[int], owner: np.ndarray, offset: int) -> None:
        """``RangeAssignor.assign`` and ``onAssigned``."""
        owner[offset + np.array(partitions, dtype=np.int64)] = consumer
        self.taken[consumer] += len(partitions)
        if self.taken[consumer] > self.per:
            self.extra -= 1
        for p in partitions:
            del self.unassigned[p]


def _ranges(topic: _Topic, may_assign: Callable[[int, int], bool], owner: np.ndarray, offset: int) -> None:
    """``assignRanges``: each subscriber in turn takes the first partitions left that it may,
    up to what it may still take."""
    for consumer in topic.consumers:
        if not topic.unassigned:
            break
        limit = topic.max_assignable(consumer)
        found = list(islice((p for p in topic.unassigned if may_assign(consumer, p)), limit)) if limit else []
        if found:
            topic.assign(consumer, found, owner, offset)


def _co_partitioned(consumers: list[int], partitions: int, topics: list[_Topic], owner: np.ndarray,
                    offsets: np.ndarray) -> None:
    """``assignCoPartitionedWithRackMatching``: partition i of every topic to the first
    subscriber left on a rack of all of them that may take one more of each."""
    remaining = list(consumers)
    for p in range(partitions):
        match = next((c for c in remaining
                      if all(t.racks_match(c, p) and t.max_assignable(c) > 0 for t in topics)), None)
        if match is None:
            continue
        for t in topics:
            t.assign(match, [p], owner, int(offsets[t.index]))
        if not any(t.max_assignable(match) > 0 for t in topics):
            remaining.remove(match)
            if not remaining:
                break


def rack_owners(group: Group, layout: dense.Layout, subscribed: Subscribers) -> np.ndarray | None:
    """Each flat partition's owner (member index in layout order) as Java deals a group with
    racks, or None when no topic is dealt by rack (the plan is then plain ranges)."""
    racks = {i: m.rack for i, m in enumerate(layout.members) if m.rack}  # (Java drops an empty rack id)
    if not racks or not group.partition_racks:
        return None
    first, count, member = subscribed
    topics = []
    for index, name in enumerate(layout.topics):
        size = int(layout.counts[index])
        consumers = member[first[index] : first[index] + count[index]].tolist()
        if not size or not consumers:  # (Java deals only subscribed topics with partitions)
            continue
        replicas = None
        if any(c in racks for c in consumers):
            listed = group.partition_racks.get(name, ())
            replicas = [set(listed[p]) if p < len(listed) else set() for p in range(size)]
        topics.append(_Topic(index, size, consumers, racks, replicas))
    if not any(t.needs_racks for t in topics):
        return None
    owner = filled(layout.total, dense.NO_OWNER)
    # Topics of the same subscribers and the same count of partitions (Java counts a topic's
    # replica racks map, empty where no subscriber has a rack) are dealt together.
    alike: dict[tuple[tuple[int, ...], int], list[_Topic]] = {}
    for t in topics:
        alike.setdefault((tuple(t.consumers), len(t.replicas or ())), []).append(t)
    for (consumers, partitions), together in alike.items():
        if len(together) > 1:
            _co_partitioned(list(consumers), partitions, together, owner, layout.offsets)
        elif together[0].needs_racks:
            _ranges(together[0], together[0].racks_match, owner, int(layout.offsets[together[0].index]))
    for t in topics:
        _ranges(t, lambda _consumer, _partition: True, owner, int(layout.offsets[t.index]))
    return owner
