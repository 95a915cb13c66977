"""A read-only view of a consumer group, as an assignor or the oracle reads it.

Kafka's broker-side assignors read a group through one narrow interface (KIP-848's
``GroupSpec``: ``memberIds()``, ``memberSubscription(id)``, ``subscriptionType()``, and
``SubscribedTopicDescriber.numPartitions(topic)``), whatever the coordinator keeps behind it.
`GroupSpec` is ours: the object model (`of_objects`, over an `assignor.model.Group`) and the
columns a leader plans on (`assignor.solver.dense.Layout.spec`) both implement it, so the oracle
(`assignor.validate`) checks a plan through one code path whichever form the group came in. A
property test holds the two implementations to the same answers.

Claims and replica racks are not part of the view: the oracle resolves claims with
`assignor.solver.claims` (the rules it checks the strategies against) and reads racks from the
group (KIP-881).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

from assignor.model import Group

__all__ = ["GroupSpec", "SubscriptionType", "of_objects"]

#: KIP-848's ``SubscriptionType``: every member subscribes to the same topics, or not.
SubscriptionType = Literal["homogeneous", "heterogeneous"]


class GroupSpec(Protocol):
    """What an assignor may know of a group: its members, what each subscribes to and its rack,
    and the partition count of each topic with metadata."""

    def member_ids(self) -> Sequence[str]:
        """Every member's id, each once (in the representation's own order)."""
        ...

    def member_subscription(self, member_id: str) -> frozenset[str]:
        """The topics `member_id` subscribes to that have metadata (KeyError: no such member)."""
        ...

    def member_rack(self, member_id: str) -> str | None:
        """The member's rack (KIP-881), None without one (KeyError: no such member)."""
        ...

    def subscription_type(self) -> SubscriptionType:
        """Whether every member subscribes to the same topics (with metadata)."""
        ...

    def topic_names(self) -> frozenset[str]:
        """The topics with metadata, subscribed or not."""
        ...

    def partition_count(self, topic: str) -> int:
        """Partitions of `topic`; 0 for a topic without metadata."""
        ...


class _ObjectsSpec:
    """`GroupSpec` over the object model: one pass over the members, then dictionary look-ups."""

    __slots__ = ("_counts", "_ids", "_racks", "_subscriptions", "_topics")

    def __init__(self, group: Group) -> None:
        counts = group.topics
        self._counts = counts
        self._topics = frozenset(counts)
        self._ids = tuple(m.id for m in group.members)
        self._subscriptions: dict[str, frozenset[str]]
        # Members usually share one topics tuple object (a decoder hands out one per distinct
        # list): intersect each object once. Keyed by identity only while `group` holds them all.
        by_object: dict[int, frozenset[str]] = {}
        self._subscriptions = {}
        for m in group.members:
            found = by_object.get(id(m.topics))
            if found is None:
                found = by_object[id(m.topics)] = self._topics.intersection(m.topics)
            self._subscriptions[m.id] = found
        self._racks = {m.id: m.rack for m in group.members}

    def member_ids(self) -> Sequence[str]:
        return self._ids

    def member_subscription(self, member_id: str) -> frozenset[str]:
        return self._subscriptions[member_id]

    def member_rack(self, member_id: str) -> str | None:
        return self._racks[member_id]

    def subscription_type(self) -> SubscriptionType:
        return "homogeneous" if len(set(self._subscriptions.values())) <= 1 else "heterogeneous"

    def topic_names(self) -> frozenset[str]:
        return self._topics

    def partition_count(self, topic: str) -> int:
        return self._counts.get(topic, 0)


def of_objects(group: Group) -> GroupSpec:
    """The `GroupSpec` of `group` (the object model).

    Examples
    --------
    >>> from assignor.model import Member
    >>> spec = of_objects(Group({"t": 3}, [Member("a", ("t", "gone"))]))
    >>> sorted(spec.member_subscription("a")), spec.partition_count("t"), spec.subscription_type()
    (['t'], 3, 'homogeneous')
    """
    return _ObjectsSpec(group)
