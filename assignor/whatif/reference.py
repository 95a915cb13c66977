"""The what-if engine's plain reference: the same run (`assignor.whatif.run`, classic protocols)
written on the public object API, one member and one partition at a time: each member's metadata
encoded by itself, `members_from_metadata`, `assign`, `assignments_for`, `decode_assignment`, the
figures counted with dicts. The engine on arrays (`replay`, `classic`, `figures`) is a fast path
of this: a property test holds the two to the same steps (tests/consumer/test_whatif.py), and
`bench/fastpaths.py` measures what it earns. KIP-848 steps are `assignor.reconcile`'s."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from assignor import protocol, validate
from assignor.errors import JavaAssignorFailure
from assignor.events import Event
from assignor.model import Group
from assignor.protocols import UserData
from assignor.strategies import assign, strategy_named
from assignor.whatif.state import departed
from assignor.whatif.steps import Definition, _expand
from assignor.whatif.timing import DEFAULT_TIMING, Timing


def run(group: Group, events: Sequence[Event], strategy: str, timing: Timing = DEFAULT_TIMING
        ) -> list[dict[str, Any]]:
    """`assignor.whatif.run` of one classic strategy, written the plain way (module docstring):
    each step's ``event``, ``rounds``, ``revoked``, ``reassigned``, ``moved``,
    ``balance_score``, ``spread`` and ``assignment``."""
    chosen = strategy_named(strategy)
    wire, leader = chosen.protocol, chosen.new_leader() if chosen.new_leader else None
    owned = {m.id: list(m.owned) for m in group.members}
    generation = {m.id: m.generation for m in group.members}
    group_generation = max([m.generation for m in group.members], default=0) + 1
    out: list[dict[str, Any]] = []
    definitions: list[Definition] = [Definition("current", group)]
    for n, event in enumerate(events):
        definitions += list(_expand(definitions[-1].group, event, timing, at_rest=n == 0))
    for label, definition, rebalances, _joins, member, fresh in definitions:
        if not rebalances:  # a static member back within its session: the step before's figures
            out.append({**out[-1], "event": label, "rounds": 0, "revoked": 0, "reassigned": 0, "moved": 0})
            continue
        if fresh:  # a new consumer under the old one's id holds nothing; the old one's are a departed member's
            # (renamed where it stands, as the engine's `_State.forget` does: of two claims of one
            # partition in a hostile starting group, the last counts as its owner before the step)
            owned = {departed(m) if m == member else m: tps for m, tps in owned.items()}
            generation.pop(member, None)
        present = {m.id for m in definition.members}
        before = {tp: m for m, tps in owned.items() for tp in tps}
        rounds = revoked = 0
        failed = False
        while True:
            rounds += 1
            metadata: dict[str, bytes] = {}
            for m in definition.members:
                mine, g = owned.get(m.id, []), generation.get(m.id, -1)
                if wire.user_data is UserData.STICKY:
                    data = protocol.encode_sticky_user_data(mine, g) if g >= 0 or mine else None
                    sub = protocol.Subscription(m.topics, data, (), g, m.rack)
                elif wire.cooperative:
                    sub = protocol.Subscription(m.topics, protocol.encode_cooperative_user_data(g), mine, g, m.rack)
                else:
                    sub = protocol.Subscription(m.topics, None, (), g, m.rack)
                metadata[m.id] = protocol.encode_subscription(sub)
            # The instance ids come beside the metadata in the JoinGroup response (KIP-345).
            instance = {m.id: m.group_instance_id for m in definition.members}
            decoded = Group(topics=definition.topics, partition_racks=definition.partition_racks,
                            members=[replace(m, group_instance_id=instance[m.id])
                                     for m in protocol.members_from_metadata(metadata, wire)])
            try:
                plan = assign(strategy, decoded) if leader is None else leader.assign(decoded)
            except JavaAssignorFailure:  # the step fails; nothing changes hands
                failed = True
                break
            sync = protocol.assignments_for(plan, wire, group_generation)
            new = {m: list(protocol.decode_assignment(data).partitions) for m, data in sync.items()}
            if wire.cooperative:
                revoked += sum(len(set(owned.get(m, [])) - set(tps)) for m, tps in new.items())
            else:
                revoked += sum(len(owned.get(m, [])) for m in new)
            owned, generation = new, dict.fromkeys(new, group_generation)
            group_generation += 1
            subscribed = {t for m in decoded.members for t in m.topics if t in decoded.topics}
            if not wire.cooperative or sum(map(len, new.values())) >= sum(
                    decoded.topics[t] for t in subscribed) or rounds >= 10:
                break
        if failed:
            out.append({**out[-1], "event": label, "rounds": rounds, "revoked": 0, "reassigned": 0, "moved": 0}
                       if out else {"event": label, "rounds": rounds, "revoked": 0, "reassigned": 0, "moved": 0,
                                    "balance_score": 0, "spread": 0,
                                    "assignment": {m: [[tp.topic, tp.partition] for tp in tps]
                                                   for m, tps in owned.items()}})
            continue
        after = {tp: m for m, tps in owned.items() for tp in tps}
        changed = [(tp, m) for tp, m in before.items() if after.get(tp, m) != m]
        loads = [len(owned.get(m.id, [])) for m in definition.members] or [0]
        out.append({"event": label, "rounds": rounds, "revoked": revoked, "reassigned": len(changed),
                    "moved": sum(1 for _, m in changed if m in present),
                    "balance_score": validate.balance_score(loads), "spread": max(loads) - min(loads),
                    "assignment": {m: [[tp.topic, tp.partition] for tp in tps] for m, tps in owned.items()}})
    return out
