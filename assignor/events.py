"""What-if events, each kind written once: how its text reads, what it does to the group, what it
does to the sizes a run's limits count, and how it is shown (the CLI's help, the page's list and
the README's table are held to `KINDS` by tests).

An event is text of the form ``kind:arg:arg`` (`parse_event`), applied to a group's definition
(topics, members, racks; owned partitions are the engine's: `assignor.whatif`) by `apply_event`.
A new kind is one `EventKind` in `KINDS`: its reader, its change to the group and its change to
the counted sizes (`assignor.limits.Sizes`, which `Limits.check_events` walks before anything
is built).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from assignor.errors import WhatIfError
from assignor.limits import Sizes
from assignor.model import INT32_MAX, Group, Member
from assignor.topic_regex import matches

__all__ = ["KINDS", "Event", "EventKind", "apply_event", "parse_event"]


@dataclass(frozen=True)
class Event:
    """One event: its kind's name and its arguments as read (`parse_event`)."""

    kind: str
    args: tuple[Any, ...] = ()

    def __str__(self) -> str:
        if KINDS[self.kind].batch:
            return BATCH.join(map(str, self.args))
        return ":".join([self.kind, *(",".join(a) if isinstance(a, tuple) else str(a) for a in self.args)])

    def rebalances(self, members: int) -> int:
        """The rebalances it makes in a group of `members` members (`EventKind.rebalances`; a
        batch, at most one per change)."""
        return len(self.args) if KINDS[self.kind].batch else KINDS[self.kind].rebalances(members)

    def resize(self, sizes: Sizes) -> None:
        """Its change to the sizes a run's limits count (`EventKind.sized`)."""
        KINDS[self.kind].sized(sizes, self.args)


#: (topics, members) -> None: the change an event makes to a group's definition, in place.
Change = Callable[[dict[str, int], list[Member], tuple[Any, ...]], None]


@dataclass(frozen=True)
class EventKind:
    """One kind of event.

    `form`: how it is written (the CLI's help, the page, the README); `meaning`: one line on
    what it does. `least`..`most` arguments, read by `read` (from the text's arguments, already
    counted). `change` applies it to a definition's topics and members (raising `WhatIfError`
    where it cannot apply); `sized` applies it to `Sizes` (never raising: what cannot apply is
    left to `change`, which names it). `about_member`: its first argument names a member of the
    group (a member renamed by a restart is followed). `every_member`: it restarts each member in
    turn, a leave and a rejoin each (two rebalances per member, where other kinds make one);
    `restarts_member`: it restarts the member its first argument names (a leave and a rejoin).
    `heartbeat`: a member's own heartbeat carries the change to the consumer protocol's
    coordinator, and that heartbeat computes the new target at once (a leave computes nothing, a
    topic's change waits for the next heartbeat: `assignor.whatif.steps`). `batch`: its
    arguments are events that reach the coordinator together (`BATCH`). `topics_at`: the
    argument that names topics (comma-separated where several), if any: none holds `BATCH`."""

    name: str
    form: str
    meaning: str
    least: int
    most: int
    read: Callable[[list[str]], tuple[Any, ...]]
    change: Change
    sized: Callable[[Sizes, tuple[Any, ...]], None]
    about_member: bool = False
    every_member: bool = False
    restarts_member: bool = False
    heartbeat: bool = False
    batch: bool = False
    topics_at: int | None = None

    def rebalances(self, members: int) -> int:
        """The rebalances this event makes in a group of `members` members."""
        return 2 * members if self.every_member else 2 if self.restarts_member else 1


def _as_is(args: list[str]) -> tuple[Any, ...]:
    return tuple(args)


def _count(kind: str) -> Callable[[list[str]], tuple[Any, ...]]:
    def read(args: list[str]) -> tuple[Any, ...]:
        # ASCII digits only ("²".isdigit() is true), and at most INT32_MAX: partition ids are
        # INT32 on the wire. The size the count asks for is `Limits.check_events`'s to judge.
        count = args[1]
        if not (count.isascii() and count.isdigit()) or len(count) > 10 or int(count) > INT32_MAX:
            raise WhatIfError(f"{kind}: partition count must be an integer from 0 to {INT32_MAX}, got {count!r}")
        return args[0], int(count)
    return read


