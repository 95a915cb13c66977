"""A step under KIP-848's consumer protocol: the broker's target assignment from each member's
current one, and members converging to it through heartbeats (`assignor.reconcile`)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from typing import cast

import numpy as np

from assignor import validate
from assignor.model import Group, Member, TopicPartition
from assignor.reconcile import reconcile
from assignor.strategies import strategy_named
from assignor.strategies.kip848.member_map import MemberMap
from assignor.whatif.figures import Step, _measure
from assignor.whatif.state import _assignment_of, _State


def _in_coordinator_order(definition: Group, state: _State) -> list[Member]:
    """The members in the order ``TargetAssignmentBuilder.build`` puts them into the map the
    assignor reads: the group's member map as it iterates, then a member not in it yet (the one
    whose joining heartbeat computes the target). The map starts from the members as listed
    (`MemberMap.of`) and loses those that left."""
    if state.member_map is None:
        state.member_map = MemberMap.of(m.id for m in definition.members)
    by_id = {m.id: m for m in definition.members}
    for gone in [k for k in state.member_map if k not in by_id]:
        state.member_map.remove(gone)
    mapped = [by_id[k] for k in state.member_map]
    return [*mapped, *(m for m in definition.members if m.id not in state.member_map)]


def _reconcile(definition: Group, state: _State, strategy: str, label: str, include_plans: bool,
               check: bool, eager: Collection[str] = ()) -> Step:
    """One step under KIP-848's consumer protocol: the broker computes the new target
    assignment from each member's current one (what it holds: the group converged on the step
    before), and members converge to it through heartbeats (`assignor.reconcile`). Nothing goes
    over the classic wire: the consumer protocol has no JoinGroup, leader or SyncGroup."""
    chosen = strategy_named(strategy)
    held = _assignment_of(state)
    current = {m: [(str(t), int(p)) for t, p in tps] for m, tps in held.items()}
    members = [replace(m, owned=tuple(TopicPartition(t, p) for t, p in current.get(m.id, ())))
               for m in _in_coordinator_order(definition, state)]
    group = Group.assembled(definition.topics, members, definition.partition_racks, definition.topic_ids)
    planned = chosen.planned(group)
    layout = planned.layout
    plan = planned.plan(chosen.name)
    if check:
        verdict = validate.report(group, plan)
        assert verdict["valid"], f"{chosen.name}: {verdict['errors']}"
    target = plan.assignment
    figures = reconcile({m: list(tps) for m, tps in current.items()},
                        {m: [(tp.topic, tp.partition) for tp in tps] for m, tps in target.items()},
                        [m.id for m in definition.members], eager)
    before = {tp: m for m, tps in current.items() for tp in tps}
    reassigned = sum(1 for m, tps in target.items() for tp in tps if before.get((tp.topic, tp.partition), m) != m)
    for member in members:  # a joining member's records are replayed now; every member is updated
        cast(MemberMap, state.member_map).put(member.id)
    ids = [m.id for m in layout.members]
    state.ids, state.numbers, state.owned = ids, state.numbering.of(ids), planned.assigned
    state.flats = None
    state.generation = np.full(len(ids), state.group_generation, dtype=np.int64)
    state.group_generation += 1
    step = cast(Step, {"event": label, "rounds": figures["intervals"], "revoked": figures["revoked"],
                       "moved": figures["moved"], "reassigned": reassigned, "unsafe_handovers": 0,
                       **_measure(group, layout, state.owned), "max_unowned": figures["max_unowned"],
                       "paused_members": figures["paused_members"], "waiting_members": figures["waiting_members"]})
    if include_plans:
        step["assignment"] = _assignment_of(state)
    return step
