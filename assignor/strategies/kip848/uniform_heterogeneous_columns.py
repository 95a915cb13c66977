"""The heterogeneous ``uniform`` builder (`uniform._Heterogeneous`) reading the group from arrays:
the builder's own decisions, made by the same class (which partitions move, where, in which
order), written to a log instead of the members' maps, since no decision reads a map. The plain
model stays the reference; a property test holds the two equal.

Where the plain model builds a ``HashMap`` of ``HashSet`` for every member before it starts
(`coordinator.group_spec`) and changes them partition by partition, this path reads loads and
owners from the claims' columns (`_FromColumns._revoke`), and afterwards lays out the new target
of every member that only received partitions (every member of a new group, the joiner of a
settled one) on arrays, with the members left untouched in their current order
(`target_columns.final_order`, after `current_columns`). A member that lost a partition or a
topic is replayed on the model: its current map built from its claims, deep-copied as the
builder copies it, then its part of the log.

It takes groups whose subscriptions differ, where every claim is a `TopicPartition` of an
existing topic, in range, held once, no member holds more than `current_columns.MAX_TOPICS_PER_MEMBER`
topics, and no member's map of topics held one bin of nine (`current_columns.crowding_possible`:
a small table grows early, a large one makes the bin a tree, `tree_bin`); `assign` answers None
for any other group, which the plain model then plans. A member whose map of topics or set of
partitions may have crowded a bin while it received is replayed on the model.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from assignor._arrays import filled, gc_paused
from assignor.java_hash import JavaHashMap, float_capacity, integer_hash
from assignor.model import Claims, Group, TopicPartition, topic_partitions
from assignor.ordering import hashmap_order
from assignor.strategies.kip848 import uniform
from assignor.strategies.kip848.coordinator import (
    Assignment,
    CoordinatorSpec,
    is_homogeneous,
    new_partition_set,
    spread_topic_hashes,
    subscription_order,
    topic_hash,
)
from assignor.strategies.kip848.current_columns import (
    Claimed,
    Current,
    Rows,
    as_claims,
    as_objects,
    current_of,
    parse_claims,
    per_member,
)
from assignor.strategies.kip848.target_columns import final_order
from assignor.topic_ids import TopicId, topic_ids_of

__all__ = ["assign", "columns"]


def assign(group: Group) -> dict[str, list[TopicPartition]] | None:
    """Each member's new target assignment (``group.members`` order), as
    `assignor.strategies.kip848.uniform` plans a heterogeneous group; None where this path does
    not apply (a homogeneous group among them).

    Examples
    --------
    >>> from assignor import Group, Member
    >>> group = Group({"t0000": 4, "t0001": 2}, [Member("a", ["t0000"]), Member("b", ["t0000", "t0001"])])
    >>> {m: [(tp.topic, tp.partition) for tp in tps] for m, tps in assign(group).items()}
    {'a': [('t0000', 0), ('t0000', 1), ('t0000', 2)], 'b': [('t0000', 3), ('t0001', 0), ('t0001', 1)]}
    """
    found = _target(group, None)
    if found is None:
        return None
    rank, final, replayed, claimed, names = found
    members = group.members
    assert claimed.objects is not None
    with gc_paused():  # lists of acyclic tuples: nothing for the collector to find
        planned = per_member(members, rank, final.member, as_objects(final, claimed.objects, names))
        for m, r in zip(members, rank.tolist()):
            if r in replayed:  # a member replayed on the model: none of `final`'s rows are its
                pairs = replayed[r]
                planned[m.id] = topic_partitions([names[t] for t, _ in pairs], [p for _, p in pairs])
        return planned


def columns(group: Group, owned: Claims | None, hashes: dict[str, int] | None = None) -> Claims | None:
    """`assign` as `Claims` (member index in ``group.members`` order, each member's rows in
    Kafka's order), the current targets from `owned` when given; `hashes` as
    `uniform_columns.columns` takes them."""
    found = _target(group, owned, hashes)
    if found is None:
        return None
    rank, final, replayed, _, names = found
    if replayed:  # the replayed members' rows join the others', member by member
        pairs = [(r, t, p) for r, listed in replayed.items() for t, p in listed]
        more = np.array(pairs, dtype=np.int64).reshape(-1, 3)
        member = np.concatenate((final.member, more[:, 0]))
        by_member = member.argsort(kind="stable")
        final = Rows(member[by_member], np.concatenate((final.topic, more[:, 1]))[by_member],
                     np.concatenate((final.part, more[:, 2]))[by_member], member[by_member])
    return as_claims(rank, final, names)


def _target(group: Group, owned: Claims | None, hashes: dict[str, int] | None = None
            ) -> tuple[np.ndarray, Rows, dict[int, list[tuple[int, int]]], Claimed, list[str]] | None:
    """Each member's rank in the member map, the new target as rows (by rank) of the members
    laid out on arrays, the replayed members' lists (rank -> topic index and partition pairs),
    the claims read, and the topic names the rows index."""
    members = group.members
    if not members:
        return None
    names = list(group.topics)
    counts = np.array([group.topics[name] for name in names], dtype=np.int64)
    offsets = np.zeros(len(names) + 1, dtype=np.int64)
    counts.cumsum(out=offsets[1:])
    ids = topic_ids_of(names, group.topic_ids)
    spec = _spec(group, ids, hashes)
    if spec is None:
        return None
    claimed = parse_claims(members, owned, names, counts, offsets)
    if claimed is None:
        return None
    topic_hashes = spread_topic_hashes(ids[name] for name in names)
    rank, current = current_of(members, spec.member_ids, claimed, len(names), topic_hashes)
    if current is None:
        return None
    builder = _FromColumns(spec, current, [ids[name] for name in names], offsets)
    builder.build()
    if not builder.subscribers:  # nobody subscribes to an existing topic: Kafka hands out nothing
        none = np.empty(0, dtype=np.int64)
        return rank, Rows(none, none, none, none), {}, claimed, names
    final, replayed = _changed(builder, current, claimed.topic, claimed.part, offsets, len(names), topic_hashes)
    listed = {r: [(builder.topic_index[t], p) for t, ps in assignment.items() for p in ps or ()]
              for r, assignment in replayed.items()}
    return rank, final, listed, claimed, names


def _changed(builder: _FromColumns, current: Current, topic: np.ndarray, part: np.ndarray, offsets: np.ndarray,
             topics: int, hashes: np.ndarray) -> tuple[Rows, dict[int, Assignment]]:
    """The new target assignment: members that only received partitions (the most: every one of
    a new group) on arrays (`target_columns.final_order`), members that lost some replayed on the
    model (`_FromColumns.replayed`), as rows and maps."""
    members = len(builder.members)
    log = np.array(builder.log, dtype=np.int64).reshape(-1, 4)
    member, log_topic, log_part, added = log[:, 0], log[:, 1], log[:, 2], log[:, 3].astype(bool)
    lost = np.zeros(members, dtype=bool)
    lost[member[~added]] = True
    lost[list(builder.dropped)] = True
    receiving = np.zeros(members, dtype=bool)
    receiving[member] = True
    receiving &= ~lost
    claim_at = filled(int(offsets[-1]), -1)
    claim_at[offsets[topic] + part] = np.arange(len(part), dtype=np.int64)
    mine = (receiving[member] & added).nonzero()[0]
    mine = mine[member[mine].argsort(kind="stable")]  # member by member, each in the order received
    received = Rows(member[mine], log_topic[mine], log_part[mine], claim_at[offsets[log_topic[mine]] + log_part[mine]])
    fresh = [builder.fresh_set_capacity(t) for t in range(topics)]
    final = final_order(current, ~lost[current.rows.member], received, receiving, topics, hashes, fresh)
    if final is None:  # a member's topics crowd a small map: every changed member on the model
        lost |= receiving
        final = current.rows.take((~lost[current.rows.member]).nonzero()[0])
    changes: dict[int, list[tuple[int, int, bool]]] = {int(i): [] for i in lost.nonzero()[0]}
    for m, t, p, add in builder.log:
        if m in changes:
            changes[m].append((t, p, add))
    return final, {i: builder.replayed(i, logged) for i, logged in changes.items()}


def _spec(group: Group, ids: dict[str, TopicId], hashes: dict[str, int] | None = None) -> CoordinatorSpec | None:
    """`coordinator.group_spec` without the members' maps (`_FromColumns` builds those it
    changes); None for a homogeneous group."""
    distinct = Counter(tuple(m.topics) for m in group.members)
    if is_homogeneous(distinct.items(), len(group.members)):
        return None
    resolved = {topics: subscription_order(topics, ids) for topics in distinct}
    return CoordinatorSpec(
        member_ids=hashmap_order([m.id for m in group.members], known=hashes),
        subscriptions={m.id: resolved[tuple(m.topics)] for m in group.members},
        instance_ids={},
        assignments={},
        homogeneous=False,
        partitions={ids[name]: count for name, count in group.topics.items()},
        names={topic: name for name, topic in ids.items()},
    )


class _FromColumns(uniform._Heterogeneous):
    """`uniform._Heterogeneous` deciding as ever (loads and owners), but writing each change into
    a log instead of the members' maps (no decision reads a map): `replayed` then gives the map
    of a member that lost something, on the model, from its current map built from columns."""

    def __init__(self, spec: CoordinatorSpec, current: Current, topic_ids: list[TopicId],
                 offsets: np.ndarray) -> None:
        super().__init__(spec)
        self.current, self.topic_ids, self.offsets = current, topic_ids, offsets
        self.topic_index = {t: i for i, t in enumerate(topic_ids)}
        self.bounds = current.rows.member.searchsorted(np.arange(len(self.members) + 1)).tolist()
        self.log: list[tuple[int, int, int, bool]] = []  # (member, topic index, partition, added?)
        self.dropped: dict[int, list[TopicId]] = {}  # topics a member no longer subscribes to
        self.fresh: dict[int, int | None] = {}  # see `fresh_set_capacity`

    def _revoke(self) -> None:
        """`uniform._Heterogeneous._revoke` on columns: loads and owners from the claims of
        subscribed topics; a member holding a topic it no longer subscribes to drops it."""
        rows, members = self.current.rows, self.members
        width = len(self.topic_ids)
        pairs = [i * width + self.topic_index[t] for i, m in enumerate(members) for t in self.spec.subscriptions[m]]
        subscribed = np.isin(rows.member * width + rows.topic, np.array(pairs, dtype=np.int64))
        self.sizes[:] = np.bincount(rows.member[subscribed], minlength=len(members)).tolist()
        owner = filled(int(self.offsets[-1]), -1)
        owner[self.offsets[rows.topic[subscribed]] + rows.part[subscribed]] = rows.member[subscribed]
        for topic in self.owners:
            t = self.topic_index[topic]
            self.owners[topic] = owner[self.offsets[t]:self.offsets[t + 1]].tolist()
        for i, t in sorted(set(zip(rows.member[~subscribed].tolist(), rows.topic[~subscribed].tolist()))):
            self.dropped.setdefault(i, []).append(self.topic_ids[t])

    def _assign(self, topic: TopicId, partition: int, member: int) -> None:
        """`uniform._Heterogeneous._assign`'s decisions, logged."""
        owners = self.owners[topic]
        old = owners[partition]
        t = self.topic_index[topic]
        if old != -1:
            self.log.append((old, t, partition, False))
            owners[partition] = -1
            self.sizes[old] -= 1
        self.log.append((member, t, partition, True))
        owners[partition] = member
        self.sizes[member] += 1

    def replayed(self, i: int, changes: list[tuple[int, int, bool]]) -> Assignment:
        """Member `i`'s new map as `uniform._Heterogeneous` leaves it: a deep copy of its current
        map, without the topics it dropped, then its `changes` (its part of the log) in order."""
        found = uniform.deep_copy(self._current_map(i))
        for topic in self.dropped.get(i, ()):
            found.remove(topic)
        for t, partition, added in changes:
            topic = self.topic_ids[t]
            if added:
                capacity = self.fresh_set_capacity(t)
                found.compute_if_absent(topic, lambda: JavaHashMap(integer_hash, capacity)).put(partition)
                continue
            kept = found.get(topic)
            if kept is not None:
                kept.remove(partition)
                if not len(kept):
                    found.remove(topic)
        return found

    def fresh_set_capacity(self, t: int) -> int | None:
        """The capacity a set of topic `t` made anew is asked for: its partitions per subscriber
        (`uniform._Heterogeneous._assign`'s estimate)."""
        if t not in self.fresh:
            topic = self.topic_ids[t]
            subscribers = len(self.subscribers.get(topic, ()))
            count = self.spec.partitions[topic]
            self.fresh[t] = float_capacity((count + subscribers - 1) // subscribers) if subscribers else None
        return self.fresh[t]

    def _current_map(self, i: int) -> Assignment:
        """Member `i`'s current assignment as `coordinator.group_spec` builds it: topics put in the
        order its claims first name them, each a ``new HashSet<>`` of its claims in order."""
        found: Assignment = JavaHashMap(topic_hash)
        if self.bounds[i] == self.bounds[i + 1]:
            return found
        rows = self.current.rows
        mine = np.arange(self.bounds[i], self.bounds[i + 1])
        mine = mine[rows.source[mine].argsort(kind="stable")]  # claim order
        per_topic: dict[int, list[int]] = {}
        for t, p in zip(rows.topic[mine].tolist(), rows.part[mine].tolist()):
            per_topic.setdefault(t, []).append(p)
        for t, partitions in per_topic.items():
            found.put(self.topic_ids[t], new_partition_set(partitions))
        return found
