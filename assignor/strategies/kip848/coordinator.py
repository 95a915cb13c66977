"""The group as the broker's assignors read it: Kafka's ``GroupSpec`` and
``SubscribedTopicDescriber``, as plain data built the way the group coordinator builds them.

The coordinator keeps members in a ``HashMap<String, ...>`` filled in the order they joined, so
the assignors walk members in Java ``HashMap`` order of their ids; each member's current target
assignment is a ``HashMap<Uuid, Set<Integer>>`` filled in record order with ``HashSet`` values
(``Assignment.fromRecord``). The subscription type is HOMOGENEOUS when every subscribed topic
name, existing or not, has as many subscribers as the group has members
(``ModernGroup.subscriptionType``); topics the cluster does not have are left out of the ids the
assignors see (``TopicIds`` resolves names through the metadata image).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from assignor.java_hash import JavaHashMap, integer_hash, spread_many
from assignor.model import Group
from assignor.ordering import hashmap_order
from assignor.topic_ids import TopicId, topic_ids_of

__all__ = ["Assignment", "CoordinatorSpec", "PartitionSet", "group_spec", "is_homogeneous", "new_partition_set",
           "spread_topic_hashes", "subscription_order", "topic_hash"]

#: One member's assignment: topic id -> partitions (``Map<Uuid, Set<Integer>>``).
PartitionSet = JavaHashMap[int, None]
T = TypeVar("T")
Assignment = JavaHashMap[TopicId, PartitionSet]


def topic_hash(topic: TopicId) -> int:
    return topic.java_hash()


def spread_topic_hashes(topics: Iterable[TopicId]) -> np.ndarray:
    """Each topic id's ``Uuid.hashCode``, spread as a ``HashMap`` spreads it (for the columnar
    paths' bucket arithmetic)."""
    ids = list(topics)
    msb = np.fromiter((t.msb for t in ids), dtype=np.int64, count=len(ids))
    lsb = np.fromiter((t.lsb for t in ids), dtype=np.int64, count=len(ids))
    x = (msb ^ lsb).view(np.uint64)
    hashes = ((x >> np.uint64(32)) ^ x) & np.uint64(0xFFFFFFFF)  # Uuid.hashCode, as `TopicId.java_hash`
    return spread_many(hashes.astype(np.int64))


def new_partition_set(partitions: Iterable[int], linked: bool = False) -> PartitionSet:
    """``new HashSet<>(partitions)``."""
    return JavaHashMap.copy_of(partitions, integer_hash, linked)


@dataclass
class CoordinatorSpec:
    """What the assignors read.

    Attributes
    ----------
    member_ids : list of str
        ``groupSpec.memberIds()``: the member map's iteration order.
    subscriptions : dict of str to list of TopicId
        Each member's subscribed topic ids that exist, in the order its set iterates.
    instance_ids : dict of str to str or None
        Static members' instance ids (KIP-345).
    assignments : dict of str to Assignment
        Each member's current target assignment.
    homogeneous : bool
        The subscription type.
    partitions : dict of TopicId to int
        ``numPartitions`` of every topic the cluster has.
    names : dict of TopicId to str
        Topic names by id.
    """

    member_ids: list[str]
    subscriptions: dict[str, list[TopicId]]
    instance_ids: dict[str, str | None]
    assignments: dict[str, Assignment]
    homogeneous: bool
    partitions: dict[TopicId, int]
    names: dict[TopicId, str]


def subscription_order(topics: Sequence[str], ids: Mapping[str, T]) -> list[T]:
    """A member's subscribed topics (each as `ids` names it) in the order they iterate: the
    order its subscription lists the names (the reference recordings list them so), each once;
    names the cluster lacks are skipped, as the coordinator's TopicIds view skips names the
    metadata image does not resolve."""
    return [ids[name] for name in dict.fromkeys(topics) if name in ids]


def is_homogeneous(subscriptions: Iterable[tuple[Sequence[str], int]], members: int) -> bool:
    """``ModernGroup.subscriptionType`` from each distinct subscription with its count of
    members: HOMOGENEOUS when every subscribed name, existing or not, has every member as a
    subscriber."""
    subscribers: Counter[str] = Counter()
    for topics, count in subscriptions:
        for name in set(topics):
            subscribers[name] += count
    return all(n == members for n in subscribers.values())


def group_spec(group: Group, topic_ids: Mapping[str, str] | None = None,
               instance_ids: Mapping[str, str | None] | None = None,
               member_order: Sequence[str] | None = None, linked: bool = False,
               read_owned: bool = True) -> CoordinatorSpec:
    """The coordinator's view of `group`: members in ``HashMap`` order of their ids (or
    `member_order`), each member's ``owned`` as its current target assignment in record order.

    Claims no coordinator could hold are left out: partitions of topics the cluster lacks or
    past a topic's count, and a partition a member earlier in the group's order already holds.
    `member_order` and `linked` (each current assignment a ``LinkedHashMap``) replay Kafka's unit
    tests, which build their groups that way. `read_owned`: False for an assignor that never
    reads the current assignment (``range``): each member's is then left empty.
    """
    ids = topic_ids_of(group.topics, topic_ids if topic_ids is not None else group.topic_ids)
    counts = {ids[name]: count for name, count in group.topics.items()}
    names = {topic: name for name, topic in ids.items()}
    # members mostly share a few subscriptions: the work is per distinct one
    distinct = Counter(tuple(m.topics) for m in group.members)
    homogeneous = is_homogeneous(distinct.items(), len(group.members))
    resolved = {topics: subscription_order(topics, ids) for topics in distinct}
    taken: set[tuple[str, int]] = set()
    assignments: dict[str, Assignment] = {}
    for member in group.members:
        per_topic: dict[str, list[int]] = {}
        for tp in member.owned if read_owned else ():
            if not isinstance(tp, tuple | list) or len(tp) != 2:
                continue
            topic, partition = tp
            count = group.topics.get(topic) if isinstance(topic, str) else None
            if (count is None or type(partition) is not int or not 0 <= partition < count
                    or (topic, partition) in taken):
                continue
            taken.add((topic, partition))
            per_topic.setdefault(topic, []).append(partition)
        current: Assignment = JavaHashMap(topic_hash, linked=linked)
        for name, partitions in per_topic.items():
            current.put(ids[name], new_partition_set(partitions))
        assignments[member.id] = current
    order = list(member_order) if member_order is not None else hashmap_order([m.id for m in group.members])
    return CoordinatorSpec(
        member_ids=order,
        subscriptions={m.id: resolved[tuple(m.topics)] for m in group.members},
        # Static members' instance ids (KIP-345): the members' own, or those a test replays.
        instance_ids=dict(instance_ids) if instance_ids is not None else
        {m.id: m.group_instance_id for m in group.members if m.group_instance_id is not None},
        assignments=assignments,
        homogeneous=homogeneous,
        partitions=counts,
        names=names,
    )
