"""The ``range`` strategy, exactly as Java's ``RangeAssignor`` (kafka-clients 4.3.1).

Per topic, the subscribers sorted as Java sorts them (static members first by instance id, then
the others by member id: `ordering.static_first_order`) get consecutive ranges; the first
``partitions % subscribers`` of them get one extra partition. With racks on members and
replicas (KIP-881), Java first deals partitions on each member's rack (`range_racks`).

Each member's partitions are listed in Java's order: topic by topic in the order Java's
``HashMap`` of topics iterates (``AbstractPartitionAssignor.assign`` fills it from a
``HashSet`` of every member's topics, members in the leader's ``HashMap`` order of their ids),
or, once racks were dealt, sorted by topic and partition (``assignPartitions`` sorts them).
"""

from __future__ import annotations

import numpy as np

from assignor._arrays import filled, ranges, stable_order
from assignor.model import Claims, Group, Plan
from assignor.ordering import hashmap_order
from assignor.protocols import RANGE
from assignor.solver import dense
from assignor.strategies.range_racks import Subscribers, rack_owners
from assignor.strategies.strategy import Planned, Strategy

__all__ = ["STRATEGY", "assign", "java_topic_order"]


def assign(group: Group) -> Plan:
    """Assign each topic's partitions in ranges over its subscribers.

    Examples
    --------
    >>> from assignor import Group, Member
    >>> plan = assign(Group(topics={"t": 3}, members=[Member("b", ["t"]), Member("a", ["t"])]))
    >>> [(m, [tp.partition for tp in tps]) for m, tps in plan.assignment.items()]
    [('a', [0, 1]), ('b', [2])]
    """
    return _planned(group).plan(STRATEGY.name)


def _ranges(layout: dense.Layout, subscribed: Subscribers) -> np.ndarray:
    """Each flat partition's owner in plain ranges (`subscribed`: each topic's subscribers in
    Java's order, ``MemberInfo``'s: static members first)."""
    first, subscribers, member = subscribed
    flat_topic = layout.topic_of_flat()
    n = subscribers[flat_topic]
    partition = layout.partition_of_flat()
    per_member, extra = np.divmod(layout.counts[flat_topic], np.maximum(n, 1))
    # The first `extra` subscribers hold per_member + 1 partitions, the others per_member.
    in_long = partition < extra * (per_member + 1)
    rank = np.where(in_long, partition // (per_member + 1),
                    extra + (partition - extra * (per_member + 1)) // np.maximum(per_member, 1))
    owner = filled(layout.total, dense.NO_OWNER)
    has = n > 0
    owner[has] = member[first[flat_topic[has]] + rank[has]]
    return owner


def java_topic_order(group: Group) -> list[str]:
    """The topics Java deals, in the order its ``HashMap`` of them iterates: each topic a
    member subscribes to, once, members in the leader's ``HashMap`` order of their ids, into a
    ``HashSet``; from it, those with partitions into the ``HashMap``."""
    by_id = {m.id: m for m in group.members}
    # (each distinct subscription once, in the order of its first member: the same first sightings)
    subscriptions = dict.fromkeys(tuple(by_id[m].topics) for m in hashmap_order(list(by_id)))
    subscribed = hashmap_order(list(dict.fromkeys(t for topics in subscriptions for t in topics)))
    return hashmap_order([t for t in subscribed if group.topics.get(t, 0) > 0])


def _planned(group: Group, claims: Claims | None = None, memo: dense.PlanMemo | None = None,
             _leader: object = None) -> Planned:
    """The plan on arrays, each member's partitions in Java's order: flat order (by topic, then
    partition) where racks were dealt, or where Java's topic order is the topics' sorted order;
    else topic by topic in Java's order."""
    layout = dense.build(group, Claims.empty(), memo)
    subscribed = dense.topic_subscribers(layout, dense.static_first_ranks(layout))
    by_rack = rack_owners(group, layout, subscribed)
    if by_rack is not None:
        return Planned(layout, by_rack)
    owner = _ranges(layout, subscribed)
    index = layout.topic_index()
    order = [index[t] for t in java_topic_order(group)]
    if order == sorted(order):
        return Planned(layout, owner)
    dealt = np.array(order, dtype=np.int64)
    in_order = ranges(layout.offsets[dealt], layout.counts[dealt])  # flat partitions, topics in Java's order
    rows = in_order[stable_order(owner[in_order])]  # (every partition of a dealt topic has an owner)
    topic = layout.topic_of_flat()[rows]
    return Planned(layout, owner, Claims(owner[rows], topic, rows - layout.offsets[topic], layout.topics))


STRATEGY = Strategy(RANGE.name, RANGE, assign, _planned)
