"""The previous assignment as Java's ``AbstractStickyAssignor.allSubscriptionsEqual`` reads it.

One pass over the members in the leader's HashMap order (see `assignor.ordering.hashmap_order`)
decides the builder (all subscriptions alike or not), keeps each member's claims of topics the
leader knows, and settles claims of one partition by two members (KAFKA-12984): the higher
generation keeps it; in one generation both lose it and it is remembered as claimed by several.
The leader's highest generation seen so far (``maxGeneration``, a field of Java's assignor
instance that no rebalance resets) rises with every member's generation.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from operator import attrgetter, itemgetter

from assignor.model import Group, Member, TopicPartition
from assignor.ordering import java_sorted
from assignor.strategies.java_sticky import columns
from assignor.strategies.java_sticky.columns import Marks, claimed

__all__ = ["Claims", "java_topics", "read_claims"]


@dataclass
class Claims:
    """What the builders start from.

    Attributes
    ----------
    alike : bool
        Every member subscribes to the same topics (the constrained builder applies).
    owned : dict of str to list of TopicPartition
        Per member, in HashMap order: its claims that survive (Java's consumerToOwnedPartitions).
    claimed : Marks or None
        Every claim's partition marked (`columns.claimed`), when a large group's claims were
        read in columns and all survive.
    claimed_by_several : set of TopicPartition
        Partitions two members claimed in the same generation.
    max_generation : int
        The leader's highest generation after this read.
    dropped : list of (TopicPartition, str, str)
        Claims dropped, with the member and the reason (same-generation conflict, older
        generation).
    """

    alike: bool
    owned: dict[str, list[TopicPartition]]
    claimed: Marks | None
    claimed_by_several: set[TopicPartition]
    max_generation: int
    dropped: list[tuple[TopicPartition, str, str]]


def read_claims(members: list[Member], topics: dict[str, int], max_generation: int, plain: bool = False) -> Claims:
    """Java's ``allSubscriptionsEqual`` over `members` in HashMap order (`plain`: claim by claim
    for every member, the reference `_all_whole` and `_take_whole` are held to)."""
    alike, max_generation = _alike(members, max_generation)
    if not plain:
        whole = _all_whole(members, topics)
        if whole is not None:
            kept, marks = whole
            return Claims(alike, kept, marks, set(), max_generation, [])
    owned: dict[str, list[TopicPartition]] = {}
    owner_of: dict[TopicPartition, Member] = {}
    several: set[TopicPartition] = set()
    dropped: list[tuple[TopicPartition, str, str]] = []
    for member in members:
        mine: list[TopicPartition] = []
        owned[member.id] = mine
        if not plain and _take_whole(member, topics, owner_of, mine):
            continue
        for claim in member.owned:
            tp = claim if type(claim) is TopicPartition else _as_claim(claim)
            if tp is None:
                continue  # not a (topic, partition) pair: nothing a client could send
            if tp.topic not in topics:
                continue
            other = owner_of.get(tp)
            if other is None:
                mine.append(tp)
                owner_of[tp] = member
            elif member.generation == other.generation:
                several.add(tp)
                _remove(owned[other.id], tp)
                owner_of[tp] = member
                dropped.append((tp, other.id, "same-generation conflict"))
                dropped.append((tp, member.id, "same-generation conflict"))
            elif member.generation > other.generation:
                mine.append(tp)
                _remove(owned[other.id], tp)
                owner_of[tp] = member
                dropped.append((tp, other.id, "older generation"))
            else:
                dropped.append((tp, member.id, "older generation"))
    return Claims(alike, owned, None, several, max_generation, dropped)


def _alike(members: list[Member], max_generation: int) -> tuple[bool, int]:
    """Whether every subscription is the first non-empty one, as Java compares them (list sizes
    with a set built from the first), and the highest generation seen."""
    alike = True
    first_topics: set[str] = set()
    for member in members:
        if not first_topics:
            first_topics.update(member.topics)
        elif alike and not (len(member.topics) == len(first_topics) and first_topics.issuperset(member.topics)):
            alike = False
        max_generation = max(max_generation, member.generation)
    return alike, max_generation


def _all_whole(members: list[Member], topics: dict[str, int]
               ) -> tuple[dict[str, list[TopicPartition]], Marks | None] | None:
    """The most common case for the whole group at once: every claim a TopicPartition of a known
    topic, no partition claimed twice. Then every member keeps all it claims (and, when a large
    group's claims were read in columns, `columns.claimed` marked them); None otherwise."""
    owned = list(map(attrgetter("owned"), members))
    if sum(map(len, owned)) >= columns.COLUMNS_FROM:
        marks = claimed(owned, java_sorted(topics), topics)
        if marks is False:
            return None
        if marks is not None:
            return {member.id: list(member.owned) for member in members}, marks
    claims = list(chain.from_iterable(owned))
    if not set(map(type, claims)) <= {TopicPartition} or len(set(claims)) != len(claims) or \
            not topics.keys() >= set(map(itemgetter(0), claims)):
        return None
    return {member.id: list(member.owned) for member in members}, None


def _take_whole(member: Member, topics: dict[str, int], owner_of: dict[TopicPartition, Member],
                mine: list[TopicPartition]) -> bool:
    """The common case at once: every claim a TopicPartition, none claimed before or twice.
    Then the pass over the claims one by one would keep them all (those of known topics), so
    keep them with set operations instead; False (nothing done) otherwise."""
    claims = member.owned
    if not claims:
        return True
    if set(map(type, claims)) != {TopicPartition}:
        return False
    known = [tp for tp in claims if tp[0] in topics]
    distinct = set(known)
    if len(distinct) != len(known) or not owner_of.keys().isdisjoint(distinct):
        return False
    mine.extend(known)
    owner_of.update(dict.fromkeys(known, member))
    return True


def _as_claim(value: object) -> TopicPartition | None:
    if isinstance(value, tuple | list) and len(value) == 2 and isinstance(value[0], str) \
            and isinstance(value[1], int) and not isinstance(value[1], bool):
        return TopicPartition(value[0], value[1])
    return None


def _remove(partitions: list[TopicPartition], tp: TopicPartition) -> None:
    """``List.remove(Object)``: the first occurrence, if any."""
    try:
        partitions.remove(tp)
    except ValueError:
        pass


def java_topics(group: Group) -> dict[str, int]:
    """The partition counts a Java leader hands its assignor: the subscribed topics it has
    metadata for, with at least one partition (``AbstractPartitionAssignor.assign`` skips the
    rest). Topics of the group that nobody subscribes to are left out, as Java's leader never
    sees them (the constrained builder would otherwise hand their partitions out)."""
    subscribed = {topic for member in group.members for topic in member.topics}
    return {topic: count for topic, count in group.topics.items() if count > 0 and topic in subscribed}
