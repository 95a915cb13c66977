"""Rebalance what-if: replay events on a group under each strategy, side by side.

"What will move, and how long will consumers pause?" For each strategy the engine keeps the
group's state (each member's partitions and generation) and, per event, runs the rebalance the
way a live group does: every member's JoinGroup metadata is encoded as its client would send it
for that protocol and decoded by the leader (`assignor.protocol`), the plan's SyncGroup bytes
are decoded back into what each member now owns. Eager protocols revoke everything each
rebalance; cooperative-sticky runs rounds until nothing is withheld (KIP-429).

The Java-faithful strategies (``java-sticky``, ``java-cooperative-sticky``) run on the wire as
their protocols do, with one Java leader per run whose memory (its highest generation seen)
carries over; a step on which Java's assignor fails is reported with the reason (``failed``)
and leaves the group as it was. When a Java strategy runs beside ours, ``comparisons`` says
what switching to ours would change (see `compare`).

Events: `assignor.events` (each kind once: its text, its change to the group and to the sizes
the limits count); `parse_event` reads the ``kind:arg:arg`` form used by the CLI. What a run would
build is checked against its `assignor.limits.Limits` before the first rebalance.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Any, NamedTuple, TypedDict, cast

import numpy as np

from assignor import protocol, validate
from assignor._arrays import appended, gc_paused, run_starts
from assignor.errors import JavaAssignorFailure, WhatIfError
from assignor.events import KINDS, Event, apply_event, parse_event
from assignor.leader import LeaderCache, rebalance
from assignor.limits import DEFAULT_LIMITS, Limits
from assignor.model import INT32_MAX, UNKNOWN_GENERATION, Claims, Group, Member, Plan, TopicPartition
from assignor.reconcile import reconcile
from assignor.solver import dense
from assignor.solver.dense import Layout
from assignor.strategies import DEFAULT_STRATEGY, REGISTRY, check_strategy, java_counterparts, strategy_named
from assignor.strategies.strategy import Leader, Strategy
from assignor.topic_ids import TopicId

__all__ = ["ALL_STRATEGIES", "MIGRATE_FROM", "Comparison", "Event", "Figures", "Migration", "Progress", "Result",
           "Step", "StrategyRun", "Summary", "WhatIfError", "apply_event", "check_migration", "compare", "migrate",
           "parse_event", "run"]

#: Every registered strategy, in the registry's order.
ALL_STRATEGIES = tuple(REGISTRY)
_MAX_ROUNDS = 10


class Figures(TypedDict):
    """How the group stands after a rebalance: balance and spread of what members own, the
    largest spread of one topic, and rack locality (None without racks)."""

    balance_score: int
    spread: int
    topic_spread: int
    rack_locality: float | None


class Step(Figures, total=False):
    """One step of a run: the event, what it cost and the `Figures` after it. ``failed`` (Java's
    assignor failed: nothing changed hands) and ``assignment`` (with ``include_plans``) appear
    only where they apply."""

    event: str
    rounds: int
    revoked: int
    moved: int
    reassigned: int
    unsafe_handovers: int
    failed: str
    assignment: dict[str, list[list[str | int]]]
    # KIP-848's consumer protocol (`assignor.reconcile`): ``rounds`` counts heartbeat intervals
    max_unowned: float
    paused_members: int
    waiting_members: int


class Summary(TypedDict):
    """A strategy's whole run (`run`), the steps after the first added up."""

    steps: int
    rounds: int
    revoked: int
    moved: int
    reassigned: int
    unsafe_handovers: int
    failed_steps: int
    final_balance_score: int
    final_spread: int
    max_spread: int
    rack_locality: float | None


class Comparison(TypedDict):
    """What switching from a Java strategy to ours changes over a run (`compare`): positive
    figures are gains."""

    moves_saved: int
    reassignments_saved: int
    revocations_saved: int
    rounds_saved: int
    balance_score_gained: int
    spread_gained: int
    unsafe_handovers_avoided: int
    java_failures: int


class StrategyRun(TypedDict):
    steps: list[Step]
    summary: Summary


class Result(TypedDict, total=False):
    """`run`'s answer: each strategy's run, and ``comparisons`` (``"JAVA vs OURS"``) when a
    Java strategy ran beside ours."""

    strategies: dict[str, StrategyRun]
    comparisons: dict[str, Comparison]


