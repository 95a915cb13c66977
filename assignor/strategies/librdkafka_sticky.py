"""librdkafka's ``cooperative-sticky``: ``librdkafka-cooperative-sticky``, the plan a librdkafka
leader (librdkafka 2.x, ``rdkafka_sticky_assignor.c``, ``rd_kafka_sticky_assignor_assign_cb``)
sends, decision for decision.

librdkafka's sticky assignor is its own port of Java's *older* ``AbstractStickyAssignor`` (the
general algorithm for every group, where Java 4.3 deals equal subscriptions with its
constrained builder), and it decides ties its own way. Where Java's plan and librdkafka's are
equally balanced and equally sticky, which member gets which partition still differs: after a
leave, the leaver's partitions are listed from the last one back (its maps iterate newest entry
first), so the member that takes the first of them is not Java's. A what-if on a snapshot of a
classic group on ``cooperative-sticky`` compares it beside Java's.

Steps, as ``assign_cb`` runs them (names after librdkafka's):

1. ``prepopulateCurrentAssignments``: each partition goes to the claimant of the highest
   generation; a partition two claimants claim in one generation is nobody's (and dropped from
   ``currentPartitionConsumer``); the next highest claimant is its previous owner.
2. ``populatePotentialMaps``: each partition's potential members (the members in group order)
   and each member's potential partitions, topics in the order the leader's Metadata response lists them.
3. ``sortPartitions``: when every member may take every partition, partitions taken round robin
   from the most loaded member down (a partition that had another owner first), then the others
   newest first; else by how few members may take them, then topic and partition.
4. Claims of partitions that no longer exist are dropped; of a topic the member left, or off
   its rack, revoked (``revocationRequired``); kept ones are not dealt again.
5. ``balance``: the partitions left go to the least loaded member that may take them (on its
   rack first, when racks count), then partitions move from a member to one two or more
   lighter (back to the previous owner first) until ``isBalanced``; a plan that moved
   partitions without lowering the balance score is dropped for the one before.
6. The cooperative protocol (``rd_kafka_cooperative_protocol_adjust_assignment``): a partition
   given to a member other than the one that owns it is withheld for the next rebalance; a
   partition owned but given to nobody goes back to its owner.

librdkafka's maps (``rd_map_t``) iterate the newest entry first (``LIST_INSERT_HEAD``), which
the ``reversed`` over dicts below reproduce; its sorts use total orders, so any sort agrees.
librdkafka reads each member's owned partitions and generation from its Subscription (v1+,
v2+), never from the user data. Where librdkafka's leader would stop on an assertion, the
strategy raises `LibrdkafkaAssignorFailure`.

The topics are taken in the order the leader's Metadata response lists them (`eligible_topics`):
the order it met them in, for up to four topics (a librdkafka member lists its topics by name, so
members subscribed alike give name order), and the broker's own order for more
(`assignor.metadata_order`). A leave's partitions nobody else held are dealt from the last topic in
that order back.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable, Iterator

from assignor.errors import LibrdkafkaAssignorFailure
from assignor.metadata_order import response_order
from assignor.model import Group, Plan, TopicPartition
from assignor.protocols import COOPERATIVE_STICKY
from assignor.strategies.librdkafka_racks import replica_racks, use_rack_aware_assignment
from assignor.strategies.strategy import Strategy, on_objects

__all__ = ["NAME", "STRATEGY", "assign", "assign_sticky", "eligible_topics"]

NAME = "librdkafka-cooperative-sticky"

Partition = TopicPartition
Pair = tuple[str, str]  # (source member, destination member): ``ConsumerPair_t``


class _Movements:
    """``PartitionMovements_t``: each moved partition's (first source, last destination), and
    per topic, the partitions that moved between each pair."""

    def __init__(self) -> None:
        self.of: dict[Partition, Pair] = {}
        self.by_topic: dict[str, dict[Pair, list[Partition]]] = {}

    def _remove(self, tp: Partition) -> Pair:
        # (librdkafka keeps the partition's entry in ``partitionMovements``: only the topic's
        # list forgets it)
        pair = self.of[tp]
        pairs = self.by_topic.get(tp.topic, {})
        moved = pairs.get(pair)
        if moved is None:
            raise LibrdkafkaAssignorFailure(
                f"librdkafka's leader would stop on an assertion (PartitionMovements_removeMovementRecordOfPartition): "
                f"partition {tp.topic}-{tp.partition} moves again after moving back to its owner")
        moved.remove(tp)
        if not moved:
            del pairs[pair]
        if not pairs:
            del self.by_topic[tp.topic]
        return pair

    def _add(self, tp: Partition, pair: Pair) -> None:
        self.of[tp] = pair
        self.by_topic.setdefault(tp.topic, {}).setdefault(pair, []).append(tp)

    def move(self, tp: Partition, old: str, new: str) -> None:
        """``PartitionMovements_movePartition``."""
        if tp in self.of:
            source, destination = self._remove(tp)
            if destination != old:
                raise LibrdkafkaAssignorFailure(
                    f"librdkafka's leader would stop on an assertion (PartitionMovements_movePartition): partition "
                    f"{tp.topic}-{tp.partition} last moved to {destination!r}, not to {old!r}")
            if source != new:  # (not moving back to where it came from)
                self._add(tp, (source, new))
        else:
            self._add(tp, (old, new))

    def actual(self, tp: Partition, old: str, new: str) -> Partition:
        """``PartitionMovements_getTheActualPartitionToBeMoved``: a partition of the same topic
        that moved from `new` to `old`, moved back in its place (librdkafka looks for the pair
        (`new`, `old`) with `old` the current owner, where Java takes the first source)."""
        pairs = self.by_topic.get(tp.topic)
        if pairs is None:
            return tp
        earlier = self.of.get(tp)
        if earlier is not None and earlier[1] != old:
            raise LibrdkafkaAssignorFailure(
                f"librdkafka's leader would stop on an assertion (getTheActualPartitionToBeMoved): partition "
                f"{tp.topic}-{tp.partition} last moved to {earlier[1]!r}, not to {old!r}")
        moved = pairs.get((new, old))
        return moved[0] if moved else tp


class _Racks:
    """``rd_kafka_rack_info_t``: each member's rack and each partition's replica racks (sorted,
    without repeats), when rack-aware assignment applies (`_rack_info`)."""

    def __init__(self, member_racks: dict[str, str | None], partition_racks: dict[Partition, list[str]]) -> None:
        self.member_racks, self.partition_racks = member_racks, partition_racks

    def mismatch(self, member: str, tp: Partition) -> bool:
        """``rd_kafka_racks_mismatch``: the member has a rack (an empty one counts) that is not
        among the partition's replicas' racks."""
        rack = self.member_racks.get(member)
        return rack is not None and rack not in self.partition_racks.get(tp, ())


def _rack_info(group: Group, topics: list[str], subscribers: dict[str, list[str]]) -> _Racks | None:
    """``rd_kafka_rack_info_new``: None unless ``rd_kafka_use_rack_aware_assignment`` (a member
    with a non-empty rack, a rack shared by members and replicas, and a partition whose replicas
    are not on every replica rack)."""
    by_id = {m.id: m for m in group.members}
    member_racks = {member: by_id[member].rack for t in topics for member in subscribers[t]}
    if not group.partition_racks or not any(member_racks.values()):  # (nothing to read per partition)
        return None
    per_topic = {t: replica_racks(group, t) for t in topics}
    if not use_rack_aware_assignment(member_racks.values(), (r for racks in per_topic.values() for r in racks)):
        return None
    return _Racks(member_racks, {Partition(t, p): replicas for t, racks in per_topic.items()
                                 for p, replicas in enumerate(racks)})


class _ByLoad:
    """``sortedCurrentSubscriptions``: members ascending by (load, member id), a total order,
    kept sorted as loads change (librdkafka sorts the list again after each change)."""

    def __init__(self, loads: Iterable[tuple[int, str]]) -> None:
        self.keys = sorted(loads)

    def __iter__(self) -> Iterator[str]:
        return (member for _load, member in self.keys)

    def __len__(self) -> int:
        return len(self.keys)

    def least(self) -> int:
        return self.keys[0][0]

    def most(self) -> int:
        return self.keys[-1][0]

    def moved(self, member: str, old: int, new: int) -> None:
        """`member`'s load went from `old` to `new`."""
        if old != new:
            del self.keys[bisect_left(self.keys, (old, member))]
            insort(self.keys, (new, member))


