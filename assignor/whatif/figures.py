"""What a what-if step reports, on arrays: moved, revoked and reassigned partitions, the balance
figures of the plan, and a run's summary (`assignor.whatif.replay`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple, TypedDict

import numpy as np

from assignor._arrays import appended, filled, run_starts
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


class Round(NamedTuple):
    """One JoinGroup and SyncGroup round of a classic rebalance, as `_changes_many` counts it."""

    layout: Layout  # the round's plan's
    assigned: Claims  # what members own after it (member index in ``layout.members``)
    held: Claims  # what they owned before it
    position: np.ndarray  # each of `held`'s claims' member as an index in ``layout.members`` (-1: gone)
    cooperative: bool  # whether members revoke only what they give up (KIP-429), or everything (eager)


def _joined(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """The arrays one after another; the one itself when it is alone (a large step is counted
    by itself, where a copy of each of its columns would cost more than counting it)."""
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


def _per_row(values: Sequence[int], lengths: Sequence[int]) -> np.ndarray | int:
    """Each run's value (runs of `lengths`) at each of its rows; the value itself for one run."""
    return values[0] if len(values) == 1 else np.asarray(values).repeat(lengths)


def _flats_many(pairs: list[tuple[Layout, Claims]], base: np.ndarray, planned: bool = False
                ) -> tuple[np.ndarray, np.ndarray | None]:
    """Each claim's flat partition in its layout, numbered from its pair's `base` (the pairs'
    claims one after another), and whether its layout has it: one it does not (its topic
    deleted, a partition past the topic's count) is at the slot past the layout's partitions
    (``base + layout.total``), which nobody owns. `planned`: every claim is a partition of its
    layout (a plan's), not checked (and None for whether). Each pair's topics are numbered from
    its own offset in lists of them all (Python lists: a pair's few topics cost less so than in
    numpy calls of their own)."""
    firsts: list[int] = []  # per pair, per topic of its layout then one of no partitions: its first flat
    counts: list[int] = []  # and its partition count
    topic_at, lengths, nowhere = [], [], []
    topics = []
    for (layout, claims), at in zip(pairs, base.tolist(), strict=True):
        topics.append(_topics_in(layout, claims, elsewhere=len(layout.topics)))  # (then the one of no partitions)
        topic_at.append(len(firsts))
        firsts += [at + first for first in layout.offsets.tolist()]  # (its last: at + total, the slot)
        counts += [*layout.counts.tolist(), 0]
        lengths.append(len(claims.partition))
        nowhere.append(at + layout.total)
    topic = _joined(topics) + _per_row(topic_at, lengths)
    part = _joined([claims.partition for _, claims in pairs])
    first, count = np.array(firsts, dtype=np.int64), np.array(counts, dtype=np.int64)
    if planned:
        return first[topic] + part, None
    inside = (part >= 0) & (part < count[topic])
    return np.where(inside, first[topic] + part, _per_row(nowhere, lengths)), inside


