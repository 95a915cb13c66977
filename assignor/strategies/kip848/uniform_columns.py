"""The homogeneous ``uniform`` builder (`uniform._Homogeneous`) on arrays: the same plan, every
member's partitions in the same order, for the groups it takes; the plain model stays the
reference, and a property test holds the two equal.

It takes groups where every member lists the same topics (names the cluster lacks left out, as
the coordinator leaves them out), and every claim is a `TopicPartition` of a subscribed topic,
in range, held once; no member's map of topics may have held eight in one bin (a small table
grows early, a large one makes the bin a tree, `tree_bin`; `current_columns.crowding_possible`)
and no partition set nine keys in one bin of a table of 64 or more (claims in strides of a
power of two). `assign` answers None for any other group, which the plain model then plans (and
fails on, where Kafka's builder throws). A partition set whose small table gets nine keys in
one bin grows early in Java (``treeifyBin``, `JavaHashMap._crowded`): such sets are rare, and
their sizes are replayed on the model.

How the builder reads on arrays (the order is the whole difficulty; `java_hash` says why):

- a member's current assignment iterates topic by topic in bucket order of its map (``put`` in
  the order its claims first name each topic, from 16 buckets), each topic's partitions in bucket
  order of a ``new HashSet<>(claims)``, ties in claim order (`current_columns.current_order`);
- a member keeps the first ``quota`` partitions in that order and gives up the rest, so the kept
  rows are a prefix and the revoked rows follow, member by member (`_quotas`);
- the unassigned partitions (never held, topic by topic in the subscription set's order, then
  the revoked in order) fill the members short of their quota in member order;
- a member that gives up or receives anything is deep-copied first: its topics are put again into
  ``new HashMap<>(topics)``, then topics it receives for the first time go to the head of their
  bin (``computeIfAbsent``); its sets keep their order and grow by ``put``
  (`target_columns.final_order`).
"""

from __future__ import annotations

import numpy as np

from assignor._arrays import appended, filled, gc_paused
from assignor.java_hash import JavaHashMap
from assignor.model import Claims, Group, TopicPartition
from assignor.ordering import hashmap_order
from assignor.strategies.kip848.coordinator import spread_topic_hashes, topic_hash
from assignor.strategies.kip848.current_columns import (
    Claimed,
    Rows,
    as_objects,
    current_of,
    parse_claims,
    per_member,
)
from assignor.strategies.kip848.target_columns import final_order
from assignor.topic_ids import topic_ids_of

__all__ = ["assign", "columns"]


def assign(group: Group) -> dict[str, list[TopicPartition]] | None:
    """Each member's new target assignment (``group.members`` order), as
    `assignor.strategies.kip848.uniform` plans it for a homogeneous group; None where this path
    does not apply (see the module docstring).

    Examples
    --------
    >>> from assignor import Group, Member
    >>> group = Group({"t0000": 10}, [Member(m, ["t0000"]) for m in ("a", "b", "c")])
    >>> {m: [tp.partition for tp in tps] for m, tps in assign(group).items()}
    {'a': [0, 1, 2], 'b': [3, 4, 5], 'c': [6, 7, 8, 9]}
    """
    found = _target(group, None, sources=True)
    if found is None:
        return None
    rank, final, claimed, names = found
    assert claimed.objects is not None
    with gc_paused():  # lists of acyclic tuples: nothing for the collector to find
        return per_member(group.members, rank, final.member, as_objects(final, claimed.objects, names))


def columns(group: Group, owned: Claims | None, hashes: dict[str, int] | None = None) -> Claims | None:
    """`assign` as `Claims` (member index in ``group.members`` order, each member's rows in
    Kafka's order), the current targets from `owned` when given; `hashes`: the member ids'
    string hashes a caller keeps between targets (`ordering.hashmap_order`'s `known`)."""
    found = _target(group, owned, sources=False, hashes=hashes)
    if found is None:
        return None
    _, final, _, names = found
    return Claims(final.member, final.topic, final.part, names)


