"""librdkafka's sticky assignor written list for list as ``rdkafka_sticky_assignor.c`` keeps
its lists (every member's potential partitions, every partition's potential members, one
partition at a time): slow on large groups, and the reference
`assignor.strategies.librdkafka_sticky`, which reads those lists from each topic's subscribers
and keeps its members sorted as loads change, is held to by a property test."""

from __future__ import annotations

from assignor.errors import LibrdkafkaAssignorFailure
from assignor.model import Group, TopicPartition
from assignor.strategies.librdkafka_sticky import Partition, _Movements, _rack_info, _score, eligible_topics


def assign_sticky(group: Group) -> dict[str, list[TopicPartition]]:
    """`librdkafka_sticky.assign_sticky`, list for list."""
    found = _Assignor(group).run() if group.members else {}
    return {m.id: list(found.get(m.id, [])) for m in group.members}


class _Assignor:
    """One run of ``rd_kafka_sticky_assignor_assign_cb``, its maps as dicts (iterated newest
    first where librdkafka iterates an ``rd_map_t``) and its lists as lists."""

    def __init__(self, group: Group) -> None:
        self.group = group
        members = group.members
        self.topics = eligible_topics(group)  # (librdkafka's, as its Metadata response lists them)
        self.subscribers = {t: [m.id for m in members if t in m.topics] for t in self.topics}
        self.racks = _rack_info(group, self.topics, self.subscribers)
        self.subscriptions = {m.id: set(m.topics) for m in members}
        self.current: dict[str, list[Partition]] = {}
        self.previous: dict[Partition, tuple[str, int]] = {}
        self.owner: dict[Partition, str] = {}  # currentPartitionConsumer
        self.potential: dict[str, list[Partition]] = {}  # consumer2AllPotentialPartitions
        self.may_take: dict[str, set[Partition]] = {}
        self.takers: dict[Partition, list[str]] = {}  # partition2AllPotentialConsumers
        self.movements = _Movements()
        self.by_load: list[str] = []  # sortedCurrentSubscriptions

    def run(self) -> dict[str, list[Partition]]:
        self._prepopulate()
        fresh = not self.current
        self._potential()
        ordered = self._sort_partitions(fresh)
        unassigned = list(ordered)
        revocation_required = False
        for member, partitions in reversed(list(self.current.items())):
            i = 0
            while i < len(partitions):
                tp = partitions[i]
                if tp not in self.takers:  # (a partition that no longer exists)
                    del partitions[i]
                    self.owner.pop(tp, None)
                elif tp.topic not in self.subscriptions[member] or self._mismatch(member, tp):
                    del partitions[i]
                    revocation_required = True
                else:
                    _remove(unassigned, tp)
                    i += 1
        self.by_load = list(self.current)
        self._sort_by_load()
        self._balance(ordered, unassigned, revocation_required)
        return self.current

    def _mismatch(self, member: str, tp: Partition) -> bool:
        return self.racks is not None and self.racks.mismatch(member, tp)

    def _load(self, member: str) -> tuple[int, str]:
        return len(self.current[member]), member

    def _sort_by_load(self) -> None:
        self.by_load.sort(key=self._load)

    def _prepopulate(self) -> None:
        """``prepopulateCurrentAssignments``."""
        claimants: dict[Partition, list[tuple[str, int]]] = {}
        for member in self.group.members:
            self.current[member.id] = []
            self.potential[member.id] = []
            for tp in member.owned:
                claimants.setdefault(tp, []).append((member.id, member.generation))
                self.owner[tp] = member.id
        for tp, claims in reversed(claimants.items()):
            by_generation = sorted(claims, key=lambda claim: claim[1])
            generations = [generation for _member, generation in by_generation]
            if len(set(generations)) < len(generations):  # (two claims of one generation: nobody's)
                self.owner.pop(tp, None)
                continue
            self.current[by_generation[-1][0]].append(tp)
            if len(by_generation) >= 2:
                self.previous[tp] = by_generation[-2]

    def _potential(self) -> None:
        """``populatePotentialMaps``."""
        for topic in self.topics:
            partitions = [Partition(topic, p) for p in range(self.group.topics[topic])]
            for member in self.subscribers[topic]:
                self.potential[member].extend(partitions)
                for tp in partitions:
                    self.takers.setdefault(tp, []).append(member)
        self.may_take = {member: set(partitions) for member, partitions in self.potential.items()}

    def _identical(self) -> bool:
        """``areSubscriptionsIdentical``."""
        takers = list(self.takers.values())
        potential = list(self.may_take.values())
        return all(t == takers[0] for t in takers) and all(p == potential[0] for p in potential)

    def _sort_partitions(self, fresh: bool) -> list[Partition]:
        """``sortPartitions``."""
        if fresh or not self._identical():
            return sorted(self.takers, key=lambda tp: (len(self.takers[tp]), tp.topic, tp.partition))
        remaining: dict[str, list[Partition]] = {}
        for member, partitions in reversed(self.current.items()):
            partitions.sort()  # (in place, as librdkafka sorts the member's list)
            still = [tp for tp in partitions if tp in self.takers]
            if still:
                remaining[member] = still
        consumers = list(remaining)

        def load(member: str) -> tuple[int, str]:
            return len(remaining[member]), member

        consumers.sort(key=load)
        ordered: list[Partition] = []
        while consumers:
            member = consumers[-1]
            mine = remaining[member]
            had_other_owner = [tp for tp in mine if tp in self.previous]
            if had_other_owner:
                tp = had_other_owner[0]
                mine.remove(tp)
            elif mine:
                tp = mine.pop(0)
            else:
                consumers.pop()
                continue
            ordered.append(tp)
            consumers.sort(key=load)
        listed = not ordered
        seen = set(ordered)
        ordered.extend(tp for tp in reversed(self.takers) if tp not in seen)
        if listed:
            ordered.sort()
        return ordered

    def _balance(self, ordered: list[Partition], unassigned: list[Partition], revocation_required: bool) -> None:
        """``balance``."""
        initializing = not self.current[self.by_load[-1]]
        if self.racks is not None and self.racks.member_racks:
            leftover = list(unassigned)
            self._maybe_assign(leftover, remove=True, racks=True)
            self._maybe_assign(leftover, remove=False, racks=False)
        else:
            self._maybe_assign(unassigned, remove=False, racks=False)
        for tp in reversed(self.takers):
            if len(self.takers[tp]) < 2:
                _remove(ordered, tp)
                _remove(unassigned, tp)
        fixed: dict[str, list[Partition]] = {}
        i = 0
        while i < len(self.by_load):
            member = self.by_load[i]
            if self._can_participate(member):
                i += 1
                continue
            del self.by_load[i]
            fixed[member] = list(self.current.pop(member))
        before = {member: list(partitions) for member, partitions in self.current.items()}
        owners_before = dict(self.owner)
        if not revocation_required and unassigned:
            self._perform_reassignments(unassigned)
        moved = self._perform_reassignments(ordered)
        if not initializing and moved and _score(self.current.values()) >= _score(before.values()):
            for member, partitions in before.items():
                self.current[member] = partitions
            self.owner = owners_before
        for member, partitions in reversed(fixed.items()):
            self.current[member] = partitions
            self.by_load.append(member)
        if fixed:
            self._sort_by_load()

    def _maybe_assign(self, partitions: list[Partition], remove: bool, racks: bool) -> None:
        """``maybeAssign`` and ``maybeAssignPartition``: each partition to the least loaded
        member that may take it (on its rack, in the rack-aware pass)."""
        i = 0
        while i < len(partitions):
            tp = partitions[i]
            taker = next((m for m in self.by_load if tp in self.may_take[m] and not (racks and self._mismatch(m, tp))),
                         None)
            if taker is not None:
                self.current[taker].append(tp)
                self.owner[tp] = taker
                self._sort_by_load()
                if remove:
                    del partitions[i]
                    continue
            i += 1

    def _can_participate(self, member: str) -> bool:
        """``consumerCanParticipateInReassignment``."""
        mine = self.current[member]
        if len(mine) < len(self.potential[member]):
            return True
        return any(len(self.takers.get(tp, ())) >= 2 for tp in mine)

    def _balanced(self) -> bool:
        """``isBalanced``."""
        least, most = len(self.current[self.by_load[0]]), len(self.current[self.by_load[-1]])
        if least >= most - 1:
            return True
        held = {tp: member for member, partitions in reversed(self.current.items()) for tp in partitions}
        for member in self.by_load:
            mine = self.current[member]
            if len(mine) == len(self.potential[member]):
                continue
            kept = set(mine)
            for tp in self.potential[member]:
                if tp in kept:
                    continue
                other = held.get(tp)
                if other is None:
                    raise LibrdkafkaAssignorFailure(f"librdkafka's leader would crash (isBalanced): partition "
                                                    f"{tp.topic}-{tp.partition} has no owner")
                if len(mine) < len(self.current[other]):
                    return False
        return True

    def _perform_reassignments(self, reassignable: list[Partition]) -> bool:
        """``performReassignments``."""
        performed = False
        while True:
            modified = False
            i = 0
            while i < len(reassignable) and not self._balanced():
                tp = reassignable[i]
                i += 1
                member = self.owner[tp]
                mine = self._held_by(member, tp)
                earlier = self.previous.get(tp)
                if earlier is not None and len(mine) > len(self._held_by(earlier[0], tp)) + 1:
                    self._reassign_to(tp, earlier[0])
                    performed = modified = True
                    continue
                takers = self.takers[tp]
                if self.racks is not None:
                    rack = self.racks.member_racks.get(member)
                    replicas = self.racks.partition_racks.get(tp, [])
                    if rack is not None and rack in replicas and any(
                            self.racks.member_racks.get(other) in replicas
                            and len(mine) > len(self.current[other]) + 1 for other in takers):
                        self._reassign(tp)
                        performed = modified = True
                        continue
                if any(other != member and len(mine) > len(self.current[other]) + 1 for other in takers):
                    self._reassign(tp)
                    performed = modified = True
            if not modified:
                return performed

    def _held_by(self, member: str, tp: Partition) -> list[Partition]:
        found = self.current.get(member)
        if found is None:
            raise LibrdkafkaAssignorFailure(
                f"librdkafka's leader would crash (performReassignments): partition {tp.topic}-{tp.partition}'s "
                f"member {member!r} is not among those it balances")
        return found

    def _reassign(self, tp: Partition) -> None:
        """``reassignPartition``: to the least loaded member that may take it."""
        for member in self.by_load:
            if tp in self.may_take[member]:
                self._reassign_to(tp, member)
                return
        raise LibrdkafkaAssignorFailure(  # (librdkafka: rd_assert, "no new consumer found")
            f"librdkafka's leader would stop on an assertion (reassignPartition): no member may take partition "
            f"{tp.topic}-{tp.partition}")

    def _reassign_to(self, tp: Partition, new: str) -> None:
        """``reassignPartitionToConsumer`` and ``processPartitionMovement``."""
        moved = self.movements.actual(tp, self.owner[tp], new)
        old = self.owner[moved]
        self.movements.move(moved, old, new)
        self.current[new].append(moved)
        _remove(self._held_by(old, moved), moved)
        self.owner[moved] = new
        self._sort_by_load()


def _remove(partitions: list[Partition], tp: Partition) -> None:
    """``rd_kafka_topic_partition_list_del``: the first such entry, if any."""
    if tp in partitions:
        partitions.remove(tp)
