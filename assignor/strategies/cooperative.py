"""The ``cooperative-sticky`` strategy (KIP-429): the sticky plan, handed over in two steps.

Under the cooperative protocol members keep consuming what they own while the group
rebalances, so a partition may only reach its new owner once its old owner has let it go. This
is one pass over the eager sticky plan: a partition is withheld from its new owner while any
*other* member still claims it (its claimants revoke it in this round, and the follow-up
rebalance hands it out). Every claim counts here, stale generation or not: Java's general path
could give a partition a stale member still held to another member in the same round, so two
consumers read it at once (franz-go fixed the same bug). Partitions claimed by two members of
the same generation (KAFKA-12984) are withheld from both and handed out next round.

A partition the plan leaves with its rightful owner (the one claimant of the highest
generation, KIP-341) stays with it, whatever stale members claim: withholding it would stop the
member that holds it by right for a round and make nothing safer, as the stale claimants must
revoke it either way (as Java does: ``testOwnedPartitionsAreInvalidatedForConsumerWithStaleGeneration``,
``testEnsurePartitionsAssignedToHighestGeneration``). So this is never less available than
Java's cooperative assignor: what waits a round is what changes hands or is claimed twice in
one generation.

The second round converges: its owned partitions are this round's plan, from which the eager
optimum of this round is reachable without moving anything, and the sticky strategy moves the
fewest partitions, so nothing is withheld again.
"""

from __future__ import annotations

import numpy as np

from assignor.model import Claims, Group, Plan
from assignor.protocols import COOPERATIVE_STICKY
from assignor.solver import dense
from assignor.strategies import sticky
from assignor.strategies.strategy import Strategy, stateless

__all__ = ["STRATEGY", "assign", "plan_owners"]



def assign(group: Group) -> Plan:
    """Plan this rebalance's cooperative assignment.

    Examples
    --------
    >>> from assignor import Group, Member, TopicPartition as TP
    >>> group = Group(topics={"t": 2}, members=[
    ...     Member("a", ["t"], owned=[TP("t", 0), TP("t", 1)], generation=3), Member("b", ["t"])])
    >>> first = assign(group).assignment      # b's partition is first revoked by a
    >>> [tp.partition for tp in first["a"]], first["b"]
    ([0], [])
    """
    layout, owner = plan_owners(group)
    return Plan(STRATEGY.name, layout.assignment(owner))


def plan_owners(group: Group, claims: Claims | None = None, memo: dense.PlanMemo | None = None
                ) -> tuple[dense.Layout, np.ndarray]:
    """This round's plan as the layout and the owner (member index, or none: withheld) of every
    flat partition; owned partitions from `claims` when given (see `dense.build`)."""
    layout, owner = sticky.plan_owners(group, claims, memo)
    count, claimant = dense.claimants(layout)
    handed_over = (count == 0) | ((count == 1) & (claimant == owner)) | (owner == layout.prev_owner)
    owner[(owner >= 0) & ~handed_over] = dense.NO_OWNER
    return layout, owner


STRATEGY = Strategy(COOPERATIVE_STICKY.name, COOPERATIVE_STICKY, assign, stateless(plan_owners),
                    earlier_owner_first=True)
