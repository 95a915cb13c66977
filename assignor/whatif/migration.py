"""The migration rehearsal: classic -> KIP-848's consumer protocol (`migrate`), a rolling upgrade
that converts the group online, then later events under both protocols side by side."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypedDict, cast

import numpy as np

from assignor._arrays import gc_paused
from assignor.errors import WhatIfError
from assignor.events import KINDS, Event
from assignor.leader import LeaderCache
from assignor.limits import DEFAULT_LIMITS, Limits
from assignor.model import Group, Member
from assignor.ordering import hashmap_order
from assignor.strategies import DEFAULT_STRATEGY, REGISTRY, kafka_strategy, strategy_named
from assignor.strategies.kip848.member_map import MemberMap
from assignor.whatif.classic import _new_leader
from assignor.whatif.figures import Step, _figures_of
from assignor.whatif.refusals import DEFAULT_CONVERSION, Conversion, Refusal
from assignor.whatif.replay import ALL_STRATEGIES, _quiet, _run, _step, _unchanged
from assignor.whatif.state import _claims_of, _Numbering, _State
from assignor.whatif.steps import _expand, _renaming, _restarts
from assignor.whatif.timing import DEFAULT_TIMING, Timing


class Migration(TypedDict):
    """`migrate`'s answer.

    ``today``: the group's first step under its classic strategy. ``upgrade``: the rolling
    upgrade, each member restarting in turn (``restarts``), with its ``steps`` and totals
    (``moved``, ``revoked`` with ``revoked_range``, ``max_unowned`` in heartbeat intervals and
    ``max_unowned_seconds``, `assignor.whatif.consumer`): the first member leaves a group that is
    still classic (a classic rebalance), and its rejoin with the consumer protocol converts the
    group online; the group runs mixed until the last restart (classic members get the broker's
    assignment through JoinGroup/SyncGroup meanwhile, told to rejoin at every change; under an
    eager strategy they revoke all they hold at each rejoin, `assignor.reconcile`). A static
    member comes back as the same instance instead: it replaces its predecessor with what it
    held, and nothing rebalances (`whatif.steps`).
    ``conversion``: that converting step (also among ``upgrade``'s steps): each member's current
    partitions become its target assignment, and the broker's assignor computes the next target
    from them with the rejoining member in the group (``GroupMetadataManager``'s
    classic-to-consumer conversion); for a group without members, the conversion alone.
    ``refused``: None, or where Kafka would refuse the conversion, why, and what to change
    (`assignor.whatif.refusals`); the upgrade then ends at that member's return (``conversion`` is
    that step, the group staying classic) and ``events`` is empty.
    ``events``: each later event under the consumer protocol beside the same event under every
    classic strategy asked (``saved``: positive figures are what the consumer protocol saves;
    ``optimum``: our default strategy's figures on the same event), and ``vs_optimum``: the
    broker's balance against our ``sticky`` on the same events.
    """

    classic: str
    target: str
    today: Step
    conversion: Step
    upgrade: dict[str, Any]
    refused: Refusal | None
    events: list[dict[str, Any]]
    vs_optimum: dict[str, Any]


#: The classic strategies a migration rehearsal compares against when none is named: the
#: cooperative ones (ours first, then Java's), the protocol most groups run before KIP-848.
MIGRATE_FROM: tuple[str, ...] = tuple(s.name for s in REGISTRY.values()
                                      if s.protocol.classic and s.protocol.cooperative and s.peer is None)


def rehearsed_from(described: Mapping[str, Any], named: Sequence[str] | None = None) -> tuple[str, ...]:
    """The classic strategies a rehearsal of the group JSON `described` compares, the one it runs
    today first: `named` when given; else, for a snapshot of a classic group (``protocol:
    "classic"``), the strategy Kafka's clients run under its ``assignor`` (`kafka_strategy`)
    before `MIGRATE_FROM`; else `MIGRATE_FROM`.

    Raises
    ------
    WhatIfError
        For a snapshot of a group on the consumer protocol already: it has no move to rehearse
        (or, mid-upgrade, its classic members still to move: a rehearsal starts from a classic
        group).
    """
    if described.get("protocol") == "consumer":
        group = f"group {described['group_id']!r}" if isinstance(described.get("group_id"), str) else "the group"
        assignor = f" (assignor {described['assignor']!r})" if described.get("assignor") is not None else ""
        members = described.get("members")
        members = members if isinstance(members, list) else []
        classic = sum(1 for m in members if isinstance(m, Mapping) and m.get("member_type") == "classic")
        if classic:
            raise WhatIfError(f"{group} is on KIP-848's consumer protocol already{assignor}, {classic} of its "
                              f"{len(members)} members still classic (an upgrade under way): a rehearsal starts from "
                              "a classic group, before its first member moves; replay events without migrating")
        raise WhatIfError(f"{group} is on KIP-848's consumer protocol already{assignor}: nothing to rehearse; "
                          "replay events without migrating")
    if named:
        return tuple(named)
    today = strategy_today(described)
    return MIGRATE_FROM if today is None else tuple(dict.fromkeys([today, *MIGRATE_FROM]))


def strategy_today(described: Mapping[str, Any]) -> str | None:
    """The strategy the classic group a snapshot describes runs: its ``assignor`` as Kafka's
    clients run it (`kafka_strategy`); None for any other group JSON, or an assignor no strategy
    of ours plans."""
    found = kafka_strategy(described.get("assignor")) if described.get("protocol") == "classic" else None
    return None if found is None else found.name


def compared_for(described: Mapping[str, Any]) -> tuple[str, ...]:
    """The strategies a what-if on the group JSON `described` compares when none is named:
    `ALL_STRATEGIES`, and for a snapshot of a classic group (``protocol: "classic"``) the other
    clients' strategies of the protocol it runs (`Strategy.peer`: on ``cooperative-sticky``,
    ``librdkafka-cooperative-sticky``; on ``range``, ``librdkafka-range``): its members may be
    that client's, and the snapshot does not say which client each member runs.

    Examples
    --------
    >>> compared_for({"protocol": "classic", "assignor": "cooperative-sticky"})[-1]
    'librdkafka-cooperative-sticky'
    >>> compared_for({}) == ALL_STRATEGIES
    True
    """
    if described.get("protocol") != "classic":
        return ALL_STRATEGIES
    return ALL_STRATEGIES + tuple(s.name for s in REGISTRY.values()
                                  if s.peer is not None and s.protocol.name == described.get("assignor"))


def check_migration(target: str, classic: Sequence[str]) -> None:
    """Raise WhatIfError unless `target` is a consumer-protocol strategy and every one of
    `classic` (at least one) a classic one."""
    if strategy_named(target).protocol.classic:
        raise WhatIfError(f"--migrate: {target!r} is not a strategy of KIP-848's consumer protocol; "
                          f"known: {', '.join(s.name for s in REGISTRY.values() if not s.protocol.classic)}")
    if not classic:
        raise WhatIfError("migrate: name the classic strategy the group runs today")
    for name in classic:
        if not strategy_named(name).protocol.classic:
            raise WhatIfError(f"migrate: {name!r} is not a classic strategy")


def migrate(group: Group, events: Iterable[Event], target: str, classic: Sequence[str] = MIGRATE_FROM, *,
            include_plans: bool = False, check: bool = False, limits: Limits = DEFAULT_LIMITS,
            timing: Timing = DEFAULT_TIMING, conversion_rules: Conversion = DEFAULT_CONVERSION) -> Migration:
    """Rehearse moving `group` from its classic strategy (``classic[0]``, the one it runs today)
    to KIP-848's consumer protocol with the broker's assignor `target`, then replay `events`.
    `timing`: how long each restarted member is away, and Kafka's settings (as `run`'s): a member
    back before the coordinator acts on its leave leaves and returns in one step.
    `conversion_rules`: the brokers' settings and the leader's habit that decide whether Kafka
    converts the group at all (`assignor.whatif.refusals`; by default nothing refuses, unless
    the leader of ``classic[0]`` sends members their own user data back and the classic group
    rebalanced before the conversion: `Strategy.assignment_user_data`).

    Raises
    ------
    WhatIfError
        When `target` is not a consumer-protocol strategy or a ``classic`` one is not classic.
    """
    events = list(events)
    check_migration(target, classic)
    limits.check_group(group)
    optimum = DEFAULT_STRATEGY.name  # ours: the optimum the broker's balance is measured against
    compared = list(dict.fromkeys([*classic, optimum]))
    # The classic runs replay the events; the upgrade restarts every member, then replays them.
    limits.check_events(group, [*events, Event("rolling_restart")], strategies=len(compared) + 1,
                        plans=include_plans)
    with gc_paused():
        staying = _run(group, events, compared, include_plans, check, _quiet, timing)
        numbering = _Numbering()
        ids = [m.id for m in group.members]
        state = _State(ids, numbering.of(ids), _claims_of(group.members, group.topics),
                       np.array([m.generation for m in group.members], dtype=np.int64),
                       max([m.generation for m in group.members], default=0) + 1, numbering, LeaderCache(),
                       leader=_new_leader(classic[0]), timing=timing)
        today = _step(group, state, classic[0], "current", include_plans, check, None)
        upgrade: list[Step] = []
        conversion: Step | None = None
        definition, previous = group, today
        renamed: dict[str, str] = {}  # a restarted member's id -> the id it rejoined under
        classic_ids = {m.id for m in group.members}
        eager_classic = not strategy_named(classic[0]).protocol.cooperative
        # A leader that sends members their own user data back: once the classic group has
        # rebalanced, every member's assignment carries its (sticky) user data.
        echoes = strategy_named(classic[0]).assignment_user_data
        rules = conversion_rules
        refusal: Refusal | None = None
        restarted = 0
        for restart in _restarts(group, renamed, timing):
            definition = restart.group
            # Until a member comes back under the consumer protocol the group is classic (a
            # leave is a classic rebalance); that member's return converts it online, and the
            # broker plans from the members' current partitions with it in the group
            # (GroupMetadataManager's convertToConsumerGroup: "the upgrade is always triggered by
            # a new member joining"). A static member's return replaces it: no target is computed.
            converting = conversion is None and restart.joins
            # The classic group as the returning member finds it: a static member's old instance
            # is still in it, a dynamic member has left it.
            refusal = rules.refusal(restart.label, len(definition.members) - restart.rebalances) \
                if converting else None
            if refusal is not None:
                # Its heartbeat is answered GROUP_ID_NOT_FOUND and the group stays classic: the
                # rebalance its leave started goes on without it (unless it was one already).
                label = f"{restart.label}: refused under the consumer protocol"
                if restart.fresh:
                    state.forget(restart.member)
                    returning = renamed.get(restart.member, restart.member)
                    left = Group.assembled(definition.topics, [m for m in definition.members if m.id != returning],
                                           definition.partition_racks, definition.topic_ids)
                    previous = _step(left, state, classic[0], label, include_plans, check, previous)
                else:
                    previous = _unchanged(previous, label)
                upgrade.append(previous)
                conversion = previous
                restarted += 1
                break
            if converting:
                label, strategy = f"{restart.label}, converting to {target}", target
            elif conversion is None:
                label, strategy = f"{restart.label} (classic)", classic[0]
                if echoes and restart.rebalances:
                    rules = conversion_rules.with_assignment_user_data()
            else:
                label, strategy = restart.label, target
            if converting:  # the consumer group's member map, as the conversion fills it
                joiner = definition.members[-1].id if restart.rebalances else None
                replayed = _converted_map(definition, joiner, state)
            if not restart.rebalances:  # a static member back as itself, no longer a classic member
                classic_ids.discard(restart.member)
                previous = _unchanged(previous, label)
            else:
                if restart.fresh:
                    state.forget(restart.member)
                # members not restarted yet are classic members of the converted group: eager
                # ones revoke everything at each rejoin (assignor.reconcile)
                hosted = [m.id for m in definition.members if m.id in classic_ids]
                previous = _step(definition, state, strategy, label, include_plans, check, previous, hosted,
                                 eager_classic)
            if converting:
                for kept_id in [m.id for m in definition.members]:  # (the joiner's records come after)
                    replayed.put(kept_id)
                state.member_map = replayed
            upgrade.append(previous)
            restarted += 1 if restart.joins else 0
            if converting:
                conversion = previous
        if conversion is None:  # no member to restart: the group converts as it is
            refusal = conversion_rules.refusal(f"convert to {target}", len(group.members))
            conversion = previous = _unchanged(today, f"convert to {target}: refused") if refusal else \
                _step(group, state, target, f"convert to {target}", include_plans, check, today)
            upgrade.append(conversion)
        later: list[dict[str, Any]] = []
        index = 1  # the classic runs' step after "current"
        staying_definition = group  # the classic runs' group: how many steps each event is there
        back_to_classic = False  # the last consumer-protocol member rolled back (`convertToClassicGroup`)

        def now(definition: Group, label: str, previous: Step, as_classic: bool) -> Step:
            """One step of the group: a classic group again (`as_classic`), or a consumer group
            with its classic members (eager ones revoke everything at each rejoin)."""
            if as_classic:
                return _step(definition, state, classic[0], label, include_plans, check, previous)
            hosted = [m.id for m in definition.members if m.id in classic_ids]
            return _step(definition, state, target, label, include_plans, check, previous, hosted, eager_classic)

        for n, event in enumerate(events if refusal is None else ()):  # (a refused group stays classic)
            consumer_steps: list[Step] = []
            named, event = str(event), _renaming(event, renamed)  # (labelled as the user named it)
            if event.kind == "rollback" and not back_to_classic:
                definition, back_to_classic, steps = _rollback(definition, event.args[0], classic_ids, renamed,
                                                               conversion_rules, now, previous)
                consumer_steps += steps
                previous = steps[-1]
            else:
                for label, definition, rebalances, _joins, member, fresh in _expand(
                        definition, event, timing, classic=back_to_classic, at_rest=False):
                    label = label if KINDS[event.kind].every_member or KINDS[event.kind].batch else named
                    if fresh:
                        state.forget(member)
                    previous = now(definition, label, previous, back_to_classic) if rebalances \
                        else _unchanged(previous, label)
                    consumer_steps.append(previous)
            kept = list(_expand(staying_definition, events[n], timing, at_rest=n == 0))
            staying_definition = kept[-1].group
            stays = {name: staying["strategies"][name]["steps"][index : index + len(kept)]
                     for name in [*classic, optimum]}
            index += len(kept)
            members = len(definition.members)
            # Step by step where both sides took as many (a restart is quick enough under both
            # protocols, or under neither); else the event as a whole (`_merged`).
            pairs = zip(consumer_steps, *stays.values()) if len(kept) == len(consumer_steps) else \
                [(_merged(consumer_steps, named), *(_merged(s, named) for s in stays.values()))]
            for step, *classic_steps in pairs:
                by_name = dict(zip([*classic, optimum], classic_steps))
                saved = {name: _saved(by_name[name], step, members, strategy_named(name).protocol.cooperative)
                         for name in classic}
                later.append({"event": step["event"], "consumer": step, "classic": {c: by_name[c] for c in classic},
                              "saved": saved, "optimum": _figures_of(by_name[optimum])})
    final = previous
    sticky_final = staying["strategies"][optimum]["steps"][-1]
    return Migration(
        classic=classic[0], target=target, today=today, conversion=conversion,
        upgrade={"restarts": restarted, "steps": upgrade, "moved": sum(s["moved"] for s in upgrade),
                 "revoked": sum(s["revoked"] for s in upgrade),
                 "revoked_range": [sum(_revoked_range(s)[0] for s in upgrade),
                                   sum(_revoked_range(s)[1] for s in upgrade)],
                 "max_unowned": max((s.get("max_unowned", 0.0) for s in upgrade), default=0.0),
                 "max_unowned_seconds": max((s.get("max_unowned_seconds", 0.0) for s in upgrade), default=0.0)},
        refused=refusal,
        events=later,
        vs_optimum={"balance_score": final["balance_score"], "sticky_balance_score": sticky_final["balance_score"],
                    "spread": final["spread"], "sticky_spread": sticky_final["spread"],
                    "worse_balance_steps": sum(1 for e in later
                                               if e["consumer"]["balance_score"] > e["optimum"]["balance_score"])},
    )


def _converted_map(definition: Group, joiner: str | None, state: _State) -> MemberMap:
    """Set the map the conversion computes its target from, and return the one the group keeps.
    ``ConsumerGroup.fromClassicGroup`` fills a new member map in the classic group's order (its
    ``java.util.HashMap`` of member ids, filled as they joined: here, as listed), and the target is
    computed from it with the `joiner` last; the group its records rebuild fills its map in that
    map's order (`assignor.strategies.kip848.member_map`)."""
    converted = MemberMap(hashmap_order([m.id for m in definition.members if m.id != joiner]))
    state.member_map = converted
    return MemberMap(list(converted))