@dataclass
class _State:
    """One strategy's view of the live group: what each member owns (`Claims`, member index into
    `ids`), at which generation, and the codec caches a long-lived leader and members keep."""

    ids: list[str]
    numbers: np.ndarray  # of `ids`, by `numbering`
    owned: Claims
    generation: np.ndarray  # of each of `ids`
    group_generation: int
    numbering: _Numbering
    cache: LeaderCache
    flats: _Flats | None = None  # `owned` as flat partitions, see `_owners_now`
    leader: Leader | None = None  # the leader of a strategy that keeps one (Java's), for the whole run


class _Numbering(dict[str, int]):
    """A number per member id, given in order of first sight: member lists become arrays of
    numbers, and moving values from one list's order to another's is a numpy gather."""

    def __missing__(self, member_id: str) -> int:
        number = self[member_id] = len(self)
        return number

    def of(self, ids: list[str]) -> np.ndarray:
        return np.fromiter(map(self.__getitem__, ids), dtype=np.int64, count=len(ids))

    def positions(self, numbers: np.ndarray, among: np.ndarray) -> np.ndarray:
        """Each member of `numbers` as an index in `among` (also numbers; -1: not there), then
        a last -1."""
        where = np.full(len(self) + 1, -1, dtype=np.int64)
        where[among] = np.arange(len(among))
        found: np.ndarray = where[appended(numbers, len(self))]
        return found


#: Called after each rebalance a run plans with the number planned so far, all strategies together.
Progress = Callable[[int], None]


def run(group: Group, events: Iterable[Event], strategies: Sequence[str] = ALL_STRATEGIES, *,
        include_plans: bool = False, check: bool = False, limits: Limits = DEFAULT_LIMITS,
        progress: Progress | None = None) -> Result:
    """Replay `events` on `group` for each strategy.

    The first step ("current") rebalances the group as given, starting from its members' owned
    partitions and generations. Returns ``{"strategies": {name: {"steps": [...], "summary":
    {...}}}}``; each step has ``event``, ``rounds``, ``revoked`` (partitions members gave up
    during the rebalance: all of them under eager protocols), ``moved`` (taken from a member
    still in the group), ``reassigned`` (now owned by someone else, departed owners included),
    ``balance_score``, ``spread``, ``topic_spread`` (largest spread of one topic),
    ``rack_locality``, and with `include_plans` the final ``assignment``. With `check`, every
    round goes through the oracle and an invalid plan raises AssertionError.

    Raises `LimitExceededError` before any work when the group, the events or a group they
    lead to is past `limits` (`assignor.limits`). `progress(planned)` is called after each
    rebalance; `Limits.check_events` says how many a run has per strategy.
    """
    events = list(events)
    for name in strategies:
        check_strategy(name)  # unknown names fail before any work
    limits.check_group(group)
    limits.check_events(group, events, strategies=len(strategies), plans=include_plans)
    with gc_paused():  # many long-lived small objects, no reference cycles (see gc_paused)
        return _run(group, events, strategies, include_plans, check, progress or _quiet)


def _quiet(_planned: int) -> None:
    pass


def _run(group: Group, events: list[Event], strategies: Sequence[str], include_plans: bool, check: bool,
         progress: Progress) -> Result:
    result: dict[str, StrategyRun] = {}
    planned = 0
    initial = _claims_of(group.members)
    # Members encode the same topic lists under every strategy, and the leader decodes them.
    cache = LeaderCache()
    for name in strategies:
        numbering = _Numbering()
        ids = [m.id for m in group.members]
        state = _State(ids, numbering.of(ids), initial,
                       np.array([m.generation for m in group.members], dtype=np.int64),
                       max([m.generation for m in group.members], default=0) + 1, numbering, cache,
                       leader=_new_leader(name))
        steps = [_step(group, state, name, "current", include_plans, check, None)]
        planned += 1
        progress(planned)
        definition = group
        for event in events:
            for label, step_group in _expand(definition, event):
                definition = step_group
                steps.append(_step(definition, state, name, label, include_plans, check, steps[-1]))
                planned += 1
                progress(planned)
        result[name] = {"steps": steps, "summary": _summary(steps)}
    out: Result = {"strategies": result}
    comparisons = {f"{java} vs {ours}": compare(result[java.name]["summary"], result[ours.name]["summary"])
                   for java, ours in java_counterparts() if java.name in result and ours.name in result}
    if comparisons:
        out["comparisons"] = comparisons
    return out


