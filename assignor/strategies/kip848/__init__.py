"""KIP-848's broker-side assignors as Kafka's group coordinator runs them: ``kip848-uniform``
and ``kip848-range``.

Under KIP-848's consumer protocol (``group.protocol=consumer``, GA in Kafka 4.0) the broker
computes each member's target assignment with its own assignor; client-side assignors are not
supported (KAFKA-18327). These strategies reproduce the coordinator's ``UniformAssignor`` (both
builders) and ``RangeAssignor`` decision for decision, each member's partitions in the order
Kafka's maps iterate them (the order the coordinator writes a target assignment in).

How a `Group` reads here: a member's ``owned`` is its current *target* assignment, in record
order (topic by topic as the previous target listed them); a member's ``topics`` in its
subscription's iteration order; topic ids from ``Group.topic_ids`` or derived from the names
(`assignor.topic_ids`). Members iterate in Java ``HashMap`` order of their ids, as the
coordinator's member map does. Claims no coordinator could hold (unknown topics, partitions past
a topic's count, a partition two members hold) are left out, the later holder's claim dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from assignor.model import Claims, Group, Plan, TopicPartition, topic_partitions
from assignor.protocols import CONSUMER
from assignor.solver import dense
from assignor.strategies.kip848 import range as _range
from assignor.strategies.kip848 import range_columns, uniform_columns, uniform_heterogeneous_columns
from assignor.strategies.kip848 import uniform as _uniform
from assignor.strategies.kip848.coordinator import Assignment, CoordinatorSpec, group_spec
from assignor.strategies.strategy import Planned, Strategy, owning_claims, plan_claims, planned_from_claims

__all__ = ["RANGE_NAME", "RANGE_STRATEGY", "UNIFORM_NAME", "UNIFORM_STRATEGY", "assign_range", "assign_uniform",
           "columns", "planned", "target_assignment"]

UNIFORM_NAME = "kip848-uniform"
RANGE_NAME = "kip848-range"

Algorithm = Callable[[CoordinatorSpec], dict[str, Assignment]]
_ALGORITHMS: dict[str, Algorithm] = {UNIFORM_NAME: _uniform.assign, RANGE_NAME: _range.assign}


def target_assignment(name: str, group: Group, *, instance_ids: Mapping[str, str | None] | None = None,
                      member_order: Sequence[str] | None = None, linked: bool = False
                      ) -> dict[str, dict[str, list[int]]]:
    """The broker's new target assignment for `group` as Kafka iterates it: member (in the
    member map's order) -> topic (in the member's map order) -> partitions (in set order).

    `instance_ids` (static members, KIP-345; they sort first in ``range``), `member_order` and
    `linked` replay Kafka's unit tests (see `coordinator.group_spec`).

    Raises
    ------
    JavaAssignorFailure
        Where Kafka's assignor throws ``PartitionAssignorException``.
    """
    spec = group_spec(group, instance_ids=instance_ids, member_order=member_order, linked=linked,
                      read_owned=name != RANGE_NAME)  # range never reads the current assignment
    found = _ALGORITHMS[name](spec)
    result: dict[str, dict[str, list[int]]] = {}
    for member in spec.member_ids:
        assignment = found.get(member)
        result[member] = {} if assignment is None else {spec.names[t]: list(ps) for t, ps in assignment.items()}
    return result


def _plan(name: str, group: Group) -> Plan:
    """The plan of the plain model (`target_assignment`): the reference the columnar paths are
    held to."""
    target = target_assignment(name, group)
    assignment = {m.id: topic_partitions([t for t, ps in target[m.id].items() for _ in ps],
                                         [p for ps in target[m.id].values() for p in ps]) for m in group.members}
    return Plan(name, assignment)


_Objects = Callable[[Group], dict[str, list[TopicPartition]] | None]
_Columns = Callable[[Group, Claims | None, dict[str, int] | None], Claims | None]

#: Per strategy, its columnar paths: plans as objects, and as `Claims` (the same plans).
_PATHS: dict[str, tuple[tuple[_Objects, _Columns], ...]] = {
    UNIFORM_NAME: ((uniform_columns.assign, uniform_columns.columns),
                   (uniform_heterogeneous_columns.assign, uniform_heterogeneous_columns.columns)),
    RANGE_NAME: ((range_columns.assign, range_columns.columns),),
}


def _planned_by(name: str, group: Group) -> Plan:
    # The first columnar path that takes the group (the same plans, held equal by property
    # tests), the plain model for every other group.
    for objects, _ in _PATHS[name]:
        found = objects(group)
        if found is not None:
            return Plan(name, found)
    return _plan(name, group)


def columns(name: str, group: Group, owned: Claims | None = None, hashes: dict[str, int] | None = None) -> Claims:
    """The plan as `Claims` (member index in ``group.members`` order; rows member by member in
    the order the assignor goes through them, each member's in Kafka's order); the current
    targets from `owned` when given, in place of the members' ``owned``. No `TopicPartition` is
    made on the columnar paths: at a million partitions, making and reading the objects costs
    more than planning. `hashes`: the member ids' string hashes a caller keeps between targets
    (`dense.PlanMemo.string_hashes`), read and added to."""
    for _, found_by in _PATHS[name]:
        found = found_by(group, owned, hashes)
        if found is not None:
            return found
    if owned is not None:
        group = owning_claims(group, owned)
    return plan_claims(group, _plan(name, group))


def assign_uniform(group: Group) -> Plan:
    """``kip848-uniform``: the broker's ``UniformAssignor``.

    Examples
    --------
    >>> from assignor import Group, Member
    >>> group = Group({"t0000": 10}, [Member(m, ["t0000"]) for m in ("a", "b", "c")])
    >>> {m: [tp.partition for tp in tps] for m, tps in assign_uniform(group).assignment.items()}
    {'a': [0, 1, 2], 'b': [3, 4, 5], 'c': [6, 7, 8, 9]}
    """
    return _planned_by(UNIFORM_NAME, group)


def assign_range(group: Group) -> Plan:
    """``kip848-range``: the broker's ``RangeAssignor``."""
    return _planned_by(RANGE_NAME, group)


def planned(name: str, group: Group, claims: Claims | None = None, memo: dense.PlanMemo | None = None,
            leader: Any = None) -> Planned:
    """The plan on arrays (`assignor.strategies.strategy.Planned`), each member's partitions in
    Kafka's order; owned partitions (current targets) from `claims`, in their order, when given."""
    hashes = None if memo is None else memo.string_hashes
    return planned_from_claims(group, columns(name, group, claims, hashes), claims, memo)


#: The broker's assignors under KIP-848's consumer protocol (no classic protocol: no leader plans them).
UNIFORM_STRATEGY = Strategy(UNIFORM_NAME, CONSUMER, assign_uniform, partial(planned, UNIFORM_NAME), java=True,
                            columns=partial(columns, UNIFORM_NAME))
RANGE_STRATEGY = Strategy(RANGE_NAME, CONSUMER, assign_range, partial(planned, RANGE_NAME), java=True,
                          columns=partial(columns, RANGE_NAME))
