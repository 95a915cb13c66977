"""The invariant oracle: every strategy and every test goes through `report`.

It is written independently of the strategies (plain Python over the public types, claims
resolved by `assignor.solver.claims`) so that it can catch them out. A plan with nothing wrong
is confirmed with set operations and arrays over all its partitions at once; any problem is
then named by the plain check, one partition at a time (a property test holds the two to the
same verdict).

Definitions
-----------
valid
    Every partition of a topic that exists and has a subscriber is assigned exactly once, only
    to a member subscribed to its topic; nothing else is assigned; every member has an entry.
    Cooperative plans (KIP-429) may leave a partition unassigned while a member still claims it
    (``revoking``: it is handed out in the next round), and must never give a partition to one
    member while another still claims it (that member has not revoked it yet), unless the one
    it goes to is its rightful owner (the one claimant of the highest generation, KIP-341),
    which keeps it while stale claimants revoke it.
balanced (KIP-54)
    Loads differ by at most one, or no member holds a partition that a member with two or more
    fewer partitions could take.
balance_score (KIP-54)
    Sum over all member pairs of ``|n_i - n_j|``; computed in O(C log C) from sorted loads.
moved / kept
    Partitions whose valid previous owner (`assignor.solver.claims.resolve`) lost / kept them.
flags
    What to know of a plan that is valid: a cooperative first round that withholds partitions
    (KIP-429; its balance is judged at the next round), and known weaknesses: not balanced in KIP-54's sense, a
    balance score above the optimum (with ``exact``), and, for Java's cooperative-sticky
    (which keeps Java's behaviour on purpose), partitions handed to a member while another
    member still claims them (``unsafe_handovers``; an error for our own cooperative-sticky).
rack_local / rack_locality (KIP-881)
    Assigned partitions with a replica on their member's rack, as a count and as a fraction of
    the assigned partitions that have rack information (None without any).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain, repeat
from operator import itemgetter
from typing import Any, TypedDict

import numpy as np

from assignor._arrays import gc_paused, run_starts
from assignor.group_spec import GroupSpec, of_objects
from assignor.model import Claims, Group, Plan, TopicPartition
from assignor.solver import claims, dense, racks
from assignor.solver.dense import Layout
from assignor.strategies import REGISTRY, Strategy

__all__ = ["ExactReport", "Optimum", "Report", "balance_score", "dropped_claims", "optimum", "report",
           "report_of_layout"]

_MAX_ERRORS = 20

_NOT_BALANCED = "not balanced (KIP-54): a member holds a partition a member two or more lighter could take"


def _withheld(revoking: int) -> str:
    """The flag of a cooperative round that withholds partitions (KIP-429): its balance and its
    count of assigned partitions are the round's, not the plan's end."""
    return (f"first of two rounds (KIP-429): {revoking} partition(s) withheld until their owners revoke "
            "them; the next rebalance assigns them, so `balanced` and `assigned` are this round's")


def _flags(balanced: bool, revoking: int) -> list[str]:
    if revoking:
        return [_withheld(revoking)]
    return [] if balanced else [_NOT_BALANCED]



class Report(TypedDict):
    """What `report` says of a plan (its JSON form is the record itself)."""

    valid: bool
    errors: list[str]
    balanced: bool
    balance_score: int
    spread: int
    min_load: int
    max_load: int
    members: int
    partitions: int
    assigned: int
    moved: int
    kept: int
    revoking: int
    rack_local: int
    rack_locality: float | None
    unsafe_handovers: int
    dropped_claims: dict[str, Any]
    flags: list[str]
    # With `exact`, the optimum's figures: ``optimal_balance_score``, ``max_rack_local`` and
    # ``min_moves`` (`ExactReport`).


class ExactReport(Report, total=False):
    optimal_balance_score: int
    max_rack_local: int
    min_moves: int


def _handover_rules(strategy: str | Strategy) -> tuple[bool, bool]:
    """(cooperative, safe): whether the strategy plans under a cooperative protocol (KIP-429:
    partitions still claimed are withheld, not unassigned), and whether it promises never to
    hand a partition over while another member still claims it (ours do; Java's and
    librdkafka's do not always, which is flagged, not an error). A plan of a strategy we do not
    know: eager."""
    known = _known(strategy)
    if known is None:
        return False, False
    return known.protocol.cooperative, known.protocol.cooperative and not known.java and known.peer is None


def _returns_to_earlier_owner(strategy: str | Strategy) -> bool:
    known = _known(strategy)
    return known is not None and known.earlier_owner_first


def _known(strategy: str | Strategy) -> Strategy | None:
    """The strategy a plan names, when the registry has it (or it is one already)."""
    return REGISTRY.get(strategy) if isinstance(strategy, str) else strategy


def _earlier_owner_errors(group: Group, plan: Plan, settled: claims.Settled) -> list[str]:
    """KIP-341's preference, for strategies that promise it: no partition away from its most
    recent earlier owner `e` (`claims.earlier_owners`) while `e` was given a partition `q` that
    neither it owned before nor goes back to it, and that the partition's holder `y` could
    take instead with no more moves (both kept by `y` before, or neither). Swapping the two
    changes no load and no move count: an equally good plan returns the partition. Racks are
    left out (a swap may change rack locality, which ranks first)."""
    earlier = claims.earlier_owners(group, settled)
    if not earlier:
        return []
    previous = settled.owners
    holder = {tp: m for m, tps in plan.assignment.items() for tp in tps}
    subscribed = {m.id: set(m.topics) for m in group.members}
    found: list[str] = []
    for tp, back in earlier.items():
        y = holder.get(tp)
        if y is None or y == back or tp.topic not in subscribed.get(back, ()) or back not in plan.assignment:
            continue
        kept_by_y = previous.get(tp) == y
        for q in plan.assignment[back]:
            if previous.get(q) == back or earlier.get(q) == back or q.topic not in subscribed.get(y, ()):
                continue
            if (previous.get(q) == y) == kept_by_y:
                found.append(f"{tp} given to {y} while its earlier owner {back} (KIP-341) was given {q} "
                             f"that {y} could take instead")
                break
    return found


def balance_score(loads: Iterable[int]) -> int:
    """Sum of ``|a - b|`` over all pairs: with loads sorted, the k-th (0-based) of C is added
    k times and subtracted C-1-k times.

    Examples
    --------
    >>> balance_score([9, 10, 11])
    4
    """
    # Loads take few distinct values: a value held by m members from sorted position k0 on is
    # added sum(2k - C + 1 for k in k0..k0+m-1) = m * (2 * k0 + m - C) times.
    times = Counter(loads)
    count = sum(times.values())
    score = position = 0
    for load in sorted(times):
        m = times[load]
        score += load * m * (2 * position + m - count)
        position += m
    return score


def report(group: Group, plan: Plan, *, exact: bool = False, spec: GroupSpec | None = None) -> ExactReport:
    """Check `plan` against `group` and measure it.

    Parameters
    ----------
    exact : bool
        Also solve the group exactly (`optimum`) and add ``optimal_balance_score`` and
        ``min_moves``. Only for small groups: the flow network has one node per partition.
    spec : GroupSpec, optional
        The view of `group` to read its members, subscriptions, racks and partition counts
        through (`assignor.group_spec`): by default ``of_objects(group)``; a leader that
        numbered the group into columns passes ``layout.spec()``. Claims and replica racks are
        read from `group` itself.

    Returns
    -------
    dict
        ``valid``, ``errors`` (first 20), ``balanced``, ``balance_score``, ``spread``,
        ``min_load``, ``max_load``, ``members``, ``partitions`` (that must be assigned),
        ``assigned``, ``moved``, ``kept``, ``revoking`` (cooperative: withheld this round),
        ``rack_local``, ``rack_locality``, ``unsafe_handovers``, ``dropped_claims``
        (`dropped_claims`), ``flags`` (see above); with `exact`, the optimum's figures.
    """
    # Sets and arrays of a million partitions, nothing cyclic: no collection while they are made.
    with gc_paused():
        return _report(group, of_objects(group) if spec is None else spec, plan, exact)


def _report(group: Group, spec: GroupSpec, plan: Plan, exact: bool) -> ExactReport:
    errors: list[str] = []
    member_ids = spec.member_ids()
    subscribed = _subscriptions(spec)
    loads = {m: len(tps) for m, tps in plan.assignment.items() if m in subscribed}
    checked = _unassigned_if_valid(spec, plan, subscribed)
    if checked is None:  # something is wrong: name each problem, partition by partition
        must = _partitions_to_assign(spec, subscribed)
        seen = _assignment_errors(spec, plan, subscribed, errors)
        to_assign, assigned, not_assigned = len(must), len(seen), must - seen
    else:
        to_assign, assigned, not_assigned = checked
    for member_id in member_ids:
        if member_id not in plan.assignment:
            errors.append(f"member {member_id!r} missing from the assignment")
            loads[member_id] = 0
    revoking = set()
    unsafe: list[str] = []
    cooperative, safe = _handover_rules(plan.strategy)
    settled = claims.settle(group)
    if cooperative:
        claimed = _claimed_by(group)
        revoking = {tp for tp in not_assigned if tp in claimed}
        for member_id, partitions in plan.assignment.items():
            for tp in filter(claimed.__contains__, partitions):
                # The rightful owner (KIP-341) keeps its partition: stale claimants revoke it.
                others = claimed[tp] - {member_id}
                if others and settled.owners.get(tp) != member_id:
                    unsafe.append(f"{tp} given to {member_id} while {min(others)} still owns it")
        if safe:
            errors.extend(unsafe)
    if checked is not None and _returns_to_earlier_owner(plan.strategy) and not group.partition_racks:
        # Only over a plan of well-formed partitions (`checked`): a swap is judged by topics.
        errors.extend(_earlier_owner_errors(group, plan, settled))
    unassigned = not_assigned - revoking
    if unassigned:
        errors.append(f"{len(unassigned)} partitions unassigned, e.g. {TopicPartition(*min(unassigned))}")

    previous: dict[str, set[TopicPartition]] = {}
    for tp, owner in settled.owners.items():
        previous.setdefault(owner, set()).add(tp)
    kept = sum(len(previous[m].intersection(tps)) for m, tps in plan.assignment.items() if m in previous)
    with_racks = [(m, tp) for m, tps in plan.assignment.items() if m in subscribed for tp in tps
                  if isinstance(tp, TopicPartition) and racks.replica_racks(group, tp)] if group.partition_racks else []
    rack_local = sum(racks.is_local(group, spec.member_rack(m), tp) for m, tp in with_racks)
    values = list(loads.values()) or [0]
    result: ExactReport = {
        "valid": not errors,
        "errors": errors[:_MAX_ERRORS],
        "balanced": _kip54_balanced(subscribed, plan, loads),
        "balance_score": balance_score(values),
        "spread": max(values) - min(values),
        "min_load": min(values),
        "max_load": max(values),
        "members": len(member_ids),
        "partitions": to_assign,
        "assigned": assigned,
        "moved": sum(map(len, previous.values())) - kept,
        "kept": kept,
        "revoking": len(revoking),
        "rack_local": rack_local,
        "rack_locality": round(rack_local / len(with_racks), 4) if with_racks else None,
        "unsafe_handovers": len(unsafe),
        "dropped_claims": _dropped_summary(settled.dropped),
        "flags": [],
    }
    flags = result["flags"]
    flags += _flags(result["balanced"], len(revoking))
    if unsafe and not safe:
        flags.append(f"{len(unsafe)} partition(s) handed over while still claimed, e.g. {unsafe[0]}")
    if exact:
        best = optimum(group)
        result["optimal_balance_score"] = best.balance_score
        result["max_rack_local"] = best.rack_local
        result["min_moves"] = best.moves
        score = balance_score(values)
        if score > best.balance_score and not revoking:
            flags.append(f"not optimally balanced: balance score {score} where "
                         f"{best.balance_score} is reachable")
    return result


def handed_while_claimed(layout: Layout, owner: np.ndarray) -> np.ndarray:
    """The partitions (flat indices, each once) that the plan `owner` gives to a member while
    another member still claims them, its rightful owner excepted (KIP-341: the claimant of the
    highest generation, `layout.prev_owner`; the stale claimants revoke it). KIP-429 forbids such
    a hand-over under a cooperative protocol: the claimant has not revoked the partition yet.
    `report` states the same rule partition by partition ("still owns it"); the layout must have
    read the members' claims (`dense.build`)."""
    claimed_flat, claimant = _claimed(layout)
    given = owner[claimed_flat]
    handed = (given >= 0) & (given != claimant) & (given != layout.prev_owner[claimed_flat])
    found = claimed_flat[handed]
    return np.unique(found) if len(found) > 1 else found  # (none where the plan keeps the rule: most steps)


def _claimed(layout: Layout) -> tuple[np.ndarray, np.ndarray]:
    """Each claim of a partition that exists, by anyone: its flat partition and its claimant."""
    member, topic, partition = layout.claims
    # (no topics: no partition exists, and nothing to index the counts with)
    counts = layout.counts[np.maximum(topic, 0)] if len(layout.topics) else np.zeros(len(topic), dtype=np.int64)
    exists = (topic >= 0) & (partition >= 0) & (partition < counts)
    return layout.offsets[topic[exists]] + partition[exists], member[exists]


def report_of_layout(group: Group, layout: Layout, owner: np.ndarray, strategy: str | Strategy,
                     owned: Claims | None = None) -> ExactReport | None:
    """`report` of a plan made on dense arrays (`layout` and the `owner` of each flat partition,
    as `assignor.strategies.plan_owners` returns them, for `group` with its members' claims),
    from those arrays: a leader measures its plan without a Python step per partition.

    `owned`: the members' claims as columns (member index in ``group.members`` order), when the
    caller read them so (`assignor.leader.sync`); the members' own ``owned`` are then not read.

    None wherever the answer could differ from `report`'s (any error to name, racks, claims of
    odd types): the caller then runs `report`. Claims some member gave up are summarised by
    `report`'s own rules (`claims.settle`), only when there are any, and only from the members'
    ``owned`` (with `owned` given, None then). A property test holds this to `report` on random
    groups and plans.
    """
    if group.partition_racks:
        return None
    if layout.earlier is not None and _returns_to_earlier_owner(strategy):
        return None  # KIP-341's preference is checked partition by partition (`report`)
    if owned is None and any(not set(map(type, m.owned)) <= {TopicPartition} for m in group.members):
        return None
    claimed = len(owned.member) if owned is not None else sum(len(m.owned) for m in group.members)
    if len(layout.claims[0]) != claimed:
        return None  # a layout that did not read every claim (range and roundrobin read none)
    topics, members = len(layout.topics), len(layout.members)
    topic_of = layout.topic_of_flat()
    pair_topic, pair_subscription = dense.distinct_pairs(layout)
    subscribed_topic = np.zeros(topics, dtype=bool)
    subscribed_topic[pair_topic] = True
    must = subscribed_topic[topic_of]
    assigned = owner >= 0
    # Each owner subscribes to its partition's topic: (subscription, topic) among the pairs.
    width = max(topics, 1)
    pairs = np.sort(pair_subscription * width + pair_topic)
    wanted = layout.subscription_of[owner[assigned]] * width + topic_of[assigned]
    at = np.minimum(np.searchsorted(pairs, wanted), max(len(pairs) - 1, 0))
    if len(wanted) and (not len(pairs) or (pairs[at] != wanted).any()):
        return None
    revoking = np.zeros(layout.total, dtype=bool)
    if _handover_rules(strategy)[0]:
        revoking[_claimed(layout)[0]] = True
        revoking &= must & ~assigned
        if handed_while_claimed(layout, owner).size:  # an error, or Java's flag with an example: `report` words them
            return None
    if (must & ~assigned & ~revoking).any():
        return None
    loads = np.bincount(owner[assigned], minlength=members)
    values = loads.tolist() or [0]
    kept = int((assigned & (layout.prev_owner == owner)).sum())
    winners = int((layout.prev_owner >= 0).sum())
    # Every distinct claim either made its member the previous owner or was dropped.
    distinct = _distinct_claims(owned) if owned is not None else sum(len(dict.fromkeys(m.owned)) for m in group.members)
    if distinct == winners:
        dropped: dict[str, Any] = {"count": 0, "by_reason": {}}
    elif owned is None:
        dropped = _dropped_summary(claims.settle(group).dropped)
    else:
        return None  # the reasons are read from the members' claims: the caller has them
    balanced = True
    if members and int(loads.max()) - int(loads.min()) > 1:
        lowest_of_subscription = np.full(len(layout.distinct), np.iinfo(np.int64).max)
        np.minimum.at(lowest_of_subscription, layout.subscription_of, loads)
        lowest = np.full(topics, np.iinfo(np.int64).max)
        np.minimum.at(lowest, pair_topic, lowest_of_subscription[pair_subscription])
        heaviest_holder = np.zeros(topics, dtype=np.int64)  # (0 where nobody holds one: never 2 above)
        np.maximum.at(heaviest_holder, topic_of[assigned], loads[owner[assigned]])
        balanced = not (lowest <= heaviest_holder - 2).any()
    flags = _flags(balanced, int(revoking.sum()))
    return {
        "valid": True, "errors": [], "balanced": balanced, "balance_score": balance_score(values),
        "spread": max(values) - min(values), "min_load": min(values), "max_load": max(values),
        "members": len(layout.members), "partitions": int(must.sum()), "assigned": int(assigned.sum()),
        "moved": winners - kept, "kept": kept, "revoking": int(revoking.sum()), "rack_local": 0,
        "rack_locality": None, "unsafe_handovers": 0, "dropped_claims": dropped, "flags": flags,
    }


def _distinct_claims(owned: Claims) -> int:
    """How many distinct (member, topic, partition) claims the columns hold."""
    if not len(owned.member):
        return 0
    order = np.lexsort((owned.partition, owned.topic, owned.member))
    return int(run_starts(owned.member[order], owned.topic[order], owned.partition[order]).sum())


def dropped_claims(group: Group, first: int = 5) -> dict[str, Any]:
    """The members' claims that keep no partition (`claims.dropped`), for an operator: how many,
    and per reason how many and the `first` few (``{"member", "claim"}``). A leader drops them
    rightly, but silently they hide a zombie member or stale metadata (KAFKA-12984)."""
    return _dropped_summary(claims.dropped(group), first)


def _dropped_summary(every: list[claims.Dropped], first: int = 5) -> dict[str, Any]:
    by_reason: dict[str, dict[str, Any]] = {}
    for drop in every:
        entry = by_reason.setdefault(drop.reason, {"count": 0, "first": []})
        entry["count"] += 1
        if len(entry["first"]) < first:
            claim: Any = drop.claim
            shown: object = repr(claim)
            if isinstance(claim, tuple | list) and len(claim) == 2 and isinstance(claim[0], str) \
                    and isinstance(claim[1], int) and not isinstance(claim[1], bool):
                shown = [claim[0], claim[1]]
            entry["first"].append({"member": drop.member, "claim": shown})
    return {"count": len(every), "by_reason": {r: by_reason[r] for r in claims.DROP_REASONS if r in by_reason}}


def _claimed_by(group: Group) -> dict[TopicPartition, set[str]]:
    """Every member claiming each existing partition, whatever its generation or subscription."""
    claimed: dict[TopicPartition, set[str]] = {}
    every_topic = set(group.topics)
    for member in group.members:
        for claim in member.owned:
            if claims.is_valid_claim(group, every_topic, claim):
                claimed.setdefault(TopicPartition(claim[0], int(claim[1])), set()).add(member.id)
    return claimed


def _unassigned_if_valid(spec: GroupSpec, plan: Plan, subscribed: dict[str, frozenset[str]]
                         ) -> tuple[int, int, set[tuple[str, int]]] | None:
    """When nothing in the plan is wrong: how many partitions must be assigned, how many are,
    and those that are not (as (topic, partition) tuples). Nothing is wrong when every entry
    is a TopicPartition of an existing partition of a topic its member subscribes to and none
    is assigned twice; that is checked with set operations per member and arrays over all the
    partitions, not a Python step per partition. None when any check fails (`report` then
    names the problems one by one)."""
    for member_id, partitions in plan.assignment.items():
        if member_id not in subscribed or not set(map(type, partitions)) <= {TopicPartition}:
            return None
        if not set(map(itemgetter(0), partitions)) <= subscribed[member_id]:
            return None
    # Topics with a subscriber that exist: a partition of each is to be assigned exactly once.
    topics = sorted(_subscribed_topics(subscribed))
    index = {t: i for i, t in enumerate(topics)}
    counts = np.array([spec.partition_count(t) for t in topics] or [0], dtype=np.int64)
    starts = np.cumsum(counts) - counts
    every = list(chain.from_iterable(plan.assignment.values()))
    numbers = list(map(itemgetter(1), every))
    if not set(map(type, numbers)) <= {int}:
        return None
    try:
        topic = np.fromiter(map(index.__getitem__, map(itemgetter(0), every)), dtype=np.int64, count=len(every))
        partition = np.fromiter(numbers, dtype=np.int64, count=len(numbers))
    except (KeyError, OverflowError):  # a topic without metadata, a partition past int64
        return None
    if ((partition < 0) | (partition >= counts[topic])).any():
        return None
    to_assign = int(counts.sum()) if topics else 0
    times = np.bincount(starts[topic] + partition, minlength=to_assign)
    if (times > 1).any():
        return None
    missing = np.flatnonzero(times == 0)
    which = np.searchsorted(starts, missing, side="right") - 1
    not_assigned = set(zip([topics[t] for t in which.tolist()], (missing - starts[which]).tolist()))
    return to_assign, len(every), not_assigned


def _assignment_errors(spec: GroupSpec, plan: Plan, subscribed: dict[str, frozenset[str]], errors: list[str]
                       ) -> set[tuple[str, int]]:
    """`report`'s checks one partition at a time, each problem named in `errors`; returns what
    was assigned (the partitions among it)."""
    seen: set[tuple[str, int]] = set()
    for member_id, partitions in plan.assignment.items():
        if member_id not in subscribed:
            errors.append(f"assignment for unknown member {member_id!r}")
            continue
        for tp in partitions:
            if not isinstance(tp, TopicPartition):
                errors.append(f"{member_id}: {tp!r} is not a TopicPartition")
                continue
            if tp.topic not in spec.topic_names() or not 0 <= tp.partition < spec.partition_count(tp.topic):
                errors.append(f"{member_id}: {tp} does not exist")
            elif tp.topic not in subscribed[member_id]:
                errors.append(f"{member_id}: {tp} of a topic it does not subscribe to")
            elif tp in seen:
                errors.append(f"{tp} assigned more than once")
            seen.add(tp)
    return seen


def _subscriptions(spec: GroupSpec) -> dict[str, frozenset[str]]:
    """Each member's subscription (topics with metadata), by member id."""
    return {m: spec.member_subscription(m) for m in spec.member_ids()}


def _subscribed_topics(subscribed: dict[str, frozenset[str]]) -> set[str]:
    """The topics that exist and have a subscriber (each member's `GroupSpec` subscription)."""
    return set[str]().union(*set(subscribed.values()))


def _partitions_to_assign(spec: GroupSpec, subscribed: dict[str, frozenset[str]]) -> set[tuple[str, int]]:
    """Every partition of a topic that exists and has a subscriber, as (topic, partition)
    tuples (equal to TopicPartitions; made in C, not one Python step each)."""
    topics = _subscribed_topics(subscribed)
    return set(chain.from_iterable(zip(repeat(t), range(spec.partition_count(t))) for t in topics))


def _kip54_balanced(subscribed: dict[str, frozenset[str]], plan: Plan, loads: dict[str, int]) -> bool:
    if not loads or max(loads.values()) - min(loads.values()) <= 1:
        return True
    # Lowest load among the subscribers of each topic: a holder of that topic with 2+ more
    # partitions than that could give one away.
    lowest: dict[str, int] = {}
    for member_id, topics in subscribed.items():
        for topic in topics:
            lowest[topic] = min(lowest.get(topic, loads[member_id]), loads[member_id])
    for member_id, partitions in plan.assignment.items():
        for topic in {tp[0] for tp in partitions if isinstance(tp, TopicPartition)}:
            if lowest.get(topic, loads.get(member_id, 0)) <= loads.get(member_id, 0) - 2:
                return False
    return True


@dataclass(frozen=True)
class Optimum:
    """The best achievable plan of a group: its sorted loads and balance score, then the most
    rack-local partitions at that balance (when racks apply), then the fewest moves."""

    loads: tuple[int, ...]
    balance_score: int
    moves: int
    rack_local: int


def optimum(group: Group) -> Optimum:
    """Solve the sticky objective exactly with a min-cost flow (networkx network simplex).

    Each partition sends one unit to a subscriber; moving it away from its valid previous owner
    costs 1, placing it off its replicas' racks costs ``R`` (when `racks.applies`); a member's
    k-th partition costs ``W * (2k - 1)`` so the flow minimises
    ``W * sum(load**2) + R * remote + moves``. With ``R`` above any move count and ``W`` above
    any ``R * remote + moves`` that is: the most balanced load vector first (a sum-of-squares
    minimum is decreasingly minimal, hence optimal for the balance score too), then the most
    rack-local placement, then the fewest moves.

    Complexity: O(P * C) arcs; meant for groups of up to a few hundred partitions.
    """
    import networkx as nx

    previous = claims.resolve(group)
    spec = of_objects(group)
    partitions = [TopicPartition(*tp) for tp in sorted(_partitions_to_assign(spec, _subscriptions(spec)))]
    rack_aware = racks.applies(group)
    rack_weight = len(partitions) + 1
    weight = (len(partitions) + 1) * (rack_weight + 1)
    graph = nx.DiGraph()
    graph.add_node("source", demand=-len(partitions))
    graph.add_node("sink", demand=len(partitions))
    capacity: Counter[str] = Counter()
    for tp in partitions:
        graph.add_edge("source", ("p", tp), capacity=1, weight=0)
        for member in group.members:
            if tp.topic in member.topics:
                moved = tp in previous and previous[tp] != member.id
                remote = rack_aware and not racks.is_local(group, member.rack, tp)
                graph.add_edge(("p", tp), ("m", member.id), capacity=1, weight=int(moved) + rack_weight * remote)
                capacity[member.id] += 1
    for member_id, most in capacity.items():
        for k in range(1, most + 1):
            graph.add_edge(("m", member_id), ("u", member_id, k), capacity=1, weight=weight * (2 * k - 1))
            graph.add_edge(("u", member_id, k), "sink", capacity=1, weight=0)
    flow = nx.min_cost_flow(graph) if partitions else {}
    loads: Counter[str] = Counter()
    moves = local = 0
    rack_of = {m.id: m.rack for m in group.members}
    for tp in partitions:
        for node, amount in flow[("p", tp)].items():
            if amount:
                loads[node[1]] += 1
                moves += tp in previous and previous[tp] != node[1]
                local += racks.is_local(group, rack_of[node[1]], tp)
    values = [loads.get(m.id, 0) for m in group.members] or [0]
    return Optimum(tuple(sorted(values)), balance_score(values), moves, local)
