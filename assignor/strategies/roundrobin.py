"""The ``roundrobin`` strategy, exactly as Java's RoundRobinAssignor.

All partitions of subscribed topics, topics sorted, are dealt in turn over the members sorted as
Java sorts them (static members first by instance id, then the others by member id:
`ordering.static_first_order`); a member not subscribed to the partition's topic is skipped and
the deal goes on from the member after the one that took the partition.
"""

from __future__ import annotations

import numpy as np

from assignor._arrays import filled
from assignor.model import Claims, Group, Plan
from assignor.protocols import ROUNDROBIN
from assignor.solver import dense
from assignor.strategies.strategy import Strategy, stateless

__all__ = ["STRATEGY", "assign", "plan_owners"]



def assign(group: Group) -> Plan:
    """Deal partitions over members in turn, skipping members not subscribed to the topic.

    Examples
    --------
    >>> from assignor import Group, Member
    >>> plan = assign(Group(topics={"t0": 1, "t1": 2},
    ...                     members=[Member("a", ["t0"]), Member("b", ["t0", "t1"])]))
    >>> {m: [tuple(tp) for tp in tps] for m, tps in plan.assignment.items()}
    {'a': [('t0', 0)], 'b': [('t1', 0), ('t1', 1)]}
    """
    layout, owner = plan_owners(group)
    return Plan(STRATEGY.name, layout.assignment(owner))


def plan_owners(group: Group, claims: Claims | None = None, memo: dense.PlanMemo | None = None
                ) -> tuple[dense.Layout, np.ndarray]:
    """The plan as the layout and the owner (member index) of every flat partition. Owned
    partitions play no part, so `claims` is not read."""
    layout = dense.build(group, Claims.empty(), memo)
    owner = filled(layout.total, dense.NO_OWNER)
    members = len(layout.members)
    # The deal goes round in Java's order (``MemberInfo``'s: static members first): `rank` is a
    # member's place in it, `by_rank` the member at each place.
    static = dense.static_first_ranks(layout)
    rank = np.arange(members) if static is None else static
    by_rank = np.arange(members) if static is None else static.argsort()
    start, count, member = dense.topic_subscribers(layout, static)
    dealt = (count > 0).nonzero()[0]  # topics with subscribers
    if len(layout.distinct) == 1:
        flats = (count[layout.topic_of_flat()] > 0).nonzero()[0]
        owner[flats] = by_rank[np.arange(len(flats)) % max(members, 1)]  # nobody is ever skipped
        return layout, owner
    # Topic by topic: its partitions go in turn to its subscribers (in that order), starting
    # from the first subscriber at or after the place whose turn it is; the turn then passes
    # to the place after the last member dealt to.
    turn = 0
    for t in dealt.tolist():
        subscribers = member[start[t] : start[t] + count[t]]
        first = int(rank[subscribers].searchsorted(turn)) % len(subscribers)
        dealt_to = subscribers[(first + np.arange(int(layout.counts[t]))) % len(subscribers)]
        owner[layout.offsets[t] : layout.offsets[t + 1]] = dealt_to
        if len(dealt_to):
            turn = (int(rank[dealt_to[-1]]) + 1) % members
    return layout, owner


STRATEGY = Strategy(ROUNDROBIN.name, ROUNDROBIN, assign, stateless(plan_owners))