def compare(java: Summary, ours: Summary) -> Comparison:
    """What switching from a Java strategy to ours changes over a run, from the two summaries:
    positive figures are gains (fewer moves, a lower balance score, ...)."""
    return {
        "moves_saved": java["moved"] - ours["moved"],
        "reassignments_saved": java["reassigned"] - ours["reassigned"],
        "revocations_saved": java["revoked"] - ours["revoked"],
        "rounds_saved": java["rounds"] - ours["rounds"],
        "balance_score_gained": java["final_balance_score"] - ours["final_balance_score"],
        "spread_gained": java["max_spread"] - ours["max_spread"],
        "unsafe_handovers_avoided": java["unsafe_handovers"] - ours["unsafe_handovers"],
        "java_failures": java["failed_steps"],
    }


def _step(definition: Group, state: _State, strategy: str, label: str, include_plans: bool, check: bool,
          previous: Step | None, eager: Collection[str] = ()) -> Step:
    """`_rebalance`, or where Java's assignor fails, a step saying so: nothing changes hands,
    and the figures stay those of the step before. `eager`: under the consumer protocol, the
    members still classic under an eager protocol (`assignor.reconcile`)."""
    try:
        if not strategy_named(strategy).protocol.classic:
            return _reconcile(definition, state, strategy, label, include_plans, check, eager)
        return _rebalance(definition, state, strategy, label, include_plans, check)
    except JavaAssignorFailure as failure:
        kept = _figures_of(previous) if previous is not None else \
            Figures(balance_score=0, spread=0, topic_spread=0, rack_locality=None)
        step = cast(Step, {"event": label, "rounds": 1, "revoked": 0, "moved": 0, "reassigned": 0,
                           "unsafe_handovers": 0, **kept, "failed": str(failure)})
        if include_plans:
            step["assignment"] = _assignment_of(state)
        return step


def _new_leader(strategy: str) -> Leader | None:
    found = strategy_named(strategy)
    return None if found.new_leader is None else found.new_leader()


def _claims_of(members: Sequence[Member]) -> Claims:
    """The members' owned partitions as `Claims`; each must be one a client can send."""
    names: dict[str, int] = {}
    member, topic, partition = [], [], []
    for i, m in enumerate(members):
        for tp in m.owned:
            ok = isinstance(tp, tuple | list) and len(tp) == 2 and isinstance(tp[0], str)
            if not ok or not isinstance(tp[1], int) or isinstance(tp[1], bool) or not 0 <= tp[1] <= INT32_MAX:
                raise WhatIfError(f"member {m.id!r}: owned partition {tp!r} is not a (topic, partition) a client "
                                  "can send")
            member.append(i)
            topic.append(names.setdefault(tp[0], len(names)))
            partition.append(tp[1])
    return Claims(np.array(member, dtype=np.int64), np.array(topic, dtype=np.int64),
                  np.array(partition, dtype=np.int64), list(names))


def _expand(definition: Group, event: Event) -> Iterator[tuple[str, Group]]:
    """The group definitions a single event goes through (several for a rolling restart)."""
    if not KINDS[event.kind].every_member:
        yield str(event), apply_event(definition, event)
        return
    yield from _restarts(definition)