class _Assignor:
    """One run of ``rd_kafka_sticky_assignor_assign_cb``, its maps as dicts (iterated newest
    first where librdkafka iterates an ``rd_map_t``) and its lists as lists.

    librdkafka lists every partition each member may take, and every member each partition may
    go to; a member may take every partition of each topic it subscribes to, so both are read
    here from each topic's subscribers (a million partitions and a thousand members would be a
    billion entries).
    """

    def __init__(self, group: Group) -> None:
        self.group = group
        members = group.members
        #: The topics dealt (``eligible_topics``): those with partitions some member subscribes
        #: to, in the order the leader's Metadata response lists them (`eligible_topics`).
        self.topics = eligible_topics(group)
        self.count = {t: group.topics[t] for t in self.topics}
        #: ``partition2AllPotentialConsumers``, per topic: its subscribers in group order.
        self.subscribers = {t: [m.id for m in members if t in m.topics] for t in self.topics}
        #: ``consumer2AllPotentialPartitions``: each member's topics dealt, and their partitions' count.
        self.dealt_to = {m.id: {t for t in self.topics if t in m.topics} for m in members}
        self.potential = {m: sum(self.count[t] for t in topics) for m, topics in self.dealt_to.items()}
        self.racks = _rack_info(group, self.topics, self.subscribers)
        self.subscriptions = {m.id: set(m.topics) for m in members}
        self.current: dict[str, list[Partition]] = {}
        self.previous: dict[Partition, tuple[str, int]] = {}
        self.owner: dict[Partition, str] = {}  # currentPartitionConsumer
        self.movements = _Movements()
        self.by_load = _ByLoad(())
        self._holders: dict[Partition, str] | None = None  # (`_held`: kept while the lists agree)

    def _exists(self, tp: Partition) -> bool:
        return 0 <= tp.partition < self.count.get(tp.topic, 0)

    def _partitions(self, topics: Iterable[str]) -> Iterator[Partition]:
        return (Partition(t, p) for t in topics for p in range(self.count[t]))

    def _newest_first(self) -> Iterator[Partition]:
        """``partition2AllPotentialConsumers`` as its ``RD_MAP_FOREACH`` lists it: the last
        partition put first (topics in turn, each partition in order)."""
        return (Partition(t, p) for t in reversed(self.topics) for p in reversed(range(self.count[t])))

    def run(self) -> dict[str, list[Partition]]:
        self._prepopulate()
        fresh = not self.current
        ordered = self._sort_partitions(fresh)
        revocation_required = False
        kept: set[Partition] = set()
        for member, partitions in reversed(list(self.current.items())):
            still = []
            for tp in partitions:
                if not self._exists(tp):
                    self.owner.pop(tp, None)
                elif tp.topic not in self.subscriptions[member] or self._mismatch(member, tp):
                    revocation_required = True
                else:
                    still.append(tp)
                    kept.add(tp)
            partitions[:] = still
        # (librdkafka deletes each kept partition from the list in turn; the list holds each once)
        unassigned = [tp for tp in ordered if tp not in kept]
        self.by_load = _ByLoad((len(partitions), member) for member, partitions in self.current.items())
        self._balance(ordered, unassigned, revocation_required)
        return self.current

    def _mismatch(self, member: str, tp: Partition) -> bool:
        return self.racks is not None and self.racks.mismatch(member, tp)

    def _prepopulate(self) -> None:
        """``prepopulateCurrentAssignments``."""
        claimants: dict[Partition, list[tuple[str, int]]] = {}
        for member in self.group.members:
            self.current[member.id] = []
            for tp in member.owned:
                claimants.setdefault(tp, []).append((member.id, member.generation))
                self.owner[tp] = member.id
        for tp, claims in reversed(claimants.items()):
            if len(claims) == 1:  # (most partitions: one claimant)
                self.current[claims[0][0]].append(tp)
                continue
            by_generation = sorted(claims, key=lambda claim: claim[1])
            generations = [generation for _member, generation in by_generation]
            if len(set(generations)) < len(generations):  # (two claims of one generation: nobody's)
                self.owner.pop(tp, None)
                continue
            self.current[by_generation[-1][0]].append(tp)
            if len(by_generation) >= 2:
                self.previous[tp] = by_generation[-2]

    def _identical(self) -> bool:
        """``areSubscriptionsIdentical``: every partition may go to the same members, and every
        member may take the same partitions."""
        takers = list(self.subscribers.values())
        dealt = list(self.dealt_to.values())
        return all(t == takers[0] for t in takers) and all(d == dealt[0] for d in dealt)

    def _sort_partitions(self, fresh: bool) -> list[Partition]:
        """``sortPartitions``."""
        if fresh or not self._identical():  # (by how few members may take each, then topic, partition)
            return list(self._partitions(sorted(self.topics, key=lambda t: (len(self.subscribers[t]), t))))
        remaining: dict[str, list[Partition]] = {}
        for member, partitions in reversed(self.current.items()):
            partitions.sort()  # (in place, as librdkafka sorts the member's list)
            still = [tp for tp in partitions if self._exists(tp)]
            if still:
                remaining[member] = still
        consumers = sorted((len(partitions), member) for member, partitions in remaining.items())
        ordered: list[Partition] = []
        while consumers:
            load, member = consumers[-1]
            mine = remaining[member]
            earlier = next((tp for tp in mine if tp in self.previous), None) if self.previous else None
            if earlier is not None:  # (a partition that had another owner first)
                mine.remove(earlier)
                ordered.append(earlier)
            elif mine:
                ordered.append(mine.pop(0))
            else:
                consumers.pop()
                continue
            consumers.pop()
            insort(consumers, (load - 1, member))
        listed = not ordered
        seen = set(ordered)
        ordered.extend(tp for tp in self._newest_first() if tp not in seen)
        if listed:
            ordered.sort()
        return ordered

    def _balance(self, ordered: list[Partition], unassigned: list[Partition], revocation_required: bool) -> None:
        """``balance``."""
        initializing = self.by_load.most() == 0
        if self.racks is not None and self.racks.member_racks:
            leftover = list(unassigned)
            self._maybe_assign(leftover, remove=True, racks=True)
            self._maybe_assign(leftover, remove=False, racks=False)
        else:
            self._maybe_assign(unassigned, remove=False, racks=False)
        alone = {t for t in self.topics if len(self.subscribers[t]) < 2}
        if alone:  # (removed from both lists, which hold each partition once)
            ordered[:] = [tp for tp in ordered if tp.topic not in alone]
            unassigned[:] = [tp for tp in unassigned if tp.topic not in alone]
        fixed = {member: list(self.current[member]) for member in self.by_load if not self._can_participate(member)}
        for member in fixed:
            del self.current[member]
        self.by_load = _ByLoad((len(self.current[member]), member) for member in self.by_load if member not in fixed)
        self._holders = None
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

    def _maybe_assign(self, partitions: list[Partition], remove: bool, racks: bool) -> None:
        """``maybeAssign`` and ``maybeAssignPartition``: each partition to the least loaded
        member that may take it (on its rack, in the rack-aware pass)."""
        left = []
        keys, dealt_to = self.by_load.keys, self.dealt_to
        for tp in partitions:
            topic, taker = tp.topic, None
            for _load, member in keys:  # (the least loaded first)
                if topic in dealt_to[member] and not (racks and self._mismatch(member, tp)):
                    taker = member
                    break
            if taker is None or not remove:
                left.append(tp)
            if taker is not None:
                mine = self.current[taker]
                mine.append(tp)
                self.owner[tp] = taker
                self.by_load.moved(taker, len(mine) - 1, len(mine))
        partitions[:] = left

    def _can_participate(self, member: str) -> bool:
        """``consumerCanParticipateInReassignment``."""
        mine = self.current[member]
        if len(mine) < self.potential[member]:
            return True
        return any(self._exists(tp) and len(self.subscribers[tp.topic]) >= 2 for tp in mine)

    def _held(self) -> dict[Partition, str]:
        """Each partition's member by the members' lists (``isBalanced``'s ``allPartitions``:
        where two lists hold it, the one listed first). Kept as partitions move while no list
        holds a partition twice; else made again at each call, as librdkafka does."""
        if self._holders is None:
            held: dict[Partition, str] = {}
            for member, partitions in reversed(self.current.items()):
                for tp in partitions:
                    held[tp] = member
            if len(held) < sum(map(len, self.current.values())):
                return held  # (a partition in two lists: not kept)
            self._holders = held
        return self._holders

    def _balanced(self) -> bool:
        """``isBalanced``."""
        if self.by_load.least() >= self.by_load.most() - 1:
            return True
        held = self._held()
        for member in self.by_load:
            mine = self.current[member]
            if len(mine) == self.potential[member]:
                continue
            kept = set(mine)
            for tp in self._partitions(t for t in self.topics if t in self.dealt_to[member]):
                if tp in kept:
                    continue
                other = held.get(tp)
                if other is None:
                    raise LibrdkafkaAssignorFailure(f"librdkafka's leader would crash (isBalanced): partition "
                                                    f"{tp.topic}-{tp.partition} has no owner")
                if len(mine) < len(self._held_by(other, tp)):
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
                member = self._owner(tp)
                mine = self._held_by(member, tp)
                earlier = self.previous.get(tp)
                if earlier is not None and len(mine) > len(self._held_by(earlier[0], tp)) + 1:
                    self._reassign_to(tp, earlier[0])
                    performed = modified = True
                    continue
                takers = self.subscribers[tp.topic]
                if self.racks is not None:
                    rack = self.racks.member_racks.get(member)
                    replicas = self.racks.partition_racks.get(tp, [])
                    if rack is not None and rack in replicas and any(
                            self.racks.member_racks.get(other) in replicas
                            and len(mine) > len(self._held_by(other, tp)) + 1 for other in takers):
                        self._reassign(tp)
                        performed = modified = True
                        continue
                if self._lighter(member, len(mine), takers, tp):
                    self._reassign(tp)
                    performed = modified = True
            if not modified:
                return performed

    def _lighter(self, member: str, load: int, takers: list[str], tp: Partition) -> bool:
        """Whether another of `takers` holds two or more partitions fewer than `load` (the
        loop over ``consumers`` in ``performReassignments``)."""
        current = self.current
        for other in takers:
            if other != member:
                held = current.get(other)
                if held is None:
                    self._held_by(other, tp)  # (raises: a member librdkafka does not find)
                elif load > len(held) + 1:
                    return True
        return False

    def _owner(self, tp: Partition) -> str:
        found = self.owner.get(tp)
        if found is None:
            raise LibrdkafkaAssignorFailure(f"librdkafka's leader would stop on an assertion (performReassignments): "
                                            f"partition {tp.topic}-{tp.partition} has no current consumer")
        return found

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
            if tp.topic in self.dealt_to[member]:
                self._reassign_to(tp, member)
                return
        raise LibrdkafkaAssignorFailure(  # (librdkafka: rd_assert, "no new consumer found")
            f"librdkafka's leader would stop on an assertion (reassignPartition): no member may take partition "
            f"{tp.topic}-{tp.partition}")

    def _reassign_to(self, tp: Partition, new: str) -> None:
        """``reassignPartitionToConsumer`` and ``processPartitionMovement``."""
        moved = self.movements.actual(tp, self._owner(tp), new)
        old = self._owner(moved)
        self.movements.move(moved, old, new)
        gaining, losing = self._held_by(new, moved), self._held_by(old, moved)
        gaining.append(moved)
        self.by_load.moved(new, len(gaining) - 1, len(gaining))
        if moved in losing:
            losing.remove(moved)
            self.by_load.moved(old, len(losing) + 1, len(losing))
            if self._holders is not None:
                self._holders[moved] = new
        else:  # (the partition's current consumer is not the member whose list holds it: now in two lists)
            self._holders = None
        self.owner[moved] = new


