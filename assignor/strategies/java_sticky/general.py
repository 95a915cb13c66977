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
from collections import Counter
from collections.abc import Iterator
from itertools import filterfalse
from operator import itemgetter
from typing import TypeVar

from assignor.errors import JavaAssignorFailure
from assignor.model import Member, TopicPartition, topic_partitions
from assignor.ordering import java_key
from assignor.strategies.java_sticky.movements import Movements
from assignor.strategies.java_sticky.racks import RackInfo

K = TypeVar("K")

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

    def __iter__(self) -> Iterator[str]:
        for load in self.loads:
            for r in self.at[load]:
                yield self.ids[r]

    def first(self) -> str:
        return self.ids[self.at[self.loads[0]][0]]

    def last(self) -> str:
        return self.ids[self.at[self.loads[-1]][-1]]


class _TopicLoads:
    """Per topic, how many of its partitions sit with members of each load, and how many of its
    members (all, and those short of every partition they could hold) have each load: what
    `_Builder._balanced` and the move test read, kept up to date move by move instead of
    recounted over every partition (Java recounts: O(partitions x members) per check).

    Java's ``isBalanced`` asks, for each member c short of all it could hold and each partition
    of c's topics held by another member o, whether ``load(c) + 1 < load(o)``. That holds for
    some pair exactly when some topic's most loaded holder is more than one above its least
    loaded open member (c's own partitions never pass the test, so counting them is harmless).
    """

    def __init__(self, builder: _Builder) -> None:
        self.builder = builder
        self.holders: dict[str, dict[int, int]] = {}  # topic -> load -> partitions held at it
        self.members: dict[str, dict[int, int]] = {}  # topic -> load -> members
        self.open: dict[str, dict[int, int]] = {}  # topic -> load -> members short of their all
        self.held: dict[str, dict[str, int]] = {}  # member -> topic -> partitions held
        load_of = {member: len(partitions) for member, partitions in builder.current.items()}
        open_load_of = {m: load for m, load in load_of.items() if load != builder.max_size[m]}
        for member, partitions in builder.current.items():
            held = self.held[member] = dict(Counter(map(itemgetter(0), partitions)))
            load = load_of[member]
            for topic, k in held.items():
                _bump(self.holders.setdefault(topic, {}), load, k)
        for topic, members in builder.topic_members.items():
            distinct = list(dict.fromkeys(members))  # a subscription may name a topic twice
            self.members[topic] = dict(Counter(map(load_of.__getitem__, filter(load_of.__contains__, distinct))))
            self.open[topic] = dict(Counter(map(open_load_of.__getitem__, filter(open_load_of.__contains__, distinct))))

    def _count(self, member: str, load: int, sign: int) -> None:
        is_open = load != self.builder.max_size[member]
        for topic in self.builder.known_topics[member]:
            _bump(self.members.setdefault(topic, {}), load, sign)
            if is_open:
                _bump(self.open.setdefault(topic, {}), load, sign)

    def _reload(self, member: str, old: int, new: int) -> None:
        for topic, k in self.held[member].items():
            holders = self.holders[topic]
            _bump(holders, old, -k)
            _bump(holders, new, k)
        self._count(member, old, -1)
        self._count(member, new, 1)

    def move(self, tp: TopicPartition, old: str, new: str, old_load: int, new_load: int) -> None:
        """`tp` moves from `old` (load `old_load` before) to `new` (`new_load` before)."""
        _bump(self.holders[tp.topic], old_load, -1)
        _bump(self.held[old], tp.topic, -1)
        self._reload(old, old_load, old_load - 1)
        self._reload(new, new_load, new_load + 1)
        _bump(self.held[new], tp.topic, 1)
        _bump(self.holders.setdefault(tp.topic, {}), new_load + 1, 1)

    def lightest(self, topic: str) -> int:
        """The lowest load among the topic's members."""
        return min(self.members[topic])

    def unbalanced_topic(self) -> bool:
        """Some topic's most loaded holder is two or more above its least loaded open member."""
        holders = self.holders
        for topic, loads in self.open.items():
            if loads and topic in holders and holders[topic] and max(holders[topic]) > min(loads) + 1:
                return True
        return False


