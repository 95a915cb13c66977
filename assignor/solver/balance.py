"""Globally balanced, minimally moving assignment counts over *topic classes*.

Partitions of topics with the same subscriber set are interchangeable for balance, so the
sticky problem shrinks to a transportation problem: ``x[k, i]`` partitions of class ``k`` go to
member ``i`` (only where ``eligible[k, i]``). A member keeps ``min(x[k, i], owned[k, i])`` of the
partitions it held before (any counts can be realised that way), so the partitions moved are
``sum(owned) - sum(min(x, owned))``.

Goals, in order (KIP-54):

1. Balance. The load vector must be the decreasingly-minimal one: no *improving path*, a chain
   "member a gives a partition of class k to member b, b gives one of class k' to c, ..." from a
   member with load L to one with load <= L - 2. Such an assignment is optimal for every
   symmetric convex measure at once, the KIP's balance score (sum of pairwise differences)
   included (Frank and Murota, *Discrete decreasing minimization*, 2021). Java's StickyAssignor
   only checks single moves between pairs of members and stops at, e.g., loads 9/10/11 where
   10/10/10 is reachable through a chain.
2. Rack locality (KIP-881), when racks apply: the most partitions on a member that shares a
   rack with one of their replicas (classes are then split by replica racks).
3. Stickiness: the fewest moves. Goals 2 and 3 together are a min-cost flow, optimal exactly
   when the residual graph has no negative cycle. The solver cancels negative cycles until none
   is left, with lexicographic weights so that no goal is ever traded for a later one.

`solve` chains the steps: `_fill` (keep every valid claim, water-fill the rest onto the least
loaded eligible members, rarest classes first, as KIP-54 orders partitions by how few members
can take them), `_remove_improving_paths`, `_cancel_negative_cycles`.
"""

from __future__ import annotations

from itertools import compress
from typing import cast

import numpy as np

__all__ = ["solve"]


def solve(eligible: np.ndarray, sizes: np.ndarray, owned: np.ndarray, local: np.ndarray | None = None) -> np.ndarray:
    """Return ``x[k, i]``, the partitions of class ``k`` given to member ``i``.

    Parameters
    ----------
    eligible : (K, M) bool array
        Whether member ``i`` subscribes to the topics of class ``k``.
    sizes : (K,) int array
        Partitions per class; every one is assigned (each class has an eligible member).
    owned : (K, M) int array
        Valid previous claims per class and member (zero where not eligible).
    local : (K, M) bool array or None
        Rack locality (KIP-881): ranked after balance and before stickiness when given.

    Complexity: O(K * M) per breadth-first search; one search per improving path found, and one
    Bellman-Ford run per negative cycle (run only with racks or when some claim was not kept).
    """
    x = owned.astype(np.int64, copy=True)
    _fill(eligible, np.asarray(sizes, dtype=np.int64), x, local)
    _remove_improving_paths(eligible, x, owned, local)
    if local is not None or np.minimum(x, owned).sum() < owned.sum():
        _cancel_negative_cycles(eligible, x, owned, local)
    return x


def _water_fill(loads: np.ndarray, units: int) -> np.ndarray:
    """Spread `units` over members with these loads, raising the lowest first."""
    order = loads.argsort(kind="stable")
    level = loads[order]
    # cost[j]: units needed to raise members 0..j-1 (sorted) to level[j]; non-decreasing.
    cost = np.arange(len(level)) * level
    cost -= level.cumsum()
    cost += level
    j = int(cost.searchsorted(units, "right")) - 1
    lowest = j + 1
    rest = units - int(cost[j])
    new = level.copy()
    new[:lowest] = level[j] + rest // lowest
    new[: rest % lowest] += 1
    new -= level
    added = np.empty_like(loads)
    added[order] = new
    return added


def _fill(eligible: np.ndarray, sizes: np.ndarray, x: np.ndarray, local: np.ndarray | None) -> None:
    """Keep claims, water-fill the rest, rarest classes first; onto local members when any."""
    loads = x.sum(axis=0)
    missing = (sizes - x.sum(axis=1)).tolist()
    for k in np.lexsort((np.arange(len(sizes)), eligible.sum(axis=1))).tolist():
        if missing[k] > 0:
            members = (local[k] if local is not None and local[k].any() else eligible[k]).nonzero()[0]
            held = loads[members]
            added = _water_fill(held, missing[k])
            row = x[k]  # (a view: one index array, not two)
            row[members] += added
            held += added
            loads[members] = held