def _score(loads: Iterable[list[Partition]]) -> int:
    """``getBalanceScore``: the sum over member pairs of their load difference."""
    sizes = [len(partitions) for partitions in loads]
    return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1:])


def eligible_topics(group: Group) -> list[str]:
    """The topics librdkafka's leader deals (``eligible_topics``: those with partitions some member
    subscribes to), in the order its Metadata response lists them. The leader asks for the topics
    in the order it meets them, members in the JoinGroup response's order, each one's subscription
    in its order (``rd_kafka_topic_partition_list_get_topic_names``; a librdkafka member lists its
    topics by name), and deals them in the order the broker answers
    (``rd_kafka_member_subscriptions_map``), which is not the request's beyond four topics
    (`metadata_order.response_order`).

    Examples
    --------
    >>> from assignor.model import Member
    >>> members = [Member("m", [f"t-{c}" for c in "abcdef"])]
    >>> eligible_topics(Group({f"t-{c}": 1 for c in "abcdef"}, members))
    ['t-f', 't-e', 't-d', 't-a', 't-c', 't-b']
    """
    requested = response_order([t for m in group.members for t in m.topics])
    return [t for t in requested if group.topics.get(t, 0) > 0]


def assign_sticky(group: Group) -> dict[str, list[TopicPartition]]:
    """What ``rd_kafka_sticky_assignor_assign_cb`` assigns `group` (members in the order the
    leader's JoinGroup response lists them), before the cooperative protocol withholds
    anything."""
    found = _Assignor(group).run() if group.members else {}
    return {m.id: list(found.get(m.id, [])) for m in group.members}


