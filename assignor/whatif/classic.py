"""A rebalance under a classic protocol, through the wire: JoinGroup metadata encoded and decoded,
the leader's plan, SyncGroup assignments decoded back; cooperative protocols run rounds until
nothing is withheld (KIP-429)."""

from __future__ import annotations

from operator import attrgetter
from typing import cast

import numpy as np

from assignor import protocol, validate
from assignor.leader import rebalance
from assignor.model import UNKNOWN_GENERATION, Group, Plan
from assignor.solver.dense import Layout
from assignor.strategies import strategy_named
from assignor.strategies.strategy import Leader, Strategy
from assignor.whatif.figures import Step, _changes, _given_up, _measure, _owners_now, _withheld
from assignor.whatif.state import _assignment_of, _reindex, _State

_MAX_ROUNDS = 10


def _new_leader(strategy: str) -> Leader | None:
    found = strategy_named(strategy)
    return None if found.new_leader is None else found.new_leader()


def _rebalance(definition: Group, state: _State, strategy: str, label: str, include_plans: bool,
               check: bool) -> Step:
    """One rebalance of the live group, as many rounds as the protocol needs, through the wire:
    each member's JoinGroup metadata is encoded and the leader decodes it, plans, and encodes
    SyncGroup assignments that each member decodes into what it owns now."""
    present = list(map(attrgetter("id"), definition.members))
    present_numbers = state.numbering.of(present)
    before, before_flats = state.owned, state.flats
    rounds = revoked = unsafe = 0
    chosen = strategy_named(strategy)
    cooperative = chosen.protocol.cooperative
    # Static members as the JoinGroup response lists them (KIP-345): range and roundrobin deal to them first.
    instance_ids = {m.id: m.group_instance_id for m in definition.members if m.group_instance_id is not None}
    while True:
        rounds += 1
        position = state.numbering.positions(state.numbers, present_numbers)  # of each member now, in `present`
        owned = _reindex(state.owned, position)
        generations = np.full(len(present), UNKNOWN_GENERATION, dtype=np.int64)
        kept = position[:-1] >= 0
        generations[position[:-1][kept]] = state.generation[kept]
        # Every member's metadata laid end to end, as the leader's JoinGroup response holds it.
        cache = state.cache
        metadata = protocol.encode_join_group(definition.members, owned, generations, chosen.protocol, cache.encode)
        generation = state.group_generation
        synced = rebalance(chosen, generation, definition, present, metadata, cache, state.leader,
                           instance_ids=instance_ids)
        state.group_generation += 1
        group, roster, layout, owner = synced.planned, synced.roster, synced.layout, synced.owner
        if cooperative:
            unsafe += _unsafe_handovers(layout, roster, owner)
        if check:
            _check(group, roster, layout, owner, chosen)
        # SyncGroup: each member decodes its assignment (in layout order).
        ids = list(map(attrgetter("id"), layout.members))
        assigned = protocol.read_assignments(synced.messages, cache.decode)
        old_flats = state.flats
        owner_now, state.flats = _owners_now(layout, assigned)
        numbers = state.numbering.of(ids)
        position = state.numbering.positions(state.numbers, numbers)[state.owned.member]  # of each claim's member now
        if rounds == 1:
            before_position = position
        if cooperative:
            revoked += _given_up(layout, position, state.owned, owner_now, old_flats)
        else:  # eager: every member still in the group revokes all it owned before rejoining
            revoked += int((position >= 0).sum())
        state.ids, state.numbers, state.owned = ids, numbers, assigned
        state.generation = np.full(len(ids), generation, dtype=np.int64)
        withheld = cooperative and _withheld(layout, len(assigned.member))
        if not withheld or rounds >= _MAX_ROUNDS:
            break
    moved, reassigned = _changes(layout, before_position, before, owner_now, before_flats)
    step = cast(Step, {"event": label, "rounds": rounds, "revoked": revoked, "moved": moved, "reassigned": reassigned,
                       "unsafe_handovers": unsafe, **_measure(group, layout, state.owned)})
    if include_plans:
        step["assignment"] = _assignment_of(state)
    return step


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
