"""The group definitions an event takes a group through: one for most events, a leave and a
rejoin per member for a rolling restart (`assignor.events.EventKind.every_member`), members
renamed as they rejoin under the consumer protocol during a migration.

A static member (``group_instance_id``, KIP-345) that restarts is back within its session
timeout: the classic coordinator hands it its assignment again without a rebalance, and the
consumer protocol's replaces the old member with the new one without bumping the epoch or
computing a target (Apache Kafka 4.3: "to replace the existing member"), also when the new one
comes back under the consumer protocol during a migration; its restart is one step that
rebalances nothing. A dynamic member back before the coordinator acts on its leave
(`assignor.whatif.timing`) is one step too: the rebalance in which it replaces itself."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from operator import attrgetter
from typing import NamedTuple

from assignor.events import BATCH, KINDS, Event, apply_event
from assignor.model import Group, Member
from assignor.topic_ids import TopicId
from assignor.whatif.timing import DEFAULT_TIMING, Timing


class Definition(NamedTuple):
    """One step's group definition: its label, the group, and whether the group rebalances (a
    static member back within its session does not)."""

    label: str
    group: Group
    rebalances: bool = True
    #: A member (re)joins in this definition: under the consumer protocol, in a migration.
    joins: bool = False
    #: The member a restart's step is about ("" for other events).
    member: str = ""
    #: `member` left and is back, a new consumer (under its old id or the new one), before its
    #: leave rebalanced: what it held is free in this step (`_State.forget`).
    fresh: bool = False


def _expand(definition: Group, event: Event, timing: Timing = DEFAULT_TIMING, classic: bool = True,
            at_rest: bool = True) -> Iterator[Definition]:
    """The group definitions a single event goes through (several for a rolling restart), for a
    group of the classic protocol or (`classic` false) of the consumer protocol. `at_rest`: the
    group's last rebalance was long ago (the first event of a run); otherwise the event follows
    the step before as soon as the group has that step's assignment."""
    kind = KINDS[event.kind]
    if kind.batch:
        yield from _batched(definition, event.args, timing, classic)
    elif kind.restarts_member:
        apply_event(definition, event)  # (the member must be there)
        yield from _restarts(definition, timing=timing, classic=classic, at_rest=at_rest, only=event.args[0])
    elif kind.every_member:
        yield from _restarts(definition, timing=timing, classic=classic, at_rest=at_rest)
    else:
        yield Definition(str(event), apply_event(definition, event))


def _batched(definition: Group, changes: tuple[Event, ...], timing: Timing, classic: bool) -> Iterator[Definition]:
    """Changes that reach the coordinator together. Classic: one rebalance (members that join
    or leave while it prepares are all in its generation). Consumer protocol: a change a member's
    heartbeat carries (`EventKind.heartbeat`) computes a target at once, with the changes before
    it (a leave computes nothing, ``consumerGroupFenceMembers``; a topic's change waits for a
    heartbeat); the changes after it wait for the next computation, one target for them all,
    as ``canComputeNextTargetAssignment`` holds it back for ``group.consumer.assignment.interval.ms``
    (with 0, each heartbeat's change computes its own). Apache Kafka 4.3.1: three joins sent
    together gave two targets; nine leaves, one."""
    parts: list[list[Event]] = [[]]
    for change in changes:
        parts[-1].append(change)
        if not classic and KINDS[change.kind].heartbeat and (len(parts) == 1 or timing.assignment_interval_ms == 0):
            parts.append([])
    parts = [part for part in parts if part]
    for n, part in enumerate(parts):
        for change in part:
            definition = apply_event(definition, change)
        label = BATCH.join(map(str, part))
        if len(parts) > 1:
            at_once = KINDS[part[-1].kind].heartbeat and (n == 0 or timing.assignment_interval_ms == 0)
            label += ": a target at once" if at_once else ": one target at the next computation"
        yield Definition(label, definition)


def _restarts(definition: Group, renamed: dict[str, str] | None = None, timing: Timing = DEFAULT_TIMING,
              classic: bool = True, at_rest: bool = True, only: str | None = None) -> Iterator[Definition]:
    """Each member in turn leaves, then rejoins with nothing: under its own id, or with
    `renamed` (the migration's rolling upgrade: the group is classic until the first member is
    back under the consumer protocol) as a new member under `consumer_member_id`, recorded there.
    A static member back within its session (module docstring; `Timing.within_session`) is one
    step, no rebalance, under its own id (its instance is what the coordinator knows it by); one
    away longer is removed when its session expires, and its return is a join. A member back
    before the coordinator acts on its leave (`Timing.back_in_time`) leaves and rejoins in one
    step: the new member takes the old one's place in one rebalance. `only`: that member alone."""
    upgrade = renamed is not None
    back = 0  # members back under the consumer protocol (the upgrade)
    for member in [m for m in definition.members if only is None or m.id == only]:
        if member.group_instance_id is not None and timing.within_session():
            label = f"restart {member.id}: static, back within its session"
            if upgrade:
                label += " under the consumer protocol"
                back += 1
            yield Definition(label, definition, rebalances=False, joins=True, member=member.id)
            continue
        members = definition.members  # `member_leave`, known to apply (ids are distinct)
        i = list(map(attrgetter("id"), members)).index(member.id)
        left = Group.assembled(definition.topics, [*members[:i], *members[i + 1 :]], definition.partition_racks,
                               definition.topic_ids)
        others = len(left.members)
        # (a static member away longer than its session is not back before anything)
        in_time = member.group_instance_id is None and timing.back_in_time(
            classic=not back if upgrade else classic, others=others, consumer_others=back if upgrade else others,
            at_rest=at_rest)
        at_rest = False
        new_id = member.id
        if renamed is not None:
            new_id = consumer_member_id(member.id)
            while any(m.id == new_id for m in left.members):  # an id the group already uses
                new_id = consumer_member_id(new_id)
            renamed[member.id] = new_id
            back += 1
        as_new = f" as {new_id}" if new_id != member.id else ""
        rejoined = Member(new_id, member.topics, rack=member.rack, group_instance_id=member.group_instance_id,
                          topic_regex=member.topic_regex)
        returned = Group.assembled(left.topics, [*left.members, rejoined], left.partition_racks, left.topic_ids)
        if in_time:
            yield Definition(f"restart {member.id}: back{as_new} after {timing.restart_seconds:g} s, before the "
                             f"rebalance its leave starts", returned, joins=True, member=member.id, fresh=True)
        else:
            expired = ": static, away longer than its session" if member.group_instance_id is not None else ""
            yield Definition(f"restart {member.id}{expired}: leave", left, member=member.id)
            yield Definition(f"restart {member.id}: rejoin{as_new}", returned, joins=True, member=member.id)
        definition = returned


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
    if KINDS[event.kind].batch:
        return Event(event.kind, tuple(_renaming(change, renamed) for change in event.args))
    if KINDS[event.kind].about_member and event.args[0] in renamed:
        return Event(event.kind, (renamed[event.args[0]], *event.args[1:]))
    return event
