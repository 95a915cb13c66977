"""Dense integer numbering of a group, for the vectorised strategies.

Topics and members are renumbered in Java's order (`java_sorted`); every partition gets a *flat*
id ``offsets[topic] + partition``. Previous ownership is resolved here with the rules of
`assignor.solver.claims`, vectorised: the tests hold the two to the same answers.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from itertools import accumulate, chain, repeat
from operator import attrgetter, itemgetter
from typing import Any, cast

import numpy as np

from assignor._arrays import filled, run_starts, stable_order
from assignor.group_spec import GroupSpec, SubscriptionType
from assignor.model import (
    Claims,
    Group,
    Member,
    TopicPartition,
    claim_columns,
    member_topic_partitions,
    name_indices,
)
from assignor.ordering import java_order, java_sorted, static_first_order
from assignor.solver.claims import is_valid_claim

NO_OWNER = -1

# Claims as columns: member index, topic index (-1: unknown topic), partition.
ParsedClaims = tuple[np.ndarray, np.ndarray, np.ndarray]
# `assignor.strategies.sticky`'s last topic classes: key (subscription ids, topics with partitions),
# class per topic, eligibility per distinct subscription, and the subscriptions the ids belong to.
TopicClasses = tuple[tuple[tuple[int, ...], bytes], np.ndarray, np.ndarray, tuple[np.ndarray, ...]]


@dataclass
class PlanMemo:
    """What planning the same group again and again can reuse: the solver's part of a leader's
    cache (`assignor.leader.LeaderCache`), created and passed by its owner.

    Everything here is valid while the topic list stays the same; `build` starts the memo again
    when it changes. Entries are found by identity where a leader hands the same objects back
    (a decoder gives one topics tuple per distinct subscription): each such entry holds the
    object itself, so no other object can take its id while the entry lives.
    """

    topics: list[str] = dataclass_field(default_factory=list)
    # id(topics tuple) -> (the tuple, its sorted topic indices); see `_topic_indices`
    subscriptions: dict[int, tuple[tuple[str, ...], np.ndarray]] = dataclass_field(default_factory=dict)
    member_ranks: dict[str, int] = dataclass_field(default_factory=dict)  # see `_member_order`
    # Java's String.hashCode of member ids (`ordering.hashmap_order`'s `known`: Java's assignors)
    string_hashes: dict[str, int] = dataclass_field(default_factory=dict)
    # The last plan's distinct subscriptions and their (topic, subscription) pairs
    distinct_pairs: tuple[tuple[np.ndarray, ...], tuple[np.ndarray, np.ndarray]] | None = None
    # The last plan's topic classes (`assignor.strategies.sticky`): key, class per topic, eligibility, arrays
    topic_classes: TopicClasses | None = None
    # The last plan's distinct subscriptions, their keys and table (see `_subscribed`)
    subscribed: tuple[tuple[np.ndarray, ...], np.ndarray, np.ndarray | None] | None = None

    def entries(self) -> int:
        """How many entries it holds (what a `LeaderCache` bounds)."""
        return len(self.subscriptions) + len(self.member_ranks) + len(self.string_hashes)

    def nbytes(self) -> int:
        """What it holds, in bytes, roughly: one group's subscriptions and member ranks (it starts
        again with every other topic list), the names themselves counted once, by the group; the
        hashed member ids with their lengths (an id is as long as a request makes it); the last
        subscriptions' keys and table (up to 16 MB)."""
        keys = [] if self.subscribed is None else [a for a in self.subscribed[1:] if a is not None]
        return (sum(indices.nbytes + 8 * len(topics) for topics, indices in self.subscriptions.values())
                + 100 * len(self.member_ranks) + 64 * len(self.string_hashes) + sum(map(len, self.string_hashes))
                + 8 * len(self.topics) + sum(a.nbytes for a in keys))

    def restart(self, topics: list[str]) -> None:
        """Forget everything; valid from now on for `topics`."""
        self.topics, self.subscriptions, self.member_ranks, self.string_hashes = topics, {}, {}, {}
        self.distinct_pairs = self.topic_classes = self.subscribed = None