def _rollback(definition: Group, member_id: str, classic_ids: set[str], renamed: dict[str, str], rules: Conversion,
              now: Callable[[Group, str, Step, bool], Step], previous: Step) -> tuple[Group, bool, list[Step]]:
    """`rollback:ID` in a consumer group: the member restarts with the classic protocol. A
    dynamic member leaves; when only classic members are left and the policy allows downgrades,
    the group converts back to a classic group and rebalances (``consumerGroupFenceMembers`` ->
    ``validateOnlineDowngradeWithFencedMembers`` -> ``convertToClassicGroup``). It rejoins as a
    classic member (``classicGroupJoinToConsumerGroup``; a ``disabled`` policy, which would refuse
    it, refused the upgrade before). A static member is replaced by its classic self instead, as
    the same instance (converting the group back the same way:
    ``validateOnlineDowngradeWithReplacedMember``). Returns the group after, whether it is classic
    again, and the steps (`now` plans each)."""
    if member_id in classic_ids:
        raise WhatIfError(f"rollback: {member_id!r} runs the classic protocol already")
    member = definition.member(member_id)
    others = [m for m in definition.members if m.id != member_id]
    downgrade = rules.downgrades and bool(others) and all(m.id in classic_ids for m in others)
    converting = ", converting the group back to classic" if downgrade else ""
    if member.group_instance_id is not None:
        classic_ids.add(member_id)
        label = f"rollback {member_id}: static, back as a classic member"
        if downgrade:
            return definition, True, [now(definition, label + converting, previous, True)]
        return definition, False, [_unchanged(previous, label)]
    left = Group.assembled(definition.topics, others, definition.partition_racks, definition.topic_ids)
    leave = now(left, f"rollback {member_id}: leave{converting}", previous, downgrade)
    taken = {m.id for m in others}
    new_id = f"{member_id}-classic"
    while new_id in taken:
        new_id += "-classic"
    for original, current in renamed.items():
        if current == member_id:
            renamed[original] = new_id
    classic_ids.add(new_id)
    returned = Group.assembled(left.topics, [*others, Member(new_id, member.topics, rack=member.rack)],
                               left.partition_racks, left.topic_ids)
    rejoin = now(returned, f"rollback {member_id}: rejoin as {new_id}, a classic member", leave, downgrade)
    return returned, downgrade, [leave, rejoin]


