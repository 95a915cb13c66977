"""Rebalance what-if: replay events on a group under each strategy, side by side.

"What will move, and how long will consumers pause?" For each strategy the engine keeps the
group's state (each member's partitions and generation) and, per event, runs the rebalance the
way a live group does: every member's JoinGroup metadata is encoded as its client would send it
for that protocol and decoded by the leader (`assignor.protocol`), the plan's SyncGroup bytes
are decoded back into what each member now owns. Eager protocols revoke everything each
rebalance; cooperative-sticky runs rounds until nothing is withheld (KIP-429).

Events (`parse_event` reads the ``kind:arg:arg`` form used by the CLI):

    member_join:ID:TOPIC,TOPIC[:RACK]   member_leave:ID
    subscribe:ID:TOPIC                  unsubscribe:ID:TOPIC
    partitions_added:TOPIC:NEW_COUNT    topic_created:TOPIC:COUNT      topic_deleted:TOPIC
    rack_changed:ID:RACK                rolling_restart   (each member leaves and rejoins in turn)
"""

from __future__ import annotations

from collections import Counter
from itertools import chain
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from assignor import protocol, racks, validate
from assignor._layout import gc_paused
from assignor.errors import AssignorError
from assignor.model import UNKNOWN_GENERATION, Group, Member, TopicPartition
from assignor.strategies import assign

__all__ = ["ALL_STRATEGIES", "Event", "WhatIfError", "apply_event", "parse_event", "run"]

ALL_STRATEGIES = ("sticky", "cooperative-sticky", "range", "roundrobin")
_MAX_ROUNDS = 10


class WhatIfError(AssignorError):
    """An event that cannot apply to the group (unknown member, malformed arguments)."""


@dataclass(frozen=True)
class Event:
    kind: str
    args: tuple = ()

    def __str__(self) -> str:
        return ":".join([self.kind, *(",".join(a) if isinstance(a, tuple) else str(a) for a in self.args)])


_ARITY = {"member_join": (2, 3), "member_leave": (1, 1), "subscribe": (2, 2), "unsubscribe": (2, 2),
          "partitions_added": (2, 2), "topic_created": (2, 2), "topic_deleted": (1, 1),
          "rack_changed": (2, 2), "rolling_restart": (0, 0)}


def parse_event(text: str) -> Event:
    """Parse ``kind:arg:...`` (see the module docstring).

    Examples
    --------
    >>> parse_event("partitions_added:orders:24")
    Event(kind='partitions_added', args=('orders', 24))
    """
    kind, *args = text.split(":")
    if kind not in _ARITY:
        raise WhatIfError(f"unknown event {kind!r}; known: {', '.join(sorted(_ARITY))}")
    low, high = _ARITY[kind]
    if not low <= len(args) <= high:
        raise WhatIfError(f"{kind}: expected {low}{'' if low == high else f'-{high}'} arguments, got {len(args)}")
    if kind in ("partitions_added", "topic_created"):
        if not args[1].isdigit():
            raise WhatIfError(f"{kind}: partition count must be a non-negative integer, got {args[1]!r}")
        return Event(kind, (args[0], int(args[1])))
    if kind == "member_join":
        return Event(kind, (args[0], tuple(t for t in args[1].split(",") if t), *args[2:]))
    return Event(kind, tuple(args))


def apply_event(group: Group, event: Event) -> Group:
    """The group definition after `event` (topics, members, racks; owned partitions untouched)."""
    topics, members = dict(group.topics), list(group.members)
    ids = [m.id for m in members]

    def member_index(member_id: str) -> int:
        if member_id not in ids:
            raise WhatIfError(f"{event.kind}: no member {member_id!r}")
        return ids.index(member_id)

    kind, args = event.kind, event.args
    if kind == "member_join":
        if args[0] in ids:
            raise WhatIfError(f"member_join: member {args[0]!r} is already in the group")
        members.append(Member(args[0], args[1], rack=args[2] if len(args) > 2 else None))
    elif kind == "member_leave":
        members.pop(member_index(args[0]))
    elif kind in ("subscribe", "unsubscribe", "rack_changed"):
        i = member_index(args[0])
        m = members[i]
        if kind == "rack_changed":
            members[i] = replace(m, rack=args[1])
        else:
            chosen = [t for t in m.topics if t != args[1]] + ([args[1]] if kind == "subscribe" else [])
            members[i] = replace(m, topics=chosen)
    elif kind == "partitions_added":
        if args[0] not in topics:
            raise WhatIfError(f"partitions_added: no topic {args[0]!r}")
        if args[1] < topics[args[0]]:
            raise WhatIfError(f"partitions_added: {args[0]} has {topics[args[0]]} partitions; counts only grow")
        topics[args[0]] = args[1]
    elif kind == "topic_created":
        if args[0] in topics:
            raise WhatIfError(f"topic_created: topic {args[0]!r} exists")
        topics[args[0]] = args[1]
    elif kind == "topic_deleted":
        if topics.pop(args[0], None) is None:
            raise WhatIfError(f"topic_deleted: no topic {args[0]!r}")
    return Group(topics=topics, members=members, partition_racks=group.partition_racks)


