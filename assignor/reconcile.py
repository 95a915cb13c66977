"""KIP-848's reconciliation: how members converge to a new target assignment through heartbeats.

Under the consumer protocol there is no JoinGroup/SyncGroup barrier. The broker computes a new
target assignment and each member converges to it on its own heartbeats, by the rules of the
group coordinator's ``CurrentAssignmentBuilder`` (apache/kafka, group-coordinator):

- a member whose current partitions include some its target lacks is told to revoke them
  (state ``UNREVOKED_PARTITIONS``) and keeps the rest; it revokes and acknowledges at once (the
  client heartbeats as soon as ``onPartitionsRevoked`` returns);
- a partition reaches its new owner only once no other member holds it (its partition epoch is
  free): until then the member waits for it (``UNRELEASED_PARTITIONS``) and is given it on a
  later heartbeat; partitions nobody holds are given at once;
- a member that loses nothing keeps working throughout: it is never paused.

Classic members of a group that converted online (during the rolling upgrade to the consumer
protocol) are hosted by the same rules, through JoinGroup/SyncGroup (``GroupMetadataManager``'s
``classicGroupHeartbeatToConsumerGroup``): a classic heartbeat answers ``REBALANCE_IN_PROGRESS``
once the group epoch passed the member's, while it must revoke, and once every partition it
waits for is free; the member rejoins with the partitions it owns and is reconciled in its
JoinGroup (``classicGroupJoinToConsumerGroup``). A cooperative classic member converges as a
consumer member does. An *eager* one revokes everything it holds before each JoinGroup (Java's
``ConsumerCoordinator.onJoinPrepare`` under the eager protocol), so it rejoins at the first
heartbeat after any change, giving up and taking back even the partitions it keeps, and again
once every partition it waits for is free (`reconcile`'s `eager`).

The model here: each member heartbeats once per its interval (a consumer member every
``group.consumer.heartbeat.interval.ms``, 5 s by default; a classic member every
``heartbeat.interval.ms``, given as `reconcile`'s `periods` in those units), their phases evenly
spread over the interval in the group's member order, shifted by `offset`. The member whose
heartbeat computed the target (`first`: a joining member's, KIP-848's ``consumerGroupHeartbeat``
or a classic member's ``JoinGroup``) has it at once. A member that departed released its
partitions when it left (a graceful leave, ``LeaveGroup`` epoch -1): `left_before` the target
was computed, as the coordinator computes none at a leave (``consumerGroupFenceMembers``) but at
a later heartbeat (`assignor.whatif.timing`). Times are in consumer heartbeat intervals from the
moment the broker computed the target.

When an eager member rejoins a second time depends on when its heartbeats fall against the
other members' revocations; `phases` runs the same change at evenly spaced offsets, for the
expected figures and their range.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Mapping, Sequence
from typing import TypedDict

__all__ = ["PHASES", "Reconciliation", "phases", "reconcile"]

_MAX_INTERVALS = 10  # convergence takes at most two; the bound only guards a broken target


class Reconciliation(TypedDict):
    """How a group converged to a target: ``intervals`` (heartbeat intervals until every member
    had its target), ``revoked`` (partitions present members gave up), ``moved`` (partitions
    that went from one present member to another), ``paused_members`` (members that had to
    revoke something), ``waiting_members`` (members that waited for a partition another still
    held), ``max_unowned`` (the longest a partition was owned by nobody, in intervals: from its
    revocation or its owner's departure, or from the start for a partition nobody held, to its
    new owner's heartbeat), ``unowned`` (partitions that went unowned for a while), ``settled``
    (when the last member had its target, in intervals: ``intervals`` rounds it up)."""

    intervals: int
    revoked: int
    moved: int
    paused_members: int
    waiting_members: int
    max_unowned: float
    unowned: int
    settled: float


def reconcile(current: Mapping[str, Sequence[tuple[str, int]]], target: Mapping[str, Sequence[tuple[str, int]]],
              members: Sequence[str], eager: Collection[str] = (), *, periods: Mapping[str, float] | None = None,
              first: str | None = None, left_before: float = 0.0, offset: float = 0.0,
              disjoint: bool = False) -> Reconciliation:
    """Run the heartbeats of `members` (in this order) from `current` (what each member holds,
    departed members included) until each holds its `target`. `eager`: the members among them
    that are classic members under an eager protocol; `periods`: a member's heartbeat interval
    in consumer heartbeat intervals (1 when not given); `first`: the member whose heartbeat
    computed the target; `left_before`: how long before that the departed members left;
    `offset`: the other members' phases shifted back by this fraction of an interval (see the
    module docstring); `disjoint`: the caller vouches that no partition is claimed twice in
    `current` (one member's list included) nor given twice in `target`, so the partitions of a
    member that holds its target need not be read at all.

    Examples
    --------
    >>> r = reconcile({"a": [("t", 0), ("t", 1)], "b": []}, {"a": [("t", 0)], "b": [("t", 1)]}, ["a", "b"])
    >>> r["intervals"], r["revoked"], r["moved"], r["max_unowned"]
    (1, 1, 1, 0.5)
    """
    present = set(members)
    holder: dict[tuple[str, int], str] = {}
    released_at: dict[tuple[str, int], float] = {}
    # A member that holds its target and need not rejoin never acts (only its own heartbeats
    # change what it holds, and no other member wants what it holds): in a large group, most
    # members. Only the others are followed. (`tests/consumer/reconcile_plain.py` follows every
    # member, and a property test holds the two alike.)
    if disjoint:  # (no claim shared: a settled member's partitions touch nobody else's)
        settled = {m for m in members if m not in eager and _holds(current.get(m, ()), target.get(m, ()))}
        claimants = [m for m in members if m not in settled]
    else:
        claimants = list(members)
    # Present members in their order, then departed ones: a partition claimed twice is held by
    # the first claimant only, the later claim dropped, as the coordinator's view of the group
    # keeps one owner per partition (`strategies.kip848.coordinator.group_spec`).
    dropped: set[str] = set()  # present members a claim of which was dropped
    for member in claimants:
        for tp in current.get(member, ()):
            if not isinstance(tp, tuple):  # (a list: a pair as JSON gives it)
                tp = (tp[0], tp[1])
            if tp in holder:
                dropped.add(member)
            else:
                holder[tp] = member
    for member in current:
        if member not in present:
            for tp in current[member]:
                tp = (tp[0], tp[1])
                if tp not in holder:
                    released_at[tp] = -left_before  # its owner left
    if not disjoint:
        settled = {m for m in members
                   if m not in dropped and m not in eager and _holds(current.get(m, ()), target.get(m, ()))}
    followed = [m for m in members if m not in settled]
    holding: dict[str, set[tuple[str, int]]] = {m: set() for m in followed}
    for member in followed:
        mine = holding[member]
        for tp in current.get(member, ()):
            tp = (tp[0], tp[1])
            if holder.get(tp) == member:
                mine.add(tp)
    wanted = {m: {(tp[0], tp[1]) for tp in target.get(m, ())} for m in followed}
    for m in followed:
        for tp in wanted[m]:
            if tp not in holder and tp not in released_at:
                released_at[tp] = 0.0  # nobody held it: a new partition, or one never assigned
    # (who held what may move: a partition moves only once a followed member gave it up; the
    # rest hold theirs throughout)
    previous_holder = {tp: m for m in followed for tp in holding[m]}
    revoked = 0
    paused: set[str] = set()
    waited: set[str] = set()
    longest = 0.0
    unowned = 0
    done_at = 0.0
    acted = False
    rejoining = set(eager) & present  # eager classic members yet to rejoin once
    pending = {m for m in followed if holding[m] != wanted[m]} | rejoining
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
    moved = sum(1 for m in followed for tp in holding[m] if previous_holder.get(tp, m) != m)
    # (the member that computed the target, taking it at once, took one interval's beginning)
    intervals = int(-(-done_at // 1)) or int(acted)
    return Reconciliation(intervals=intervals, revoked=revoked, moved=moved, paused_members=len(paused),
                          waiting_members=len(waited), max_unowned=round(longest, 3), unowned=unowned,
                          settled=round(done_at, 3))


def _holds(current: Sequence[tuple[str, int]], target: Sequence[tuple[str, int]]) -> bool:
    """Whether `current` holds the same partitions as `target` (alike lists compared first: an
    assignor mostly lists what a member keeps as it held it)."""
    if len(current) != len(target):
        return False
    if current == target:
        return True
    try:
        return set(current) == set(target)
    except TypeError:  # (a list: a pair as JSON gives it)
        return {(tp[0], tp[1]) for tp in current} == {(tp[0], tp[1]) for tp in target}


#: How many evenly spaced phase offsets `phases` runs.
PHASES = 8


def phases(current: Mapping[str, Sequence[tuple[str, int]]], target: Mapping[str, Sequence[tuple[str, int]]],
           members: Sequence[str], eager: Collection[str] = (), *, periods: Mapping[str, float] | None = None,
           first: str | None = None, left_before: float = 0.0, disjoint: bool = False) -> list[Reconciliation]:
    """`reconcile` at `PHASES` evenly spaced offsets (0 first): the same change as the members'
    heartbeats fall at different moments against the target's computation. Only eager members'
    revocations (how often they rejoin), waits and timings differ between them.

    Examples
    --------
    >>> runs = phases({"a": [("t", 0), ("t", 2)], "b": [("t", 1)]}, {"a": [("t", 0)], "b": [("t", 1), ("t", 2)]},
    ...               ["a", "b"], eager=["b"])
    >>> sorted({r["revoked"] for r in runs})  # b rejoins once, or twice when its heartbeat comes before a's
    [2, 3]
    """
    return [reconcile(current, target, members, eager, periods=periods, first=first, left_before=left_before,
                      offset=k / PHASES, disjoint=disjoint) for k in range(PHASES)]
