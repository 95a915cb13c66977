"""`assignor.reconcile.reconcile` as it was first written: every member's holding and target
as sets, every partition's holder, whether or not the member has anything to do. The reference
the reconciliation, which follows only the members that do, is held to by a property test
(`tests/consumer/test_reconcile.py`)."""

from __future__ import annotations

import heapq
from collections.abc import Collection, Mapping, Sequence

from assignor.reconcile import _MAX_INTERVALS, Reconciliation


def reconcile_plainly(current: Mapping[str, Sequence[tuple[str, int]]], target: Mapping[str, Sequence[tuple[str, int]]],
              members: Sequence[str], eager: Collection[str] = (), *, periods: Mapping[str, float] | None = None,
              first: str | None = None, left_before: float = 0.0, offset: float = 0.0) -> Reconciliation:
    """Run the heartbeats of `members` (in this order) from `current` (what each member holds,
    departed members included) until each holds its `target`. `eager`: the members among them
    that are classic members under an eager protocol; `periods`: a member's heartbeat interval
    in consumer heartbeat intervals (1 when not given); `first`: the member whose heartbeat
    computed the target; `left_before`: how long before that the departed members left;
    `offset`: the other members' phases shifted back by this fraction of an interval (see the
    module docstring).
    """
    present = set(members)
    holder: dict[tuple[str, int], str] = {}
    released_at: dict[tuple[str, int], float] = {}
    holding: dict[str, set[tuple[str, int]]] = {m: set() for m in members}
    # Present members in their order, then departed ones: a partition claimed twice is held by
    # the first claimant only, the later claim dropped, as the coordinator's view of the group
    # keeps one owner per partition (`strategies.kip848.coordinator.group_spec`).
    for member in [*members, *(m for m in current if m not in present)]:
        for tp in current.get(member, ()):
            tp = (tp[0], tp[1])
            if member not in present:
                if tp not in holder:
                    released_at[tp] = -left_before  # its owner left
            elif tp not in holder:
                holder[tp] = member
                holding[member].add(tp)
    wanted = {m: {(tp[0], tp[1]) for tp in target.get(m, ())} for m in members}
    for m in members:
        for tp in wanted[m]:
            if tp not in holder and tp not in released_at:
                released_at[tp] = 0.0  # nobody held it: a new partition, or one never assigned
    previous_holder = dict(holder)
    revoked = 0
    paused: set[str] = set()
    waited: set[str] = set()
    longest = 0.0
    unowned = 0
    done_at = 0.0
    acted = False
    rejoining = set(eager) & present  # eager classic members yet to rejoin once
    pending = {m for m in members if holding[m] != wanted[m]} | rejoining
    period = {m: 1.0 for m in members} if periods is None else {m: periods.get(m, 1.0) for m in members}
    n = max(len(members), 1)
    # (time, position, member) of each pending member's next heartbeat. A member that holds its
    # target is done for good (only its own heartbeats change what it holds), and its heartbeats
    # change nothing: they are not run.
    beats = [(0.0 if m == first else ((i + 0.5) / n - offset) % 1.0 * period[m], i, m) for i, m in enumerate(members)
             if m in pending]
    heapq.heapify(beats)
    horizon = _MAX_INTERVALS * max(period.values(), default=1.0)
    while beats and beats[0][0] < horizon:
        now, i, member = beats[0]
        if member not in pending:
            heapq.heappop(beats)
            continue
        heapq.heapreplace(beats, (now + period[member], i, member))
        have, want = holding[member], wanted[member]
        give_up = have - want
        if member in eager:
            # rejoins after the change, then once every partition it waits for is free
            if member in rejoining or (have != want and not any(tp in holder for tp in want - have)):
                rejoining.discard(member)
                give_up = set(have)  # onJoinPrepare: everything it holds is revoked first
                done_at, acted = max(done_at, now), True  # it acted on this heartbeat
            elif have != want:
                waited.add(member)
                continue
        if have == want and not give_up:
            pending.discard(member)
            continue
        if give_up:  # revoke, then acknowledge at once
            paused.add(member)
            revoked += len(give_up)
            for tp in give_up:
                del holder[tp]
                released_at[tp] = now
            have -= give_up
        for tp in sorted(want - have):
            if tp in holder:
                waited.add(member)
                continue
            have.add(tp)
            holder[tp] = member
            gap = now - released_at.pop(tp, now)
            if gap > 0:
                unowned += 1
                longest = max(longest, gap)
        if have == want:
            done_at, acted = max(done_at, now), True
            if member not in rejoining:
                pending.discard(member)
    moved = sum(1 for tp, m in holder.items() if previous_holder.get(tp, m) != m)
    # (the member that computed the target, taking it at once, took one interval's beginning)
    intervals = int(-(-done_at // 1)) or int(acted)
    return Reconciliation(intervals=intervals, revoked=revoked, moved=moved, paused_members=len(paused),
                          waiting_members=len(waited), max_unowned=round(longest, 3), unowned=unowned,
                          settled=round(done_at, 3))