def _index(kind: str, members: list[Member], member_id: str) -> int:
    for i, member in enumerate(members):
        if member.id == member_id:
            return i
    raise WhatIfError(f"{kind}: no member {member_id!r}")


def _join(topics: dict[str, int], members: list[Member], args: tuple[Any, ...]) -> None:
    """A member joins: its id, topics, then its rack and its static instance id where given
    (each empty: none)."""
    member_id, subscribed, rack, instance = (*args, "", "")[:4]
    if any(m.id == member_id for m in members):
        raise WhatIfError(f"member_join: member {member_id!r} is already in the group")
    holder = next((m.id for m in members if instance and m.group_instance_id == instance), None)
    if holder is not None:  # (the coordinator would fence the member that holds it: KIP-345)
        raise WhatIfError(f"member_join: instance id {instance!r} is held by member {holder!r}; a static member that "
                          f"comes back is rollback:{holder} or rolling_restart")
    members.append(Member(member_id, subscribed, rack=rack or None, group_instance_id=instance or None))


def _leave(topics: dict[str, int], members: list[Member], args: tuple[Any, ...]) -> None:
    members.pop(_index("member_leave", members, args[0]))


def _subscription(kind: str) -> Change:
    def change(topics: dict[str, int], members: list[Member], args: tuple[Any, ...]) -> None:
        i = _index(kind, members, args[0])
        kept = [t for t in members[i].topics if t != args[1]]
        members[i] = replace(members[i], topics=[*kept, args[1]] if kind == "subscribe" else kept)
    return change


def _member_restarts(topics: dict[str, int], members: list[Member], args: tuple[Any, ...]) -> None:
    """The member leaves and rejoins owning nothing: the definition is as it was (the steps are
    `assignor.whatif.steps`'s); only that the member is there is checked."""
    _index("rollback", members, args[0])


def _rack(topics: dict[str, int], members: list[Member], args: tuple[Any, ...]) -> None:
    i = _index("rack_changed", members, args[0])
    members[i] = replace(members[i], rack=args[1])


def _grow(topics: dict[str, int], members: list[Member], args: tuple[Any, ...]) -> None:
    if args[0] not in topics:
        raise WhatIfError(f"partitions_added: no topic {args[0]!r}")
    if args[1] < topics[args[0]]:
        raise WhatIfError(f"partitions_added: {args[0]} has {topics[args[0]]} partitions; counts only grow")
    topics[args[0]] = args[1]


def _create(topics: dict[str, int], members: list[Member], args: tuple[Any, ...]) -> None:
    """The topic, and every regex member whose regex takes it subscribed to it, as the broker
    resolves regexes again when its metadata has new topics (`assignor.topic_regex`;
    ``GroupMetadataManager.maybeUpdateRegularExpressions``: at a heartbeat, in the background, no
    sooner than 10 s after its last refresh, which the what-if's steps do not wait for)."""
    if args[0] in topics:
        raise WhatIfError(f"topic_created: topic {args[0]!r} exists")
    topics[args[0]] = args[1]
    for i, member in enumerate(members):
        if member.topic_regex is not None and args[0] not in member.topics and matches(member.topic_regex, args[0]):
            members[i] = replace(member, topics=[*member.topics, args[0]])


def _delete(topics: dict[str, int], members: list[Member], args: tuple[Any, ...]) -> None:
    if topics.pop(args[0], None) is None:
        raise WhatIfError(f"topic_deleted: no topic {args[0]!r}")


def _nothing(*_: Any) -> None:
    """No change to the definition (a rolling restart's steps are the engine's) or the sizes."""


def _sized_join(sizes: Sizes, args: tuple[Any, ...]) -> None:
    sizes.members.add(args[0])


def _sized_leave(sizes: Sizes, args: tuple[Any, ...]) -> None:
    sizes.members.discard(args[0])