def _restarts(definition: Group, renamed: dict[str, str] | None = None) -> Iterator[tuple[str, Group]]:
    """Each member in turn leaves, then rejoins with nothing: under its own id, or with
    `renamed` (the migration's rolling upgrade) as a new member under `consumer_member_id`,
    recorded there."""
    for member in list(definition.members):
        members = definition.members  # `member_leave`, known to apply (ids are distinct)
        i = list(map(attrgetter("id"), members)).index(member.id)
        definition = Group.assembled(definition.topics, [*members[:i], *members[i + 1 :]],
                                     definition.partition_racks, definition.topic_ids)
        yield f"restart {member.id}: leave", definition
        new_id, label = member.id, f"restart {member.id}: rejoin"
        if renamed is not None:
            new_id = consumer_member_id(member.id)
            while any(m.id == new_id for m in definition.members):  # an id the group already uses
                new_id = consumer_member_id(new_id)
            renamed[member.id], label = new_id, f"{label} as {new_id}"
        definition = Group.assembled(definition.topics, [*definition.members, Member(new_id, member.topics,
                                                                                      rack=member.rack)],
                                     definition.partition_racks, definition.topic_ids)
        yield label, definition


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
        synced = rebalance(chosen, generation, definition, present, metadata, cache, state.leader)
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
               for m in definition.members]
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


def _assignment_of(state: _State) -> dict[str, list[list[str | int]]]:
    """What each member owns now, as ``[topic, partition]`` lists."""
    names = state.owned.names
    per_member: dict[str, list[list[str | int]]] = {member_id: [] for member_id in state.ids}
    for m, t, p in zip(state.owned.member.tolist(), state.owned.topic.tolist(), state.owned.partition.tolist()):
        per_member[state.ids[m]].append([names[t], p])
    return per_member


def _reindex(claims: Claims, position: np.ndarray) -> Claims:
    """`claims` with each member index i replaced by ``position[i]``; claims of members with
    position -1 (not there) are dropped."""
    new_index = position[claims.member]
    kept = new_index >= 0
    return Claims(new_index[kept], claims.topic[kept], claims.partition[kept], claims.names)


class _Flats(NamedTuple):
    """`_flats` of `claims` under a layout with these topics and counts."""

    claims: Claims
    topics: list[str]
    counts: np.ndarray
    flat: np.ndarray


def _flats(layout: Layout, claims: Claims, known: _Flats | None = None) -> np.ndarray:
    """Each claim's flat partition in `layout`, -1 for one the layout does not have (its topic
    deleted, or a partition past the topic's count). `known`: an earlier answer (`_owners_now`
    gives it), used when it is for these claims and the same topics."""
    if known is not None and known.claims is claims and known.topics == layout.topics and \
            np.array_equal(known.counts, layout.counts):
        return known.flat
    index = layout.topic_index()
    topic = np.array([index.get(n, -1) for n in claims.names] + [-1], dtype=np.int64)[claims.topic]
    in_layout = topic >= 0
    count = appended(layout.counts, 0)[topic]  # -1 (unknown) reads the appended 0
    flat = np.where(in_layout & (claims.partition >= 0) & (claims.partition < count),
                    layout.offsets[np.where(in_layout, topic, 0)] + claims.partition, -1)
    return flat


def _owners_now(layout: Layout, claims: Claims) -> tuple[np.ndarray, _Flats]:
    """Member (index in ``layout.members``) per flat partition from what members decoded, then
    a last -1 (the owner `_flats`'s -1 finds); and the claims' flat partitions, for the next
    rebalance (these claims are what the members own before it)."""
    owner = np.full(layout.total + 1, -1, dtype=np.int64)
    flat = _flats(layout, claims)
    known = flat >= 0
    owner[flat[known]] = claims.member[known]
    return owner, _Flats(claims, layout.topics, layout.counts, flat)


def _given_up(layout: Layout, member: np.ndarray, old: Claims, owner_now: np.ndarray, known: _Flats | None) -> int:
    """Partitions a member still in the group owned before this round and not after it
    (`member`: each old claim's member as an index in ``layout.members``, -1 when gone)."""
    flat = _flats(layout, old, known)
    kept = (flat >= 0) & (owner_now[flat] == member)
    return int(((member >= 0) & ~kept).sum())


def _changes(layout: Layout, member: np.ndarray, before: Claims, owner_now: np.ndarray,
             known: _Flats | None) -> tuple[int, int]:
    """(moved, reassigned), in that order: `moved` counts the partitions taken from a member
    still in the group (`member` as in `_given_up`), `reassigned` every partition owned before
    that someone else owns now, departed owners included (so moved <= reassigned). A partition
    owned by nobody now (its topic deleted, say) has not changed owner."""
    flat = _flats(layout, before, known)
    in_layout = flat >= 0
    flat, member = flat[in_layout], member[in_layout]
    if len(flat) and np.bincount(flat).max() > 1:
        # A partition claimed twice before (only in a hostile starting group): the last claim counts.
        last = len(flat) - 1 - np.unique(flat[::-1], return_index=True)[1]
        flat, member = flat[last], member[last]
    now = owner_now[flat]
    changed = (now >= 0) & (now != member)
    return int((changed & (member >= 0)).sum()), int(changed.sum())