@dataclass(frozen=True)
class Layout:
    topics: list[str]  # Java order
    counts: np.ndarray  # int64, partitions per topic
    offsets: np.ndarray  # int64, len(topics) + 1; flat id = offsets[t] + partition
    members: list[Member]  # Java order of member id
    prev_owner: np.ndarray  # int64 per flat partition: member index or NO_OWNER
    # Every claim as parsed: member index, topic index (-1: unknown topic), partition.
    # (A factory, not one shared default: numpy arrays are mutable.)
    claims: tuple[np.ndarray, np.ndarray, np.ndarray] = dataclass_field(
        default_factory=lambda: (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64)))
    # Members share few subscriptions: each distinct one once (sorted topic indices of existing
    # topics), and each member's among them.
    distinct: list[np.ndarray] = dataclass_field(default_factory=list)
    subscription_of: np.ndarray = dataclass_field(default_factory=lambda: np.empty(0, np.int64))
    # Derived arrays several steps of a plan need, computed once per layout (`topic_of_flat`, ...).
    derived: dict[str, Any] = dataclass_field(default_factory=dict, compare=False, repr=False)
    # The caller's memo, for what outlives this layout (see `distinct_pairs`).
    kept: PlanMemo | None = dataclass_field(default=None, compare=False, repr=False)
    # Per flat partition with a previous owner, the member that held it in the most recent
    # earlier generation and still claims it (KIP-341), or NO_OWNER; None when no partition
    # has one (no stale claims: the common case).
    earlier: np.ndarray | None = dataclass_field(default=None, compare=False, repr=False)

    @property
    def total(self) -> int:
        return int(self.offsets[-1])

    def topic_of_flat(self) -> np.ndarray:
        """Topic index of each flat partition (made once per layout; read-only)."""
        found = self.derived.get("topic_of_flat")
        if found is None:
            found = self.derived["topic_of_flat"] = np.arange(len(self.topics), dtype=np.int64).repeat(self.counts)
            found.flags.writeable = False
        return found

    def partition_of_flat(self) -> np.ndarray:
        """Partition number of each flat partition (made once per layout; read-only)."""
        found: np.ndarray | None = self.derived.get("partition_of_flat")
        if found is None:
            found = np.arange(self.total, dtype=np.int64) - self.offsets[:-1].repeat(self.counts)
            found.flags.writeable = False
            self.derived["partition_of_flat"] = found
        return found

    def topic_index(self) -> dict[str, int]:
        """Each topic name's index in `topics` (made once per layout)."""
        found = self.derived.get("topic_index")
        if found is None:
            found = self.derived["topic_index"] = {t: i for i, t in enumerate(self.topics)}
        return found

    def spec(self) -> GroupSpec:
        """The group as `assignor.group_spec.GroupSpec` reads it, from these columns (the same
        answers as `group_spec.of_objects` of the group this layout numbers)."""
        found: GroupSpec | None = self.derived.get("spec")
        if found is None:
            found = self.derived["spec"] = _ColumnsSpec(self)
        return found

    def owned_claims(self, owner: np.ndarray) -> Claims:
        """The plan `owner` (member index per flat partition, -1 for none) as `Claims`, in
        flat partition order (topic, then partition)."""
        flats = (owner >= 0).nonzero()[0]
        return Claims(owner[flats], self.topic_of_flat()[flats], self.partition_of_flat()[flats], self.topics)

    def assignment(self, owner: np.ndarray) -> dict[str, list[TopicPartition]]:
        """Turn ``owner[flat] -> member index`` into the public assignment, sorted per member.

        One pass over the flat partitions (`member_topic_partitions`: in C, each object one
        allocation), a partition its member claimed as a `TopicPartition` handed back as that
        object: after a rebalance most partitions stay, and at a million partitions making the
        objects costs about as much as the planning.
        """
        runs = member_topic_partitions(self.topics, self.offsets, owner, len(self.members),
                                       [m.owned for m in self.members])
        return dict(zip([m.id for m in self.members], runs))


