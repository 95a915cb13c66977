"""Java's ``GeneralAssignmentBuilder``: KIP-54's algorithm for groups whose members subscribe
to different topics.

Steps, as Java runs them (names after Java's):

1. `_previous_owners` (``prepopulateCurrentAssignments``): for each partition, the member that
   held it in the newest generation older than the leader's highest one.
2. `_keep_owned` (``assignOwnedPartitions``): members keep their valid claims; a claim of a
   topic the member no longer subscribes to (or, rack-aware, on another rack) is revoked.
3. `_balance`: unassigned partitions go, one by one in *sorted partition* order (topics with
   fewer potential members first), to the least loaded member that may take them
   (*sorted current subscriptions*: by load, then member id).
4. Partitions of topics with one potential member, and members that cannot change, are set
   aside (fixed); the others are *reassignable*. `_perform_reassignments` moves a partition
   from its member to a member two or more partitions lighter (back to its previous owner
   first) until the plan is balanced, first over the new partitions, then over all.
5. *Revert if no improvement*: when partitions moved and the *balance score* (sum over member
   pairs of the load difference) did not fall, the plan before step 4 stands.
"""

from __future__ import annotations

from bisect import bisect_left, insort

from assignor.errors import JavaAssignorFailure
from assignor.model import Member, TopicPartition
from assignor.ordering import java_key
from assignor.strategies.java_sticky.movements import Movements
from assignor.strategies.java_sticky.racks import RackInfo

__all__ = ["build"]

_UNKNOWN = -1  # Java's DEFAULT_GENERATION


class _ByLoad:
    """Java's ``TreeSet<String>`` of members ordered by (load, member id): *sorted current
    subscriptions*. Each member is filed under the load it had when added, as in the TreeSet
    (Java removes a member before its load changes and adds it back after)."""

    def __init__(self, rank: dict[str, int], ids: list[str]) -> None:
        self.rank = rank  # member -> position in Java's String order
        self.ids = ids  # position -> member
        self.loads: list[int] = []  # sorted distinct loads present
        self.at: dict[int, list[int]] = {}  # load -> sorted ranks
        self.filed: dict[str, int] = {}  # member -> load it is filed under

    def add(self, member: str, load: int) -> None:
        if member in self.filed:
            return
        self.filed[member] = load
        ranks = self.at.get(load)
        if ranks is None:
            ranks = self.at[load] = []
            insort(self.loads, load)
        insort(ranks, self.rank[member])

    def remove(self, member: str) -> None:
        load = self.filed.pop(member, None)
        if load is None:
            return
        ranks = self.at[load]
        del ranks[bisect_left(ranks, self.rank[member])]
        if not ranks:
            del self.at[load]
            del self.loads[bisect_left(self.loads, load)]

    def __iter__(self):
        for load in self.loads:
            for r in self.at[load]:
                yield self.ids[r]

    def first(self) -> str:
        return self.ids[self.at[self.loads[0]][0]]

    def last(self) -> str:
        return self.ids[self.at[self.loads[-1]][-1]]