def _bump(counts: dict[K, int], key: K, by: int) -> None:
    """Add `by` to ``counts[key]``, dropping the key at zero (so min/max see live keys only)."""
    value = counts.get(key, 0) + by
    if value:
        counts[key] = value
    else:
        counts.pop(key, None)


class _Builder:
    loads: _TopicLoads  # from the reassignment phase on (`_balance`)

    def __init__(self, topics: dict[str, int], members: list[Member], owned: dict[str, list[TopicPartition]],
                 max_generation: int, racks: RackInfo, plain: bool) -> None:
        # `plain`: Java's steps as Java writes them, the reference the fast paths
        # (`_assign_runs`, `_TopicLoads`, the set difference in `_unassigned`) are held to.
        self.plain = plain
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
        self.known_topics = {m: set(ts) for m, ts in self.member_topics.items()}
        # Each topic's members as one shared set per distinct set (runs of partitions compare them by identity)
        shared: dict[frozenset[str], frozenset[str]] = {}
        self.topic_sets = {t: shared.setdefault(frozenset(ms), frozenset(ms)) for t, ms in self.topic_members.items()}
        self.max_size = {m: self._max_size(m) for m in self.member_topics}
        self.is_balanced: bool | None = None  # `_balanced`'s answer until the next move
        self.current = owned  # Java's currentAssignment: member -> partitions
        self.owner: dict[TopicPartition, str] = {tp: m for m, tps in owned.items() for tp in tps}
        topic_order = sorted(topics, key=lambda t: (len(self.topic_members[t]), java_key(t)))
        self.topic_rank = {t: i for i, t in enumerate(topic_order)}
        self.sorted_partitions = topic_partitions([t for t in topic_order for _ in range(topics[t])],
                                                  [p for t in topic_order for p in range(topics[t])])
        self.impossible = False  # see `_unassigned`
        #: Partitions Java hands back to a previous owner that no longer subscribes to their
        #: topic (it does not check): the plan is broken, and the caller says so.
        self.strays: list[tuple[TopicPartition, str]] = []
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
        # With every kept claim a real partition, the walk below skips exactly the kept ones.
        kept_set = set(kept)
        unassigned = list(filterfalse(kept_set.__contains__, self.sorted_partitions))
        self.impossible = not len(self.sorted_partitions) - len(unassigned) == len(kept_set) == len(kept)
        if not (self.impossible or self.plain):
            return unassigned
        # A claim of a partition that does not exist: Java's walk hands partitions out twice, and
        # from here on only Java's own steps say what Java does with that (or where it throws).
        self.plain = True
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
            if tp.topic in self.known_topics[member] and (racks is None or not racks.mismatch(member, tp)):
                self._put(tp, member)
                return True
        return False

    def _put(self, tp: TopicPartition, member: str) -> None:
        self.by_load.remove(member)
        self.current[member].append(tp)
        self.owner[tp] = member
        self.by_load.add(member, len(self.current[member]))

    def _assign_all(self, partitions: list[TopicPartition], racks: RackInfo | None, drop: bool) -> list[TopicPartition]:
        if racks is None and not drop and not self.plain:
            self._assign_runs(partitions)
            return partitions
        left = []
        for tp in partitions:
            if not self.topic_members[tp.topic]:
                left.append(tp)
                continue
            if not (self._assign_one(tp, racks) and drop):
                left.append(tp)
        return left

    def _assign_runs(self, partitions: list[TopicPartition]) -> None:
        """`_assign_one` for every partition (no racks), a run of partitions of topics with the
        same members at a time: each goes to the least loaded of those members (then the first
        by id), which is water-filling over them, dealt level by level (`_water_fill`)."""
        position = 0
        while position < len(partitions):
            members = self.topic_sets[partitions[position].topic]
            end = position + 1
            while end < len(partitions) and self.topic_sets[partitions[end].topic] is members:
                end += 1
            if members:
                self._water_fill(partitions[position:end], members)
            position = end

    def _water_fill(self, run: list[TopicPartition], members: frozenset[str]) -> None:
        by_load = self.by_load
        levels: dict[int, list[int]] = {}  # load -> ranks (sorted) of `members` at that load
        for member in members:
            levels.setdefault(by_load.filed[member], []).append(by_load.rank[member])
            by_load.remove(member)
        for ranks in levels.values():
            ranks.sort()
        loads = sorted(levels)
        position = 0
        while position < len(run):
            load = loads[0]
            group = levels.pop(load)
            loads.pop(0)
            # Whole rounds over `group` until it reaches the next level (or the run ends).
            rounds = min(loads[0] - load if loads else len(run), (len(run) - position) // len(group))
            if rounds == 0:  # the last, partial round: the first members by id
                rounds, group, rest = 1, group[: len(run) - position], group[len(run) - position:]
                if rest:
                    levels[load] = rest
                    loads.insert(0, load)
            end = position + rounds * len(group)
            for j, rank in enumerate(group):
                member = by_load.ids[rank]
                dealt = run[position + j : end : len(group)]
                self.current[member].extend(dealt)
                self.owner.update(dict.fromkeys(dealt, member))
            position = end
            raised = load + rounds
            if raised in levels:
                levels[raised] = sorted(levels[raised] + group)
            else:
                levels[raised] = group
                insort(loads, raised)
        for member in members:
            by_load.add(member, len(self.current[member]))

    def _reassignable_member(self, member: str) -> bool:
        partitions = self.current[member]
        if len(partitions) < self.max_size[member]:
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
        self.loads = _TopicLoads(self)
        if not self.revocation_required:
            self._perform_reassignments(new_partitions, previous)
        moved = self._perform_reassignments(all_partitions, previous)
        if not initializing and moved and _score(self.current) >= _score(before):
            self.current.clear()
            self.current.update(before)
            self.owner = owners_before
        self.current.update(fixed)

    def _balanced(self) -> bool:
        """Java's ``isBalanced``, answered from `_TopicLoads` and kept until the next move."""
        if self.plain:
            return self._balanced_plain()
        if self.is_balanced is None:
            low = len(self.current[self.by_load.first()])
            high = len(self.current[self.by_load.last()])
            self.is_balanced = low >= high - 1 or not self.loads.unbalanced_topic()
        return self.is_balanced

    def _balanced_plain(self) -> bool:
        """Java's ``isBalanced`` as Java computes it (the reference `_balanced` is held to)."""
        low = len(self.current[self.by_load.first()])
        high = len(self.current[self.by_load.last()])
        if low >= high - 1:
            return True
        owner = {tp: m for m, tps in self.current.items() for tp in tps}
        for member in self.by_load:
            count = len(self.current[member])
            if count == self.max_size[member]:
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
        passes, cycle = 0, _Cycle()
        while modified:
            modified = False
            passes += 1
            if passes > _PASSES_UNWATCHED:
                period = cycle.period(passes, self._state())
                if period is not None:
                    raise JavaAssignorFailure(
                        "Java's general builder never returns (its rebalance times out): its reassignment loop "
                        f"comes back to the same assignment every {period} pass(es), moving partitions to and fro")
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
                        if tp.topic not in self.known_topics[before[0]]:
                            self.strays.append((tp, before[0]))
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
                # Java walks the topic's members for one two or more lighter: the lightest decides.
                if self.plain:
                    lighter = any(load > len(self.current[other]) + 1 for other in self.topic_members[tp.topic])
                else:
                    lighter = load > self.loads.lightest(tp.topic) + 1
                if not found and lighter:
                    self._reassign(tp, self._lightest_for(tp))
                    performed = modified = True
        return performed

    def _state(self) -> tuple[object, ...]:
        """All a pass of the reassignment loop reads: each member's partitions in order, the
        load each member is filed under, and the moves so far (`Movements.state`)."""
        return (tuple((m, tuple(tps)) for m, tps in sorted(self.current.items())),
                tuple(sorted(self.by_load.filed.items())), self.movements.state())

    def _lightest_for(self, tp: TopicPartition) -> str:
        for member in self.by_load:
            if tp.topic in self.known_topics[member]:
                return member
        raise AssertionError("a reassignable partition has a member to go to")

    def _reassign(self, tp: TopicPartition, new: str) -> None:
        moving = self.movements.to_move(tp, self.owner[tp], new)
        old = self.owner[moving]
        if old != new:
            self.loads.move(moving, old, new, len(self.current[old]), len(self.current[new]))
        self.is_balanced = None
        self.by_load.remove(old)
        self.by_load.remove(new)
        self.movements.move(moving, old, new)
        self.current[old].remove(moving)
        self.current[new].append(moving)
        self.owner[moving] = new
        self.by_load.add(new, len(self.current[new]))
        self.by_load.add(old, len(self.current[old]))


#: Passes of Java's reassignment loop (``performReassignments``'s ``do ... while (modified)``)
#: before `_Cycle` watches them: random groups converge within seven; watching costs a copy of
#: the state per pass.
_PASSES_UNWATCHED = 16


class _Cycle:
    """Whether the reassignment loop has come back to a state it was in: then it runs forever,
    as Java's does (the loop is deterministic). States are kept by hash; a hash seen before is
    confirmed by the whole state coming back once more one period later."""

    def __init__(self) -> None:
        self.seen: dict[int, int] = {}  # hash of a state -> the pass it was last seen at
        self.expected: tuple[int, tuple[object, ...]] | None = None  # (pass, state) a cycle repeats at

    def period(self, at: int, state: tuple[object, ...]) -> int | None:
        """The loop's period in passes once `state` (at pass `at`) proves it cycles, else None."""
        key = hash(state)
        if self.expected is not None and self.expected[0] == at:
            earlier = self.expected[1]
            self.expected = None
            if earlier == state:
                return at - self.seen[key]
        elif key in self.seen and self.expected is None:
            self.expected = (at + at - self.seen[key], state)
        self.seen[key] = at
        return None


def _score(assignment: dict[str, list[TopicPartition]]) -> int:
    """KIP-54's balance score: the sum over member pairs of the difference in load."""
    loads = sorted(len(tps) for tps in assignment.values())
    n = len(loads)
    return sum(load * (2 * k - n + 1) for k, load in enumerate(loads))


def build(topics: dict[str, int], members: list[Member], owned: dict[str, list[TopicPartition]],
          max_generation: int, racks: RackInfo, plain: bool = False) -> tuple[dict[str, list[TopicPartition]], bool]:
    """The general plan (`members` in the leader's HashMap order, `owned` as
    `member_data.read_claims` leaves it, changed in place), and whether a kept claim named a
    partition that does not exist."""
    builder = _Builder(topics, members, owned, max_generation, racks, plain)
    try:
        plan = builder.build()
    except KeyError as missing:
        if not builder.impossible:
            raise
        # After a claim of a partition that does not exist, Java's maps hold entries its lists do
        # not (or none for a member set aside): where it reads one, a NullPointerException.
        raise JavaAssignorFailure(
            f"Java's general builder throws NullPointerException (no entry for {missing}) after a member's claim "
            "names a partition its topic does not have") from None
    for tp, member in builder.strays:
        if tp in plan.get(member, ()):
            raise JavaAssignorFailure(
                f"Java's general builder would give partition {tp.topic}-{tp.partition} back to its previous owner "
                f"{member!r}, which no longer subscribes to {tp.topic!r} (Java does not check)")
    return plan, builder.impossible
