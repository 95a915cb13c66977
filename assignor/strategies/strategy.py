"""What a strategy *is*, as one object: its name, the consumer protocol it plans for, how it
plans on objects and on arrays, and whether it is Kafka's own algorithm.

Each strategy module makes one `Strategy`; `assignor.strategies` registers them. The rest of the
code reads these fields and never compares a strategy's name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter
from typing import Any
from typing import Protocol as Interface

import numpy as np

from assignor._arrays import filled, stable_order
from assignor.model import Claims, Group, Member, Plan, TopicPartition
from assignor.protocols import Protocol
from assignor.solver.dense import NO_OWNER, Layout, PlanMemo, build

__all__ = ["Columns", "Leader", "Planned", "Strategy", "on_objects", "owning_claims", "plan_claims",
           "planned_from_claims", "planned_in_plan_order", "stateless"]


class Leader(Interface):
    """A group leader's assignor whose memory outlives one rebalance (Java's assignor instances
    keep the highest generation they have seen)."""

    def assign(self, group: Group) -> Plan: ...


class Planned:
    """One plan on arrays: the layout, each flat partition's `owner` (member index in layout
    order, ``NO_OWNER`` when unassigned), and the plan as columns in the order its SyncGroup
    bytes list each member's partitions (`assigned`: flat order, or the strategy's own)."""

    __slots__ = ("_assigned", "layout", "owner")

    def __init__(self, layout: Layout, owner: np.ndarray, assigned: Claims | None = None) -> None:
        self.layout, self.owner, self._assigned = layout, owner, assigned

    @property
    def assigned(self) -> Claims:
        """The plan as `Claims`: member index in layout order, each member's partitions in the
        strategy's order (flat order unless the strategy gave its own)."""
        if self._assigned is None:
            self._assigned = self.layout.owned_claims(self.owner)
        return self._assigned

    def plan(self, strategy: str) -> Plan:
        """The plan as objects."""
        if self._assigned is None:  # flat order: the layout makes the objects fastest
            return Plan(strategy, self.layout.assignment(self.owner))
        ids = [m.id for m in self.layout.members]
        return Plan(strategy, dict(zip(ids, self._assigned.member_lists(len(ids)))))


def owning_claims(group: Group, claims: Claims) -> Group:
    """`group` with each member owning its rows of `claims` (member index in ``group.members``
    order), in the claims' order: for strategies that read owned partitions as objects."""
    members = [Member.decoded(m.id, m.topics, m.generation, m.rack, mine, m.group_instance_id)
               for m, mine in zip(group.members, claims.per_member(len(group.members)))]
    return Group.assembled(group.topics, members, group.partition_racks, group.topic_ids)


def planned_in_plan_order(group: Group, plan: Plan, claims: Claims | None = None,
                          memo: PlanMemo | None = None) -> Planned:
    """`plan` (of `group`) on arrays, each member's partitions in the plan's own order: for
    strategies whose order is Kafka's, not flat order."""
    layout = build(group, claims, memo)
    lists = [plan.assignment[member.id] for member in layout.members]
    sizes = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    topics, partitions = _columns_of(list(chain.from_iterable(lists)), layout.topic_index())
    return _planned(layout, np.arange(len(lists), dtype=np.int64).repeat(sizes), topics, partitions)


