"""The homogeneous ``uniform`` builder (`uniform._Homogeneous`) on arrays: the same plan, every
member's partitions in the same order, for the groups it takes; the plain model stays the
reference, and a property test holds the two equal.

It takes groups where every member lists the same topics, all of which exist, and every claim
is a `TopicPartition` of a subscribed topic, in range, held once; no member ends with more than
24 topics, nine of which never share the low four bits of their hashes (so no topic map grows
early). `assign` answers None for any other group, which the plain model then plans (and fails
on, where Kafka's builder throws). A partition set whose small table gets nine keys in one bin
grows early in Java (``treeifyBin``, `JavaHashMap._crowded`): such sets are rare, and their
sizes are replayed on the model.

How the builder reads on arrays (the order is the whole difficulty; `java_hash` says why):

- a member's current assignment iterates topic by topic in bucket order of its map (``put`` in
  the order its claims first name each topic, from 16 buckets), each topic's partitions in bucket
  order of a ``new HashSet<>(claims)``, ties in claim order (`_spec_order`);
- a member keeps the first ``quota`` partitions in that order and gives up the rest, so the kept
  rows are a prefix and the revoked rows follow, member by member (`_quotas`);
- the unassigned partitions (never held, topic by topic in the subscription set's order, then
  the revoked in order) fill the members short of their quota in member order;
- a member that gives up or receives anything is deep-copied first: its topics are put again into
  ``new HashMap<>(topics)``, then topics it receives for the first time go to the head of their
  bin (``computeIfAbsent``); its sets keep their order and grow by ``put`` (`_final_order`).
"""

from __future__ import annotations

import numpy as np

from assignor._arrays import gc_paused, run_starts, stable_order
from assignor.model import Group, TopicPartition
from assignor.ordering import hashmap_order
from assignor.strategies.kip848.coordinator import topic_hash
from assignor.strategies.kip848.current_columns import (
    MAX_TOPICS_PER_MEMBER,
    Current,
    Rows,
    as_objects,
    crowded_pairs,
    current_order,
    parse_claims,
    topic_maps_crowded,
)
from assignor.strategies.kip848.java_hash import JavaHashMap, grown_capacities, integer_hash, spread, spread_many
from assignor.topic_ids import topic_ids_of

