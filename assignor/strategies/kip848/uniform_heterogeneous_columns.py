"""The heterogeneous ``uniform`` builder (`uniform._Heterogeneous`) reading the group from arrays:
the builder's own decisions, made by the same class (which partitions move, where, in which
order), but a member's map is built, copied and changed only when the builder changes it. Every
other member keeps its current assignment as it was, in the order `current_columns` gives. The
plain model stays the reference; a property test holds the two equal.

Where the plain model builds a ``HashMap`` of ``HashSet`` for every member before it starts
(`coordinator.group_spec`), most of which the builder hands back untouched (a member joining a
group of a thousand changes a dozen), this path reads loads and owners from the claims' columns
(`_FromColumns._revoke`) and builds a member's map from its claims at the first change, the
moment the builder would copy it (``AssignorHelpers.deepCopyAssignment``).

It takes groups whose subscriptions differ, where every claim is a `TopicPartition` of an
existing topic, in range, held once, and no member holds more than `MAX_TOPICS_PER_MEMBER`
topics, nine of which never share the low four bits of their hashes; `assign` answers None for
any other group, which the plain model then plans.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from assignor._arrays import gc_paused
from assignor.model import Group, TopicPartition, topic_partitions
from assignor.ordering import hashmap_order
from assignor.strategies.kip848 import uniform
from assignor.strategies.kip848.coordinator import (
    Assignment,
    CoordinatorSpec,
    new_partition_set,
    topic_hash,
)
from assignor.strategies.kip848.current_columns import (
    Current,
    Rows,
    as_objects,
    current_order,
    parse_claims,
    topic_maps_crowded,
)
from assignor.strategies.kip848.java_hash import JavaHashMap, spread
from assignor.topic_ids import TopicId, topic_ids_of

__all__ = ["assign"]


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
    members = group.members
    if not members:
        return None
    names = list(group.topics)
    counts = np.array([group.topics[name] for name in names], dtype=np.int64)
    offsets = np.zeros(len(names) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    ids = topic_ids_of(names, group.topic_ids)
    spec = _spec(group, ids)
    if spec is None:
        return None
    parsed = parse_claims(members, names, counts, offsets)
    if parsed is None:
        return None
    claims, topic, part = parsed
    rank_of = {member_id: r for r, member_id in enumerate(spec.member_ids)}
    rank = np.fromiter(map(rank_of.__getitem__, (m.id for m in members)), dtype=np.int64, count=len(members))
    lengths = np.fromiter(map(len, (m.owned for m in members)), dtype=np.int64, count=len(members))
    hashes = np.array([spread(topic_hash(ids[name])) for name in names], dtype=np.int64)
    current = current_order(Rows(np.repeat(rank, lengths), topic, part, np.arange(len(part), dtype=np.int64)),
                            len(members), len(names), hashes)
    if current is None or topic_maps_crowded(current.pair_member, current.pair_topic, hashes):
        return None
    builder = _FromColumns(spec, current, [ids[name] for name in names], offsets)
    target = builder.build()
    bounds = np.searchsorted(current.rows.member, np.arange(len(members) + 1)).tolist()
    with gc_paused():  # lists of acyclic tuples: nothing for the collector to find
        if not builder.subscribers:  # nobody subscribes to an existing topic: Kafka hands out nothing
            return {m.id: [] for m in members}
        kept = as_objects(current.rows, claims, names)
        name_of = {ids[name]: name for name in names}
        found: dict[str, list[TopicPartition]] = {}
        for m, r in zip(members, rank.tolist()):
            if m.id in builder.copied:
                listed = [(name_of[t], p) for t, ps in target[m.id].items() for p in ps or ()]
                found[m.id] = topic_partitions([t for t, _ in listed], [p for _, p in listed])
            else:
                found[m.id] = kept[bounds[r]:bounds[r + 1]]
        return found


def _spec(group: Group, ids: dict[str, TopicId]) -> CoordinatorSpec | None:
    """`coordinator.group_spec` without the members' maps (`_FromColumns` builds those it
    changes); None for a homogeneous group."""
    distinct = Counter(tuple(m.topics) for m in group.members)
    subscribers: Counter[str] = Counter()
    for topics, count in distinct.items():
        for name in set(topics):
            subscribers[name] += count
    if all(n == len(group.members) for n in subscribers.values()):
        return None
    resolved = {topics: [ids[name] for name in dict.fromkeys(topics) if name in ids] for topics in distinct}
    return CoordinatorSpec(
        member_ids=hashmap_order([m.id for m in group.members]),
        subscriptions={m.id: resolved[tuple(m.topics)] for m in group.members},
        instance_ids={},
        assignments={},
        homogeneous=False,
        partitions={ids[name]: count for name, count in group.topics.items()},
        names={topic: name for name, topic in ids.items()},
    )


class _FromColumns(uniform._Heterogeneous):
    """`uniform._Heterogeneous` whose members' current maps come from columns, built at the first
    change (see the module docstring)."""

    def __init__(self, spec: CoordinatorSpec, current: Current, topic_ids: list[TopicId],
                 offsets: np.ndarray) -> None:
        super().__init__(spec)
        self.current, self.topic_ids, self.offsets = current, topic_ids, offsets
        self.bounds = np.searchsorted(current.rows.member, np.arange(len(self.members) + 1)).tolist()

    def _revoke(self) -> None:
        """`uniform._Heterogeneous._revoke` on columns: loads and owners from the claims of
        subscribed topics; a member holding a topic it no longer subscribes to is copied without it."""
        rows, members = self.current.rows, self.members
        topic_index = {t: i for i, t in enumerate(self.topic_ids)}
        width = len(self.topic_ids)
        pairs = [i * width + topic_index[t] for i, m in enumerate(members) for t in self.spec.subscriptions[m]]
        subscribed = np.isin(rows.member * width + rows.topic, np.array(pairs, dtype=np.int64))
        self.sizes[:] = np.bincount(rows.member[subscribed], minlength=len(members)).tolist()
        owner = np.full(int(self.offsets[-1]), -1, dtype=np.int64)
        owner[self.offsets[rows.topic[subscribed]] + rows.part[subscribed]] = rows.member[subscribed]
        for topic in self.owners:
            t = topic_index[topic]
            self.owners[topic] = owner[self.offsets[t]:self.offsets[t + 1]].tolist()
        for i, t in sorted(set(zip(rows.member[~subscribed].tolist(), rows.topic[~subscribed].tolist()))):
            self._copy_of(members[i]).remove(self.topic_ids[t])

    def _copy_of(self, member: str) -> Assignment:
        if member not in self.copied:
            self.copied.add(member)
            self.target[member] = uniform.deep_copy(self._current_map(member))
        return self.target[member]

    def _current_map(self, member: str) -> Assignment:
        """The member's current assignment as `coordinator.group_spec` builds it: topics put in
        the order its claims first name them, each a ``new HashSet<>`` of its claims in order."""
        rows, i = self.current.rows, self.index[member]
        mine = np.arange(self.bounds[i], self.bounds[i + 1])
        mine = mine[np.argsort(rows.source[mine], kind="stable")]  # claim order
        per_topic: dict[int, list[int]] = {}
        for t, p in zip(rows.topic[mine].tolist(), rows.part[mine].tolist()):
            per_topic.setdefault(t, []).append(p)
        found: Assignment = JavaHashMap(topic_hash)
        for t, partitions in per_topic.items():
            found.put(self.topic_ids[t], new_partition_set(partitions))
        return found
