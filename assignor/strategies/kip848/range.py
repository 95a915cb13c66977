"""Kafka's broker-side ``range`` assignor (KIP-848; the KAFKA-16944 rewrite), decision for
decision.

It ignores the current assignment. Members are sorted static first, by instance id (KIP-345),
then the others by member id; each topic's partitions are cut into contiguous ranges over its
subscribers in that order, the first ``P % S`` of them getting one extra. In a homogeneous group
every topic is cut over all members, so topics with equal partition counts are co-partitioned.
"""

from __future__ import annotations

from typing import cast

from assignor.errors import JavaAssignorFailure
from assignor.java_hash import JavaHashMap, float_capacity
from assignor.ordering import static_first_order
from assignor.strategies.kip848.coordinator import Assignment, CoordinatorSpec, PartitionSet, topic_hash
from assignor.topic_ids import TopicId

__all__ = ["assign", "sorted_members"]


def sorted_members(spec: CoordinatorSpec) -> list[str]:
    """``RangeAssignor.sortMemberIds``: static members first by instance id, then the rest by
    member id (`ordering.static_first_order`, the client's rule too)."""
    ids = spec.member_ids
    return [ids[i] for i in static_first_order(ids, [spec.instance_ids.get(m) for m in ids])]


class _Topic:
    __slots__ = ("count", "extra", "id", "members", "minimum", "next")

    def __init__(self, topic: TopicId, count: int, members: int) -> None:
        self.id, self.count, self.members = topic, count, members
        self.minimum = self.extra = -1
        self.next = 0

    def take(self, assignment: Assignment) -> None:
        if self.minimum == -1:
            self.minimum, self.extra = divmod(self.count, self.members)
        quota = self.minimum
        if self.extra > 0:
            quota += 1
            self.extra -= 1
        start, end = self.next, min(self.next + quota, self.count)
        self.next = end
        if start < end:
            # Kafka's RangeSet: iterates in ascending order, never altered within a call
            assignment.put(self.id, cast(PartitionSet, range(start, end)))


def _count(spec: CoordinatorSpec, topic: TopicId) -> int:
    count = spec.partitions.get(topic, -1)
    if count == -1:
        raise JavaAssignorFailure("PartitionAssignorException: Member is subscribed to a non-existent topic")
    return count


def assign(spec: CoordinatorSpec) -> dict[str, Assignment]:
    """``RangeAssignor.assign``: each member's new target assignment.

    Raises
    ------
    JavaAssignorFailure
        Where Kafka's assignor throws ``PartitionAssignorException`` (a subscribed topic id the
        metadata lacks).
    """
    if not spec.member_ids:
        return {}
    members = sorted_members(spec)
    found: dict[str, Assignment] = {}
    if spec.homogeneous:
        subscribed = spec.subscriptions[members[0]]
        topics = [_Topic(t, _count(spec, t), len(members)) for t in subscribed]
        for member in members:
            assignment: Assignment = JavaHashMap(topic_hash, float_capacity(len(topics)))
            for topic in topics:
                topic.take(assignment)
            found[member] = assignment
        return found
    by_id: dict[TopicId, _Topic] = {}
    for member in members:
        for t in spec.subscriptions[member]:
            if t not in by_id:
                by_id[t] = _Topic(t, _count(spec, t), 0)
            by_id[t].members += 1
    for member in members:
        subscribed = spec.subscriptions[member]
        assignment = JavaHashMap(topic_hash, float_capacity(len(subscribed)))
        for t in subscribed:
            by_id[t].take(assignment)
        found[member] = assignment
    return found
