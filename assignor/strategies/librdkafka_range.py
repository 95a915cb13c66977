"""librdkafka's ``range`` and ``roundrobin``: ``librdkafka-range`` and ``librdkafka-roundrobin``,
the plans a librdkafka leader (librdkafka 2.x: ``rd_kafka_range_assignor_assign_cb``,
``rd_kafka_roundrobin_assignor_assign_cb``) sends.

Ports of Java's, they differ from Java's where a group mixes things:

- Members are ordered by ``rd_kafka_group_member_cmp``: two static members by instance id, any
  other two by member id, where Java puts static members first. The broker begins a static
  member's id with its instance id, so this is member id order, static or not.
- ``range`` with racks (KIP-881): topics of the same members and partition count are dealt
  together by rack whether or not any topic needs racks (Java does so only when one does), and
  there a member without a rack takes nothing (in Java it may take any partition); a topic alone
  is dealt by rack when it needs racks, as in Java. What is left goes in plain ranges. An empty
  rack is no rack, as in Java.

Topics are dealt in name order, and each member's partitions listed by topic and partition
(librdkafka's own order within topics dealt together rests on its ``qsort``).
"""

from __future__ import annotations

from functools import cmp_to_key

from assignor.model import Group, Member, Plan, TopicPartition
from assignor.protocols import RANGE, ROUNDROBIN
from assignor.strategies.librdkafka_racks import replica_racks, use_rack_aware_assignment
from assignor.strategies.strategy import Strategy, on_objects

__all__ = ["RANGE_NAME", "RANGE_STRATEGY", "ROUNDROBIN_NAME", "ROUNDROBIN_STRATEGY", "assign_range",
           "assign_roundrobin", "member_order"]

RANGE_NAME = "librdkafka-range"
ROUNDROBIN_NAME = "librdkafka-roundrobin"


def _compared(a: Member, b: Member) -> int:
    """``rd_kafka_group_member_cmp``: by instance id when both are static, else by member id
    (``rd_kafkap_str_cmp``: bytes, then length)."""
    both_static = a.group_instance_id is not None and b.group_instance_id is not None
    x = (a.group_instance_id if both_static else a.id) or ""
    y = (b.group_instance_id if both_static else b.id) or ""
    left, right = x.encode(), y.encode()
    return (left > right) - (left < right)


def member_order(members: list[Member]) -> list[Member]:
    """`members` in librdkafka's order (``rd_list_sort`` with ``rd_kafka_group_member_cmp``).

    Examples
    --------
    >>> [m.id for m in member_order([Member("s-1", ["t"], group_instance_id="s"), Member("a-1", ["t"])])]
    ['a-1', 's-1']
    """
    return sorted(members, key=cmp_to_key(_compared))


def _dealt(group: Group) -> list[str]:
    """The topics dealt (``eligible_topics``), in name order: those with partitions some member
    subscribes to."""
    return sorted(t for t, count in group.topics.items() if count > 0 and any(t in m.topics for m in group.members))


def _listed(group: Group, out: dict[str, list[TopicPartition]]) -> dict[str, list[TopicPartition]]:
    """Each member's partitions, by topic and partition."""
    return {m.id: sorted(out[m.id]) for m in group.members}


class _Topic:
    """``rd_kafka_topic_assignment_state_t``: one topic's subscribers in librdkafka's order,
    its partitions' replica racks, what is left and how much each subscriber may still take."""

    def __init__(self, name: str, count: int, members: list[Member], group: Group) -> None:
        self.name, self.count, self.members = name, count, members
        self.racks = replica_racks(group, name)
        self.unassigned = [True] * count
        self.left = count
        self.per, self.extra = divmod(count, len(members))
        self.taken = {m.id: 0 for m in members}
        self.needs_racks = use_rack_aware_assignment((m.rack for m in members), self.racks)

    def max_assignable(self, member: Member) -> int:
        return self.per + (self.extra > 0) - self.taken[member.id]

    def assign(self, member: Member, partition: int, out: dict[str, list[TopicPartition]]) -> None:
        """``rd_kafka_assign_partition``."""
        out[member.id].append(TopicPartition(self.name, partition))
        self.unassigned[partition] = False
        self.left -= 1
        self.taken[member.id] += 1
        if self.taken[member.id] > self.per:
            self.extra -= 1

    def racks_match(self, member: Member, partition: int) -> bool:
        """``rd_kafka_racks_match``: a member without a rack may take any partition."""
        return not member.rack or member.rack in self.racks[partition]

    def ranges(self, out: dict[str, list[TopicPartition]], by_rack: bool) -> None:
        """``rd_kafka_assign_ranges``: each subscriber in turn takes the first partitions left
        that it may (on its rack, `by_rack`), up to what it may still take."""
        for member in self.members:
            if self.left == 0:
                break
            limit = self.max_assignable(member)
            chosen = []
            for p in range(self.count):
                if limit <= 0:
                    break
                if self.unassigned[p] and (not by_rack or self.racks_match(member, p)):
                    chosen.append(p)
                    limit -= 1
            for p in chosen:
                self.assign(member, p, out)