def _sized_count(sizes: Sizes, args: tuple[Any, ...]) -> None:
    sizes.count(args[0], args[1])


def _sized_create(sizes: Sizes, args: tuple[Any, ...]) -> None:
    if args[0] not in sizes.topics:  # (an existing one: `change` refuses it)
        sizes.count(args[0], args[1])


def _sized_delete(sizes: Sizes, args: tuple[Any, ...]) -> None:
    sizes.drop(args[0])


def _batch(topics: dict[str, int], members: list[Member], args: tuple[Any, ...]) -> None:
    for event in args:
        KINDS[event.kind].change(topics, members, event.args)


def _sized_batch(sizes: Sizes, args: tuple[Any, ...]) -> None:
    for event in args:
        event.resize(sizes)


#: What joins the changes of a batch in an event's text, read as such only where the text after it
#: starts an event (`_BATCH_AT`): no topic name can hold it (Kafka's ``[a-zA-Z0-9._-]``), but a
#: member id can (librdkafka writes the ids of its consumer-protocol members, KIP-848, in base64,
#: ``+`` and ``/`` among its characters: more than one id in four holds a ``+``), as can a rack.
BATCH = "+"


def _register(*kinds: EventKind) -> dict[str, EventKind]:
    return {kind.name: kind for kind in kinds}


#: Every kind of event, in the order the help, the page and the README list them.
KINDS = _register(
    EventKind("member_join", "member_join:ID:TOPICS[:RACK[:INSTANCE_ID]]",
              "a member joins, subscribed to TOPICS (comma-separated), in RACK if given, static under "
              "INSTANCE_ID if given (KIP-345; RACK empty: none)", 2, 4,
              lambda args: (args[0], tuple(t for t in args[1].split(",") if t), *args[2:]), _join, _sized_join,
              heartbeat=True, topics_at=1),
    EventKind("member_leave", "member_leave:ID", "a member leaves", 1, 1, _as_is, _leave, _sized_leave,
              about_member=True),
    EventKind("subscribe", "subscribe:ID:TOPIC", "a member adds a topic to its subscription", 2, 2, _as_is,
              _subscription("subscribe"), _nothing, about_member=True, heartbeat=True, topics_at=1),
    EventKind("unsubscribe", "unsubscribe:ID:TOPIC", "a member drops a topic from its subscription", 2, 2, _as_is,
              _subscription("unsubscribe"), _nothing, about_member=True, heartbeat=True, topics_at=1),
    EventKind("partitions_added", "partitions_added:TOPIC:NEW_TOTAL",
              "a topic grows to NEW_TOTAL partitions (as `kafka-topics --alter --partitions` takes it, "
              "not the number added)", 2, 2, _count("partitions_added"), _grow, _sized_count, topics_at=0),
    EventKind("topic_created", "topic_created:TOPIC:COUNT",
              "a topic of COUNT partitions is created (and read by each member whose regex subscription takes it)",
              2, 2, _count("topic_created"), _create, _sized_create, topics_at=0),
    EventKind("topic_deleted", "topic_deleted:TOPIC", "a topic is deleted", 1, 1, _as_is, _delete, _sized_delete,
              topics_at=0),
    EventKind("rack_changed", "rack_changed:ID:RACK", "a member moves to another rack", 2, 2, _as_is, _rack,
              _nothing, about_member=True, heartbeat=True),
    EventKind("rolling_restart", "rolling_restart",
              "each member in turn leaves, then rejoins owning nothing (a static member is back within its "
              "session: no rebalance; one back before its leave rebalances: one rebalance, see "
              "`--restart-seconds`)", 0, 0,
              _as_is, _nothing, _nothing, every_member=True),
    EventKind("rollback", "rollback:ID",
              "a member restarts under the classic protocol: in a migration rehearsal it rejoins as a classic "
              "member, and the last consumer-protocol member's rollback converts the group back to classic; in a "
              "classic run, a restart of that member", 1, 1, _as_is, _member_restarts, _nothing, about_member=True,
              restarts_member=True),
    EventKind("together", "EVENT+EVENT[+...]",
              "changes that reach the coordinator together, within one assignment interval (joins sent at "
              "once, say): one classic rebalance; under the consumer protocol the first change a member's "
              "heartbeat carries computes a target at once and the rest wait for the next one "
              "(`--assignment-interval-ms`; with 0, each such change computes its own)", 2, 2, _as_is, _batch,
              _sized_batch, batch=True),
)