def build(group: Group, claims: Claims | None = None, memo: PlanMemo | None = None) -> Layout:
    """Number `group` densely and resolve previous ownership: from the members' ``owned``, or
    from `claims` (member indices in ``group.members`` order) when the caller has them as
    columns already, in which case the members' ``owned`` are not read.

    `memo` (a `PlanMemo` the caller keeps) remembers each subscription's topic indices for as
    long as the topics stay the same: indexing a thousand subscriptions of hundreds of topics is
    most of the work when the same group is planned again and again.
    """
    topics = java_sorted(group.topics)
    if memo is not None and memo.topics != topics:
        memo.restart(topics)
    known: dict[int, tuple[tuple[str, ...], np.ndarray]] = memo.subscriptions if memo is not None else {}
    index = {name: i for i, name in enumerate(topics)}
    sizes = list(map(group.topics.__getitem__, topics))
    counts = np.array(sizes, dtype=np.int64)
    offsets = np.array([0, *accumulate(sizes)], dtype=np.int64)
    order = _member_order([m.id for m in group.members], memo)
    members = list(map(group.members.__getitem__, order))
    # Members of one group usually share a few subscriptions, often as one tuple object (a
    # decoder hands out one per distinct list): each distinct object is found by identity (hashing
    # a long tuple costs more than that) and numbered by value once, in order of first appearance.
    subscriptions = list(map(attrgetter("topics"), members))
    identities = list(map(id, subscriptions))
    first = dict(zip(reversed(identities), range(len(identities) - 1, -1, -1)))  # (the first member wins)
    by_value: dict[tuple[str, ...], int] = {}
    number = {identity: by_value.setdefault(subscriptions[i], len(by_value))
              for identity, i in sorted(first.items(), key=itemgetter(1))}
    distinct = _topic_indices(list(by_value), index, known)
    subscription_of = np.fromiter(map(number.__getitem__, identities), dtype=np.int64, count=len(identities))
    if claims is None:
        parsed = _parse_claims(group, members, index)
    else:
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        topic_of_name = np.array([index.get(name, -1) for name in claims.names] + [-1], dtype=np.int64)
        parsed = (rank[claims.member], topic_of_name[claims.topic], np.asarray(claims.partition, dtype=np.int64))
    prev_owner, earlier = _resolve_claims(counts, offsets, members, distinct, subscription_of, parsed, memo)
    # The caller's memo rides along for derived arrays that outlive this layout.
    return Layout(topics, counts, offsets, members, prev_owner, claims=parsed, distinct=distinct,
                  subscription_of=subscription_of, kept=memo, earlier=earlier)


def _topic_indices(subscriptions: list[tuple[str, ...]], index: dict[str, int],
                   known: dict[int, tuple[tuple[str, ...], np.ndarray]]) -> list[np.ndarray]:
    """Each subscription's known topics as sorted, distinct indices (`known`: earlier answers,
    by tuple). The new ones are indexed together: one pass over all their names and one sort,
    rather than a few numpy calls for each (a hundred members of fifty topics each)."""
    found: list[np.ndarray | None] = []
    for topics in subscriptions:
        seen = known.get(id(topics))
        found.append(seen[1] if seen is not None and seen[0] is topics else None)  # the entry keeps the tuple
    new = [j for j, indices in enumerate(found) if indices is None]
    if new:
        lengths = [len(subscriptions[j]) for j in new]
        topic = name_indices([subscriptions[j] for j in new], index)
        owner = np.arange(len(new), dtype=np.int64).repeat(lengths)
        owner, topic = owner[topic >= 0], topic[topic >= 0]
        if not ((topic[1:] > topic[:-1]) | (owner[1:] != owner[:-1])).all():  # not each in Java order, or repeated
            order = np.lexsort((topic, owner))
            owner, topic = owner[order], topic[order]
            keep = run_starts(owner, topic)
            owner, topic = owner[keep], topic[keep]
        bounds = [0, *owner.searchsorted(np.arange(1, len(new))).tolist(), len(topic)]
        pieces = map(topic.__getitem__, map(slice, bounds[:-1], bounds[1:]))  # (np.split costs ten times more)
        for j, indices in zip(new, pieces):
            found[j] = indices
            known[id(subscriptions[j])] = (subscriptions[j], indices)
    return cast(list[np.ndarray], found)


