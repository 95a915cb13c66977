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
from typing import NamedTuple

from assignor.model import Group, TopicPartition

__all__ = ["DROP_REASONS", "Dropped", "dropped", "is_valid_claim", "resolve"]

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
    if not isinstance(partition, numbers.Integral) or isinstance(partition, bool):
        return False
    count = group.topics.get(topic)
    return count is not None and 0 <= int(partition) < count


def resolve(group: Group) -> dict[TopicPartition, str]:
    """Map each partition with a valid previous owner to that member's id.

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
    best: dict[TopicPartition, tuple[int, list[str]]] = {}
    for member in group.members:
        subscribed = set(member.topics)
        claims = {TopicPartition(c[0], int(c[1])) for c in member.owned if is_valid_claim(group, subscribed, c)}
        for tp in claims:
            generation, owners = best.get(tp, (None, []))
            if generation is None or member.generation > generation:
                best[tp] = (member.generation, [member.id])
            elif member.generation == generation:
                owners.append(member.id)
    return {tp: owners[0] for tp, (_, owners) in best.items() if len(owners) == 1}


class Dropped(NamedTuple):
    """A claim no partition keeps, and why (one of `DROP_REASONS`)."""

    member: str
    claim: object
    reason: str


def dropped(group: Group) -> list[Dropped]:
    """Every claim that gives no member a previous owner, with its reason, in member order:
    a topic the group does not know, a topic the member no longer subscribes to, a partition
    the topic does not have (or a claim that is no (topic, partition) pair), a tie at the
    highest generation (KAFKA-12984: every tied claim), or a claim beaten by a higher
    generation (KIP-341). A member's repeated claim of one partition is one claim.

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
    out: list[Dropped] = []
    valid: list[tuple[str, int, TopicPartition]] = []
    for member in group.members:
        subscribed = set(member.topics)
        seen: set[object] = set()
        for claim in member.owned:
            # Typed, so that ("t", False) is not the claim ("t", 0) that it equals in Python.
            key = tuple((type(x), x) for x in claim) if isinstance(claim, tuple | list) else (type(claim), claim)
            try:
                if key in seen:
                    continue
                seen.add(key)
            except TypeError:  # an unhashable claim is no (topic, partition) pair
                pass
            if is_valid_claim(group, subscribed, claim):
                valid.append((member.id, member.generation, TopicPartition(claim[0], int(claim[1]))))
            else:
                out.append(Dropped(member.id, claim, _invalid_reason(group, subscribed, claim)))
    best: dict[TopicPartition, tuple[int, int]] = {}  # partition -> (highest generation, its claims)
    for _, generation, tp in valid:
        top, count = best.get(tp, (generation, 0))
        if generation > top:
            best[tp] = (generation, 1)
        elif generation == top:
            best[tp] = (top, count + 1)
    for member_id, generation, tp in valid:
        top, count = best[tp]
        if generation < top:
            out.append(Dropped(member_id, tp, "older_generation"))
        elif count > 1:
            out.append(Dropped(member_id, tp, "same_generation_conflict"))
    return out


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