def _remove_improving_paths(eligible: np.ndarray, x: np.ndarray, owned: np.ndarray,
                            local: np.ndarray | None = None) -> None:
    """Push load along improving paths, highest level first, until none is left.

    A push from level L never creates an improving path for a member above L: such a member's
    reachable set is closed, the path cannot touch it, so its loads and holdings stay the same.
    One sweep down the levels therefore suffices. At each level, single-hop paths are pushed in
    bulk first (`_push_direct`); longer ones are found one at a time by breadth-first search.
    """
    active = cast(np.ndarray, eligible.any(axis=0))  # numpy types a reduction as scalar-or-array
    if not active.any():
        return
    loads = x.sum(axis=0)
    level = int(loads[active].max())
    direct = True
    while level >= int(loads[active].min()) + 2:
        sources = active & (loads == level)
        if direct and sources.any() and _push_direct(eligible, x, owned, local, loads, active, level):
            continue
        direct = False
        found = _improving_path(eligible, x, loads, sources, level - 2) if sources.any() else None
        if found is None:
            level -= 1
            direct = True
            continue
        source, target, steps = found
        amount = min((int(loads[source]) - int(loads[target])) // 2, min(int(x[k, g]) for k, g, _ in steps))
        for k, giver, taker in steps:
            x[k, giver] -= amount
            x[k, taker] += amount
        loads[source] -= amount
        loads[target] += amount


#: The most targets `_push_direct` reads each source's row of as a list (measured with half of
#: them open: 1.0 against 1.25 us a row at 16 targets, 2.2 against 1.4 at 64, 33 against 5 at 1,024).
_LIST_ROWS_UP_TO = 32


def _push_direct(eligible: np.ndarray, x: np.ndarray, owned: np.ndarray, local: np.ndarray | None,
                 loads: np.ndarray, active: np.ndarray, level: int) -> int:
    """Every member at `level` gives one partition straight to a member at <= level - 2.

    Sources and targets are matched greedily (a target takes at most what keeps it below
    `level`); each match is an improving path of one hop, so every push is progress. The class
    given prefers, in this order, one local to the taker (KIP-881), one remote for the giver,
    one the giver did not own, one the taker did. Returns the pushes made.
    """
    sources = (active & (loads == level)).nonzero()[0]
    targets = (active & (loads <= level - 2)).nonzero()[0]
    if not targets.size:
        return 0
    holds = x[:, sources] > 0
    takes = eligible[:, targets]
    # can[s, t]: some class held by source s is open to target t (float matmul uses BLAS).
    can = (holds.T.astype(np.float32) @ takes.astype(np.float32)) > 0
    # Each source in turn takes the target with the most room among those open to it (the first
    # such), if that has any room. A row at a time (the matrix as lists would be eight times its
    # size): as a list where targets are few, in numpy where they are many (the list's Python-level
    # max over a thousand targets per source cost 1.4 s of a 1,000,000-partition plan with racks).
    pairs_s, pairs_t = [], []
    if len(targets) <= _LIST_ROWS_UP_TO:
        room = (level - 1 - loads[targets]).tolist()
        columns = range(len(targets))
        for s, row in enumerate(can):
            t = max(compress(columns, row.tolist()), key=room.__getitem__, default=-1)
            if t >= 0 and room[t] > 0:
                room[t] -= 1
                pairs_s.append(s)
                pairs_t.append(t)
    else:
        spare = level - 1 - loads[targets]
        for s, row in enumerate(can):
            open_room = np.where(row, spare, -1)
            t = int(open_room.argmax())
            if open_room[t] > 0:
                spare[t] -= 1
                pairs_s.append(s)
                pairs_t.append(t)
    if not pairs_s:
        return 0
    giver, taker = sources[pairs_s], targets[pairs_t]
    preference = (holds[:, pairs_s] & takes[:, pairs_t]) * (
        1 + 2 * (x[:, giver] > owned[:, giver]) + (x[:, taker] < owned[:, taker])
    )
    if local is not None:
        preference = preference * (1 + 8 * local[:, taker] + 4 * ~local[:, giver])
    k = preference.argmax(axis=0)
    np.subtract.at(x, (k, giver), 1)
    np.add.at(x, (k, taker), 1)
    np.subtract.at(loads, giver, 1)
    np.add.at(loads, taker, 1)
    return len(pairs_s)


def _improving_path(eligible: np.ndarray, x: np.ndarray, loads: np.ndarray, sources: np.ndarray,
                    limit: int) -> tuple[int, int, list[tuple[int, int, int]]] | None:
    """Breadth-first search from all `sources` at once to a member with load <= `limit`.

    Returns ``(source, target, steps)`` with steps ``(class, giver, taker)`` in path order, or
    None. Each level of the search is two dense matrix reductions over K x frontier.
    """
    seen_member = sources.copy()
    seen_class = np.zeros(x.shape[0], dtype=bool)
    reached_via = np.full(x.shape[1], -1)  # class through which a member was reached
    given_by = np.full(x.shape[0], -1)  # member whose holdings reached a class
    frontier = sources.nonzero()[0]
    while frontier.size:
        held = x[:, frontier] > 0
        held[seen_class] = False
        classes = np.flatnonzero(held.any(axis=1))
        if not classes.size:
            return None
        given_by[classes] = frontier[held[classes].argmax(axis=1)]
        seen_class[classes] = True
        reach = eligible[classes] & ~seen_member
        members = np.flatnonzero(reach.any(axis=0))
        if not members.size:
            return None
        reached_via[members] = classes[reach[:, members].argmax(axis=0)]
        seen_member[members] = True
        hits = members[loads[members] <= limit]
        if hits.size:
            target = int(hits[np.argmin(loads[hits])])
            steps: list[tuple[int, int, int]] = []
            member = target
            while not sources[member]:
                k = int(reached_via[member])
                giver = int(given_by[k])
                steps.append((k, giver, member))
                member = giver
            return member, target, steps[::-1]
        frontier = members
    return None


# Arc kinds of the residual graph used by _cancel_negative_cycles.
_GIVE, _TAKE, _GAIN, _LOSE = range(4)


def _cancel_negative_cycles(eligible: np.ndarray, x: np.ndarray, owned: np.ndarray,
                            local: np.ndarray | None = None) -> None:
    """Cancel negative cycles of the residual graph until none is left (min-cost flow).

    Nodes: classes 0..K-1, members K..K+M-1, and a sink. Arcs and costs (one unit each):
    GIVE k->i (one more of class k to i): 0 while i gets back what it owned, else 1;
    TAKE i->k (one less): -1 while i holds more than it owned, else 0;
    GAIN i->sink / LOSE sink->i: the change of sum(load**2). With racks, GIVE and TAKE also
    cost R per partition on a member off its replicas' racks. Weights are lexicographic: a
    cycle's move cost is below R, its rack and move cost below W, so balance outranks
    locality, which outranks stickiness. At a balanced start the only negative cycles through
    the sink hand a "+1" from one member to another with one less.
    """
    kcount, mcount = x.shape
    sink = kcount + mcount
    rack_weight = sink + 2
    remote = np.zeros_like(eligible) if local is None else eligible & ~local
    weight = (sink + 2) * (rack_weight + 1) if local is not None else sink + 2
    active = np.flatnonzero(eligible.any(axis=0))
    while True:
        loads = x.sum(axis=0)
        gk, gi = np.nonzero(eligible)
        tk, ti = np.nonzero(x > 0)
        lose = active[loads[active] > 0]
        tail = np.concatenate([gk, kcount + ti, kcount + active, np.full(len(lose), sink)])
        head = np.concatenate([kcount + gi, tk, np.full(len(active), sink), kcount + lose])
        cost = np.concatenate(
            [
                (x[gk, gi] >= owned[gk, gi]).astype(np.int64) + rack_weight * remote[gk, gi],
                -(x[tk, ti] > owned[tk, ti]).astype(np.int64) - rack_weight * remote[tk, ti],
                weight * (2 * loads[active] + 1),
                -weight * (2 * loads[lose] - 1),
            ]
        )
        kind = np.repeat([_GIVE, _TAKE, _GAIN, _LOSE], [len(gk), len(tk), len(active), len(lose)])
        cycle = _negative_cycle(sink + 1, tail, head, cost)
        if cycle is None:
            return
        amount = None
        for arc in cycle:
            k, i = int(min(tail[arc], head[arc])), int(max(tail[arc], head[arc])) - kcount
            if kind[arc] == _GIVE:
                cap = owned[k, i] - x[k, i] if x[k, i] < owned[k, i] else None
            elif kind[arc] == _TAKE:
                cap = x[k, i] - owned[k, i] if x[k, i] > owned[k, i] else x[k, i]
            else:
                cap = 1  # the marginal cost of a load changes after one unit
            if cap is not None:
                amount = int(cap) if amount is None else min(amount, int(cap))
        for arc in cycle:
            k, i = int(min(tail[arc], head[arc])), int(max(tail[arc], head[arc])) - kcount
            if kind[arc] == _GIVE:
                x[k, i] += amount
            elif kind[arc] == _TAKE:
                x[k, i] -= amount


def _negative_cycle(nodes: int, tail: np.ndarray, head: np.ndarray, cost: np.ndarray) -> np.ndarray | None:
    """Bellman-Ford from a virtual source; return a negative cycle as arc indices, or None.

    Relaxes all arcs at once per pass; after each pass the predecessor graph is searched for a
    cycle, which is returned when its cost is negative.
    """
    dist = np.zeros(nodes, dtype=np.int64)
    pred = np.full(nodes, -1, dtype=np.int64)
    for _ in range(nodes + 1):
        candidate = dist[tail] + cost
        best = dist.copy()
        np.minimum.at(best, head, candidate)
        improved = best < dist
        if not improved.any():
            return None
        chosen = (improved[head] & (candidate == best[head])).nonzero()[0]
        pred[head[chosen]] = chosen
        dist = best
        cycle = _cycle_in(pred, tail)
        if cycle is not None and cost[cycle].sum() < 0:
            return cycle
    return None


def _cycle_in(pred: np.ndarray, tail: np.ndarray) -> np.ndarray | None:
    parent = np.where(pred >= 0, tail[np.maximum(pred, 0)], -1).tolist()
    stamp = [0] * len(parent)
    for start in range(len(parent)):
        node = start
        while node != -1 and not stamp[node]:
            stamp[node] = start + 1
            node = parent[node]
        if node != -1 and stamp[node] == start + 1:
            arcs: list[int] = []
            at = node
            while True:
                arcs.append(int(pred[at]))
                at = parent[at]
                if at == node:
                    return np.array(arcs[::-1], dtype=np.int64)
    return None
