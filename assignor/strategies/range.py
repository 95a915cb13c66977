"""The ``range`` strategy, exactly as Java's RangeAssignor (without racks).

Per topic, the subscribers sorted as Java sorts them (static members first by instance id, then
the others by member id: `ordering.static_first_order`) get consecutive ranges; the first
``partitions % subscribers`` of them get one extra partition.
"""

from __future__ import annotations

import numpy as np

from assignor._arrays import filled
from assignor.model import Claims, Group, Plan
from assignor.protocols import RANGE
from assignor.solver import dense
from assignor.strategies.strategy import Strategy, stateless

__all__ = ["STRATEGY", "assign", "plan_owners"]



def assign(group: Group) -> Plan:
    """Assign each topic's partitions in ranges over its subscribers.

    Examples
    --------
    >>> from assignor import Group, Member
    >>> plan = assign(Group(topics={"t": 3}, members=[Member("b", ["t"]), Member("a", ["t"])]))
    >>> [(m, [tp.partition for tp in tps]) for m, tps in plan.assignment.items()]
    [('a', [0, 1]), ('b', [2])]
    """
    layout, owner = plan_owners(group)
    return Plan(STRATEGY.name, layout.assignment(owner))


def plan_owners(group: Group, claims: Claims | None = None, memo: dense.PlanMemo | None = None
                ) -> tuple[dense.Layout, np.ndarray]:
    """The plan as the layout and the owner (member index) of every flat partition. Owned
    partitions play no part, so `claims` is not read."""
    layout = dense.build(group, Claims.empty(), memo)
    # Each topic's subscribers in Java's order (``MemberInfo``'s: static members first).
    first, subscribers, member = dense.topic_subscribers(layout, dense.static_first_ranks(layout))
    flat_topic = layout.topic_of_flat()
    n = subscribers[flat_topic]
    partition = layout.partition_of_flat()
    per_member, extra = np.divmod(layout.counts[flat_topic], np.maximum(n, 1))
    # The first `extra` subscribers hold per_member + 1 partitions, the others per_member.
    in_long = partition < extra * (per_member + 1)
    rank = np.where(in_long, partition // (per_member + 1),
                    extra + (partition - extra * (per_member + 1)) // np.maximum(per_member, 1))
    owner = filled(layout.total, dense.NO_OWNER)
    has = n > 0
    owner[has] = member[first[flat_topic[has]] + rank[has]]
    return layout, owner


STRATEGY = Strategy(RANGE.name, RANGE, assign, stateless(plan_owners))