def _columns_of(pairs: list[TopicPartition], index: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """Topic indices (by `index`) and partitions of `pairs`, each column read in C."""
    topics = np.fromiter(map(index.__getitem__, map(itemgetter(0), pairs)), dtype=np.int64, count=len(pairs))
    return topics, np.fromiter(map(itemgetter(1), pairs), dtype=np.int64, count=len(pairs))


def plan_claims(group: Group, plan: Plan) -> Claims:
    """`plan` (of `group`) as `Claims`: member index in ``group.members`` order, member by
    member, each member's partitions in the plan's order; topics indexing the group's."""
    names = list(group.topics)
    index = {name: i for i, name in enumerate(names)}
    lists = [plan.assignment.get(member.id, ()) for member in group.members]
    sizes = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    topics, partitions = _columns_of(list(chain.from_iterable(lists)), index)
    return Claims(np.arange(len(lists), dtype=np.int64).repeat(sizes), topics, partitions, names)


def planned_from_claims(group: Group, assigned: Claims, claims: Claims | None = None,
                        memo: PlanMemo | None = None) -> Planned:
    """A plan given as `Claims` (`assigned`: member index in ``group.members`` order, each
    member's rows in the plan's order) on arrays, the layout built with `claims` as owned."""
    layout = build(group, claims, memo)
    position = {member.id: i for i, member in enumerate(layout.members)}
    in_layout = np.array([position[member.id] for member in group.members] or [0], dtype=np.int64)
    index = layout.topic_index()
    renumbered = np.array([index[name] for name in assigned.names] or [0], dtype=np.int64)
    member = in_layout[assigned.member] if len(assigned.member) else assigned.member
    by_member = stable_order(member)  # each member's rows keep the plan's order
    topics = renumbered[assigned.topic[by_member]] if len(by_member) else assigned.topic
    return _planned(layout, member[by_member], topics, assigned.partition[by_member])


def _planned(layout: Layout, member: np.ndarray, topics: np.ndarray, partitions: np.ndarray) -> Planned:
    """`Planned` from the plan's rows (member in layout order, topic in the layout's, partition),
    member by member in the plan's order."""
    owner = filled(layout.total, NO_OWNER)
    owner[layout.offsets[topics] + partitions] = member
    return Planned(layout, owner, Claims(member, topics, partitions, layout.topics))


#: ``(group, claims, memo, leader) -> Planned``.
Owners = Callable[[Group, Claims | None, PlanMemo | None, Any], Planned]

#: ``(group, owned) -> Claims``.
Columns = Callable[[Group, Claims | None], Claims]


@dataclass(frozen=True, slots=True)
class Strategy:
    """One assignment strategy.

    Parameters
    ----------
    name : str
        The name `assign` and every adapter take.
    protocol : Protocol
        The consumer protocol it plans for (what members name in JoinGroup).
    assign : callable
        ``Group -> Plan``: the plan as objects, each member's partitions in the strategy's order.
    owners : callable
        ``(group, claims, memo, leader) -> Planned``: the same plan on dense arrays, owned
        partitions from `claims` when given; `memo` see `assignor.solver.dense.build`.
    java : bool
        Kafka's own algorithm exactly as Kafka runs it (the Java client's, or the broker's for
        KIP-848's protocol): its plans keep Kafka's order (`Planned.assigned`), and a leader
        writes its SyncGroup bytes as a Java leader does.
    new_leader : callable, optional
        A fresh `Leader` whose memory carries over between rebalances, for strategies that have
        one (Java's keep the highest generation they saw); None for stateless strategies.
    earlier_owner_first : bool
        Promises KIP-341's preference: among plans equally balanced and moving equally few
        partitions, a partition that must move goes back to its most recent earlier owner
        (`assignor.solver.claims.earlier_owners`). The oracle holds such plans to it.
    columns : callable, optional
        ``(group, owned) -> Claims``: the plan as columns where the strategy plans on them
        without objects (the broker's assignors); None: `assign_columns` reads `owners`.
    assignment_user_data : bool
        Its leader sends each member its own subscription user data back in its SyncGroup
        assignment (librdkafka's ``cooperative-sticky``: its sticky user data, once the member
        has been assigned, so from the group's next rebalance on), which Kafka will not carry
        into the consumer protocol: such a group is not converted online (KAFKA-18134,
        `assignor.whatif.refusals`).
    peer : str, optional
        The client whose own algorithm this is, reproduced (``"librdkafka"``): planned where
        named (and compared by what-if on a snapshot of a classic group running its protocol,
        `assignor.whatif.compared_for`), never in place of ours nor in the what-if's default
        comparison otherwise.
    """

    name: str
    protocol: Protocol
    assign: Callable[[Group], Plan]
    owners: Owners
    java: bool = False
    new_leader: Callable[[], Leader] | None = None
    earlier_owner_first: bool = False
    columns: Columns | None = None
    assignment_user_data: bool = False
    peer: str | None = None

    def __str__(self) -> str:
        return self.name

    def planned(self, group: Group, claims: Claims | None = None, memo: PlanMemo | None = None,
                leader: Leader | None = None) -> Planned:
        """`owners`, with a fresh leader where the strategy keeps one and none is given."""
        if leader is None and self.new_leader is not None:
            leader = self.new_leader()
        return self.owners(group, claims, memo, leader)

    def assign_columns(self, group: Group, owned: Claims | None = None) -> Claims:
        """The plan as `Claims` (member index in ``group.members`` order, each member's rows in
        the order `assign` lists its partitions), owned partitions from `owned` when given."""
        if self.columns is not None:
            return self.columns(group, owned)
        planned = self.planned(group, owned)
        assigned = planned.assigned
        position = {member.id: i for i, member in enumerate(group.members)}
        in_group = np.array([position[member.id] for member in planned.layout.members] or [0], dtype=np.int64)
        member = in_group[assigned.member] if len(assigned.member) else assigned.member
        return Claims(member, assigned.topic, assigned.partition, list(assigned.names))


def stateless(plan_owners: Callable[[Group, Claims | None, PlanMemo | None], tuple[Layout, np.ndarray]]) -> Owners:
    """`Strategy.owners` of a strategy that keeps nothing between rebalances (no leader)."""
    def owners(group: Group, claims: Claims | None, memo: PlanMemo | None, leader: Any) -> Planned:
        return Planned(*plan_owners(group, claims, memo))
    return owners


def on_objects(assign: Callable[[Group], Plan]) -> Owners:
    """`Strategy.owners` of a strategy that keeps nothing between rebalances and plans on
    objects (`assign`: ``Group -> Plan``, each member's partitions in its own order): the members
    own their rows of the claims when given, and the plan keeps its order."""
    def owners(group: Group, claims: Claims | None, memo: PlanMemo | None, leader: Any) -> Planned:
        if claims is not None:
            group = owning_claims(group, claims)
        return planned_in_plan_order(group, assign(group), claims, memo)
    return owners
