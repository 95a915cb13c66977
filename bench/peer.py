"""aiokafka's StickyPartitionAssignor driven with the same groups as ours (the peer)."""

from __future__ import annotations

from collections import defaultdict

from assignor import Group, Plan, TopicPartition


class _Cluster:
    """The two ClusterMetadata calls the assignor makes, over fixed partition counts."""

    def __init__(self, topics: dict[str, int]):
        self._topics = topics

    def topics(self):
        return set(self._topics)

    def partitions_for_topic(self, topic):
        count = self._topics.get(topic)
        return None if count is None else set(range(count))


def aiokafka_sticky(group: Group) -> Plan:
    """Plan with aiokafka's assignor, previous ownership sent as its V1 user data."""
    from aiokafka.coordinator.assignors.sticky.sticky_assignor import (
        StickyAssignorUserDataV1,
        StickyPartitionAssignor,
    )
    from aiokafka.coordinator.protocol import ConsumerProtocolMemberMetadata

    members = {}
    for member in group.members:
        user_data = b""
        if member.owned:
            by_topic = defaultdict(list)
            for tp in member.owned:
                by_topic[tp.topic].append(tp.partition)
            user_data = StickyAssignorUserDataV1(list(by_topic.items()), member.generation).encode()
        members[member.id] = ConsumerProtocolMemberMetadata(0, list(member.topics), user_data)
    result = StickyPartitionAssignor.assign(_Cluster(dict(group.topics)), members)
    return Plan("sticky", {m: [TopicPartition(t, p) for t, ps in a.assignment for p in ps]
                           for m, a in result.items()})