def _merged(steps: Sequence[Step], label: str) -> Step:
    """Several steps of one event as one: what is counted, summed (the longest unowned, the
    longest); where the group ends, the last step's."""
    last = steps[-1]
    merged = cast(Step, {**last, "event": label})
    for key in ("rounds", "revoked", "moved", "reassigned", "unsafe_handovers", "paused_members", "waiting_members",
                "seconds"):
        if key in last:
            merged[key] = sum(s.get(key, 0) for s in steps)
    if "max_unowned" in last:
        merged["max_unowned"] = max(s.get("max_unowned", 0.0) for s in steps)
        merged["max_unowned_seconds"] = max(s.get("max_unowned_seconds", 0.0) for s in steps)
    if any("revoked_range" in s for s in steps):
        merged["revoked_range"] = [sum(_revoked_range(s)[0] for s in steps), sum(_revoked_range(s)[1] for s in steps)]
    return merged


def _revoked_range(step: Step) -> list[int]:
    """The least and most a step revokes (`assignor.whatif.consumer`: eager members' rejoins
    depend on heartbeat phases; elsewhere the one count)."""
    return step.get("revoked_range", [step["revoked"], step["revoked"]])


def _saved(classic: Step, consumer: Step, members: int, cooperative: bool) -> dict[str, Any]:
    """What the consumer protocol saves against staying classic on one event (positive: saved):
    moves, revocations and balance score; beside them the classic rebalance's rounds (each a
    JoinGroup/SyncGroup barrier of the whole group) and the heartbeat intervals the consumer
    protocol took, and the members each pauses: an eager classic protocol revokes everything,
    so every member pauses (a cooperative one: not counted here, shown as None); the consumer
    protocol pauses only members that revoke. `cooperative`: the classic strategy's protocol's."""
    eager = not cooperative
    return {"moves": classic["moved"] - consumer["moved"], "revocations": classic["revoked"] - consumer["revoked"],
            "balance_score": classic["balance_score"] - consumer["balance_score"],
            "classic_rounds": classic["rounds"], "consumer_intervals": consumer["rounds"],
            "classic_paused_members": members if eager else None,
            "consumer_paused_members": consumer.get("paused_members", 0)}