def _changes_many(steps: list[list[Round]]) -> list[tuple[int, int, int]]:
    """Each step's (revoked, moved, reassigned) from its rounds, all steps' at once: `revoked`
    counts, per cooperative round, the partitions a member still in the group owned before the
    round and not after it, and per eager round everything such members owned; `moved` the
    partitions taken from a member still in the group, `reassigned` every partition owned
    before the step that someone else owns after it, departed owners included (so moved <=
    reassigned). A partition owned by nobody after it (its topic deleted, say) has not changed
    owner; of two claims of one partition before (only in a hostile starting group), the last
    counts."""
    rounds = [r for step in steps for r in step]
    sizes = [r.layout.total + 1 for r in rounds]  # each round's partitions, then one owned by nobody
    base = np.zeros(len(rounds), dtype=np.int64)
    np.cumsum(sizes[:-1], out=base[1:])
    # Who owns each partition after each round.
    owner = filled(sum(sizes), -1)
    owner[_flats_many([(r.layout, r.assigned) for r in rounds], base, planned=True)[0]] = \
        _joined([r.assigned.member for r in rounds])
    # Revoked, round by round: what a cooperative member gave up, everything an eager one held.
    held_flat, held_inside = _flats_many([(r.layout, r.held) for r in rounds], base)
    held = [len(r.position) for r in rounds]
    position = _joined([r.position for r in rounds])
    lost = position >= 0
    if any(r.cooperative for r in rounds):
        lost &= ~((owner[held_flat] == position) & _per_row([r.cooperative for r in rounds], held))
    step_of_round = [i for i, step in enumerate(steps) for _ in step]
    revoked = _per_step(_per_row(step_of_round, held), lost, len(steps))
    # Moved and reassigned: what members held before a step's first round, owned after its last
    # (in one round, the round's own).
    first = np.cumsum([0, *map(len, steps)])[:-1]
    last = first + np.array(list(map(len, steps))) - 1
    starts = [rounds[i] for i in first.tolist()]
    if len(rounds) == len(steps):
        flat, inside = held_flat, held_inside
    else:
        flat, inside = _flats_many([(rounds[j].layout, start.held)
                                    for start, j in zip(starts, last.tolist(), strict=True)], base[last])
    assert inside is not None
    member = _joined([start.position for start in starts])[inside]
    step = _per_row(list(range(len(steps))), [len(start.position) for start in starts])
    step = step if isinstance(step, int) else step[inside]
    flat = flat[inside]
    if len(flat) and np.bincount(flat).max() > 1:  # (steps' flats do not overlap: one pass for all)
        last_claim = len(flat) - 1 - np.unique(flat[::-1], return_index=True)[1]
        flat, member = flat[last_claim], member[last_claim]
        step = step if isinstance(step, int) else step[last_claim]
    now = owner[flat]
    changed = (now >= 0) & (now != member)
    moved = _per_step(step, changed & (member >= 0), len(steps))
    reassigned = _per_step(step, changed, len(steps))
    return list(zip(revoked, moved, reassigned, strict=True))


def _per_step(step: np.ndarray | int, selected: np.ndarray, steps: int) -> list[int]:
    """How many `selected` rows each step has (`step`: each row's, or the one step's)."""
    if isinstance(step, int):
        return [int(np.count_nonzero(selected))]
    found: list[int] = np.bincount(step[selected], minlength=steps).tolist()
    return found


def _withheld(layout: Layout, assigned: int) -> bool:
    """Whether some partition of a subscribed topic went to nobody this round."""
    topic = dense.distinct_pairs(layout)[0]  # (sorted by topic: each subscribed one's first pair)
    return assigned < int(layout.counts[topic[run_starts(topic)]].sum())


def _measure(group: Group, layout: Layout, owned: Claims) -> Figures:
    """Balance and spread of what members own after the rebalance, and rack locality: `owned`
    as the members decoded it from SyncGroup (member index in the order of ``layout.members``,
    the order the leader sent assignments in), `layout` from the last round's plan."""
    return _measure_many([(group.partition_racks, layout, owned)])[0]


#: What `_measure_many` reads of a step: the group's partition racks, the layout, what members own.
_Measured = tuple[Mapping[str, Sequence[Sequence[str]]] | None, Layout, Claims]


