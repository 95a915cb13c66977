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

from assignor.model import Group, Member, TopicPartition

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
    claimed_by_several: set[TopicPartition]
    max_generation: int
    dropped: list[tuple[TopicPartition, str, str]]


def read_claims(members: list[Member], topics: dict[str, int], max_generation: int) -> Claims:
    """Java's ``allSubscriptionsEqual`` over `members` in HashMap order."""
    alike = True
    first_topics: set[str] = set()
    owned: dict[str, list[TopicPartition]] = {}
    owner_of: dict[TopicPartition, Member] = {}
    several: set[TopicPartition] = set()
    dropped: list[tuple[TopicPartition, str, str]] = []
    for member in members:
        # Java compares list sizes with a set built from the first non-empty subscription.
        if not first_topics:
            first_topics.update(member.topics)
        elif alike and not (len(member.topics) == len(first_topics) and first_topics.issuperset(member.topics)):
            alike = False
        max_generation = max(max_generation, member.generation)
        mine: list[TopicPartition] = []
        owned[member.id] = mine
        for tp in member.owned:
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
    return Claims(alike, owned, several, max_generation, dropped)


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
