"""Which previous owner, if any, each partition has: the reference rules for owned claims.

A leader learns previous ownership from what members *claim* (sticky user data or Subscription
v1+ owned partitions). Claims can be stale or hostile, so before a strategy keeps anything:

1. A claim counts only for an existing partition (known topic, ``0 <= partition < count``) of a
   topic the member still subscribes to. Anything else is dropped, never raised.
2. A member claiming the same partition twice claims it once.
3. KIP-341: when several members claim a partition, the highest generation wins. When two or
   more members share that highest generation, the claims cancel and the partition has no
   previous owner (KAFKA-12984: keeping either would let a zombie hold a partition twice).
   Generation ``-1`` (unknown) ranks below every known generation.

This module is the plain-Python statement of those rules. The oracle uses it directly; the
strategies use a vectorised equivalent (`assignor.solver.dense`) that the tests check against it.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from operator import itemgetter
from typing import NamedTuple, cast

from assignor.model import Group, TopicPartition

__all__ = ["DROP_REASONS", "Dropped", "Settled", "dropped", "is_valid_claim", "resolve", "settle"]

#: Why a claim can be dropped (rule 1, then rule 3), in the order `dropped` tests them.
DROP_REASONS = ("unknown_topic", "not_subscribed", "no_such_partition", "same_generation_conflict",
                "older_generation")


def is_valid_claim(group: Group, subscribed: set[str], claim: object) -> bool:
    """Whether `claim` names an existing partition of a topic in `subscribed`."""
    if not isinstance(claim, tuple | list) or len(claim) != 2:
        return False
    topic, partition = claim
    if not isinstance(topic, str) or topic not in subscribed:
        return False
    # (`type(...) is int` first: the ABC check costs a microsecond, and claims come by the million.)
    if type(partition) is not int and (not isinstance(partition, numbers.Integral) or isinstance(partition, bool)):
        return False
    count = group.topics.get(topic)
    return count is not None and 0 <= int(partition) < count


class Dropped(NamedTuple):
    """A claim no partition keeps, and why (one of `DROP_REASONS`)."""

    member: str
    claim: object
    reason: str


class Settled(NamedTuple):
    """Every member's claims under the rules: the previous owner of each partition that has
    one, and the claims that keep nothing, with their reasons."""

    owners: dict[TopicPartition, str]
    dropped: list[Dropped]


def resolve(group: Group) -> dict[TopicPartition, str]:
    """Map each partition with a valid previous owner to that member's id (`settle`).

    Examples
    --------
    >>> from assignor import Group, Member, TopicPartition as TP
    >>> g = Group(topics={"t": 2}, members=[
    ...     Member("a", ["t"], owned=[TP("t", 0), TP("t", 1)], generation=4),
    ...     Member("b", ["t"], owned=[TP("t", 1)], generation=5),
    ...     Member("c", ["t"], owned=[TP("t", 7)], generation=9),  # no such partition
    ... ])
    >>> sorted(resolve(g).items())
    [(TopicPartition(topic='t', partition=0), 'a'), (TopicPartition(topic='t', partition=1), 'b')]
    """
    return settle(group).owners


def dropped(group: Group) -> list[Dropped]:
    """Every claim that gives no member a previous owner, with its reason (`settle`).

    Examples
    --------
    >>> from assignor import Group, Member, TopicPartition as TP
    >>> g = Group(topics={"t": 2}, members=[
    ...     Member("a", ["t"], owned=[TP("t", 1), TP("t", 5), TP("u", 0)], generation=4),
    ...     Member("b", ["t"], owned=[TP("t", 1)], generation=5),
    ... ])
    >>> for d in dropped(g):
    ...     print(d.member, tuple(d.claim), d.reason)
    a ('t', 5) no_such_partition
    a ('u', 0) unknown_topic
    a ('t', 1) older_generation
    """
    return settle(group).dropped


def settle(group: Group) -> Settled:
    """The rules above over every member's claims: each claim either makes its member the
    previous owner of its partition or is dropped, for a topic the group does not know, a topic
    the member no longer subscribes to, a partition the topic does not have (or a claim that is
    no (topic, partition) pair), a tie at the highest generation (KAFKA-12984: every tied
    claim) or a higher generation's claim (KIP-341). A member's repeated claim of one partition
    is one claim. Dropped claims come in member order, rule 1's before rule 3's."""
    out: list[Dropped] = []
    valid: list[tuple[str, int, TopicPartition]] = []  # member, its generation, the partition
    topics = group.topics
    for member in group.members:
        subscribed = set(member.topics)
        for claim in _distinct(member.owned):
            if type(claim) is TopicPartition and type(claim[1]) is int:  # a decoded claim: checked inline
                count = topics.get(claim[0])
                if count is not None and 0 <= claim[1] < count and claim[0] in subscribed:
                    valid.append((member.id, member.generation, claim))
                    continue
            if is_valid_claim(group, subscribed, claim):
                # A decoded claim is a TopicPartition of an int already: kept as it is.
                tp = claim if type(claim) is TopicPartition and type(claim[1]) is int \
                    else TopicPartition(claim[0], int(claim[1]))  # type: ignore[index]
                valid.append((member.id, member.generation, tp))
            else:
                out.append(Dropped(member.id, claim, _invalid_reason(group, subscribed, claim)))
    top: dict[TopicPartition, tuple[int, int, str]] = {}  # the highest generation, its claims, its member
    for member_id, generation, tp in valid:
        seen = top.get(tp)
        if seen is None or generation > seen[0]:
            top[tp] = (generation, 1, member_id)
        elif generation == seen[0]:
            top[tp] = (generation, seen[1] + 1, seen[2])
    for member_id, generation, tp in valid:
        highest, claims, _ = top[tp]
        if generation < highest:
            out.append(Dropped(member_id, tp, "older_generation"))
        elif claims > 1:
            out.append(Dropped(member_id, tp, "same_generation_conflict"))
    return Settled({tp: member_id for tp, (_, claims, member_id) in top.items() if claims == 1}, out)


def earlier_owners(group: Group, settled: Settled | None = None) -> dict[TopicPartition, str]:
    """Each partition's most recent earlier owner (KIP-341): among the members validly claiming
    it, the one of the highest generation below its previous owner's, when that previous owner
    exists (`settle`) and no other claimant shares that lower generation. The plain reference
    `assignor.solver.dense` is held to (``Layout.earlier``).

    Examples
    --------
    >>> from assignor import Group, Member, TopicPartition as TP
    >>> g = Group(topics={"t": 2}, members=[
    ...     Member("a", ["t"], owned=[TP("t", 0), TP("t", 1)], generation=4),
    ...     Member("b", ["t"], owned=[TP("t", 1)], generation=5),
    ... ])
    >>> earlier_owners(g)
    {TopicPartition(topic='t', partition=1): 'a'}

    `settled`: `settle`'s answer for `group` when the caller has it.
    """
    if settled is None:
        settled = settle(group)
    # The claims lost to a higher generation are `settle`'s "older_generation" drops (valid,
    # distinct, decoded to partitions); a partition whose top generation tied has no owner.
    generation_of = {m.id: m.generation for m in group.members}
    rest: dict[TopicPartition, list[tuple[int, str]]] = {}
    for drop in settled.dropped:
        if drop.reason == "older_generation" and drop.claim in settled.owners:
            tp = drop.claim
            rest.setdefault(tp, []).append((generation_of[drop.member], drop.member))
    earlier: dict[TopicPartition, str] = {}
    for tp, claimants in rest.items():
        highest = max(generation for generation, _ in claimants)
        at_highest = [member_id for generation, member_id in claimants if generation == highest]
        if len(at_highest) == 1:
            earlier[tp] = at_highest[0]
    return earlier


def _distinct(owned: Sequence[object]) -> Iterable[object]:
    """A member's claims, each once, in order. Typed when types are mixed, so that ("t", False)
    is not the claim ("t", 0) it equals in Python; decoded claims (TopicPartitions of ints) are
    told apart by value."""
    if set(map(type, owned)) <= {TopicPartition}:
        pairs = cast(Sequence[TopicPartition], owned)
        if set(map(type, map(itemgetter(1), pairs))) <= {int}:
            return dict.fromkeys(pairs)
    seen: set[object] = set()
    distinct = []
    for claim in owned:
        key = tuple((type(x), x) for x in claim) if isinstance(claim, tuple | list) else (type(claim), claim)
        try:
            if key in seen:
                continue
            seen.add(key)
        except TypeError:  # an unhashable claim is no (topic, partition) pair
            pass
        distinct.append(claim)
    return distinct


def _invalid_reason(group: Group, subscribed: set[str], claim: object) -> str:
    pair = isinstance(claim, tuple | list) and len(claim) == 2
    topic = claim[0] if pair else None  # type: ignore[index]
    if not pair or not isinstance(topic, str):
        return "no_such_partition"
    if topic not in group.topics:
        return "unknown_topic"
    if topic not in subscribed:
        return "not_subscribed"
    return "no_such_partition"