def _co_partitioned(topics: list[_Topic], out: dict[str, list[TopicPartition]]) -> None:
    """``rd_kafka_assign_co_partitioned``: partition i of every topic to the first subscriber
    with a rack on which all of them have a replica, that may take one more of each."""
    for p in range(topics[0].count):
        found = next((m for m in topics[0].members
                      if all(m.rack and m.rack in t.racks[p] and t.max_assignable(m) > 0 for t in topics)), None)
        if found is not None:
            for t in topics:
                t.assign(found, p, out)


def assign_range(group: Group) -> Plan:
    """``librdkafka-range``: librdkafka's range assignor (``rd_kafka_range_assignor_assign_cb``).

    Examples
    --------
    >>> plan = assign_range(Group({"t": 3}, [Member("s-1", ["t"], group_instance_id="s"), Member("a-1", ["t"])]))
    >>> {m: [tp.partition for tp in tps] for m, tps in plan.assignment.items()}
    {'s-1': [2], 'a-1': [0, 1]}
    """
    out: dict[str, list[TopicPartition]] = {m.id: [] for m in group.members}
    topics = [_Topic(t, group.topics[t], member_order([m for m in group.members if t in m.topics]), group)
              for t in _dealt(group)]
    alike: dict[tuple[tuple[str, ...], int], list[_Topic]] = {}
    for t in topics:  # (topics of the same subscribers and partition count: dealt together)
        alike.setdefault((tuple(m.id for m in t.members), t.count), []).append(t)
    for together in alike.values():
        if len(together) > 1:
            _co_partitioned(together, out)
        elif together[0].needs_racks:
            together[0].ranges(out, by_rack=True)
    for t in topics:
        t.ranges(out, by_rack=False)
    return Plan(RANGE_NAME, _listed(group, out))


def assign_roundrobin(group: Group) -> Plan:
    """``librdkafka-roundrobin``: every partition, topics in name order, to the next member in
    librdkafka's order subscribed to its topic, the turn going on from it across topics.

    Examples
    --------
    >>> plan = assign_roundrobin(Group({"t": 3}, [Member("s-1", ["t"], group_instance_id="s"), Member("a-1", ["t"])]))
    >>> {m: [tp.partition for tp in tps] for m, tps in plan.assignment.items()}
    {'s-1': [1], 'a-1': [0, 2]}
    """
    out: dict[str, list[TopicPartition]] = {m.id: [] for m in group.members}
    members = member_order(list(group.members))
    turn = -1
    for topic in _dealt(group):
        for p in range(group.topics[topic]):
            turn = (turn + 1) % len(members)
            while topic not in members[turn].topics:
                turn = (turn + 1) % len(members)
            out[members[turn].id].append(TopicPartition(topic, p))
    return Plan(ROUNDROBIN_NAME, _listed(group, out))


#: librdkafka's ``range`` and ``roundrobin`` (other clients' algorithms: planned where named).
RANGE_STRATEGY = Strategy(RANGE_NAME, RANGE, assign_range, on_objects(assign_range), peer="librdkafka")
ROUNDROBIN_STRATEGY = Strategy(ROUNDROBIN_NAME, ROUNDROBIN, assign_roundrobin, on_objects(assign_roundrobin),
                               peer="librdkafka")
