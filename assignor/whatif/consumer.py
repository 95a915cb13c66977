"""A step under KIP-848's consumer protocol: the broker's target assignment from each member's
current one, and members converging to it through heartbeats (`assignor.reconcile`)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import cast

import numpy as np

from assignor import validate
from assignor._arrays import distinct, filled
from assignor.model import Claims, Group, Member
from assignor.reconcile import Reconciliation, phases, reconcile
from assignor.strategies import strategy_named
from assignor.strategies.kip848.member_map import MemberMap
from assignor.strategies.strategy import owning_claims
from assignor.whatif.figures import UNCOUNTED, Step, counted
from assignor.whatif.state import _assignment_of, _holding, _in_columns, _reindex, _State


def _in_coordinator_order(definition: Group, state: _State) -> list[Member]:
    """The members in the order ``TargetAssignmentBuilder.build`` puts them into the map the
    assignor reads: the group's member map as it iterates, then a member not in it yet (the one
    whose joining heartbeat computes the target). The map starts from the members as listed
    (`MemberMap.of`) and loses those that left."""
    if state.member_map is None:
        state.member_map = MemberMap.of(m.id for m in definition.members)
    by_id = {m.id: m for m in definition.members}
    order = list(state.member_map)  # (removing a key leaves the others' order as it is)
    for gone in [k for k in order if k not in by_id]:
        state.member_map.remove(gone)
    mapped = [by_id[k] for k in order if k in by_id]
    return [*mapped, *(m for m in definition.members if m.id not in state.member_map)]


def _reconcile(definition: Group, state: _State, strategy: str, label: str, include_plans: bool,
               check: bool, hosted: Collection[str] = (), eager: bool = False) -> Step:
    """One step under KIP-848's consumer protocol: the broker computes the new target
    assignment from each member's current one (what it holds: the group converged on the step
    before), and members converge to it through heartbeats (`assignor.reconcile`). Nothing goes
    over the classic wire: the consumer protocol has no JoinGroup, leader or SyncGroup.
    `hosted`: the members still classic (heartbeating at the classic interval), under an
    `eager` protocol or not.

    When: a joining member's heartbeat (or a classic member's JoinGroup) computes the target and
    has it at once; after a leave the target comes later (`Timing.until_target`), and what the
    departed member held is unowned meanwhile. ``seconds`` is from the change until every member
    has its target. With eager hosted members that wait for a partition another holds,
    ``revoked`` is the expected count over the heartbeats' phases (`assignor.reconcile.phases`),
    ``revoked_range`` its least and most."""
    chosen = strategy_named(strategy)
    timing = state.timing
    current = _holding(state.ids, state.owned)
    members = _in_coordinator_order(definition, state)
    # What each member holds, as columns in `members` order (each member's in the order it
    # holds them: its current assignment, which the assignor reads); the members' own are not read.
    numbers = state.numbering.of([m.id for m in members])
    holding = _reindex(state.owned, state.numbering.positions(state.numbers, numbers))
    group = Group.assembled(definition.topics, members, definition.partition_racks, definition.topic_ids)
    # The run's plan memo: subscriptions' topic indices and member ids' hashes, kept between targets.
    planned = chosen.planned(group, holding, state.cache.plans)
    state.cache.settle()
    layout = planned.layout
    if check:
        verdict = validate.report(owning_claims(group, holding), planned.plan(chosen.name))
        assert verdict["valid"], f"{chosen.name}: {verdict['errors']}"
    layout_ids = [m.id for m in layout.members]
    target = _holding(layout_ids, planned.assigned)  # (every member of the layout, in the plan's order)
    ids = [m.id for m in definition.members]
    heartbeat = timing.consumer_heartbeat_ms / 1000
    present = set(ids)
    joiners = [m for m in ids if m not in current]
    gone = {m for m in current if m not in present}
    left = [m for m in gone if current[m]]
    first = joiners[-1] if joiners else None
    left_before = 0.0
    if left:
        if first is not None:  # back before its leave rebalanced (`assignor.whatif.timing`)
            left_before = timing.restart_seconds or 0.0
        else:
            consumers = sum(1 for m in ids if m not in hosted)
            left_before = timing.until_target(consumers, state.settled) or 0.0
        left_before /= heartbeat
    periods = {m: timing.classic_heartbeat_ms / timing.consumer_heartbeat_ms for m in hosted}
    # (columns pay from `state.COLUMNS_FROM` rows; a dict of every partition's holder counts below)
    disjoint = _in_columns(len(state.owned.member)) and _claimed_once(state.owned) and _claimed_once(
        planned.assigned)
    before = {} if disjoint and not eager else {tp: m for m, tps in current.items() for tp in tps}
    # An eager member rejoins a second time only when it waits for a partition a present member
    # still holds; where none does, every phase revokes alike and one run says it.
    contested = eager and any(before.get(tp, m) not in (m, *gone) for m in hosted for tp in target.get(m, ()))
    runs = phases if contested else _one
    every = runs(current, target, ids, hosted if eager else (), periods=periods, first=first, left_before=left_before,
                 disjoint=disjoint)
    figures = every[0]
    if disjoint:
        reassigned = _reassigned(state.owned, state.numbers, planned.assigned, state.numbering.of(layout_ids))
    else:
        reassigned = sum(1 for m, tps in target.items() for tp in tps if before.get(tp, m) != m)
    # A joining member's records are replayed now; every member is updated.
    cast(MemberMap, state.member_map).put_all([member.id for member in members])
    state.ids, state.numbers, state.owned = layout_ids, state.numbering.of(layout_ids), planned.assigned
    state.generation = filled(len(layout_ids), state.group_generation)
    state.group_generation += 1
    state.settled = figures["settled"] * heartbeat
    revoked = [r["revoked"] for r in every]
    step = counted(cast(Step, {
        "event": label, "rounds": figures["intervals"], "revoked": round(sum(revoked) / len(revoked)),
        "moved": figures["moved"], "reassigned": reassigned, "unsafe_handovers": 0, **UNCOUNTED,
        "max_unowned": figures["max_unowned"], "max_unowned_seconds": round(figures["max_unowned"] * heartbeat, 3),
        "seconds": round((left_before + figures["settled"]) * heartbeat, 3),
        "paused_members": figures["paused_members"], "waiting_members": figures["waiting_members"]}),
        state.counting, group, layout, state.owned)
    if len(every) > 1:
        step["revoked_range"] = [min(revoked), max(revoked)]
    if include_plans:
        step["assignment"] = _assignment_of(state)
    return step


def _one(current: Mapping[str, Sequence[tuple[str, int]]], target: Mapping[str, Sequence[tuple[str, int]]],
         members: Sequence[str], eager: Collection[str] = (), *, periods: Mapping[str, float] | None = None,
         first: str | None = None, left_before: float = 0.0, disjoint: bool = False) -> list[Reconciliation]:
    """`reconcile` at the model's one phase, as `phases` answers."""
    return [reconcile(current, target, members, eager, periods=periods, first=first, left_before=left_before,
                      disjoint=disjoint)]


