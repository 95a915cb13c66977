"""KIP-54 as the Java client runs it: ``java-sticky`` and ``java-cooperative-sticky``.

Java's ``StickyAssignor`` and ``CooperativeStickyAssignor`` (``AbstractStickyAssignor``, as in
the Java client 4.3.0, with KIP-341 generations, KAFKA-12984 claim conflicts, KIP-881 racks and
KAFKA-15170's rack fixes to the constrained builder),
reproduced decision for decision so that a plan equals the one a Java leader would send, in
Java's order within each member. Where Java's choice among equal plans depends on the
iteration order of a ``java.util.HashMap`` of member ids or a ``HashSet`` of partitions, the
order is computed from Java's ``hashCode`` (`assignor.ordering.hashmap_order`), with the
members in the order the coordinator listed them (the group's member order).

Java's own outcomes are kept on purpose, as these strategies exist to show what a Java fleet
does: loads such as 9/10/11 where 10/10/10 is reachable, and a cooperative plan may hand a
partition to a member while a stale member still claims it. Where Java fails, `JavaAssignorFailure`
says how.

The leader instance's memory (Java's ``maxGeneration`` field, which no rebalance resets) lives
in `JavaStickyAssignor`; the registered strategies use a fresh instance per plan.
"""

from __future__ import annotations

from collections import Counter
from functools import partial

from assignor._arrays import gc_paused
from assignor.errors import JavaAssignorFailure
from assignor.model import UNKNOWN_GENERATION, Claims, Group, Member, Plan, TopicPartition
from assignor.ordering import hashmap_order
from assignor.protocols import COOPERATIVE_STICKY, STICKY
from assignor.solver import dense
from assignor.strategies.java_sticky import constrained, general
from assignor.strategies.java_sticky.member_data import java_topics, read_claims
from assignor.strategies.java_sticky.racks import RackInfo
from assignor.strategies.strategy import Planned, Strategy, owning_claims, planned_in_plan_order

__all__ = ["COOPERATIVE_NAME", "COOPERATIVE_STRATEGY", "NAME", "STRATEGY", "JavaStickyAssignor", "assign",
           "assign_cooperative", "planned"]

NAME = "java-sticky"
COOPERATIVE_NAME = "java-cooperative-sticky"


class JavaStickyAssignor:
    """One Java leader's sticky assignor.

    Parameters
    ----------
    cooperative : bool
        ``CooperativeStickyAssignor`` (KIP-429: partitions changing hands are withheld for a
        round) rather than the eager ``StickyAssignor``.
    max_generation : int
        The highest generation this leader has seen (Java's ``maxGeneration``); it only rises.
    plain : bool
        Run every step as Java writes it, without the fast paths (the reference the property
        tests hold them to; far slower on large groups).

    Examples
    --------
    >>> from assignor import Group, Member
    >>> leader = JavaStickyAssignor()
    >>> plan = leader.assign(Group(topics={"t": 3}, members=[Member("a", ["t"]), Member("b", ["t"])]))
    >>> plan.assignment
    {'a': [TopicPartition(topic='t', partition=0), TopicPartition(topic='t', partition=2)], \
'b': [TopicPartition(topic='t', partition=1)]}
    """

    def __init__(self, cooperative: bool = False, max_generation: int = UNKNOWN_GENERATION, *,
                 plain: bool = False) -> None:
        self.cooperative = cooperative
        self.plain = plain
        self.max_generation = max_generation
        #: Which builder the last plan used: "constrained" or "general".
        self.builder: str | None = None

    @property
    def name(self) -> str:
        return COOPERATIVE_NAME if self.cooperative else NAME

    def assign(self, group: Group, *, hashes: dict[str, int] | None = None) -> Plan:
        """Plan `group` as Java would. `hashes`: member ids' string hashes a caller keeps between
        rebalances (`dense.PlanMemo.string_hashes`), read and added to.

        Raises
        ------
        JavaAssignorFailure
            Where Java's assignor throws, or would return a plan with a partition twice, a
            partition that does not exist, or one of a topic its member does not subscribe to.
        """
        if not group.members:
            return Plan(self.name, {})
        with gc_paused():  # a large group's plan is a million small tuples, nothing cyclic
            return self._assign(group, hashes)

    def _assign(self, group: Group, hashes: dict[str, int] | None) -> Plan:
        topics = java_topics(group)
        by_id = {m.id: m for m in group.members}
        members = [by_id[m] for m in hashmap_order([m.id for m in group.members], known=hashes)]
        claims = read_claims(members, topics, self.max_generation, self.plain)
        self.max_generation = claims.max_generation
        racks = RackInfo(group, topics, members)
        transferring: dict[TopicPartition, str] | None
        if claims.alike:
            self.builder = "constrained"
            assignment, transferring, impossible = constrained.build(topics, claims.owned, claims.claimed_by_several,
                                                                     racks, self.plain, claims.claimed)
            _check_subscribed(members, assignment, topics)
        else:
            self.builder = "general"
            assignment, impossible = general.build(topics, members, claims.owned, claims.max_generation, racks,
                                                   self.plain)
            transferring = None
        if self.cooperative:
            if transferring is None:
                transferring = _changing_hands(members, assignment, literal=impossible or self.plain)
            for tp, member in transferring.items():
                _remove_first(assignment[member], tp)
        if impossible:  # only then can Java's plan hold a partition twice or a ghost
            _check(assignment, topics)
        return Plan(self.name, {m.id: assignment.get(m.id, []) for m in group.members})