class Counting:
    """Steps whose `Figures` (and, for a classic rebalance, revoked, moved and reassigned
    partitions: `_changes_many`) are counted later, many at once (`_measure_many`): a run's
    steps are mostly small groups, where each figure's few numpy calls cost more than their
    work, so a run counts them together, at its end or when a step's figures are wanted
    (`count`). A step added holds those keys where they are to be, each 0 (None for rack
    locality) until counted."""

    #: Rows (owned partitions) held before counting anyway, so that a long run of a large group
    #: does not keep every step's claims.
    ROWS = 1 << 14

    def __init__(self) -> None:
        self._steps: list[Step] = []
        self._measured: list[_Measured] = []
        self._changes: list[tuple[Step, list[Round]]] = []
        self._rows = 0

    def add(self, step: Step, group: Group, layout: Layout, owned: Claims, rounds: list[Round] | None = None) -> None:
        """`step`'s figures, of what members own after it (`owned`, under `layout`), and with
        `rounds` its classic rounds' revoked, moved and reassigned partitions."""
        self._steps.append(step)
        self._measured.append((group.partition_racks, layout, owned))
        self._rows += len(owned.member)
        if rounds is not None:
            self._changes.append((step, rounds))
            self._rows += sum(len(r.assigned.member) + len(r.held.member) for r in rounds)
        if self._rows > self.ROWS:
            self.count()

    def count(self) -> None:
        """Count every step added since the last count (each step's figures filled in)."""
        if self._steps:
            for step, figures in zip(self._steps, _measure_many(self._measured), strict=True):
                step["balance_score"], step["spread"] = figures["balance_score"], figures["spread"]
                step["topic_spread"], step["rack_locality"] = figures["topic_spread"], figures["rack_locality"]
        if self._changes:
            changes = _changes_many([rounds for _, rounds in self._changes])
            for (step, _), (revoked, moved, reassigned) in zip(self._changes, changes, strict=True):
                step["revoked"], step["moved"], step["reassigned"] = revoked, moved, reassigned
        self._steps, self._measured, self._changes, self._rows = [], [], [], 0


#: A step's figures before they are counted: their keys in `_measure`'s order.
UNCOUNTED: Figures = {"balance_score": 0, "spread": 0, "topic_spread": 0, "rack_locality": None}


def counted(step: Step, counting: Counting | None, group: Group, layout: Layout, owned: Claims,
             rounds: list[Round] | None = None) -> Step:
    """`step` (made with `UNCOUNTED` figures, and 0 for what `rounds` counts) counted now, or
    by `counting` when it counts (`Counting.add`)."""
    now = counting is None
    counting = Counting() if counting is None else counting
    counting.add(step, group, layout, owned, rounds)
    if now:
        counting.count()
    return step


def _measure_many(measured: list[_Measured]) -> list[Figures]:
    """`_measure` of many steps (one at least) in one pass: each step's rows, members and topics
    numbered from its own offset in arrays of them all (a few dozen numpy calls for a run
    instead of for each step)."""
    steps = len(measured)
    assert steps, "no step to measure"
    members = [max(len(layout.members), 1) for _, layout, _ in measured]  # (a group of none has one load: 0)
    topics = [len(layout.topics) for _, layout, _ in measured]
    width = [max(t, 1) for t in topics]
    member_at = np.zeros(steps + 1, dtype=np.int64)
    np.cumsum(members, out=member_at[1:])
    topic_at = np.zeros(steps + 1, dtype=np.int64)
    np.cumsum(topics, out=topic_at[1:])
    cell_at = np.zeros(steps, dtype=np.int64)
    np.multiply(members[:-1], width[:-1]).cumsum(out=cell_at[1:])
    rows = [len(owned.member) for _, _, owned in measured]
    member = _joined([owned.member for _, _, owned in measured])
    topic = _joined([_topics_in(layout, owned) for _, layout, owned in measured])
    # Owned partitions per member (each step's members from their offset).
    loads = np.bincount(member + _per_row(member_at[:-1].tolist(), rows), minlength=int(member_at[-1]))
    ordered = np.sort(loads) if steps == 1 else loads[np.lexsort((loads, np.repeat(np.arange(steps), members)))]
    # Sum of |a - b| over a step's pairs of loads: the k-th smallest of C is added k times and
    # subtracted C - 1 - k times (`validate.balance_score`).
    rank = np.arange(len(ordered), dtype=np.int64) - member_at[:-1].repeat(members)
    scores = np.add.reduceat(ordered * (2 * rank - np.repeat(members, members) + 1), member_at[:-1])
    spreads = np.maximum.reduceat(loads, member_at[:-1]) - np.minimum.reduceat(loads, member_at[:-1])
    # Per topic: the most and fewest partitions a subscriber holds (0 when some hold none). How
    # many partitions of each topic each member holds: runs of the sorted (step, member, topic)
    # cells (members decode their partitions topic by topic, so they are usually in order).
    cell = member * _per_row(width, rows) + topic + _per_row(cell_at.tolist(), rows)
    if (cell[1:] < cell[:-1]).any():
        cell = np.sort(cell)
    first = run_starts(cell).nonzero()[0]
    held = appended(first[1:], len(cell)) - first
    # (a cell's step: the last whose cells start at or before it)
    step_of_cell = cell_at.searchsorted(cell[first], side="right") - 1 if steps > 1 else 0
    held_topic = (cell[first] - cell_at[step_of_cell]) % np.asarray(width)[step_of_cell] + topic_at[step_of_cell]
    holders = np.bincount(held_topic, minlength=int(topic_at[-1]))
    most = np.zeros(int(topic_at[-1]), dtype=np.int64)
    np.maximum.at(most, held_topic, held)
    fewest = filled(int(topic_at[-1]), _MOST)
    np.minimum.at(fewest, held_topic, held)
    spread_per_topic = most - np.where(holders == _subscribers(measured, topic_at), fewest, 0)
    spread_held = np.where(holders > 0, spread_per_topic, 0)
    if steps == 1:
        topic_spreads = spread_held.max(initial=0, keepdims=True)
    else:
        topic_spreads = np.zeros(steps, dtype=np.int64)
        np.maximum.at(topic_spreads, np.arange(steps).repeat(topics), spread_held)
    return [{"balance_score": score, "spread": spread, "topic_spread": topic_spread,
             "rack_locality": _locality(racks, layout, owned) if racks else None}
            for score, spread, topic_spread, (racks, layout, owned)
            in zip(scores.tolist(), spreads.tolist(), topic_spreads.tolist(), measured, strict=True)]


