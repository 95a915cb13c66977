"""The builders' new target assignment on arrays, as Kafka's maps iterate it once the builder
changed them: the second half of the columnar builders (`uniform_columns`,
`uniform_heterogeneous_columns`), after `current_columns`.

A member the builder changes is deep-copied first (``AssignorHelpers.deepCopyAssignment``:
``new HashMap<>(topics)``, its topics put again in iteration order, each set
``new HashSet<>(set)``), then loses partitions (a prefix of its current list stays) and receives
others by ``computeIfAbsent(topic, new set).add(partition)``: a topic it receives anew goes to
the head of its bin, the map grows before a call once past 3/4, a set grows by ``put``. What
decides the order is then arithmetic on sizes (`final_order`); the model (`JavaHashMap`) is
replayed for the few tables whose small bins crowd, and once per distinct sequence of calls for
the maps' sizes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from assignor._arrays import appended, filled, run_starts, stable_order
from assignor.java_hash import (
    JavaHashMap,
    grown_capacities,
    integer_hash,
    spread_many,
    table_size_for,
)
from assignor.strategies.kip848.current_columns import (
    MAX_TOPICS_PER_MEMBER,
    Current,
    Rows,
    crowded_pairs,
    crowding_possible,
)

__all__ = ["final_order"]


def final_order(spec: Current, kept: np.ndarray, added: Rows, copied: np.ndarray, topics: int, hashes: np.ndarray,
                fresh_initial: Sequence[int | None], sources: bool = True,
                member_index: np.ndarray | None = None) -> Rows | None:
    """The new target assignment in iteration order: `kept` rows of the current assignment (a
    prefix of each member's), then `added` rows (member by member, each member's in the order
    received), sorted by member, the topic's place in the member's final map, bucket in the
    final set, insertion. `copied`: per member, whether the builder deep-copied its map.
    `fresh_initial`: per topic, the capacity a set made for it anew is asked for (None: the
    default table). None where a member would hold more than `MAX_TOPICS_PER_MEMBER` topics, or
    its map of topics or a set of partitions may have crowded a bin (`crowding_possible`; left
    to the model). `sources`: whether the rows' claims are wanted
    (to reuse their objects); without, the rows' ``source`` is empty. `member_index`: per member
    rank, the number the rows give the member instead of its rank (the caller's numbering)."""
    members = len(copied)
    # Pairs of the final maps: the current ones, then (member, topic) pairs received anew.
    pair_key = spec.pair_member * topics + spec.pair_topic
    added_key = added.member * topics + added.topic
    if len(pair_key):
        by_key = pair_key.argsort()
        at = by_key[np.minimum(pair_key[by_key].searchsorted(added_key), len(pair_key) - 1)]
        known = pair_key[at] == added_key
    else:
        at, known = np.zeros(len(added_key), dtype=np.int64), np.zeros(len(added_key), dtype=bool)
    fresh_keys, first_seen, fresh_of = np.unique(added_key[~known], return_index=True, return_inverse=True)
    by_arrival = first_seen.argsort(kind="stable")
    arrival = np.empty(len(fresh_keys), dtype=np.int64)
    arrival[by_arrival] = np.arange(len(fresh_keys))
    pairs = len(pair_key)
    added_pair = np.empty(len(added_key), dtype=np.int64)
    added_pair[known] = at[known]
    added_pair[~known] = pairs + fresh_of.ravel()
    fresh_member, fresh_topic = fresh_keys // max(topics, 1), fresh_keys % max(topics, 1)
    pair_member = np.concatenate((spec.pair_member, fresh_member))
    pair_topic = np.concatenate((spec.pair_topic, fresh_topic))
    member_pair_start = spec.pair_member.searchsorted(np.arange(members))
    # Rank in the member's map: put order for the current topics (the copy puts them in
    # iteration order), newest first before them for topics received anew (computeIfAbsent).
    fresh_start = fresh_member[by_arrival].searchsorted(np.arange(members))
    pair_rank = np.concatenate((np.arange(pairs, dtype=np.int64) - member_pair_start[spec.pair_member],
                                -1 - (arrival - fresh_start[fresh_member])))
    held = np.bincount(spec.pair_member, minlength=members)
    final_topics = held + np.bincount(fresh_member, minlength=members)
    if final_topics.max(initial=0) > MAX_TOPICS_PER_MEMBER:
        return None
    map_capacity = _map_capacities(held, copied, added, added_pair, pairs)
    # A map whose bin got eight topics (``computeIfAbsent`` adds them) grew early or made it a
    # tree: the model. Its topics held put first, then those received in order.
    taken = np.concatenate((np.arange(pairs, dtype=np.int64) - member_pair_start[spec.pair_member],
                            held[fresh_member] + arrival - fresh_start[fresh_member]))
    if crowding_possible(pair_member, hashes[pair_topic], taken.__getitem__, filled(members, 16), map_capacity,
                         np.zeros(members, dtype=np.int64), start=16, crowded=8, distinct=False):
        return None
    bucket = hashes[pair_topic] & (map_capacity[pair_member] - 1)
    place = np.empty(len(pair_member), dtype=np.int64)
    place[np.lexsort((pair_rank, bucket, pair_member))] = np.arange(len(pair_member))
    # Sets: a copied set keeps its capacity, then grows by put; a new set starts where its
    # topic's sets start.
    received = np.bincount(added_pair, minlength=len(pair_member))
    fresh_capacity = np.array([16 if c is None else table_size_for(c) for c in fresh_initial], dtype=np.int64)
    start_capacity = np.concatenate((spec.pair_capacity, fresh_capacity[fresh_topic]))
    held_size = np.concatenate((spec.pair_size, np.zeros(len(fresh_keys), dtype=np.int64)))
    set_capacity = grown_capacities(start_capacity, held_size + received)
    # Rows: the kept ones (each set's in rank order), then the added ones in arrival order.
    every = bool(kept.all())  # nobody gave anything up (after a member left, say): no rows to drop
    rows_part = np.concatenate((spec.rows.part if every else spec.rows.part[kept], added.part))
    spread_part = spread_many(rows_part)
    # A set takes its first 25 keys in a table of 32 buckets or fewer (8 or fewer hold at most 6),
    # where a ninth key in a bin grows the table early: sets where nine of those share a bin of
    # 16 (a superset of those that grow early), and copies of sets that grew early, get their
    # capacity from the model: the copy (all its partitions, given up ones too: the copy is taken
    # before the first removal), then each one received.
    replayed = np.zeros(len(pair_member), dtype=bool)
    small = start_capacity < 64
    if small.any():  # each small set's rows with their rank in the set: kept ones, then received ones
        kept_small = (kept & small[spec.row_pair]).nonzero()[0] if small[:pairs].any() else np.empty(0, dtype=np.int64)
        added_small = small[added_pair].nonzero()[0]
        small_pair = np.concatenate((spec.row_pair[kept_small], added_pair[added_small]))
        rank = np.concatenate((kept_small - spec.pair_start[spec.row_pair[kept_small]],
                               (held_size[added_pair] + _occurrence(added_pair))[added_small]))
        part = np.concatenate((spec.rows.part[kept_small], added.part[added_small]))
        early = rank <= 24
        replayed = crowded_pairs(small_pair[early], spread_many(part[early]) & 15, 16, len(pair_member))
    replayed[:pairs] |= spec.crowded & copied[spec.pair_member]
    for pair in replayed.nonzero()[0].tolist():
        if pair < pairs:
            table = JavaHashMap.copy_of(spec.parts(pair), integer_hash)
        else:
            table = JavaHashMap(integer_hash, fresh_initial[int(pair_topic[pair])])
        for partition in added.part[added_pair == pair].tolist():
            table.put(partition)
        set_capacity[pair] = table.capacity
    # A set with nine keys in one bin of 64 or more is a tree (claims in strides): the current
    # keys (given up ones too) put first, then the received ones.
    given_up = np.bincount(spec.row_pair[~kept], minlength=len(pair_member)) if not every else \
        np.zeros(len(pair_member), dtype=np.int64)

    def rank_of(rows: np.ndarray) -> np.ndarray:  # a current row's place in its set, then a received one's
        current = len(spec.row_pair)
        at = np.concatenate((np.arange(current, dtype=np.int64) - spec.pair_start[spec.row_pair],
                             held_size[added_pair] + _occurrence(added_pair)))
        found: np.ndarray = at[rows]
        return found

    every_part = spread_part if every else spread_many(np.concatenate((spec.rows.part, added.part)))
    if crowding_possible(np.concatenate((spec.row_pair, added_pair)), every_part, rank_of, start_capacity,
                         set_capacity, given_up):
        return None
    width = int(set_capacity.max(initial=1))
    if len(pair_member) * width >= 1 << 62:
        return None
    # Sorted by the pair's place, then bucket. The kept rows come pair by pair (current order),
    # so their pairs' values are repeated rather than looked up row by row; the sorted rows come
    # pair by pair in place order, so their members and topics are the pairs', repeated.
    kept_size = spec.pair_size if every else spec.pair_size - np.bincount(spec.row_pair[~kept], minlength=pairs)
    base, mask = place * width, set_capacity - 1
    key = np.concatenate((mask[:pairs].repeat(kept_size), mask[added_pair]))
    key &= spread_part
    key += np.concatenate((base[:pairs].repeat(kept_size), base[added_pair]))
    order = stable_order(key)
    by_place = place.argsort()
    final_size = (np.concatenate((kept_size, np.zeros(len(fresh_keys), dtype=np.int64))) + received)[by_place]
    source = np.concatenate((spec.rows.source[kept], added.source))[order] if sources else np.empty(0, dtype=np.int64)
    label = pair_member if member_index is None else member_index[pair_member]
    return Rows(label[by_place].repeat(final_size), pair_topic[by_place].repeat(final_size), rows_part[order],
                source)


def _occurrence(values: np.ndarray) -> np.ndarray:
    """How many times each value occurred before, at each position."""
    order = values.argsort(kind="stable")
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
    found = grown_capacities(filled(len(held), 16), held)
    # Per run of one (member, pair) in arrival order, a code: 1, plus 2 when it brings a new key,
    # plus 1 when more calls follow for the same key (the rest of a run only repeats the check).
    # A member's sequence of calls is its codes as base-8 digits, one number (17 runs at most:
    # float64 weights count exactly to 2**53); the count of topics it held goes above them.
    run = run_starts(added.member, added_pair).nonzero()[0]
    run_end = appended(run[1:], len(added_pair))
    member = added.member[run]
    new = (added_pair[run] >= pairs) & (_occurrence(added_pair)[run] == 0)
    code = 1 + 2 * new.astype(np.int64) + (run_end - run > 1)
    first = member.searchsorted(np.arange(len(held)))
    digit = np.arange(len(run), dtype=np.int64) - first[member]
    runs = np.bincount(member, minlength=len(held))
    # (digits past the 17th weigh nothing: their members are replayed one at a time below, and
    # 8.0 ** 22 and up would pass int64 in the cast, a RuntimeWarning for a number never read)
    weight = np.where(digit < 17, 8.0 ** np.minimum(digit, 16), 0.0)
    calls = np.bincount(member, weights=code * weight, minlength=len(held)).astype(np.int64)
    keys = (held << 51) | calls
    wanted = (copied & (runs <= 17)).nonzero()[0]
    distinct, which = np.unique(keys[wanted], return_inverse=True)
    capacities = np.array([_simulated_capacity(int(k) >> 51, _digits(int(k) & ((1 << 51) - 1))) for k in distinct],
                          dtype=np.int64)
    found[wanted] = capacities[which.ravel()]
    for m in (copied & (runs > 17)).nonzero()[0].tolist():  # long sequences: one at a time
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
