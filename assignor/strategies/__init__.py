"""Assignment strategies, looked up by their Kafka protocol name."""

from __future__ import annotations

from collections.abc import Callable

from assignor.errors import UnknownStrategyError
from assignor.model import Group, Plan
from assignor.strategies import cooperative as _cooperative
from assignor.strategies import range as _range
from assignor.strategies import roundrobin as _roundrobin
from assignor.strategies import sticky as _sticky

__all__ = ["STRATEGIES", "assign"]

#: Protocol name -> strategy function ``(Group) -> Plan``.
STRATEGIES: dict[str, Callable[[Group], Plan]] = {
    _range.NAME: _range.assign,
    _roundrobin.NAME: _roundrobin.assign,
    _sticky.NAME: _sticky.assign,
    _cooperative.NAME: _cooperative.assign,
}


def assign(strategy: str, group: Group) -> Plan:
    """Plan the assignment of `group` with the strategy of this protocol name.

    Raises
    ------
    UnknownStrategyError
        When no strategy has this name.
    """
    try:
        function = STRATEGIES[strategy]
    except (KeyError, TypeError):
        known = ", ".join(sorted(STRATEGIES))
        raise UnknownStrategyError(f"unknown strategy {strategy!r}; known: {known}") from None
    return function(group)
