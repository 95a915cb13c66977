"""The group definitions an event takes a group through: one for most events, a leave and a
rejoin per member for a rolling restart (`assignor.events.EventKind.every_member`), members
renamed as they rejoin under the consumer protocol during a migration.

A static member (``group_instance_id``, KIP-345) that restarts is back within its session
timeout: the classic coordinator hands it its assignment again without a rebalance, and the
consumer protocol's replaces the old member with the new one without bumping the epoch or
computing a target (Apache Kafka 4.3: "to replace the existing member"), also when the new one
comes back under the consumer protocol during a migration; its restart is one step that
rebalances nothing."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from operator import attrgetter
from typing import NamedTuple

from assignor.events import KINDS, Event, apply_event
from assignor.model import Group, Member
from assignor.topic_ids import TopicId


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


def _expand(definition: Group, event: Event) -> Iterator[Definition]:
    """The group definitions a single event goes through (several for a rolling restart)."""
    if not KINDS[event.kind].every_member:
        yield Definition(str(event), apply_event(definition, event))
        return
    yield from _restarts(definition)


def _restarts(definition: Group, renamed: dict[str, str] | None = None) -> Iterator[Definition]:
    """Each member in turn leaves, then rejoins with nothing: under its own id, or with
    `renamed` (the migration's rolling upgrade) as a new member under `consumer_member_id`,
    recorded there. A static member is back within its session (module docstring): one step, no
    rebalance, under its own id (its instance is what the coordinator knows it by)."""
    for member in list(definition.members):
        if member.group_instance_id is not None:
            label = f"restart {member.id}: static, back within its session"
            if renamed is not None:
                label += " under the consumer protocol"
            yield Definition(label, definition, rebalances=False, joins=True, member=member.id)
            continue
        members = definition.members  # `member_leave`, known to apply (ids are distinct)
        i = list(map(attrgetter("id"), members)).index(member.id)
        definition = Group.assembled(definition.topics, [*members[:i], *members[i + 1 :]],
                                     definition.partition_racks, definition.topic_ids)
        yield Definition(f"restart {member.id}: leave", definition, member=member.id)
        new_id, label = member.id, f"restart {member.id}: rejoin"
        if renamed is not None:
            new_id = consumer_member_id(member.id)
            while any(m.id == new_id for m in definition.members):  # an id the group already uses
                new_id = consumer_member_id(new_id)
            renamed[member.id], label = new_id, f"{label} as {new_id}"
        rejoined = Member(new_id, member.topics, rack=member.rack, group_instance_id=member.group_instance_id)
        definition = Group.assembled(definition.topics, [*definition.members, rejoined], definition.partition_racks,
                                     definition.topic_ids)
        yield Definition(label, definition, joins=True, member=member.id)


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
