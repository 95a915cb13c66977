"""Assignment strategies, registered once and looked up by name.

Every strategy is one `Strategy` object (its protocol, how it plans on objects and on arrays,
whether it is Kafka's own); every list of strategy names in the library, the service, the CLI
and the Spark job is derived from `REGISTRY`. Adding a strategy is one module that makes its
`Strategy`, and one line in `_register` below.

The planning entry points, and nothing else:

- `assign(name, group) -> Plan`: the plan as objects (the library's front door; `STRATEGIES`
  maps each name to it, for callers that want a callable per strategy);
- `assign_columns(name, group, owned=None) -> Claims`: the same plan as columns;
- `strategy_named(name).planned(group, claims, memo, leader) -> Planned`: the plan on dense
  arrays (its `layout`, each flat partition's `owner`, its `assigned` columns), what the leader,
  what-if, the oracle's fast check and the service plan with.

`strategy_named` (one name) and `REGISTRY` (all of them) give the `Strategy` objects;
`strategy_for` the one a protocol's leader or member plans with. The helpers in
`assignor.strategies.strategy` (`plan_claims`, `planned_from_claims`, `planned_in_plan_order`,
`owning_claims`, `stateless`) are for writing a strategy, not for calling one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import numpy as np

from assignor.errors import AssignorError, InvalidGroupError, UnknownStrategyError
from assignor.model import Claims, Group, Plan
from assignor.protocols import Protocol
from assignor.strategies import cooperative as _cooperative
from assignor.strategies import java_sticky as _java
from assignor.strategies import kip848 as _kip848
from assignor.strategies import librdkafka_range as _librdkafka_range
from assignor.strategies import librdkafka_sticky as _librdkafka
from assignor.strategies import range as _range
from assignor.strategies import roundrobin as _roundrobin
from assignor.strategies import sticky as _sticky
from assignor.strategies.strategy import Strategy

__all__ = ["DEFAULT_STRATEGY", "REGISTRY", "STRATEGIES", "Strategy", "assign", "assign_columns", "check_claims",
           "java_counterparts", "kafka_strategy", "ours_for", "strategy_for", "strategy_named"]


def _register(*strategies: Strategy) -> dict[str, Strategy]:
    registry: dict[str, Strategy] = {}
    for strategy in strategies:
        if strategy.name in registry:
            raise ValueError(f"two strategies named {strategy.name!r}")
        registry[strategy.name] = strategy
    return registry


#: Every strategy, by name, in the order lists show them: ours first, then Java's, then the rest,
#: other clients' last.
REGISTRY: dict[str, Strategy] = _register(
    _sticky.STRATEGY,
    _cooperative.STRATEGY,
    _java.STRATEGY,
    _java.COOPERATIVE_STRATEGY,
    _range.STRATEGY,
    _roundrobin.STRATEGY,
    _kip848.UNIFORM_STRATEGY,
    _kip848.RANGE_STRATEGY,
    _librdkafka.STRATEGY,
    _librdkafka_range.RANGE_STRATEGY,
    _librdkafka_range.ROUNDROBIN_STRATEGY,
)

#: The strategy used where none is named: ours, eager.
DEFAULT_STRATEGY: Strategy = _sticky.STRATEGY

class _Plans(Mapping[str, Callable[[Group], Plan]]):
    """Strategy name -> ``(Group) -> Plan``, read from `REGISTRY` as it stands."""

    def __getitem__(self, name: str) -> Callable[[Group], Plan]:
        return REGISTRY[name].assign

    def __iter__(self) -> Iterator[str]:
        return iter(REGISTRY)

    def __len__(self) -> int:
        return len(REGISTRY)

    def __repr__(self) -> str:
        return f"STRATEGIES({list(REGISTRY)})"


#: Strategy name -> ``(Group) -> Plan`` (the public mapping `assignor.STRATEGIES`), a view of `REGISTRY`.
STRATEGIES: Mapping[str, Callable[[Group], Plan]] = _Plans()


def strategy_named(strategy: object) -> Strategy:
    """The registered strategy of this name (or `strategy` itself when it is one).

    Raises
    ------
    UnknownStrategyError
        When no strategy has this name.
    """
    if isinstance(strategy, Strategy):
        return strategy
    found = REGISTRY.get(strategy) if isinstance(strategy, str) else None
    if found is None:
        raise UnknownStrategyError(f"unknown strategy {strategy!r}; known: {', '.join(sorted(REGISTRY))}")
    return found


def assign(strategy: str, group: Group) -> Plan:
    """Plan the assignment of `group` with the strategy of this name.

    Where a strategy follows Java's iteration order, the order of ``group.members`` is an input:
    for the broker's assignors (``kip848-*``) it is the order of members whose ids share a bucket
    of the coordinator's ``HashMap`` (list members as the coordinator's member map iterates:
    `assignor.strategies.kip848.member_map`, a joining member last); for ``range`` and
    ``roundrobin`` static members (``group_instance_id``) come first whatever it is.

    Raises
    ------
    UnknownStrategyError
        When no strategy has this name.
    """
    return strategy_named(strategy).assign(group)


def assign_columns(strategy: str, group: Group, owned: Claims | None = None) -> Claims:
    """`assign` as columns: the plan as `Claims` (``member``: index in ``group.members``;
    ``topic``: index into ``names``; ``partition``), each member's rows in the order `assign`
    lists its partitions. `owned`: the members' owned partitions (for the broker's assignors,
    their current targets) as columns, read in place of each member's ``owned``.

    The same plans as `assign`; for the broker's assignors (``kip848-*``) no `TopicPartition` is
    made, which at a million partitions costs more than the planning.

    Raises
    ------
    UnknownStrategyError
        When no strategy has this name.
    InvalidGroupError
        When `owned` is not `Claims` of `group`'s members (see `check_claims`).

    Examples
    --------
    >>> from assignor import Group, Member
    >>> group = Group({"t0": 3}, [Member("a", ["t0"]), Member("b", ["t0"])])
    >>> plan = assign_columns("kip848-range", group)
    >>> plan.member.tolist(), plan.partition.tolist()
    ([0, 0, 1], [0, 1, 2])
    """
    found = strategy_named(strategy)
    if owned is not None:
        check_claims(owned, len(group.members))
    return found.assign_columns(group, owned)


def check_claims(claims: object, members: int) -> Claims:
    """`claims` when they can be the owned partitions of `members` members: `Claims` of equal
    length one-dimensional integer columns, member indices below `members`, topic indices into
    ``names`` (a list of strings). Partitions are not checked here: a partition the group lacks
    is a claim the strategies drop, as they drop such a `TopicPartition`.

    Raises
    ------
    InvalidGroupError
        Naming the column and the limit.
    """
    if not isinstance(claims, Claims):
        raise InvalidGroupError(f"owned must be Claims, got {type(claims).__name__}")
    columns = {"member": claims.member, "topic": claims.topic, "partition": claims.partition}
    for name, column in columns.items():
        if not isinstance(column, np.ndarray) or column.ndim != 1 or column.dtype.kind not in "iu":
            raise InvalidGroupError(f"owned.{name} must be a one-dimensional integer array")
    if len({len(column) for column in columns.values()}) > 1:
        raise InvalidGroupError("owned.member, owned.topic and owned.partition must have one length")
    if not isinstance(claims.names, list) or not all(isinstance(name, str) for name in claims.names):
        raise InvalidGroupError("owned.names must be a list of topic names")
    rows = len(claims.member)
    if rows and not (0 <= int(claims.member.min()) and int(claims.member.max()) < members):
        raise InvalidGroupError(f"owned.member must index the group's {members} members (0 to {members - 1})")
    if rows and not (0 <= int(claims.topic.min()) and int(claims.topic.max()) < len(claims.names)):
        raise InvalidGroupError(f"owned.topic must index owned.names (0 to {len(claims.names) - 1})")
    if rows and not (0 <= int(claims.partition.min()) and int(claims.partition.max()) < 2**31):
        raise InvalidGroupError("owned.partition must be partition numbers in [0, 2**31)")
    return claims


def ours_for(protocol: object) -> Strategy | None:
    """Our strategy for `protocol` (the first registered that is neither Java's nor another
    client's): the one a leader plans a protocol with unless told otherwise."""
    return next((s for s in REGISTRY.values() if s.protocol is protocol and not s.java and s.peer is None), None)


def strategy_for(protocol: Protocol, strategy: str | None = None) -> Strategy:
    """The strategy a member or leader of `protocol` plans with: `strategy` (a name) when given,
    which must plan that protocol, else ours for it (`ours_for`). The one rule the leader
    (`assignor.leader.sync`) and every client adapter follow."""
    chosen = ours_for(protocol) if strategy is None else strategy_named(strategy)
    if chosen is None:
        raise UnknownStrategyError(f"no strategy plans the {protocol.name!r} protocol")
    if chosen.protocol is not protocol:
        raise AssignorError(f"strategy {chosen.name!r} plans the {chosen.protocol.name!r} protocol, "
                            f"not {protocol.name!r}")
    return chosen


def kafka_strategy(protocol: object) -> Strategy | None:
    """The strategy Kafka's own clients plan under the classic protocol named `protocol` (what a
    classic group's snapshot gives as its ``assignor``: the protocol its members chose), Java's
    where ours shares the name (``sticky`` is ``java-sticky``, ``cooperative-sticky``
    ``java-cooperative-sticky``); None for a name no strategy of ours plans (a custom assignor).

    Examples
    --------
    >>> [kafka_strategy(name).name for name in ("range", "roundrobin", "sticky", "cooperative-sticky")]
    ['range', 'roundrobin', 'java-sticky', 'java-cooperative-sticky']
    """
    named = [s for s in REGISTRY.values() if s.protocol.classic and s.protocol.name == protocol]
    return max(named, key=lambda s: s.java, default=None)


def java_counterparts() -> list[tuple[Strategy, Strategy]]:
    """Each of Java's strategies with ours for the same protocol: the pairs whose difference is
    what switching a Java fleet to ours changes."""
    pairs = [(s, ours_for(s.protocol)) for s in REGISTRY.values() if s.java]
    return [(java, ours) for java, ours in pairs if ours is not None]
