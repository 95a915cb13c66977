"""Assignment strategies, looked up by their Kafka protocol name."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from assignor.errors import UnknownStrategyError
from assignor.model import Claims, Group, Plan
from assignor.solver import dense
from assignor.solver.dense import Layout
from assignor.strategies import cooperative as _cooperative
from assignor.strategies import range as _range
from assignor.strategies import roundrobin as _roundrobin
from assignor.strategies import sticky as _sticky

__all__ = ["STRATEGIES", "assign", "plan_owners"]

#: Protocol name -> strategy function ``(Group) -> Plan``.
STRATEGIES: dict[str, Callable[[Group], Plan]] = {
    _range.NAME: _range.assign,
    _roundrobin.NAME: _roundrobin.assign,
    _sticky.NAME: _sticky.assign,
    _cooperative.NAME: _cooperative.assign,
}

#: Protocol name -> ``(Group, Claims | None, memo) -> (Layout, owner per flat partition)``: the
#: same plans on dense arrays, for callers that keep groups as columns (the what-if engine).
_OWNERS: dict[str, Callable[..., tuple[Layout, np.ndarray]]] = {
    _range.NAME: _range.plan_owners,
    _roundrobin.NAME: _roundrobin.plan_owners,
    _sticky.NAME: _sticky.plan_owners,
    _cooperative.NAME: _cooperative.plan_owners,
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


def plan_owners(strategy: str, group: Group, claims: Claims | None = None, memo: dense.PlanMemo | None = None
                ) -> tuple[Layout, np.ndarray]:
    """`assign` as the layout and each flat partition's owner (member index in layout order,
    ``NO_OWNER`` when unassigned); owned partitions from `claims` when given. `memo`: see
    `assignor.solver.dense.build` (a caller planning the same topics again and again keeps one)."""
    return _OWNERS[check_strategy(strategy)](group, claims, memo)