def _topics_in(layout: Layout, claims: Claims, elsewhere: int | None = None) -> np.ndarray:
    """Each claim's topic as an index into ``layout.topics`` (the claims' own column where they
    name the layout's topics); a topic the layout lacks as `elsewhere` (None: there is none)."""
    if claims.names is layout.topics or claims.names == layout.topics:
        topic: np.ndarray = claims.topic
        return topic
    index = layout.topic_index()
    names = [index[n] for n in claims.names] if elsewhere is None else [index.get(n, elsewhere) for n in claims.names]
    topic = np.array(names + [0], dtype=np.int64)[claims.topic]
    return topic


def _subscribers(measured: list[_Measured], topic_at: np.ndarray) -> np.ndarray:
    """How many members subscribe to each topic (`dense.subscriber_counts`), each step's topics
    from its offset."""
    pairs = [dense.distinct_pairs(layout) for _, layout, _ in measured]
    distinct = [len(layout.distinct) for _, layout, _ in measured]
    distinct_at = np.zeros(len(measured), dtype=np.int64)
    np.cumsum(distinct[:-1], out=distinct_at[1:])
    of = [layout.subscription_of for _, layout, _ in measured]
    size = np.bincount(np.concatenate(of) + distinct_at.repeat(list(map(len, of))), minlength=sum(distinct))
    counts = [len(pair_topic) for pair_topic, _ in pairs]
    pair_topic = np.concatenate([pair_topic for pair_topic, _ in pairs]) + topic_at[:-1].repeat(counts)
    pair_subscription = np.concatenate([subscription for _, subscription in pairs]) + distinct_at.repeat(counts)
    return np.bincount(pair_topic, weights=size[pair_subscription], minlength=int(topic_at[-1])).astype(np.int64)


def _locality(racks_of: Mapping[str, Sequence[Sequence[str]]], layout: Layout, owned: Claims) -> float | None:
    """The share of owned partitions (of those with replica racks) whose member is in a rack of
    one of their replicas."""
    rack = [m.rack for m in layout.members]
    placed = local = 0
    for m, t, p in zip(owned.member.tolist(), owned.topic.tolist(), owned.partition.tolist()):
        replicas = racks_of.get(owned.names[t])
        if replicas is None or not 0 <= p < len(replicas) or not replicas[p]:
            continue
        placed += 1
        local += rack[m] is not None and rack[m] in replicas[p]
    return round(local / placed, 4) if placed else None


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