#: A `BATCH` that joins two changes: one the name of a kind follows, then ``:``, another `BATCH`
#: or the end. A ``+`` inside a base64 id (which has no ``:``) is read so only when the id's last
#: 8 or more characters spell a kind's name after it. (Any word and ``:`` would name a kind that
#: is not one sooner, but would cut a base64 id whose end after a ``+`` is lower case, followed
#: by the ``:`` of a topic or a rack.)
_BATCH_AT = re.compile(re.escape(BATCH) + "(?=(?:" + "|".join(map(re.escape, KINDS)) + ")(?::|"
                       + re.escape(BATCH) + "|$))")


def parse_event(text: str) -> Event:
    """Parse ``kind:arg:...``, or changes that come together joined by ``+`` (`BATCH`, where
    the next change starts: a member id or a rack may hold a ``+`` too). The id of a member an
    event names (`EventKind.about_member`) may hold ``:``: the arguments after it are read from
    the right.

    Examples
    --------
    >>> parse_event("partitions_added:orders:24")
    Event(kind='partitions_added', args=('orders', 24))
    >>> str(parse_event("member_join:c3:orders+member_join:c4:orders"))  # together (`BATCH`)
    'member_join:c3:orders+member_join:c4:orders'
    >>> parse_event("member_leave:wh5bX//KSa+bT4n0Py0Xkg")  # (a librdkafka member's id)
    Event(kind='member_leave', args=('wh5bX//KSa+bT4n0Py0Xkg',))
    >>> parse_event("subscribe:consumer-app:orders-1-5f0c:payments")  # (a Java member of group app:orders)
    Event(kind='subscribe', args=('consumer-app:orders-1-5f0c', 'payments'))
    """
    parts = _BATCH_AT.split(text)
    if len(parts) > 1:
        changes = tuple(parse_event(part) for part in parts)
        for change in changes:
            if any(getattr(KINDS[change.kind], flag) for flag in ("every_member", "restarts_member", "batch")):
                raise WhatIfError(f"together: {change.kind} restarts members, one rebalance after another; it "
                                  f"cannot come with other changes in {text!r}")
        return Event("together", changes)
    name, colon, rest = text.partition(":")
    kind = KINDS.get(name)
    if kind is None:
        raise WhatIfError(f"unknown event {name!r}; known: {', '.join(sorted(KINDS))}")
    # A member's id may hold ':' (a Java member's is its client id, "consumer-GROUP-N" by default,
    # then a UUID: a group id with ':' puts one in each), and what follows it (a topic, a rack) is
    # read from the right.
    args = [] if not colon else rest.rsplit(":", kind.most - 1) if kind.about_member else rest.split(":")
    if not kind.least <= len(args) <= kind.most:
        span = kind.least if kind.least == kind.most else f"{kind.least}-{kind.most}"
        raise WhatIfError(f"{name}: expected {span} arguments, got {len(args)}")
    if kind.topics_at is not None and BATCH in args[kind.topics_at]:  # (a '+' with no change after it)
        raise WhatIfError(f"{name}: {args[kind.topics_at]!r} is not a topic (no topic name holds {BATCH!r}, which "
                          "joins changes where an event follows it)")
    return Event(name, kind.read(args))


def apply_event(group: Group, event: Event) -> Group:
    """The group definition after `event` (topics, members, racks; owned partitions untouched)."""
    topics, members = dict(group.topics), list(group.members)
    KINDS[event.kind].change(topics, members, event.args)
    return Group(topics=topics, members=members, partition_racks=group.partition_racks, topic_ids=group.topic_ids)
