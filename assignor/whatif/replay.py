"""The what-if run: events replayed on a group under each strategy, side by side (`run`), and
what switching from a Java strategy to ours changes (`compare`)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import TypedDict, cast

import numpy as np

from assignor._arrays import gc_paused
from assignor.errors import JavaAssignorFailure, WhatIfError
from assignor.events import Event
from assignor.leader import LeaderCache
from assignor.limits import DEFAULT_LIMITS, Limits
from assignor.model import Group
from assignor.strategies import REGISTRY, java_counterparts, strategy_named
from assignor.whatif.classic import _new_leader, _rebalance
from assignor.whatif.consumer import _reconcile
from assignor.whatif.figures import Counting, Figures, Step, Summary, _figures_of, _summary
from assignor.whatif.state import _assignment_of, _claims_of, _Numbering, _State
from assignor.whatif.steps import Definition, _expand
from assignor.whatif.timing import DEFAULT_TIMING, Timing

#: The strategies a what-if compares when none is named: every registered one but other
#: clients' (`Strategy.peer`: planned where named), in the registry's order.
ALL_STRATEGIES = tuple(name for name, s in REGISTRY.items() if s.peer is None)


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


#: Called after each rebalance a run plans with the number planned so far, all strategies together.
Progress = Callable[[int], None]


def run(group: Group, events: Iterable[Event], strategies: Sequence[str] = ALL_STRATEGIES, *,
        include_plans: bool = False, check: bool = False, limits: Limits = DEFAULT_LIMITS,
        progress: Progress | None = None, timing: Timing = DEFAULT_TIMING) -> Result:
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
    rebalance; `Limits.check_events` says how many a run has per strategy. `timing`: how long a
    restarted member is away and Kafka's settings that decide whether its leave and return are
    one rebalance (`assignor.whatif.timing`; by default each leave is a rebalance of its own).
    """
    events = list(events)
    for name in strategies:
        chosen = strategy_named(name)  # unknown names fail before any work
        if not chosen.protocol.classic and any(e.kind == "rollback" for e in events):
            raise WhatIfError(f"rollback: {name} runs the consumer protocol from the start, with no classic "
                              "protocol to go back to; rehearse a rollback after a migration (migrate, --migrate)")
    limits.check_group(group)
    limits.check_events(group, events, strategies=len(strategies), plans=include_plans)
    with gc_paused():  # many long-lived small objects, no reference cycles (see gc_paused)
        return _run(group, events, strategies, include_plans, check, progress or _quiet, timing)


def _quiet(_planned: int) -> None:
    pass


def _run(group: Group, events: list[Event], strategies: Sequence[str], include_plans: bool, check: bool,
         progress: Progress, timing: Timing = DEFAULT_TIMING) -> Result:
    result: dict[str, StrategyRun] = {}
    planned = 0
    initial = _claims_of(group.members, group.topics)
    # Members encode the same topic lists under every strategy, and the leader decodes them.
    cache = LeaderCache()
    timelines: dict[bool, list[list[Definition]]] = {}  # the same under every strategy of a protocol
    for name in strategies:
        numbering = _Numbering()
        ids = [m.id for m in group.members]
        # The steps' figures counted together (`Counting`): at the end, or where a step reads the one before's.
        counting = Counting()
        state = _State(ids, numbering.of(ids), initial,
                       np.array([m.generation for m in group.members], dtype=np.int64),
                       max([m.generation for m in group.members], default=0) + 1, numbering, cache,
                       leader=_new_leader(name), timing=timing, counting=counting)
        steps = [_step(group, state, name, "current", include_plans, check, None)]
        classic = strategy_named(name).protocol.classic
        planned += 1
        progress(planned)
        if classic not in timelines:
            timelines[classic] = _timeline(group, events, timing, classic)
        for definitions in timelines[classic]:
            for label, definition, rebalances, _joins, member, fresh in definitions:
                if not rebalances:
                    counting.count()
                    steps.append(_unchanged(steps[-1], label))
                    continue
                if fresh:
                    state.forget(member)
                steps.append(_step(definition, state, name, label, include_plans, check, steps[-1]))
                planned += 1
                progress(planned)
        counting.count()
        result[name] = {"steps": steps, "summary": _summary(steps)}
    out: Result = {"strategies": result}
    comparisons = {f"{java} vs {ours}": compare(result[java.name]["summary"], result[ours.name]["summary"])
                   for java, ours in java_counterparts() if java.name in result and ours.name in result}
    if comparisons:
        out["comparisons"] = comparisons
    return out


def _timeline(group: Group, events: list[Event], timing: Timing, classic: bool) -> list[list[Definition]]:
    """The group definitions each event goes through (`_expand`), from `group` on: they depend
    on the protocol, not the strategy, so a run makes them once for each protocol it plans."""
    found: list[list[Definition]] = []
    for n, event in enumerate(events):
        found.append(list(_expand(group, event, timing, classic, at_rest=n == 0)))
        group = found[-1][-1].group if found[-1] else group
    return found


def _unchanged(previous: Step, label: str) -> Step:
    """A step without a rebalance (a static member back within its session): nothing is
    revoked or moves, the figures and the assignment stay the step before's."""
    return cast(Step, {**previous, "event": label, "rounds": 0, "revoked": 0, "moved": 0, "reassigned": 0,
                       "unsafe_handovers": 0})


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
          previous: Step | None, hosted: Collection[str] = (), eager: bool = False) -> Step:
    """`_rebalance`, or where Java's assignor fails, a step saying so: nothing changes hands,
    and the figures stay those of the step before. `hosted`: under the consumer protocol, the
    members still classic, under an `eager` protocol or not (`assignor.whatif.consumer`)."""
    try:
        if not strategy_named(strategy).protocol.classic:
            return _reconcile(definition, state, strategy, label, include_plans, check, hosted, eager)
        return _rebalance(definition, state, strategy, label, include_plans, check)
    except JavaAssignorFailure as failure:
        if state.counting is not None:  # the step before's figures are read
            state.counting.count()
        kept = _figures_of(previous) if previous is not None else \
            Figures(balance_score=0, spread=0, topic_spread=0, rack_locality=None)
        step = cast(Step, {"event": label, "rounds": 1, "revoked": 0, "moved": 0, "reassigned": 0,
                           "unsafe_handovers": 0, **kept, "failed": str(failure)})
        if include_plans:  # the step before's (after a quick restart the state holds a departed member's)
            step["assignment"] = previous["assignment"] if previous is not None else _assignment_of(state)
        return step