def assign(group: Group) -> Plan:
    """``librdkafka-cooperative-sticky``: librdkafka's plan under the cooperative protocol
    (``rd_kafka_cooperative_protocol_adjust_assignment``): what `assign_sticky` gives, less each
    partition another member still owns; a partition owned but given to nobody stays with its
    owner. A partition `assign_sticky` lists twice (a claim of an older generation, listed after
    the newer one's: librdkafka moves it from the wrong member) goes to the later member.

    Raises
    ------
    LibrdkafkaAssignorFailure
        Where librdkafka's leader stops, or would give a member a partition of a topic it does
        not subscribe to, or back one that does not exist.
    """
    planned = assign_sticky(group)
    given = {tp: m for m, partitions in planned.items() for tp in partitions}
    owned = {tp: m.id for m in group.members for tp in m.owned}
    out: dict[str, list[TopicPartition]] = {m.id: [] for m in group.members}
    # (in librdkafka's order: kept partitions, then those nobody owns, then those given to nobody)
    for tp, member in given.items():
        if owned.get(tp) == member:
            out[member].append(tp)
    for tp, member in given.items():
        if tp not in owned:
            out[member].append(tp)
    subscribed = {m.id: set(m.topics) for m in group.members}
    for member, partitions in out.items():  # (a claim's earlier owner takes it back unasked)
        stray = next((tp for tp in partitions if tp.topic not in subscribed[member]), None)
        if stray is not None:
            raise LibrdkafkaAssignorFailure(
                f"librdkafka's leader would give member {member!r} partition {stray.topic}-{stray.partition} of a "
                "topic it does not subscribe to: it claimed the partition in an earlier generation, and "
                "performReassignments moves a partition back to its earlier owner without asking")
    for tp, member in owned.items():
        if tp not in given:
            if not 0 <= tp.partition < group.topics.get(tp.topic, 0):
                why = "which does not exist"
            elif tp.topic not in subscribed[member]:
                why = "of a topic it does not subscribe to"
            else:
                out[member].append(tp)
                continue
            raise LibrdkafkaAssignorFailure(
                f"librdkafka's leader would give member {member!r} partition {tp.topic}-{tp.partition} back, {why}: "
                "a partition a member claims and nobody is given stays with it")
    return Plan(NAME, out)


#: librdkafka's ``cooperative-sticky`` (a peer's algorithm: listed by name, not in the what-if's
#: default comparison). Its leader writes each member's subscription user data back into its
#: assignment (``rd_kafka_group_MemberState_consumer_write``): the sticky user data of a member
#: assigned before, so from the group's second rebalance on.
STRATEGY = Strategy(NAME, COOPERATIVE_STICKY, assign, on_objects(assign), assignment_user_data=True,
                    peer="librdkafka")
