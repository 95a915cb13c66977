"""The members' current assignments on arrays, as the coordinator's maps iterate them: the part
of the columnar builders (`uniform_columns`, `uniform_heterogeneous_columns`) that reads a group.

`coordinator.group_spec` builds each member's current assignment as a ``HashMap`` of topic id to
``new HashSet<>(claims of the topic)``, topics put in the order the member's claims first name
them. On arrays: each claim is a row, and `current_order` sorts the rows member by member into
that iteration order (topic bucket of the member's map, then first claim; partition bucket of
the set, then claim order), keeping per (member, topic) pair its size and set capacity. A set
whose small table gets nine keys in one bin grows early in Java (``treeifyBin``,
`JavaHashMap._crowded`): its capacity is replayed on the model. In a table of 64 or more such a
bin becomes a tree, which iterates in another order (`tree_bin`: claims in strides of a power
of two, as an online migration from a round-robin classic group hands them over): such groups
are left to the model (`crowding_possible`), as are maps whose bin got nine topics.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain, repeat
from operator import itemgetter

import numpy as np

from assignor._arrays import appended, filled, ranges, run_starts, stable_order
from assignor.java_hash import (
    JavaHashMap,
    copy_capacities,
    grown_capacities,
    integer_hash,
    spread_many,
)
from assignor.model import Claims, Member, TopicPartition, topic_partitions_at

__all__ = ["MAX_TOPICS_PER_MEMBER", "Claimed", "Current", "Rows", "as_claims", "as_objects", "crowded_pairs",
           "crowding_possible", "current_of", "current_order", "parse_claims", "per_member"]

#: Members with more topics than this go to the plain model: a member's sequence of calls into
#: its map is packed beside its count of topics in one int64 (`target_columns._map_capacities`).
MAX_TOPICS_PER_MEMBER = 4095


class Rows:
    """Partitions as columns: member (rank in the member map's order), topic (index into the
    caller's topic names), partition, and the claim it came from (-1: none)."""

    __slots__ = ("member", "part", "source", "topic")

    def __init__(self, member: np.ndarray, topic: np.ndarray, part: np.ndarray, source: np.ndarray) -> None:
        self.member, self.topic, self.part, self.source = member, topic, part, source

    def take(self, index: np.ndarray) -> Rows:
        return Rows(self.member[index], self.topic[index], self.part[index], self.source[index])


class Claimed:
    """The members' claims read into columns: per claim the member (index in ``group.members``),
    the topic (index into the caller's names) and the partition, each member's claims in its
    claim order (rows of different members may interleave); the claims' own objects, in row
    order, where they came as objects (None from columns); once checked, `taken`: per partition
    in flat order (topic by topic), whether a member holds it."""

    __slots__ = ("member", "objects", "part", "taken", "topic")

    def __init__(self, objects: list[TopicPartition] | None, member: np.ndarray, topic: np.ndarray,
                 part: np.ndarray) -> None:
        self.objects, self.member, self.topic, self.part = objects, member, topic, part
        self.taken = np.zeros(0, dtype=bool)


def parse_claims(members: Sequence[Member], owned: Claims | None, names: list[str], counts: np.ndarray,
                 offsets: np.ndarray) -> Claimed | None:
    """Every member's claims in order, from `owned` (member index in `members` order) when given,
    else from each member's ``owned``; None unless each names one of `names`, in range, held once
    (the plain model then drops what the coordinator could not hold)."""
    if owned is not None:
        index = {name: i for i, name in enumerate(names)}
        renumbered = np.array([index.get(name, -1) for name in owned.names] or [-1], dtype=np.int64)
        topic = renumbered[owned.topic] if len(owned.topic) else np.empty(0, dtype=np.int64)
        return _checked(Claimed(None, owned.member.astype(np.int64, copy=False), topic,
                                owned.partition.astype(np.int64, copy=False)), counts, offsets)
    claims: list[TopicPartition] = list(chain.from_iterable(m.owned for m in members))
    lengths = np.fromiter(map(len, (m.owned for m in members)), dtype=np.int64, count=len(members))
    member = np.arange(len(members), dtype=np.int64).repeat(lengths)
    if not claims:
        return _checked(Claimed(claims, member, member, member), counts, offsets)
    if set(map(type, claims)) != {TopicPartition}:
        return None
    numbers = list(map(itemgetter(1), claims))
    if set(map(type, numbers)) != {int}:
        return None
    index = {name: i for i, name in enumerate(names)}
    try:
        topic = np.fromiter(map(index.get, map(itemgetter(0), claims), repeat(-1)), dtype=np.int64, count=len(claims))
        part = np.array(numbers, dtype=np.int64)
    except (TypeError, OverflowError):  # an unhashable topic, a partition past int64
        return None
    return _checked(Claimed(claims, member, topic, part), counts, offsets)


def _checked(claimed: Claimed, counts: np.ndarray, offsets: np.ndarray) -> Claimed | None:
    topic, part = claimed.topic, claimed.part
    total = int(offsets[-1])
    if not len(part):
        claimed.taken = np.zeros(total, dtype=bool)
        return claimed
    if topic.min() < 0 or part.min() < 0 or (part >= counts[topic]).any():
        return None
    flat = offsets[topic]
    flat += part
    held = np.bincount(flat, minlength=total)
    if held.max() > 1:
        return None
    claimed.taken = held.astype(bool)
    return claimed


def current_of(members: Sequence[Member], member_order: list[str], claimed: Claimed, topics: int,
               hashes: np.ndarray) -> tuple[np.ndarray, Current | None]:
    """Each member's rank in `member_order` (``group.members`` order), and the members' claims
    in their maps' iteration order (`current_order`)."""
    rank_of = {member_id: r for r, member_id in enumerate(member_order)}
    rank = np.fromiter(map(rank_of.__getitem__, (m.id for m in members)), dtype=np.int64, count=len(members))
    rows = Rows(rank[claimed.member], claimed.topic, claimed.part, np.arange(len(claimed.part), dtype=np.int64))
    return rank, current_order(rows, len(members), topics, hashes)


def per_member(members: Sequence[Member], rank: np.ndarray, row_member: np.ndarray,
               listed: list[TopicPartition]) -> dict[str, list[TopicPartition]]:
    """The plan: each member's slice of `listed`, whose rows are sorted by member rank."""
    bounds = row_member.searchsorted(np.arange(len(members) + 1)).tolist()
    return {m.id: listed[bounds[r]:bounds[r + 1]] for m, r in zip(members, rank.tolist())}


def as_claims(rank: np.ndarray, rows: Rows, names: list[str]) -> Claims:
    """The plan as `Claims`: `rows` (sorted by member rank) with each member's index in
    ``group.members`` order (`rank`: each member's rank)."""
    index = np.empty(len(rank), dtype=np.int64)
    index[rank] = np.arange(len(rank), dtype=np.int64)
    return Claims(index[rows.member], rows.topic, rows.part, names)


class Current:
    """The current assignment in iteration order: `rows` member by member (each member's from its
    `member_start`), each topic's rows in a run; per (member, topic) `pair`, in that order, its
    topic, size and set capacity."""

    __slots__ = ("crowded", "member_start", "pair_capacity", "pair_member", "pair_size", "pair_start", "pair_topic",
                 "row_pair", "rows")

    def __init__(self, rows: Rows, row_pair: np.ndarray, member_start: np.ndarray,
                 pair_member: np.ndarray, pair_topic: np.ndarray, pair_size: np.ndarray,
                 pair_capacity: np.ndarray, crowded: np.ndarray) -> None:
        self.rows, self.row_pair, self.member_start = rows, row_pair, member_start
        self.pair_member, self.pair_topic, self.pair_size, self.pair_capacity = (
            pair_member, pair_topic, pair_size, pair_capacity)
        self.pair_start = np.zeros(len(pair_size) + 1, dtype=np.int64)
        pair_size.cumsum(out=self.pair_start[1:])
        self.crowded = crowded  # pairs whose set grew early (their capacity replayed on the model)

    def prefixes(self, lengths: np.ndarray) -> np.ndarray:
        """Per row, whether it is among the first `lengths` (per member) of its member's list:
        the rows past them marked, member by member (most members keep every row)."""
        sizes = appended(self.member_start[1:], len(self.row_pair)) - self.member_start
        cut = (lengths < sizes).nonzero()[0]
        found = np.ones(len(self.row_pair), dtype=bool)
        if len(cut):
            ends = self.member_start[cut] + sizes[cut]
            first = self.member_start[cut] + lengths[cut]
            found[ranges(first, ends - first)] = False
        return found

    def parts(self, pair: int) -> list[int]:
        """The partitions of a pair's set in iteration order."""
        found: list[int] = self.rows.part[self.pair_start[pair]:self.pair_start[pair + 1]].tolist()
        return found


def current_order(rows: Rows, members: int, topics: int, hashes: np.ndarray) -> Current | None:
    """`coordinator.group_spec`'s maps, iterated: topics put in the order the claims first name
    them (16 buckets, doubling past 3/4), sets ``new HashSet<>(claims of the topic)``."""
    key = rows.member * topics
    key += rows.topic
    by_pair = stable_order(key)  # claim order kept within a (member, topic) pair
    starts = run_starts(key[by_pair]).nonzero()[0]
    # pairs numbered first by key (grouped rows), then renumbered in iteration order
    keyed_member, keyed_topic = rows.member[by_pair[starts]], rows.topic[by_pair[starts]]
    first_claim = rows.source[by_pair[starts]]
    keyed_size = appended(starts[1:], len(key)) - starts
    topic_count = np.bincount(keyed_member, minlength=members)
    if topic_count.max(initial=0) > MAX_TOPICS_PER_MEMBER:
        return None
    map_capacity = grown_capacities(filled(members, 16), topic_count)
    # A map whose bin got nine topics grew early (under 64 buckets) or made it a tree: the model.
    by_first = np.lexsort((first_claim, keyed_member))
    put_rank = np.empty(len(by_first), dtype=np.int64)
    put_rank[by_first] = np.arange(len(by_first)) - keyed_member.searchsorted(keyed_member[by_first])
    if crowding_possible(keyed_member, hashes[keyed_topic], put_rank.__getitem__, filled(members, 16), map_capacity,
                         np.zeros(members, dtype=np.int64), start=16, crowded=9, distinct=False):
        return None
    bucket = hashes[keyed_topic] & (map_capacity[keyed_member] - 1)
    pair_order = np.lexsort((first_claim, bucket, keyed_member))
    renumbered = np.empty(len(pair_order), dtype=np.int64)
    renumbered[pair_order] = np.arange(len(pair_order))
    pair_member, pair_topic, pair_size = keyed_member[pair_order], keyed_topic[pair_order], keyed_size[pair_order]
    pair_capacity = copy_capacities(pair_size)
    pair_of_row = np.empty(len(key), dtype=np.int64)
    pair_of_row[by_pair] = renumbered.repeat(keyed_size)
    spread_part = spread_many(rows.part)
    # A set whose small table gets nine keys in one bin grows early: its capacity from the model,
    # replayed with its claims in claim order (rare: partitions far apart, in strides).
    crowded = np.zeros(len(pair_size), dtype=bool)
    if (pair_capacity < 64).any():
        small = pair_capacity[pair_of_row] < 64
        crowded = crowded_pairs(pair_of_row[small], spread_part[small] & (pair_capacity[pair_of_row[small]] - 1), 32,
                                len(pair_size))
    for pair in crowded.nonzero()[0].tolist():
        keyed = int(pair_order[pair])
        claimed = rows.part[by_pair[starts[keyed]:starts[keyed] + keyed_size[keyed]]].tolist()
        pair_capacity[pair] = JavaHashMap.copy_of(claimed, integer_hash).capacity
    # A copy takes all its keys at its size: a bin of nine there is a tree (claims in strides).
    no_slack = np.zeros(len(pair_size), dtype=np.int64)
    if crowding_possible(pair_of_row, spread_part, np.zeros_like, pair_capacity, pair_capacity, no_slack):
        return None
    width = int(pair_capacity.max(initial=1))
    if len(pair_size) * width >= 1 << 62:
        return None
    base, mask = np.arange(len(pair_size), dtype=np.int64) * width, pair_capacity - 1  # per pair, gathered once
    sort_key = mask[pair_of_row]
    sort_key &= spread_part
    sort_key += base[pair_of_row]
    row_pair = pair_of_row
    if (sort_key[1:] < sort_key[:-1]).any():  # not already in iteration order
        order = stable_order(sort_key)
        rows, row_pair = rows.take(order), pair_of_row[order]
    member_start = rows.member.searchsorted(np.arange(members))
    return Current(rows, row_pair, member_start, pair_member, pair_topic, pair_size, pair_capacity, crowded)


def crowded_pairs(pair: np.ndarray, bins: np.ndarray, width: int, pairs: int) -> np.ndarray:
    """Per pair, whether nine or more of its rows share a bin (below `width`)."""
    found = np.zeros(pairs, dtype=bool)
    if len(pair) > 8:
        keys = pair * width + bins
        if pairs * width <= 1 << 24:  # a count per bin of every pair fits: no sort
            counts = np.bincount(keys, minlength=pairs * width)
            found |= (counts.reshape(pairs, width) > 8).any(axis=1)
        else:
            keys, counts = np.unique(keys, return_counts=True)
            found[keys[counts > 8] // width] = True
    return found


def crowding_possible(table: np.ndarray, spread_key: np.ndarray, rank_of: Callable[[np.ndarray], np.ndarray],
                      low: np.ndarray, high: np.ndarray, slack: np.ndarray, start: int = 64, crowded: int = 9,
                      distinct: bool = True) -> bool:
    """Whether some table may have had `crowded` keys in one bin at a size from `start` up:
    under 64 buckets Java grows such a table early, from 64 it makes the bin a tree iterating in
    another order (`tree_bin`); either way the caller leaves it to the model. `crowded` is 9 for
    tables filled by ``put``, 8 where ``computeIfAbsent`` adds keys (it treeifies at a bin's
    eighth). Per row: its table and its key's spread hash; `rank_of(rows)`: those rows' ranks in
    the order their tables took them (asked for the rows looked at); per table: its first and
    last size (`low`, `high`) and how many keys it let go before taking more (`slack`). A table
    is looked at size by size, over the keys it took while it had that size: those ranked below
    three quarters of it, plus one, plus `slack` (more than it can have held, never fewer).
    Where no two keys of a table share a spread hash (`distinct`: partitions, whose hashes are
    their numbers spread one to one), a table whose keys span less than ``crowded - 1`` times
    the first size looked at holds fewer than `crowded` per bin at any size, and is passed at
    once. (Topic ids' hashes can be equal: every table of them is looked at.)"""
    first = np.maximum(low, start)
    looked = high >= first
    if not looked.any():
        return False
    wide = looked
    if distinct:
        least = np.full(len(high), np.iinfo(np.int64).max, dtype=np.int64)
        most = np.full(len(high), -1, dtype=np.int64)
        np.minimum.at(least, table, spread_key)
        np.maximum.at(most, table, spread_key)
        wide = looked & (most - least >= (crowded - 1) * first)
    if not wide.any():
        return False
    rows = wide[table].nonzero()[0]
    table, spread_key, rank = table[rows], spread_key[rows], rank_of(rows)
    size = start
    while size <= int(high[wide].max()):
        at = (first[table] <= size) & (size <= high[table]) & (rank < size * 3 // 4 + 1 + slack[table])
        if at.sum() >= crowded:
            _keys, counts = np.unique(table[at] * size + (spread_key[at] & (size - 1)), return_counts=True)
            if counts.max() >= crowded:
                return True
        size *= 2
    return False


def as_objects(rows: Rows, claims: list[TopicPartition], names: list[str]) -> list[TopicPartition]:
    """The rows as `TopicPartition` objects: a claimed partition's own object again (most stay),
    a new one for a partition nobody held."""
    held = rows.source >= 0
    if not held.any():  # a group that held nothing (its first plan): every object is new
        return topic_partitions_at(names, rows.topic, rows.part)
    objects = np.empty(len(rows.part), dtype=object)
    if held.any():
        objects[held] = np.fromiter(claims, dtype=object, count=len(claims))[rows.source[held]]
    fresh = (~held).nonzero()[0]
    if len(fresh):
        made = topic_partitions_at(names, rows.topic[fresh], rows.part[fresh])
        objects[fresh] = np.fromiter(made, dtype=object, count=len(made))
    listed: list[TopicPartition] = objects.tolist()
    return listed