class _ColumnsSpec:
    """`GroupSpec` over a `Layout`: each distinct subscription's topic names made once."""

    __slots__ = ("_layout", "_member_index", "_subscriptions", "_topics")

    def __init__(self, layout: Layout) -> None:
        self._layout = layout
        self._topics = frozenset(layout.topics)
        self._member_index = {m.id: i for i, m in enumerate(layout.members)}
        names = layout.topics
        self._subscriptions = [frozenset(names[t] for t in s.tolist()) for s in layout.distinct]

    def member_ids(self) -> Sequence[str]:
        return [m.id for m in self._layout.members]

    def member_subscription(self, member_id: str) -> frozenset[str]:
        return self._subscriptions[int(self._layout.subscription_of[self._member_index[member_id]])]

    def member_rack(self, member_id: str) -> str | None:
        return self._layout.members[self._member_index[member_id]].rack

    def subscription_type(self) -> SubscriptionType:
        used = np.unique(self._layout.subscription_of)
        return "homogeneous" if len({self._subscriptions[s] for s in used.tolist()}) <= 1 else "heterogeneous"

    def topic_names(self) -> frozenset[str]:
        return self._topics

    def partition_count(self, topic: str) -> int:
        index = self._layout.topic_index().get(topic)
        return 0 if index is None else int(self._layout.counts[index])


def distinct_pairs(layout: Layout) -> tuple[np.ndarray, np.ndarray]:
    """Every (topic, distinct subscription) pair, sorted by topic then subscription."""
    found = layout.derived.get("distinct_pairs")
    if found is None:
        # The same distinct subscriptions (the same arrays, from `build`'s memo) give the same
        # pairs: the last ones are kept in that memo, with the arrays so that ids stay theirs.
        kept = layout.kept
        last = kept.distinct_pairs if kept is not None else None
        if last is not None and len(last[0]) == len(layout.distinct) and all(map(
                operator.is_, last[0], layout.distinct)):
            found = last[1]
        else:
            lengths = [len(s) for s in layout.distinct]
            topic = np.concatenate(layout.distinct) if layout.distinct else np.empty(0, dtype=np.int64)
            subscription = np.arange(len(layout.distinct), dtype=np.int64).repeat(lengths)
            order = stable_order(topic)  # subscriptions already ascend within a topic
            found = (topic[order], subscription[order])
            if kept is not None:
                kept.distinct_pairs = (tuple(layout.distinct), found)
        layout.derived["distinct_pairs"] = found
    return found


def subscriber_counts(layout: Layout) -> np.ndarray:
    """How many members subscribe to each topic."""
    topic, subscription = distinct_pairs(layout)
    size = np.bincount(layout.subscription_of, minlength=len(layout.distinct))
    return np.bincount(topic, weights=size[subscription], minlength=len(layout.topics)).astype(np.int64)


