"""Assignment strategies, looked up by their Kafka protocol name."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from assignor.errors import UnknownStrategyError
from assignor.model import Claims, Group, Plan
from assignor.solver import dense
from assignor.solver.dense import Layout
from assignor.strategies import cooperative as _cooperative
from assignor.strategies import java_sticky as _java
from assignor.strategies import range as _range
from assignor.strategies import roundrobin as _roundrobin
from assignor.strategies import sticky as _sticky

__all__ = ["JAVA_STRATEGIES", "STRATEGIES", "assign", "check_strategy", "java_leader", "plan_owners",
           "protocol_of"]

#: Strategy name -> strategy function ``(Group) -> Plan``. Our strategies are named after their
#: Kafka protocol; the Java-faithful ones plan under the protocol `protocol_of` names.
STRATEGIES: dict[str, Callable[[Group], Plan]] = {
    _range.NAME: _range.assign,
    _roundrobin.NAME: _roundrobin.assign,
    _sticky.NAME: _sticky.assign,
    _cooperative.NAME: _cooperative.assign,
    _java.NAME: _java.assign,
    _java.COOPERATIVE_NAME: _java.assign_cooperative,
}

#: The Java-faithful strategies (KIP-54 as Java's client runs it) and the protocol each plans for.
JAVA_STRATEGIES: dict[str, str] = {_java.NAME: _sticky.NAME, _java.COOPERATIVE_NAME: _cooperative.NAME}

#: Protocol name -> ``(Group, Claims | None, memo) -> (Layout, owner per flat partition)``: the
#: same plans on dense arrays, for callers that keep groups as columns (the what-if engine).
_OWNERS: dict[str, Callable[..., tuple[Layout, np.ndarray]]] = {
    _range.NAME: _range.plan_owners,
    _roundrobin.NAME: _roundrobin.plan_owners,
    _sticky.NAME: _sticky.plan_owners,
    _cooperative.NAME: _cooperative.plan_owners,
    _java.NAME: lambda group, claims, memo, leader=None: _java.plan_owners(False, group, claims, memo, leader),
    _java.COOPERATIVE_NAME: lambda group, claims, memo, leader=None: _java.plan_owners(True, group, claims, memo,
                                                                                       leader),
}


def assign(strategy: str, group: Group) -> Plan:
    """Plan the assignment of `group` with the strategy of this protocol name.

    Raises
    ------
    UnknownStrategyError
        When no strategy has this name.
    """
    return STRATEGIES[check_strategy(strategy)](group)


def check_strategy(strategy: object) -> str:
    """`strategy` when it names a strategy, without planning anything.

    Raises
    ------
    UnknownStrategyError
        When no strategy has this name.
    """
    if not isinstance(strategy, str) or strategy not in STRATEGIES:
        known = ", ".join(sorted(STRATEGIES))
        raise UnknownStrategyError(f"unknown strategy {strategy!r}; known: {known}")
    return strategy


def protocol_of(strategy: str) -> str:
    """The Kafka protocol a strategy plans for (what members name in JoinGroup): its own name,
    or ``sticky`` / ``cooperative-sticky`` for the Java-faithful strategies.

    Raises
    ------
    UnknownStrategyError
        When no strategy has this name.
    """
    return JAVA_STRATEGIES.get(check_strategy(strategy), strategy)


def java_leader(strategy: str) -> _java.JavaStickyAssignor | None:
    """A fresh Java leader for a Java-faithful strategy (its memory lasts as long as the caller
    keeps it), None for our own strategies."""
    return _java.JavaStickyAssignor(cooperative=_java.COOPERATIVE_NAME == strategy) if strategy in JAVA_STRATEGIES \
        else None


def plan_owners(strategy: str, group: Group, claims: Claims | None = None, memo: dense.PlanMemo | None = None,
                leader: _java.JavaStickyAssignor | None = None) -> tuple[Layout, np.ndarray]:
    """`assign` as the layout and each flat partition's owner (member index in layout order,
    ``NO_OWNER`` when unassigned); owned partitions from `claims` when given. `memo`: see
    `assignor.solver.dense.build` (a caller planning the same topics again and again keeps one).
    `leader`: for a Java-faithful strategy, the Java leader (`java_leader`) whose memory carries
    over between rebalances."""
    if leader is not None:
        return _OWNERS[check_strategy(strategy)](group, claims, memo, leader)
    return _OWNERS[check_strategy(strategy)](group, claims, memo)