def _target(group: Group, owned: Claims | None, sources: bool, hashes: dict[str, int] | None = None
            ) -> tuple[np.ndarray, Rows, Claimed, list[str]] | None:
    """Each member's rank in the member map, the new target as rows sorted by rank (with the
    claims they came from, members named by rank, where `sources`; else members named by their
    index in ``group.members``), the claims read, and the topic names the rows index."""
    members = group.members
    topics = _subscribed(group)
    if topics is None:
        return None
    names, counts, topic_hashes = topics
    offsets = np.zeros(len(names) + 1, dtype=np.int64)
    counts.cumsum(out=offsets[1:])
    claimed = parse_claims(members, owned, names, counts, offsets)
    if claimed is None:
        return None
    rank, spec = current_of(members, hashmap_order([m.id for m in members], known=hashes), claimed, len(names),
                            topic_hashes)
    if spec is None:
        return None
    total = int(offsets[-1])
    sizes = appended(spec.member_start[1:], len(spec.row_pair)) - spec.member_start
    unfilled = _quotas(sizes, total)
    if unfilled is None:
        return None
    keep, quota_of = unfilled
    free = (~claimed.taken).nonzero()[0]
    free_topic = offsets.searchsorted(free, side="right") - 1
    kept = spec.prefixes(keep)
    given_up = (~kept).nonzero()[0]
    unassigned = Rows(np.empty(0, dtype=np.int64), np.concatenate((free_topic, spec.rows.topic[given_up])),
                       np.concatenate((free - offsets[free_topic], spec.rows.part[given_up])),
                       np.concatenate((filled(len(free), -1), spec.rows.source[given_up])))
    added = _hand_out(unassigned, quota_of)
    if added is None:
        return None
    copied = (sizes > keep) | (quota_of > 0)  # gave something up, or was short (copied even if given nothing)
    index = None
    if not sources:
        index = np.empty(len(rank), dtype=np.int64)
        index[rank] = np.arange(len(rank), dtype=np.int64)
    final = final_order(spec, kept, added, copied, len(names), topic_hashes, [None] * len(names), sources, index)
    if final is None:
        return None
    return rank, final, claimed, names


def _subscribed(group: Group) -> tuple[list[str], np.ndarray, np.ndarray] | None:
    """The subscription set as the builder iterates it (``new HashSet<>(first member's ids)``):
    names, partition counts and spread topic hashes; None unless every member lists the same
    topics, some of which exist."""
    members = group.members
    if not members or not members[0].topics:
        return None
    first = members[0].topics
    if any(m.topics is not first and m.topics != first for m in members):
        return None
    # names the cluster lacks are left out, as the coordinator's TopicIds view leaves them out
    listed = [name for name in dict.fromkeys(first) if name in group.topics]
    if not listed:
        return None
    ids = topic_ids_of(listed, group.topic_ids)
    name_of = {ids[name]: name for name in listed}
    names = [name_of[t] for t in JavaHashMap.copy_of([ids[name] for name in listed], topic_hash)]
    counts = np.array([group.topics[name] for name in names], dtype=np.int64)
    hashes = spread_topic_hashes(ids[name] for name in names)
    return names, counts, hashes


def _quotas(sizes: np.ndarray, total: int) -> tuple[np.ndarray, np.ndarray] | None:
    """`uniform._Homogeneous._revoke`'s arithmetic, member by member in map order: how many
    partitions each keeps, and how many more each is short of (0 for most). None: nothing to
    plan (no members)."""
    count = len(sizes)
    if count == 0:
        return None
    minimum, extra = divmod(total, count)
    keep: list[int] = []
    short: list[int] = []
    for i, n in enumerate(sizes.tolist()):
        has_extra = extra > 0
        quota = minimum + 1 if has_extra else minimum
        keep.append(min(n, quota))
        quota = max(quota - n, 0)
        # KAFKA-18688: a member at the minimum leaves the extra partition to a later member,
        # unless it is one of the last members that must take one
        if quota > 0 and has_extra and count - i > extra:
            quota, has_extra = quota - 1, False
        short.append(quota)
        if has_extra:
            extra -= 1
    return np.array(keep, dtype=np.int64), np.array(short, dtype=np.int64)


def _hand_out(unassigned: Rows, short: np.ndarray) -> Rows | None:
    """`uniform._Homogeneous._assign_remaining`: the unassigned rows in order to the members short
    of their quota, in member order; None where some would be left over (Kafka throws: the plain
    model says so)."""
    wanting = (short > 0).nonzero()[0]
    ends = short[wanting].cumsum()
    if len(unassigned.part) > (int(ends[-1]) if len(ends) else 0):
        return None
    member = wanting[ends.searchsorted(np.arange(len(unassigned.part)), side="right")]
    return Rows(member, unassigned.topic, unassigned.part, unassigned.source)
