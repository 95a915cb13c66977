"""librdkafka's ``cooperative-sticky``: ``librdkafka-cooperative-sticky``, the plan a librdkafka
leader (librdkafka 2.x, ``rdkafka_sticky_assignor.c``, ``rd_kafka_sticky_assignor_assign_cb``)
sends, decision for decision.

librdkafka's sticky assignor is its own port of Java's *older* ``AbstractStickyAssignor`` (the
general algorithm for every group, where Java 4.3 deals equal subscriptions with its
constrained builder), and it decides ties its own way. Where Java's plan and librdkafka's are
equally balanced and equally sticky, which member gets which partition still differs: after a
leave, the leaver's partitions are listed from the last one back (its maps iterate newest entry
first), so the member that takes the first of them is not Java's. What-if on a group of
librdkafka members asks for this strategy.

Steps, as ``assign_cb`` runs them (names after librdkafka's):

1. ``prepopulateCurrentAssignments``: each partition goes to the claimant of the highest
   generation; a partition two claimants claim in one generation is nobody's (and dropped from
   ``currentPartitionConsumer``); the next highest claimant is its previous owner.
2. ``populatePotentialMaps``: each partition's potential members (the members in group order)
   and each member's potential partitions, topics in name order.
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

The topics are taken in name order: the order of the leader's Metadata response to a request
listing them sorted (``rd_list_deduplicate``), which the broker keeps for up to four topics.
"""

from __future__ import annotations

from collections.abc import Iterable

from assignor.errors import LibrdkafkaAssignorFailure
from assignor.model import Claims, Group, Plan, TopicPartition
from assignor.protocols import COOPERATIVE_STICKY
from assignor.solver import dense
from assignor.strategies.strategy import Planned, Strategy, owning_claims, planned_in_plan_order

__all__ = ["NAME", "STRATEGY", "assign", "assign_sticky"]

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
    listed = group.partition_racks or {}
    racks = {Partition(t, p): sorted(set(listed[t][p])) if t in listed and p < len(listed[t]) else []
             for t in topics for p in range(group.topics[t])}
    member_racks = {member: by_id[member].rack for t in topics for member in subscribers[t]}
    wanted = {r for r in member_racks.values() if r}
    every = set().union(*racks.values()) if racks else set()
    if not wanted or not every or not wanted & every or all(len(r) == len(every) for r in racks.values()):
        return None
    return _Racks(member_racks, racks)


class _Assignor:
    """One run of ``rd_kafka_sticky_assignor_assign_cb``, its maps as dicts (iterated newest
    first where librdkafka iterates an ``rd_map_t``) and its lists as lists."""

    def __init__(self, group: Group) -> None:
        self.group = group
        members = group.members
        self.topics = sorted(t for t, count in group.topics.items()
                             if count > 0 and any(t in m.topics for m in members))
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


def _score(loads: Iterable[list[Partition]]) -> int:
    """``getBalanceScore``: the sum over member pairs of their load difference."""
    sizes = [len(partitions) for partitions in loads]
    return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1:])


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


def _planned(group: Group, claims: Claims | None = None, memo: dense.PlanMemo | None = None,
             _leader: object = None) -> Planned:
    if claims is not None:
        group = owning_claims(group, claims)
    return planned_in_plan_order(group, assign(group), claims, memo)


#: librdkafka's ``cooperative-sticky`` (a peer's algorithm: listed by name, not in the what-if's
#: default comparison).
STRATEGY = Strategy(NAME, COOPERATIVE_STICKY, assign, _planned, peer="librdkafka")