@dataclass
class _State:
    """One strategy's view of the live group: what each member owns, at which generation."""

    owned: dict[str, list[TopicPartition]]
    generation: dict[str, int]
    group_generation: int = 0


def run(group: Group, events: Iterable[Event], strategies: Sequence[str] = ALL_STRATEGIES, *,
        include_plans: bool = False, check: bool = False) -> dict:
    """Replay `events` on `group` for each strategy.

    The first step ("current") rebalances the group as given, starting from its members' owned
    partitions and generations. Returns ``{"strategies": {name: {"steps": [...], "summary":
    {...}}}}``; each step has ``event``, ``rounds``, ``revoked`` (partitions members gave up
    during the rebalance: all of them under eager protocols), ``moved`` (taken from a member
    still in the group), ``reassigned`` (now owned by someone else, departed owners included),
    ``balance_score``, ``spread``, ``topic_spread`` (largest spread of one topic),
    ``rack_locality``, and with `include_plans` the final ``assignment``. With `check`, every
    round goes through the oracle and an invalid plan raises AssertionError.
    """
    events = list(events)
    for name in strategies:
        assign(name, Group(topics={}))  # unknown names fail before any work
    with gc_paused():  # many long-lived small objects, no reference cycles (see gc_paused)
        return _run(group, events, strategies, include_plans, check)


def _run(group: Group, events: list[Event], strategies: Sequence[str], include_plans: bool, check: bool) -> dict:
    result = {}
    for name in strategies:
        state = _State({m.id: list(m.owned) for m in group.members}, {m.id: m.generation for m in group.members},
                       max([m.generation for m in group.members], default=0) + 1)
        steps = [_rebalance(group, state, name, "current", include_plans, check)]
        definition = group
        for event in events:
            for label, step_group in _expand(definition, event):
                definition = step_group
                steps.append(_rebalance(definition, state, name, label, include_plans, check))
        result[name] = {"steps": steps, "summary": _summary(steps)}
    return {"strategies": result}


def _expand(definition: Group, event: Event):
    """The group definitions a single event goes through (several for a rolling restart)."""
    if event.kind != "rolling_restart":
        yield str(event), apply_event(definition, event)
        return
    for member in list(definition.members):
        definition = apply_event(definition, Event("member_leave", (member.id,)))
        yield f"restart {member.id}: leave", definition
        definition = Group(topics=definition.topics, partition_racks=definition.partition_racks,
                           members=[*definition.members, Member(member.id, member.topics, rack=member.rack)])
        yield f"restart {member.id}: rejoin", definition


def _join_metadata(members: Sequence[Member], state: _State, strategy: str) -> dict[str, bytes]:
    """Every member's JoinGroup metadata, as its client sends it for this protocol."""
    owned = [state.owned.get(m.id, []) for m in members]
    generations = [state.generation.get(m.id, UNKNOWN_GENERATION) for m in members]
    if strategy == "sticky":  # eager: revoked before joining; the state travels in the user data
        user_data = protocol.encode_sticky_user_data_many(owned, generations)
        subs = [protocol.Subscription(m.topics, data if g >= 0 or o else None, (), g, m.rack)
                for m, o, g, data in zip(members, owned, generations, user_data)]
    elif strategy == "cooperative-sticky":  # keeps consuming: owned partitions in the subscription
        subs = [protocol.Subscription(m.topics, protocol.encode_cooperative_user_data(g), o, g, m.rack)
                for m, o, g in zip(members, owned, generations)]
    else:
        subs = [protocol.Subscription(m.topics, None, (), g, m.rack) for m, g in zip(members, generations)]
    return dict(zip((m.id for m in members), protocol.encode_subscriptions(subs, version=3)))