class _Builder:
    def __init__(self, topics: dict[str, int], members: list[Member], owned: dict[str, list[TopicPartition]],
                 max_generation: int, racks: RackInfo) -> None:
        self.topics = topics
        self.members = members  # HashMap order
        self.racks = racks
        self.max_generation = max_generation
        self.total = sum(topics.values())
        # topic -> members that may take it (HashMap order); member -> its known topics
        self.topic_members: dict[str, list[str]] = {t: [] for t in topics}
        self.member_topics: dict[str, list[str]] = {}
        self.subscribed: dict[str, set[str]] = {}
        for m in members:
            mine = [t for t in m.topics if t in topics]
            self.member_topics[m.id] = mine
            self.subscribed[m.id] = set(m.topics)
            for t in mine:
                self.topic_members[t].append(m.id)
        self.current = owned  # Java's currentAssignment: member -> partitions
        self.owner: dict[TopicPartition, str] = {tp: m for m, tps in owned.items() for tp in tps}
        topic_order = sorted(topics, key=lambda t: (len(self.topic_members[t]), java_key(t)))
        self.topic_rank = {t: i for i, t in enumerate(topic_order)}
        self.sorted_partitions = [TopicPartition(t, p) for t in topic_order for p in range(topics[t])]
        ids = sorted(owned, key=java_key)
        self.by_load = _ByLoad({m: i for i, m in enumerate(ids)}, ids)
        self.revocation_required = False
        self.movements = Movements()

    # -- steps 1-2 --------------------------------------------------------------------------

    def _previous_owners(self) -> dict[TopicPartition, tuple[str, int]]:
        previous: dict[TopicPartition, tuple[str, int]] = {}
        for m in self.members:
            if m.generation < self.max_generation:
                for tp in m.owned:
                    found = previous.get(tp)
                    if found is None or m.generation > found[1]:
                        previous[tp] = (m.id, m.generation)
        return previous

    def _keep_owned(self) -> list[TopicPartition]:
        kept: list[TopicPartition] = []
        for member, claims in self.current.items():
            keep = []
            for tp in claims:
                if tp.topic not in self.topic_members:
                    self.owner.pop(tp, None)
                elif tp.topic not in self.subscribed[member] or self.racks.mismatch(member, tp):
                    self.revocation_required = True  # Java leaves `owner` pointing here
                else:
                    keep.append(tp)
            claims[:] = keep
            kept.extend(keep)
        return kept

    def _unassigned(self, kept: list[TopicPartition]) -> list[TopicPartition]:
        """``getUnassignedPartitions``: sorted partitions minus the kept ones, by Java's
        two-pointer walk (a kept claim of a partition the topic does not have stops the
        skipping: every later partition is then handed out a second time)."""
        if not kept:
            return self.sorted_partitions
        rank = self.topic_rank  # the order of (potential members, topic name)
        kept = sorted(kept, key=lambda tp: (rank[tp.topic], tp.partition))
        unassigned = []
        position, stalled = 0, False
        for tp in self.sorted_partitions:
            if stalled or kept[position] != tp:
                unassigned.append(tp)
            elif position + 1 < len(kept):
                position += 1
            else:
                stalled = True
        return unassigned

    # -- steps 3-5 --------------------------------------------------------------------------

    def build(self) -> dict[str, list[TopicPartition]]:
        previous = self._previous_owners()
        kept = self._keep_owned()
        unassigned = self._unassigned(kept)
        for m in self.current:
            self.by_load.add(m, len(self.current[m]))
        self._balance(previous, unassigned)
        return self.current

    def _max_size(self, member: str) -> int:
        topics = self.member_topics[member]
        if len(topics) == len(self.topics):
            return self.total
        return sum(self.topics[t] for t in topics)

    def _assign_one(self, tp: TopicPartition, racks: RackInfo | None) -> bool:
        for member in self.by_load:
            if tp.topic in self.member_topics[member] and (racks is None or not racks.mismatch(member, tp)):
                self._put(tp, member)
                return True
        return False

    def _put(self, tp: TopicPartition, member: str) -> None:
        self.by_load.remove(member)
        self.current[member].append(tp)
        self.owner[tp] = member
        self.by_load.add(member, len(self.current[member]))

    def _assign_all(self, partitions: list[TopicPartition], racks: RackInfo | None, drop: bool) -> list[TopicPartition]:
        left = []
        for tp in partitions:
            if not self.topic_members[tp.topic]:
                left.append(tp)
                continue
            if not (self._assign_one(tp, racks) and drop):
                left.append(tp)
        return left

    def _reassignable_member(self, member: str) -> bool:
        partitions = self.current[member]
        if len(partitions) < self._max_size(member):
            return True
        return any(len(self.topic_members[tp.topic]) >= 2 for tp in partitions)

    def _balance(self, previous: dict[TopicPartition, tuple[str, int]], unassigned: list[TopicPartition]) -> None:
        initializing = not self.current[self.by_load.last()]
        to_assign = unassigned
        if self.racks.member_rack:
            to_assign = self._assign_all(list(unassigned), self.racks, True)
        self._assign_all(to_assign, None, False)

        fixed_topics = {t for t, ms in self.topic_members.items() if len(ms) < 2}
        all_partitions = [tp for tp in self.sorted_partitions if tp.topic not in fixed_topics]
        new_partitions = [tp for tp in unassigned if tp.topic not in fixed_topics]
        fixed: dict[str, list[TopicPartition]] = {}
        for member in self.member_topics:
            if not self._reassignable_member(member):
                self.by_load.remove(member)
                fixed[member] = self.current.pop(member)

        before = {m: list(tps) for m, tps in self.current.items()}
        owners_before = dict(self.owner)
        if not self.revocation_required:
            self._perform_reassignments(new_partitions, previous)
        moved = self._perform_reassignments(all_partitions, previous)
        if not initializing and moved and _score(self.current) >= _score(before):
            self.current.clear()
            self.current.update(before)
            self.owner = owners_before
        self.current.update(fixed)

    def _balanced(self) -> bool:
        low = len(self.current[self.by_load.first()])
        high = len(self.current[self.by_load.last()])
        if low >= high - 1:
            return True
        owner = {tp: m for m, tps in self.current.items() for tp in tps}
        for member in self.by_load:
            count = len(self.current[member])
            if count == self._max_size(member):
                continue
            mine = set(self.current[member])
            for topic in self.member_topics[member]:
                for p in range(self.topics[topic]):
                    tp = TopicPartition(topic, p)
                    if tp not in mine and count + 1 < len(self.current[owner[tp]]):
                        return False
        return True

    def _perform_reassignments(self, partitions: list[TopicPartition],
                               previous: dict[TopicPartition, tuple[str, int]]) -> bool:
        performed = False
        modified = True
        while modified:
            modified = False
            for tp in partitions:
                if self._balanced():
                    break
                member = self.owner[tp]
                if member not in self.current:
                    raise JavaAssignorFailure(
                        f"Java's general builder throws NullPointerException: partition {tp.topic}-{tp.partition} "
                        f"is recorded with member {member!r}, which cannot take part in the reassignment")
                load = len(self.current[member])
                before = previous.get(tp)
                if before is not None:
                    earlier = self.current.get(before[0])
                    if earlier is None:
                        raise JavaAssignorFailure(
                            "Java's general builder throws NullPointerException: the previous owner "
                            f"{before[0]!r} of partition {tp.topic}-{tp.partition} cannot take part in the "
                            "reassignment")
                    if load > len(earlier) + 1:
                        self._reassign(tp, before[0])
                        performed = modified = True
                        continue
                found = False
                rack = self.racks.member_rack.get(member)
                racks = self.racks.partition_racks.get(tp, frozenset())
                if rack is not None and racks and rack in racks:
                    for other in self.topic_members[tp.topic]:
                        other_rack = self.racks.member_rack.get(other)
                        if other_rack is None or other_rack not in racks:
                            continue
                        if load > len(self.current[other]) + 1:
                            self._reassign(tp, self._lightest_for(tp))
                            performed = modified = found = True
                            break
                if not found:
                    for other in self.topic_members[tp.topic]:
                        if load > len(self.current[other]) + 1:
                            self._reassign(tp, self._lightest_for(tp))
                            performed = modified = True
                            break
        return performed

    def _lightest_for(self, tp: TopicPartition) -> str:
        for member in self.by_load:
            if tp.topic in self.member_topics[member]:
                return member
        raise AssertionError("a reassignable partition has a member to go to")

    def _reassign(self, tp: TopicPartition, new: str) -> None:
        moving = self.movements.to_move(tp, self.owner[tp], new)
        old = self.owner[moving]
        self.by_load.remove(old)
        self.by_load.remove(new)
        self.movements.move(moving, old, new)
        self.current[old].remove(moving)
        self.current[new].append(moving)
        self.owner[moving] = new
        self.by_load.add(new, len(self.current[new]))
        self.by_load.add(old, len(self.current[old]))


def _score(assignment: dict[str, list[TopicPartition]]) -> int:
    """KIP-54's balance score: the sum over member pairs of the difference in load."""
    loads = sorted(len(tps) for tps in assignment.values())
    n = len(loads)
    return sum(load * (2 * k - n + 1) for k, load in enumerate(loads))


def build(topics: dict[str, int], members: list[Member], owned: dict[str, list[TopicPartition]],
          max_generation: int, racks: RackInfo) -> dict[str, list[TopicPartition]]:
    """The general plan; `members` in the leader's HashMap order, `owned` as
    `member_data.read_claims` leaves it (changed in place)."""
    return _Builder(topics, members, owned, max_generation, racks).build()