def _keys(claims: Claims) -> np.ndarray:
    """Each row's partition as one integer, within `claims` (its topic index above the partition's
    32 bits)."""
    return np.asarray(claims.topic, dtype=np.int64) << 32 | np.asarray(claims.partition, dtype=np.int64)


def _claimed_once(claims: Claims) -> bool:
    """Whether no partition has two rows in `claims`."""
    keys = _keys(claims)
    return len(distinct(keys)) == len(keys)


def _reassigned(before: Claims, owners: np.ndarray, after: Claims, takers: np.ndarray) -> int:
    """How many of `after`'s partitions go to a member other than the one `before` has holding
    them (none: not counted), each partition held once in `before`. `owners` and `takers`: the
    member numbers of the members `before`'s and `after`'s member indices index. In columns, as
    ``sum(before.get(tp, m) != m for m, tp in after)`` counts it over a dict of every partition."""
    held = _keys(before)
    if not len(held):
        return 0
    index = {name: i for i, name in enumerate(before.names)}
    # (a topic `before` lacks: -1, so its keys are negative and match none)
    known = np.array([index.get(name, -1) for name in after.names], dtype=np.int64)[after.topic]
    wanted = known << 32 | np.asarray(after.partition, dtype=np.int64)
    order = np.argsort(held)
    ordered = held[order]
    where = np.minimum(np.searchsorted(ordered, wanted), len(held) - 1)
    at = order[where]  # (each wanted partition's row in `before`, where it is there)
    return int(np.count_nonzero((ordered[where] == wanted) & (owners[before.member[at]] != takers[after.member])))