def _rebalance(definition: Group, state: _State, strategy: str, label: str, include_plans: bool,
               check: bool) -> dict:
    present = {m.id for m in definition.members}
    before = {tp: member for member, tps in state.owned.items() for tp in tps}
    for gone in set(state.owned) - present:
        del state.owned[gone], state.generation[gone]
    rounds = revoked = 0
    while True:
        rounds += 1
        members = protocol.members_from_metadata(_join_metadata(definition.members, state, strategy), strategy)
        group = Group(topics=definition.topics, members=members, partition_racks=definition.partition_racks)
        plan = assign(strategy, group)
        if check:
            report = validate.report(group, plan)
            assert report["valid"], report["errors"]
        generation = state.group_generation
        state.group_generation += 1
        sync = protocol.assignments_for(plan, strategy, generation)
        new_owned = {m: list(a.partitions) for m, a in zip(sync, protocol.decode_assignments(list(sync.values())))}
        if strategy == "cooperative-sticky":
            revoked += sum(len(set(state.owned.get(m, [])) - set(tps)) for m, tps in new_owned.items())
        else:
            revoked += sum(len(state.owned.get(m, [])) for m in new_owned)
        state.owned = new_owned
        state.generation = dict.fromkeys(new_owned, generation)
        withheld = strategy == "cooperative-sticky" and _withheld(group, new_owned)
        if not withheld or rounds >= _MAX_ROUNDS:
            break
    after = {tp: member for member, tps in state.owned.items() for tp in tps}
    changed = [(tp, member) for tp, member in before.items() if after.get(tp, member) != member]
    step = {"event": label, "rounds": rounds, "revoked": revoked,
            "moved": sum(1 for _, member in changed if member in present), "reassigned": len(changed),
            **_measure(definition, state.owned)}
    if include_plans:
        step["assignment"] = {m: [[tp.topic, tp.partition] for tp in tps] for m, tps in state.owned.items()}
    return step


def _withheld(group: Group, owned: dict) -> bool:
    subscribed = {t for m in group.members for t in m.topics if t in group.topics}
    return sum(len(v) for v in owned.values()) < sum(group.topics[t] for t in subscribed)


def _measure(definition: Group, owned: dict[str, list[TopicPartition]]) -> dict:
    loads = [len(owned.get(m.id, [])) for m in definition.members] or [0]
    # Per topic: the most and fewest partitions a subscriber holds (0 when some hold none).
    held = Counter((tp.topic, member) for member, tps in owned.items() for tp in tps)
    subscribers = Counter(chain.from_iterable(set(m.topics) for m in definition.members))
    most: dict[str, int] = {}
    fewest: dict[str, int] = {}
    holders = Counter(topic for topic, _ in held)
    for (topic, _), count in held.items():
        most[topic] = max(most.get(topic, 0), count)
        fewest[topic] = min(fewest.get(topic, count), count)
    topic_spread = max([most[t] - (fewest[t] if holders[t] == subscribers[t] else 0) for t in most] or [0])
    locality = None
    if definition.partition_racks:
        placed = [(m.rack, tp) for m in definition.members for tp in owned.get(m.id, [])
                  if racks.replica_racks(definition, tp)]
        if placed:
            locality = round(sum(racks.is_local(definition, rack, tp) for rack, tp in placed) / len(placed), 4)
    return {"balance_score": validate.balance_score(loads), "spread": max(loads) - min(loads),
            "topic_spread": topic_spread, "rack_locality": locality}


def _summary(steps: list[dict]) -> dict:
    changes = steps[1:] or steps
    return {"steps": len(changes), "rounds": sum(s["rounds"] for s in changes),
            "revoked": sum(s["revoked"] for s in changes), "moved": sum(s["moved"] for s in changes),
            "reassigned": sum(s["reassigned"] for s in changes),
            "final_balance_score": steps[-1]["balance_score"], "final_spread": steps[-1]["spread"],
            "max_spread": max(s["spread"] for s in changes), "rack_locality": steps[-1]["rack_locality"]}