def _changing_hands(members: list[Member], assignment: dict[str, list[TopicPartition]],
                    literal: bool = False) -> dict[TopicPartition, str]:
    """``CooperativeStickyAssignor.computePartitionsTransferringOwnership``: partitions given to
    a member that did not own them, which another member owned and is not given back.

    Java collects every partition given to a member that did not own it, then keeps those some
    member gave up; with each partition given once (no claim of a partition that does not
    exist, `literal` otherwise), the partitions given up are the only ones to look at."""
    if not literal:
        given_up: set[TopicPartition] = set()
        for member in members:
            if member.owned:
                kept = set(assignment.get(member.id, ()))
                given_up.update(tp for tp in member.owned if tp not in kept)
        if not given_up:
            return {}
        owners = {tp: m for m, tps in assignment.items() for tp in tps if tp in given_up}
        owned_by = {m.id: set(m.owned) for m in members}
        return {tp: m for tp, m in owners.items() if tp not in owned_by[m]}
    added: dict[TopicPartition, str] = {}
    revoked: set[TopicPartition] = set()
    for member in members:
        given = assignment.get(member.id, [])
        owned = set(member.owned)
        added.update((tp, member.id) for tp in given if tp not in owned)
        kept = set(given)
        revoked.update(tp for tp in member.owned if tp not in kept)
    return {tp: m for tp, m in added.items() if tp in revoked}


def _check_subscribed(members: list[Member], assignment: dict[str, list[TopicPartition]],
                      topics: dict[str, int]) -> None:
    """The constrained builder deals every partition to any member, trusting Java's test that all
    subscriptions are equal. That test lets some through (an empty subscription before others, a
    topic listed twice): Java then hands a member partitions of a topic it does not subscribe to."""
    for member in members:
        subscribed = set(member.topics)
        if subscribed.issuperset(topics):
            continue
        for tp in assignment.get(member.id, ()):
            if tp.topic not in subscribed:
                raise JavaAssignorFailure(
                    f"Java's constrained builder would give member {member.id!r} partition {tp.topic}-{tp.partition} "
                    f"of a topic it does not subscribe to (Java's test for equal subscriptions lets "
                    f"{sorted(member.topics)!r} through)")


def _remove_first(partitions: list[TopicPartition], tp: TopicPartition) -> None:
    if tp in partitions:
        partitions.remove(tp)


def _check(assignment: dict[str, list[TopicPartition]], topics: dict[str, int]) -> None:
    """Java returns such plans without a word; we refuse to pass them on as a plan."""
    counts = Counter(tp for tps in assignment.values() for tp in tps)
    twice = [tp for tp, n in counts.items() if n > 1]
    if twice:
        tp = twice[0]
        raise JavaAssignorFailure(
            f"Java's general builder would assign {len(twice)} partition(s) to two members (e.g. "
            f"{tp.topic}-{tp.partition}): a member's claim names a partition its topic does not have")
    missing = [tp for tp in counts if not 0 <= tp.partition < topics.get(tp.topic, 0)]
    if missing:
        tp = missing[0]
        raise JavaAssignorFailure(
            f"Java's assignor would assign partition {tp.topic}-{tp.partition}, which does not exist: a member "
            "claimed it")


def assign(group: Group) -> Plan:
    """``java-sticky``: Java's eager ``StickyAssignor`` on a leader that has seen no generation."""
    return JavaStickyAssignor(cooperative=False).assign(group)


def assign_cooperative(group: Group) -> Plan:
    """``java-cooperative-sticky``: Java's ``CooperativeStickyAssignor`` on a fresh leader."""
    return JavaStickyAssignor(cooperative=True).assign(group)


def planned(cooperative: bool, group: Group, claims: Claims | None = None, memo: dense.PlanMemo | None = None,
            leader: JavaStickyAssignor | None = None) -> Planned:
    """The Java plan on arrays (see `assignor.strategies.strategy.Planned`), each member's
    partitions in Java's order; owned partitions from `claims` (in their order) when given.
    `leader`: the Java leader whose memory carries over between rebalances (a fresh one when
    omitted)."""
    if leader is None:
        leader = JavaStickyAssignor(cooperative)
    if claims is not None:
        group = owning_claims(group, claims)
    return planned_in_plan_order(group, leader.assign(group, hashes=None if memo is None else memo.string_hashes),
                                 claims, memo)


#: Java's ``StickyAssignor`` and ``CooperativeStickyAssignor`` (KIP-54, KIP-429), each under its
#: protocol, with a leader whose memory (the highest generation seen) lasts between rebalances.
STRATEGY = Strategy(NAME, STICKY, assign, partial(planned, False), java=True,
                    new_leader=partial(JavaStickyAssignor, False))
COOPERATIVE_STRATEGY = Strategy(COOPERATIVE_NAME, COOPERATIVE_STICKY, assign_cooperative, partial(planned, True),
                                java=True, new_leader=partial(JavaStickyAssignor, True))
