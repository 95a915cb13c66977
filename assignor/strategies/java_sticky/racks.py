"""Java's ``AbstractStickyAssignor.RackInfo`` (KIP-881): which member sits on which rack, and
which racks hold a replica of each partition, when rack-aware assignment applies."""

from __future__ import annotations

from collections.abc import Sequence

from assignor.model import Group, Member, TopicPartition

__all__ = ["RackInfo"]


class RackInfo:
    """Rack facts the builders consult.

    Attributes
    ----------
    member_rack : dict of str to str
        Members' racks; empty unless rack-aware assignment applies.
    partition_racks : dict of TopicPartition to frozenset of str
        Replica racks per partition; empty unless rack-aware assignment applies.
    members_near : dict of TopicPartition to int
        Per partition, how many members sit on one of its replicas' racks. Java fills this
        whenever some member names a rack, even when rack-aware assignment does not apply, and
        the constrained builder then orders unassigned partitions by it.
    """

    def __init__(self, group: Group, topics: dict[str, int], members: Sequence[Member]) -> None:
        by_rack: dict[str, list[str]] = {}
        for member in members:
            if member.rack:  # Java ignores an empty rack id
                by_rack.setdefault(member.rack, []).append(member.id)
        racks_of: dict[TopicPartition, frozenset[str]] = {}
        replica_racks: set[str] = set()
        if by_rack:
            known = group.partition_racks or {}
            for topic, count in topics.items():
                rows = known.get(topic, ())
                for p in range(count):
                    racks = frozenset(rows[p]) if p < len(rows) else frozenset()
                    racks_of[TopicPartition(topic, p)] = racks
                    replica_racks.update(racks)
        applies = bool(by_rack) and not replica_racks.isdisjoint(by_rack) and not all(
            racks == replica_racks for racks in racks_of.values())
        self.member_rack: dict[str, str] = (
            {m: rack for rack, ids in by_rack.items() for m in ids} if applies else {})
        self.partition_racks: dict[TopicPartition, frozenset[str]] = racks_of if applies else {}
        self.members_near: dict[TopicPartition, int] = {
            tp: sum(len(by_rack.get(rack, ())) for rack in racks) for tp, racks in racks_of.items()}

    def mismatch(self, member: str, tp: TopicPartition) -> bool:
        """Java's ``racksMismatch``: the member has a rack and no replica of `tp` is on it."""
        rack = self.member_rack.get(member)
        if rack is None:
            return False
        racks = self.partition_racks.get(tp)
        return racks is None or rack not in racks

    def by_members_near(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        """Java's ``sortPartitionsByRackConsumers``: fewest nearby members first (stable)."""
        if not self.members_near:
            return partitions
        near = self.members_near
        return sorted(partitions, key=lambda tp: near.get(tp, 0))

    def next_near(self, tp: TopicPartition, members: list[str], first: int) -> int:
        """Java's ``nextRackConsumer``: the index in `members`, from `first` round the list, of
        the first member on a rack with a replica of `tp`; -1 when none."""
        racks = self.partition_racks.get(tp)
        if not racks:
            return -1
        for i in range(len(members)):
            index = (first + i) % len(members)
            rack = self.member_rack.get(members[index])
            if rack is not None and rack in racks:
                return index
        return -1