def _withheld(layout: Layout, assigned: int) -> bool:
    """Whether some partition of a subscribed topic went to nobody this round."""
    subscribed = np.unique(dense.distinct_pairs(layout)[0])
    return assigned < int(layout.counts[subscribed].sum())


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


def _measure(group: Group, layout: Layout, owned: Claims) -> Figures:
    """Balance and spread of what members own after the rebalance, and rack locality: `owned`
    as the members decoded it from SyncGroup (member index in the order of ``layout.members``,
    the order the leader sent assignments in), `layout` from the last round's plan."""
    members, topics = len(layout.members), len(layout.topics)
    index = layout.topic_index()
    topic = np.array([index[n] for n in owned.names] + [0], dtype=np.int64)[owned.topic]
    member = owned.member
    loads = np.bincount(member, minlength=max(members, 1))
    # Per topic: the most and fewest partitions a subscriber holds (0 when some hold none).
    subscribers = dense.subscriber_counts(layout)
    # How many partitions of each topic each member holds: runs of the sorted (member, topic)
    # cells (members decode their partitions topic by topic, so they are usually in order).
    cell = member * max(topics, 1) + topic
    if (cell[1:] < cell[:-1]).any():
        cell = np.sort(cell)
    first = np.flatnonzero(run_starts(cell))
    held = np.diff(appended(first, len(cell)))
    held_topic = cell[first] % max(topics, 1)
    holders = np.bincount(held_topic, minlength=topics)
    most = np.zeros(topics, dtype=np.int64)
    np.maximum.at(most, held_topic, held)
    fewest = np.full(topics, np.iinfo(np.int64).max)
    np.minimum.at(fewest, held_topic, held)
    spread_per_topic = most - np.where(holders == subscribers, fewest, 0)
    topic_spread = int(spread_per_topic[holders > 0].max(initial=0))
    locality = None
    if group.partition_racks:
        racks_of = group.partition_racks
        rack = [m.rack for m in layout.members]
        placed = local = 0
        for m, t, p in zip(member.tolist(), owned.topic.tolist(), owned.partition.tolist()):
            replicas = racks_of.get(owned.names[t])
            if replicas is None or not 0 <= p < len(replicas) or not replicas[p]:
                continue
            placed += 1
            local += rack[m] is not None and rack[m] in replicas[p]
        if placed:
            locality = round(local / placed, 4)
    return {"balance_score": validate.balance_score(loads.tolist()), "spread": int(loads.max() - loads.min()),
            "topic_spread": topic_spread, "rack_locality": locality}


def _summary(steps: list[Step]) -> Summary:
    changes = steps[1:] or steps  # the first step is the group as given; a failed step changes nothing
    return {"steps": len(changes), "rounds": sum(s["rounds"] for s in changes),
            "revoked": sum(s["revoked"] for s in changes), "moved": sum(s["moved"] for s in changes),
            "reassigned": sum(s["reassigned"] for s in changes),
            "unsafe_handovers": sum(s["unsafe_handovers"] for s in changes),
            "failed_steps": sum("failed" in s for s in steps),
            "final_balance_score": steps[-1]["balance_score"], "final_spread": steps[-1]["spread"],
            "max_spread": max(s["spread"] for s in changes), "rack_locality": steps[-1]["rack_locality"]}


# -- Migration rehearsal: classic -> KIP-848's consumer protocol --------------------------------

