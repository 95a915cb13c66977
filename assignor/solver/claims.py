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

from assignor.model import Group, TopicPartition

__all__ = ["is_valid_claim", "resolve"]


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