__all__ = ["assign"]


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
    members = group.members
    topics = _subscribed(group)
    if topics is None:
        return None
    names, counts, hashes = topics
    offsets = np.zeros(len(names) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    parsed = parse_claims(members, names, counts, offsets)
    if parsed is None:
        return None
    claims, topic, part = parsed
    order = hashmap_order([m.id for m in members])
    rank_of = {member_id: r for r, member_id in enumerate(order)}
    rank = np.fromiter(map(rank_of.__getitem__, (m.id for m in members)), dtype=np.int64, count=len(members))
    lengths = np.fromiter(map(len, (m.owned for m in members)), dtype=np.int64, count=len(members))
    rows = Rows(np.repeat(rank, lengths), topic, part, np.arange(len(part), dtype=np.int64))
    spec = current_order(rows, len(members), len(names), hashes)
    if spec is None:
        return None
    total = int(offsets[-1])
    unfilled = _quotas(np.bincount(spec.rows.member, minlength=len(members)), total)
    if unfilled is None:
        return None
    keep, quota_of = unfilled
    taken = np.zeros(total, dtype=bool)
    taken[offsets[topic] + part] = True
    free = np.flatnonzero(~taken)
    free_topic = np.searchsorted(offsets, free, side="right") - 1
    kept = spec.position < keep[spec.rows.member]
    unassigned = Rows(np.empty(0, dtype=np.int64), np.concatenate((free_topic, spec.rows.topic[~kept])),
                       np.concatenate((free - offsets[free_topic], spec.rows.part[~kept])),
                       np.concatenate((np.full(len(free), -1, dtype=np.int64), spec.rows.source[~kept])))
    added = _hand_out(unassigned, quota_of)
    if added is None:
        return None
    final = _final_order(spec, kept, added, keep, quota_of, len(members), len(names), hashes)
    if final is None:
        return None
    bounds = np.searchsorted(final.member, np.arange(len(members) + 1)).tolist()
    with gc_paused():  # lists of acyclic tuples: nothing for the collector to find
        listed = as_objects(final, claims, names)
        return {m.id: listed[bounds[r]:bounds[r + 1]] for m, r in zip(members, rank.tolist())}


def _subscribed(group: Group) -> tuple[list[str], np.ndarray, np.ndarray] | None:
    """The subscription set as the builder iterates it (``new HashSet<>(first member's ids)``):
    names, partition counts and spread topic hashes; None unless every member lists the same
    topics, all existing."""
    members = group.members
    if not members or not members[0].topics:
        return None
    first = members[0].topics
    if any(m.topics is not first and m.topics != first for m in members):
        return None
    if any(name not in group.topics for name in first):
        return None
    listed = list(dict.fromkeys(first))
    ids = topic_ids_of(listed, group.topic_ids)
    name_of = {ids[name]: name for name in listed}
    names = [name_of[t] for t in JavaHashMap.copy_of([ids[name] for name in listed], topic_hash)]
    counts = np.array([group.topics[name] for name in names], dtype=np.int64)
    hashes = np.array([spread(topic_hash(ids[name])) for name in names], dtype=np.int64)
    return names, counts, hashes


def _quotas(sizes: np.ndarray, total: int) -> tuple[np.ndarray, np.ndarray] | None:
    """`uniform._Homogeneous._revoke`'s arithmetic, member by member in map order: how many
    partitions each keeps, and how many more each is short of (0 for most). None: nothing to
    plan (no members)."""
    count = len(sizes)
    if count == 0:
        return None
    minimum, extra = divmod(total, count)
    keep = np.empty(count, dtype=np.int64)
    short = np.zeros(count, dtype=np.int64)
    for i, n in enumerate(sizes.tolist()):
        has_extra = extra > 0
        quota = minimum + 1 if has_extra else minimum
        keep[i] = min(n, quota)
        quota = max(quota - n, 0)
        # KAFKA-18688: a member at the minimum leaves the extra partition to a later member,
        # unless it is one of the last members that must take one
        if quota > 0 and has_extra and count - i > extra:
            quota, has_extra = quota - 1, False
        short[i] = quota
        if has_extra:
            extra -= 1
    return keep, short


def _hand_out(unassigned: Rows, short: np.ndarray) -> Rows | None:
    """`uniform._Homogeneous._assign_remaining`: the unassigned rows in order to the members short
    of their quota, in member order; None where some would be left over (Kafka throws: the plain
    model says so)."""
    wanting = np.flatnonzero(short > 0)
    ends = np.cumsum(short[wanting])
    if len(unassigned.part) > (int(ends[-1]) if len(ends) else 0):
        return None
    member = wanting[np.searchsorted(ends, np.arange(len(unassigned.part)), side="right")]
    return Rows(member, unassigned.topic, unassigned.part, unassigned.source)


def _final_order(spec: Current, kept: np.ndarray, added: Rows, keep: np.ndarray, short: np.ndarray,
                 members: int, topics: int, hashes: np.ndarray) -> Rows | None:
    """The new target assignment in iteration order: kept rows, then added rows, sorted by
    member, the topic's place in the member's final map, bucket in the final set, insertion."""
    sizes = np.bincount(spec.rows.member, minlength=members)
    copied = (sizes > keep) | (short > 0)  # gave something up, or was short (copied even if given nothing)
    # Pairs of the final maps: the current ones, then (member, topic) pairs received anew.
    pair_key = spec.pair_member * topics + spec.pair_topic
    added_key = added.member * topics + added.topic
    if len(pair_key):
        by_key = np.argsort(pair_key)
        at = by_key[np.minimum(np.searchsorted(pair_key[by_key], added_key), len(pair_key) - 1)]
        known = pair_key[at] == added_key
    else:
        at, known = np.zeros(len(added_key), dtype=np.int64), np.zeros(len(added_key), dtype=bool)
    fresh_keys, first_seen, fresh_of = np.unique(added_key[~known], return_index=True, return_inverse=True)
    by_arrival = np.argsort(first_seen, kind="stable")
    arrival = np.empty(len(fresh_keys), dtype=np.int64)
    arrival[by_arrival] = np.arange(len(fresh_keys))
    pairs = len(pair_key)
    added_pair = np.empty(len(added_key), dtype=np.int64)
    added_pair[known] = at[known]
    added_pair[~known] = pairs + fresh_of.ravel()
    fresh_member, fresh_topic = fresh_keys // max(topics, 1), fresh_keys % max(topics, 1)
    pair_member = np.concatenate((spec.pair_member, fresh_member))
    pair_topic = np.concatenate((spec.pair_topic, fresh_topic))
    member_pair_start = np.searchsorted(spec.pair_member, np.arange(members))
    # Rank in the member's map: put order for the current topics (the copy puts them in
    # iteration order), newest first before them for topics received anew (computeIfAbsent).
    fresh_start = np.searchsorted(fresh_member[by_arrival], np.arange(members))
    pair_rank = np.concatenate((np.arange(pairs, dtype=np.int64) - member_pair_start[spec.pair_member],
                                -1 - (arrival - fresh_start[fresh_member])))
    held = np.bincount(spec.pair_member, minlength=members)
    final_topics = held + np.bincount(fresh_member, minlength=members)
    if final_topics.max(initial=0) > MAX_TOPICS_PER_MEMBER:
        return None
    if topic_maps_crowded(pair_member, pair_topic, hashes):
        return None
    map_capacity = _map_capacities(held, copied, added, added_pair, pairs)
    bucket = hashes[pair_topic] & (map_capacity[pair_member] - 1)
    place = np.empty(len(pair_member), dtype=np.int64)
    place[np.lexsort((pair_rank, bucket, pair_member))] = np.arange(len(pair_member))
    # Sets: a copied set keeps its capacity, then grows by put; a new set starts at 16.
    received = np.bincount(added_pair, minlength=len(pair_member))
    start_capacity = np.concatenate((spec.pair_capacity, np.full(len(fresh_keys), 16, dtype=np.int64)))
    held_size = np.concatenate((spec.pair_size, np.zeros(len(fresh_keys), dtype=np.int64)))
    set_capacity = grown_capacities(start_capacity, held_size + received)
    # Rows: the kept ones (each set's in rank order), then the added ones in arrival order.
    added_rank = held_size[added_pair] + _occurrence(added_pair)
    rows_pair = np.concatenate((spec.row_pair[kept], added_pair))
    rows_rank = np.concatenate((spec.rank[kept], added_rank))
    rows = Rows(np.concatenate((spec.rows.member[kept], added.member)),
                 np.concatenate((spec.rows.topic[kept], added.topic)),
                 np.concatenate((spec.rows.part[kept], added.part)),
                 np.concatenate((spec.rows.source[kept], added.source)))
    spread_part = spread_many(rows.part)
    # A set of 16 buckets takes its keys 0-12 so, one of 32 its keys 13-24 (or from 0 if it
    # started at 32); a ninth key in a bin then grows the table early. Such sets, and copies of
    # sets that grew early, get their capacity from the model: the copy (all its partitions,
    # given up ones too: the copy is taken before the first removal), then each one received.
    at_16 = (start_capacity[rows_pair] == 16) & (rows_rank <= 12)
    at_32 = (start_capacity[rows_pair] <= 32) & (rows_rank <= 24)
    replayed = crowded_pairs(rows_pair[at_16], spread_part[at_16] & 15, 16, len(pair_member))
    replayed |= crowded_pairs(rows_pair[at_32], spread_part[at_32] & 31, 32, len(pair_member))
    replayed[:pairs] |= spec.crowded & copied[spec.pair_member]
    for pair in np.flatnonzero(replayed).tolist():
        table = JavaHashMap.copy_of(spec.parts(pair), integer_hash) if pair < pairs else JavaHashMap(integer_hash)
        for partition in added.part[added_pair == pair].tolist():
            table.put(partition)
        set_capacity[pair] = table.capacity
    width = int(set_capacity.max(initial=1))
    if len(pair_member) * width >= 1 << 62:
        return None
    return rows.take(stable_order(place[rows_pair] * width + (spread_part & (set_capacity[rows_pair] - 1))))


def _occurrence(values: np.ndarray) -> np.ndarray:
    """How many times each value occurred before, at each position."""
    order = np.argsort(values, kind="stable")
    starts = run_starts(values[order])
    first = np.maximum.accumulate(np.where(starts, np.arange(len(order)), 0))
    found = np.empty(len(order), dtype=np.int64)
    found[order] = np.arange(len(order)) - first
    return found


def _map_capacities(held: np.ndarray, copied: np.ndarray, added: Rows, added_pair: np.ndarray,
                    pairs: int) -> np.ndarray:
    """Each member's final topic map size: 16 doubling past 3/4 for a map left as it was; for a
    copied one, ``new HashMap<>(topics)`` with its topics put again, then one
    ``computeIfAbsent`` per partition received, which grows the table before the call once the
    size passed 3/4 (the model decides, `JavaHashMap`, once per distinct sequence of calls)."""
    found = grown_capacities(np.full(len(held), 16, dtype=np.int64), held)
    # Per run of one (member, pair) in arrival order, a code: 1, plus 2 when it brings a new key,
    # plus 1 when more calls follow for the same key (the rest of a run only repeats the check).
    # A member's sequence of calls is its codes as base-8 digits, one number (17 runs at most:
    # float64 weights count exactly to 2**53); the count of topics it held goes above them.
    run = np.flatnonzero(run_starts(added.member, added_pair))
    run_end = np.append(run[1:], len(added_pair))
    member = added.member[run]
    new = (added_pair[run] >= pairs) & (_occurrence(added_pair)[run] == 0)
    code = 1 + 2 * new.astype(np.int64) + (run_end - run > 1)
    first = np.searchsorted(member, np.arange(len(held)))
    digit = np.arange(len(run), dtype=np.int64) - first[member]
    runs = np.bincount(member, minlength=len(held))
    calls = np.bincount(member, weights=code * 8.0 ** digit, minlength=len(held)).astype(np.int64)
    keys = (held << 51) | calls
    wanted = np.flatnonzero(copied & (runs <= 17))
    distinct, which = np.unique(keys[wanted], return_inverse=True)
    capacities = np.array([_simulated_capacity(int(k) >> 51, _digits(int(k) & ((1 << 51) - 1))) for k in distinct],
                          dtype=np.int64)
    found[wanted] = capacities[which.ravel()]
    for m in np.flatnonzero(copied & (runs > 17)).tolist():  # long sequences: one at a time
        codes = code[first[m]:first[m] + runs[m]].tolist()
        found[m] = _simulated_capacity(int(held[m]), tuple(((c - 1) >= 2, (c - 1) % 2 == 1) for c in codes))
    return found


def _digits(calls: int) -> tuple[tuple[bool, bool], ...]:
    """A sequence of calls back from its base-8 number (see `_map_capacities`)."""
    found = []
    while calls:
        calls, code = divmod(calls, 8)
        found.append((code - 1 >= 2, (code - 1) % 2 == 1))
    return tuple(found)


def _simulated_capacity(held: int, calls: tuple[tuple[bool, bool], ...]) -> int:
    """The table size of a deep copy of a map of `held` topics after `calls` (new key?, called
    again?), replayed on the model with integer keys (distinct bins: no early growth)."""
    table: JavaHashMap[int, bool] = JavaHashMap(integer_hash, held)
    for key in range(held):
        table.put(key, True)
    next_key = held
    for new, again in calls:
        if new:
            table.compute_if_absent(next_key, _true)
            next_key += 1
        if again or not new:
            table.compute_if_absent(next_key - 1 if new else 0, _true)
    return table.capacity


def _true() -> bool:
    return True