class Migration(TypedDict):
    """`migrate`'s answer.

    ``today``: the group's first step under its classic strategy. ``upgrade``: the rolling
    upgrade, each member restarting in turn (``restarts``), with its ``steps`` and totals: the
    first member leaves a group that is still classic (a classic rebalance), and its rejoin with
    the consumer protocol converts the group online; the group runs mixed until the last restart
    (classic members get the broker's assignment through JoinGroup/SyncGroup meanwhile, told to
    rejoin at every change; under an eager strategy they revoke all they hold at each rejoin,
    `assignor.reconcile`).
    ``conversion``: that converting step (also among ``upgrade``'s steps): each member's current
    partitions become its target assignment, and the broker's assignor computes the next target
    from them with the rejoining member in the group (``GroupMetadataManager``'s
    classic-to-consumer conversion); for a group without members, the conversion alone.
    ``events``: each later event under the consumer protocol beside the same event under every
    classic strategy asked (``saved``: positive figures are what the consumer protocol saves;
    ``optimum``: our default strategy's figures on the same event), and ``vs_optimum``: the
    broker's balance against our ``sticky`` on the same events.
    """

    classic: str
    target: str
    today: Step
    conversion: Step
    upgrade: dict[str, Any]
    events: list[dict[str, Any]]
    vs_optimum: dict[str, Any]


#: The classic strategies a migration rehearsal compares against when none is named: the
#: cooperative ones (ours first, then Java's), the protocol most groups run before KIP-848.
MIGRATE_FROM: tuple[str, ...] = tuple(s.name for s in REGISTRY.values()
                                      if s.protocol.classic and s.protocol.cooperative)


def check_migration(target: str, classic: Sequence[str]) -> None:
    """Raise WhatIfError unless `target` is a consumer-protocol strategy and every one of
    `classic` (at least one) a classic one."""
    if strategy_named(target).protocol.classic:
        raise WhatIfError(f"--migrate: {target!r} is not a strategy of KIP-848's consumer protocol; "
                          f"known: {', '.join(s.name for s in REGISTRY.values() if not s.protocol.classic)}")
    if not classic:
        raise WhatIfError("migrate: name the classic strategy the group runs today")
    for name in classic:
        if not strategy_named(name).protocol.classic:
            raise WhatIfError(f"migrate: {name!r} is not a classic strategy")


def migrate(group: Group, events: Iterable[Event], target: str, classic: Sequence[str] = MIGRATE_FROM, *,
            include_plans: bool = False, check: bool = False, limits: Limits = DEFAULT_LIMITS) -> Migration:
    """Rehearse moving `group` from its classic strategy (``classic[0]``, the one it runs today)
    to KIP-848's consumer protocol with the broker's assignor `target`, then replay `events`.

    Raises
    ------
    WhatIfError
        When `target` is not a consumer-protocol strategy or a ``classic`` one is not classic.
    """
    events = list(events)
    check_migration(target, classic)
    limits.check_group(group)
    optimum = DEFAULT_STRATEGY.name  # ours: the optimum the broker's balance is measured against
    compared = list(dict.fromkeys([*classic, optimum]))
    # The classic runs replay the events; the upgrade restarts every member, then replays them.
    limits.check_events(group, [*events, Event("rolling_restart")], strategies=len(compared) + 1,
                        plans=include_plans)
    with gc_paused():
        staying = _run(group, events, compared, include_plans, check, _quiet)
        numbering = _Numbering()
        ids = [m.id for m in group.members]
        state = _State(ids, numbering.of(ids), _claims_of(group.members),
                       np.array([m.generation for m in group.members], dtype=np.int64),
                       max([m.generation for m in group.members], default=0) + 1, numbering, LeaderCache(),
                       leader=_new_leader(classic[0]))
        today = _step(group, state, classic[0], "current", include_plans, check, None)
        upgrade: list[Step] = []
        conversion: Step | None = None
        definition, previous = group, today
        renamed: dict[str, str] = {}  # a restarted member's id -> the id it rejoined under
        classic_ids = {m.id for m in group.members}
        eager_classic = not strategy_named(classic[0]).protocol.cooperative
        for i, (label, step_group) in enumerate(_restarts(group, renamed)):
            definition = step_group
            # The first member to restart leaves a classic group (a classic rebalance); its
            # rejoin with the consumer protocol converts the group online, and the broker plans
            # from the members' current partitions with it in the group (GroupMetadataManager's
            # convertToConsumerGroup: "the upgrade is always triggered by a new member joining").
            strategy = classic[0] if i == 0 else target
            label = f"{label} (classic)" if i == 0 else f"{label}, converting to {target}" if i == 1 else label
            # members not restarted yet are classic members of the converted group: eager ones
            # revoke everything at each rejoin (assignor.reconcile)
            eager = [m.id for m in definition.members if m.id in classic_ids] if eager_classic else []
            previous = _step(definition, state, strategy, label, include_plans, check, previous, eager)
            upgrade.append(previous)
            if i == 1:
                conversion = previous
        if conversion is None:  # no member to restart: the group converts as it is
            conversion = previous = _step(group, state, target, f"convert to {target}", include_plans, check, today)
            upgrade.append(conversion)
        later: list[dict[str, Any]] = []
        index = 1  # the classic runs' step after "current"
        for event in events:
            for label, step_group in _expand(definition, _renaming(event, renamed)):
                definition = step_group
                label = label if KINDS[event.kind].every_member else str(event)
                step = _step(definition, state, target, label, include_plans, check, previous)
                previous = step
                stays = {name: staying["strategies"][name]["steps"][index] for name in classic}
                members = len(definition.members)
                saved = {name: _saved(s, step, members, strategy_named(name).protocol.cooperative)
                         for name, s in stays.items()}
                later.append({"event": label, "consumer": step, "classic": stays, "saved": saved,
                              "optimum": _figures_of(staying["strategies"][optimum]["steps"][index])})
                index += 1
    final = previous
    sticky_final = staying["strategies"][optimum]["steps"][-1]
    return Migration(
        classic=classic[0], target=target, today=today, conversion=conversion,
        upgrade={"restarts": len(group.members), "steps": upgrade, "moved": sum(s["moved"] for s in upgrade),
                 "revoked": sum(s["revoked"] for s in upgrade),
                 "max_unowned": max((s.get("max_unowned", 0.0) for s in upgrade), default=0.0)},
        events=later,
        vs_optimum={"balance_score": final["balance_score"], "sticky_balance_score": sticky_final["balance_score"],
                    "spread": final["spread"], "sticky_spread": sticky_final["spread"],
                    "worse_balance_steps": sum(1 for e in later
                                               if e["consumer"]["balance_score"] > e["optimum"]["balance_score"])},
    )