def topic_subscribers(layout: Layout, rank: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each topic's subscribers in member order, as ``(first, count, member)``: topic t's are
    ``member[first[t] : first[t] + count[t]]``. When every topic is in one distinct
    subscription (all members alike, say), `member` is the members grouped by subscription,
    shared by the topics of each, instead of one entry per (topic, member) pair: range over a
    thousand topics and a thousand members then makes no million-pair arrays.

    `rank`: each member's place in another order (a permutation, as `static_first_ranks`
    gives), which each topic's subscribers then follow instead of the layout's."""
    topic, subscription = distinct_pairs(layout)
    count = subscriber_counts(layout)
    # Members of each distinct subscription, in member order.
    by_subscription = stable_order(layout.subscription_of) if rank is None else \
        np.lexsort((rank, layout.subscription_of))
    size = np.bincount(layout.subscription_of, minlength=len(layout.distinct))
    start = size.cumsum() - size
    if not len(topic) or (topic[1:] > topic[:-1]).all():
        first = np.zeros(len(layout.topics), dtype=np.int64)
        first[topic] = start[subscription]
        return first, count, by_subscription
    # Topics shared by subscriptions: every (topic, member) pair, sorted by topic then member.
    n = size[subscription]
    slot = np.arange(int(n.sum())) - (n.cumsum() - n).repeat(n)
    member = by_subscription[start[subscription].repeat(n) + slot]
    width = max(len(layout.members), 1)
    if rank is None:
        return np.cumsum(count) - count, count, np.sort(np.repeat(topic, n) * width + member) % width
    ranked = np.sort(np.repeat(topic, n) * width + rank[member]) % width
    return np.cumsum(count) - count, count, np.argsort(rank)[ranked]


def static_first_ranks(layout: Layout) -> np.ndarray | None:
    """Each member's place in `ordering.static_first_order` (the order Java's range and
    round-robin assignors deal in), or None when no member is static: the layout's own order
    (member ids, Java's) is then that order."""
    instances = [m.group_instance_id for m in layout.members]
    if instances.count(None) == len(instances):
        return None
    order = static_first_order([m.id for m in layout.members], instances)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank


def _member_order(ids: list[str], memo: PlanMemo | None) -> list[int]:
    """`java_order` of member ids; with `memo`, by each id's rank among the ids seen before
    (a group planned again and again keeps most of its members, so sorting numbers by rank
    replaces sorting a thousand strings; a new id ranks everything again). The ids seen stay
    until the owner's cache starts again (`LeaderCache`'s bound)."""
    if memo is None or len(ids) < 64:
        return java_order(ids)
    ranks = memo.member_ranks
    try:
        rank = np.fromiter(map(ranks.__getitem__, ids), dtype=np.int64, count=len(ids))
    except KeyError:
        seen = [*ranks, *(i for i in ids if i not in ranks)]
        ranks.clear()
        ranks.update((seen[i], r) for r, i in enumerate(java_order(seen)))
        rank = np.fromiter(map(ranks.__getitem__, ids), dtype=np.int64, count=len(ids))
    return cast(list[int], rank.argsort().tolist())


def _parse_claims(group: Group, members: list[Member], index: dict[str, int]) -> ParsedClaims:
    """All members' claims as arrays: member, topic index (-1 unknown), partition."""
    lengths = [len(m.owned) for m in members]
    member = np.arange(len(members), dtype=np.int64).repeat(lengths)
    read = claim_columns([m.owned for m in members], index)
    if read is not None:  # every claim a TopicPartition of a str and an int, read in C
        return member, *read
    claims = list(chain.from_iterable(m.owned for m in members))
    types = set(map(type, claims))
    if claims and types <= {TopicPartition, tuple, list} and set(map(len, claims)) == {2}:
        # itemgetter maps run in C; zip(*claims) over a million claims is ten times slower.
        numbers = list(map(itemgetter(1), claims))
        # Exact types: numpy would read True as 1 and mix ints with bools silently.
        part = np.array(numbers) if set(map(type, numbers)) <= {int} else np.zeros(0, dtype=object)
        if part.dtype.kind in "iu":
            names = map(itemgetter(0), claims)
            try:
                topic = np.fromiter(map(index.get, names, repeat(-1)), dtype=np.int64, count=len(claims))
                return member, topic, part.astype(np.int64)
            except TypeError:  # an unhashable topic "name"
                pass
    # Hostile claims of odd shapes or types: check each one with the reference rule.
    good = np.fromiter(
        (is_valid_claim(group, set(members[i].topics), c) for i, c in zip(member.tolist(), claims)),
        dtype=bool, count=len(claims),
    )
    kept = [c for c, ok in zip(claims, good) if ok]
    topic = np.array([index[c[0]] for c in kept], dtype=np.int64)
    part = np.array([int(c[1]) for c in kept], dtype=np.int64)
    return member[good], topic, part


#: The most (subscription, topic) pairs `_resolve_claims` looks claims up in a table of (16 MB).
_SUBSCRIBED_TABLE = 1 << 24


def _resolve_claims(counts: np.ndarray, offsets: np.ndarray, members: list[Member], distinct: list[np.ndarray],
                    subscription_of: np.ndarray, parsed: ParsedClaims, memo: PlanMemo | None = None
                    ) -> tuple[np.ndarray, np.ndarray | None]:
    """Previous owner per flat partition under the rules of
    `assignor.solver.claims`: valid claims only, each once per member, KIP-341 between members. Also
    the most recent earlier owner (`Layout.earlier`): the claimant of the highest generation
    below the owner's, when one member alone has it."""
    member, topic, part = parsed
    total = int(offsets[-1])
    prev_owner = filled(total, NO_OWNER)
    if not len(member):  # nothing claimed (a fresh group; eager protocols send no claims)
        return prev_owner, None
    known = topic >= 0
    topic_safe = np.where(known, topic, 0)
    valid = known & (part >= 0) & (part < (counts[topic_safe] if len(counts) else 0))
    # Subscribed: (subscription, topic) among the keys subscription * T + topic, looked up in a
    # table of every key (a gather, ten times faster than a binary search of a million claims)
    # unless the table would be large, then found in the sorted keys.
    width = max(len(counts), 1)
    keys, table = _subscribed(distinct, width, memo)
    wanted = subscription_of[member] * width + topic_safe
    if not len(keys):
        valid &= False
    elif table is not None:
        valid &= table[wanted]
    else:
        valid &= keys[np.minimum(keys.searchsorted(wanted), len(keys) - 1)] == wanted
    if valid.all():  # no claim dropped, the common case: no copies
        flat = offsets[topic] + part
    else:
        member = member[valid]
        flat = offsets[topic_safe[valid]] + part[valid]
    prev_owner[flat] = member
    # Each partition claimed once at most, the common case, when as many partitions have an owner
    # as there are claims (a million claims counted with bincount take five times longer).
    if np.count_nonzero(prev_owner != NO_OWNER) == len(flat):
        return prev_owner, None
    prev_owner[flat] = NO_OWNER
    single = np.bincount(flat, minlength=total)[flat] == 1
    prev_owner[flat[single]] = member[single]
    # Partitions claimed more than once: drop a member's repeated claims, then the highest
    # generation wins and a tie at the highest generation cancels (KAFKA-12984).
    flat, member = flat[~single], member[~single]
    generation = np.array([m.generation for m in members], dtype=np.int64)[member]
    order = np.lexsort((member, -generation, flat))
    flat, member, generation = flat[order], member[order], generation[order]
    unique = run_starts(flat, member)
    flat, member, generation = flat[unique], member[unique], generation[unique]
    first = run_starts(flat).nonzero()[0]
    after = np.minimum(first + 1, len(flat) - 1)
    tied = (after != first) & (flat[after] == flat[first]) & (generation[after] == generation[first])
    winners = first[~tied]
    prev_owner[flat[winners]] = member[winners]
    # The next claimant of a winner's partition, unless two share its generation.
    second = np.minimum(winners + 1, len(flat) - 1)
    third = np.minimum(winners + 2, len(flat) - 1)
    has = (second != winners) & (flat[second] == flat[winners])
    has &= ~((third != second) & (flat[third] == flat[winners]) & (generation[third] == generation[second]))
    if not has.any():
        return prev_owner, None
    earlier = filled(total, NO_OWNER)
    earlier[flat[winners[has]]] = member[second[has]]
    return prev_owner, earlier


def _subscribed(distinct: list[np.ndarray], width: int, memo: PlanMemo | None) -> tuple[np.ndarray, np.ndarray | None]:
    """Every (distinct subscription, topic) pair as ``subscription * width + topic``, ascending
    (each subscription's topics are), and a table of them (True at each key) unless it would be
    large. The same distinct subscriptions (the same arrays, from `build`'s memo) give the same
    keys: the last ones are kept in `memo` (whose topics, and so `width`, stay the same), with the
    arrays so that ids stay theirs."""
    last = memo.subscribed if memo is not None else None
    if last is not None and len(last[0]) == len(distinct) and all(map(operator.is_, last[0], distinct)):
        return last[1], last[2]
    keys = np.concatenate(distinct) if distinct else np.empty(0, np.int64)
    keys += (np.arange(len(distinct), dtype=np.int64) * width).repeat(list(map(len, distinct)))
    table = None
    if len(distinct) * width <= _SUBSCRIBED_TABLE:
        table = np.zeros(len(distinct) * width, dtype=bool)
        table[keys] = True
        table.flags.writeable = False
    keys.flags.writeable = False
    if memo is not None:
        memo.subscribed = (tuple(distinct), keys, table)
    return keys, table


def claimants(layout: Layout) -> tuple[np.ndarray, np.ndarray]:
    """Per flat partition: how many members claim it at all, and one of them.

    Unlike `prev_owner`, this counts *every* claim of an existing partition, stale generation
    or not, subscribed or not: each such member consumes the partition until it revokes it.
    """
    member, topic, part = layout.claims
    known = topic >= 0
    topic_safe = np.where(known, topic, 0)
    exists = known & (part >= 0) & (part < (layout.counts[topic_safe] if len(layout.counts) else 0))
    flat = layout.offsets[topic_safe[exists]] + part[exists]
    pairs = flat * max(len(layout.members), 1) + member[exists]
    pairs.sort()
    pairs = pairs[run_starts(pairs)]
    flat, member = pairs // max(len(layout.members), 1), pairs % max(len(layout.members), 1)
    count = np.bincount(flat, minlength=layout.total)
    one = filled(layout.total, NO_OWNER)
    one[flat] = member
    return count, one


def rack_signatures(group: Group, layout: Layout) -> tuple[np.ndarray, list[frozenset[str]]]:
    """Per flat partition: an id of its replica racks that some member is on; and the sets.

    Id 0 is the empty set (no member is local). Racks no member is on cannot make anything
    local, so they are left out and more partitions share a set.
    """
    member_racks = frozenset(m.rack for m in layout.members if m.rack is not None)
    sets: list[frozenset[str]] = [frozenset()]
    ids: dict[frozenset[str], int] = {frozenset(): 0}
    by_tuple: dict[Sequence[str], int] = {}

    def lookup(racks: Sequence[str]) -> int:
        found = by_tuple.get(racks)
        if found is None:
            relevant = frozenset(racks) & member_racks
            found = by_tuple[racks] = ids.setdefault(relevant, len(ids))
            if found == len(sets):
                sets.append(relevant)
        return found

    signature = np.zeros(layout.total, dtype=np.int64)
    for t, topic in enumerate(layout.topics):
        per_partition = (group.partition_racks or {}).get(topic, ())[: int(layout.counts[t])]
        start = int(layout.offsets[t])
        signature[start : start + len(per_partition)] = [lookup(racks) for racks in per_partition]
    return signature, sets
