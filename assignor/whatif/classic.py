"""A rebalance under a classic protocol, as the wire carries it: the leader plans from the
JoinGroup metadata as it reads it, and members own what they read from their SyncGroup
assignments; cooperative protocols run rounds until nothing is withheld (KIP-429)."""

from __future__ import annotations

from operator import attrgetter
from typing import cast

import numpy as np

from assignor import protocol, validate
from assignor._arrays import filled
from assignor.leader import plan_roster
from assignor.model import UNKNOWN_GENERATION, Claims, Group, Plan
from assignor.solver.dense import Layout
from assignor.strategies import strategy_named
from assignor.strategies.strategy import Leader, Planned, Strategy
from assignor.whatif.figures import UNCOUNTED, Round, Step, _withheld, counted
from assignor.whatif.state import _assignment_of, _reindex, _State
from assignor.wire import columnar

_MAX_ROUNDS = 10


def _new_leader(strategy: str) -> Leader | None:
    found = strategy_named(strategy)
    return None if found.new_leader is None else found.new_leader()


def _rebalance(definition: Group, state: _State, strategy: str, label: str, include_plans: bool,
               check: bool) -> Step:
    """One rebalance of the live group, as many rounds as the protocol needs, as the wire carries
    it (`_join_and_sync`): the leader plans from each member's JoinGroup metadata as it reads it,
    and each member owns what it reads from its SyncGroup assignment."""
    present = list(map(attrgetter("id"), definition.members))
    present_numbers = state.numbering.of(present)
    unsafe = 0
    rounds: list[Round] = []
    chosen = strategy_named(strategy)
    cooperative = chosen.protocol.cooperative
    # Static members as the JoinGroup response lists them (KIP-345): range and roundrobin deal to them first.
    instance_ids = {m.id: m.group_instance_id for m in definition.members if m.group_instance_id is not None}
    while True:
        position = state.numbering.positions(state.numbers, present_numbers)  # of each member now, in `present`
        owned = _reindex(state.owned, position)
        generations = filled(len(present), UNKNOWN_GENERATION)
        kept = position[:-1] >= 0
        generations[position[:-1][kept]] = state.generation[kept]
        generation = state.group_generation
        group, roster, result, assigned = _join_and_sync(chosen, definition, owned, generations, state, instance_ids)
        state.group_generation += 1
        layout, owner = result.layout, result.owner
        if cooperative:
            unsafe += _unsafe_handovers(layout, roster, owner)
        if check:
            _check(group, roster, layout, owner, chosen)
        ids = list(map(attrgetter("id"), layout.members))
        numbers = state.numbering.of(ids)
        position = state.numbering.positions(state.numbers, numbers)[state.owned.member]  # of each claim's member now
        rounds.append(Round(layout, assigned, state.owned, position, cooperative))
        state.ids, state.numbers, state.owned = ids, numbers, assigned
        state.generation = filled(len(ids), generation)
        withheld = cooperative and _withheld(layout, len(assigned.member))
        if not withheld or len(rounds) >= _MAX_ROUNDS:
            break
    # (revoked, moved and reassigned counted with the figures: `Counting`)
    step = counted(cast(Step, {"event": label, "rounds": len(rounds), "revoked": 0, "moved": 0, "reassigned": 0,
                                "unsafe_handovers": unsafe, **UNCOUNTED}),
                    state.counting, group, layout, state.owned, rounds)
    if include_plans:
        step["assignment"] = _assignment_of(state)
    return step


def _join_and_sync(strategy: Strategy, definition: Group, owned: Claims, generations: np.ndarray, state: _State,
                   instance_ids: dict[str, str]) -> tuple[Group, protocol.Roster, Planned, Claims]:
    """One round's JoinGroup and SyncGroup: the group as the leader planned it, the roster it
    read, its plan, and what the members read from their assignments (in layout order).

    What each side reads is taken without writing the bytes (`columnar.join_group_as_read`,
    `columnar.assignments_as_read`, each held to its round trip through the encoders and the
    readers by a property test; whole runs are held to the plain engine's, which writes and
    reads every member's bytes, `assignor.whatif.reference`): writing and reading bytes no one
    else reads took about half of a fleet what-if's time."""
    roster = columnar.join_group_as_read(definition.members, owned, generations, strategy.protocol, state.cache.decode)
    planned, roster, result = plan_roster(strategy, definition, roster, state.cache, state.leader,
                                          instance_ids=instance_ids)
    state.cache.settle()
    assigned = columnar.assignments_as_read(result.assigned, strategy.protocol, as_java=strategy.java)
    return planned, roster, result, assigned


def _unsafe_handovers(layout: Layout, roster: protocol.Roster, owner: np.ndarray) -> int:
    """Partitions a cooperative plan gives to a member while another member of the group still
    claims them, the oracle's rule (`validate.handed_while_claimed`); the layout read the
    roster's claims."""
    assert len(layout.claims[0]) == len(roster.claims.member), "the layout did not read the claims"
    return int(validate.handed_while_claimed(layout, owner).size)


def _check(group: Group, roster: protocol.Roster, layout: Layout, owner: np.ndarray, strategy: Strategy) -> None:
    """The oracle on this round: the group as decoded, with owned partitions, and the plan."""
    owned = roster.owning()
    full = Group(topics=group.topics, members=owned, partition_racks=group.partition_racks)
    report = validate.report(full, Plan(strategy.name, layout.assignment(owner)))
    if not report["valid"]:  # raised, not asserted: `python -O` must not skip the check
        raise AssertionError(report["errors"])