def consumer_member_id(previous: str) -> str:
    """The member id a consumer that restarts under KIP-848's consumer protocol rejoins with: the
    client draws a random ``Uuid`` at start (KIP-1082), so a restart is a new member; here derived
    from the id it had, so that a rehearsal repeats (``Uuid.toString``'s 22 base64url characters).

    Examples
    --------
    >>> consumer_member_id("c0")
    '93MKp-SgZ323fDMKVveAyQ'
    """
    return str(TopicId.of_bytes(hashlib.sha256(("member:" + previous).encode("utf-8")).digest()))


def _renaming(event: Event, renamed: dict[str, str]) -> Event:
    """`event` about a member that restarted during the upgrade, about the member it became."""
    if KINDS[event.kind].about_member and event.args[0] in renamed:
        return Event(event.kind, (renamed[event.args[0]], *event.args[1:]))
    return event


def _figures_of(step: Step) -> Figures:
    return Figures(balance_score=step["balance_score"], spread=step["spread"], topic_spread=step["topic_spread"],
                   rack_locality=step["rack_locality"])


def _saved(classic: Step, consumer: Step, members: int, cooperative: bool) -> dict[str, Any]:
    """What the consumer protocol saves against staying classic on one event (positive: saved):
    moves, revocations and balance score; beside them the classic rebalance's rounds (each a
    JoinGroup/SyncGroup barrier of the whole group) and the heartbeat intervals the consumer
    protocol took, and the members each pauses: an eager classic protocol revokes everything,
    so every member pauses (a cooperative one: not counted here, shown as None); the consumer
    protocol pauses only members that revoke. `cooperative`: the classic strategy's protocol's."""
    eager = not cooperative
    return {"moves": classic["moved"] - consumer["moved"], "revocations": classic["revoked"] - consumer["revoked"],
            "balance_score": classic["balance_score"] - consumer["balance_score"],
            "classic_rounds": classic["rounds"], "consumer_intervals": consumer["rounds"],
            "classic_paused_members": members if eager else None,
            "consumer_paused_members": consumer.get("paused_members", 0)}
