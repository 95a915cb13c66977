"""What a what-if step reports, on arrays: moved, revoked and reassigned partitions, the balance
figures of the plan, and a run's summary (`assignor.whatif.replay`)."""

from __future__ import annotations

from typing import NamedTuple, TypedDict

import numpy as np

from assignor import validate
from assignor._arrays import appended, run_starts
from assignor.model import Claims, Group
from assignor.solver import dense
from assignor.solver.dense import Layout

#: The largest int64: the fewest partitions of a topic a holder holds starts there (`_measure`).
_MOST = int(np.iinfo(np.int64).max)


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
    max_unowned_seconds: float
    seconds: float
    revoked_range: list[int]
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
            len(known.counts) == len(layout.counts) and bool((known.counts == layout.counts).all()):
        return known.flat
    index = layout.topic_index()
    # Per topic name of the claims: its first flat partition and its count (0 for one the layout
    # does not have: no partition passes); then per claim, two gathers.
    topic = np.array([index.get(n, -1) for n in claims.names], dtype=np.int64)
    count = appended(layout.counts, 0)[topic]  # -1 (unknown) reads the appended 0
    first = layout.offsets[topic]
    part = claims.partition
    flat = np.where((part >= 0) & (part < count[claims.topic]), first[claims.topic] + part, -1)
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
    held = np.empty(len(first), dtype=np.int64)  # each run's length
    np.subtract(first[1:], first[:-1], out=held[:-1])
    held[-1:] = len(cell) - first[-1:]
    held_topic = cell[first] % max(topics, 1)
    holders = np.bincount(held_topic, minlength=topics)
    most = np.zeros(topics, dtype=np.int64)
    np.maximum.at(most, held_topic, held)
    fewest = np.full(topics, _MOST, dtype=np.int64)
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


def _figures_of(step: Step) -> Figures:
    return Figures(balance_score=step["balance_score"], spread=step["spread"], topic_spread=step["topic_spread"],
                   rack_locality=step["rack_locality"])
