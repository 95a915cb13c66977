"""Scenarios the broker tests run with members of any client (a member has ``name``,
``revoked``, ``start()`` and ``stop()``, as `bench.rebalance`'s do)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from bench.rebalance import settle
from tests.java_group import moved


async def a_static_member_comes_back(make: Callable[[str], Any], partitions: int = 6) -> None:
    """KIP-345: three static members settle (`make(name)` gives each its instance id); the
    second closes and a new consumer under its instance id starts within the session: the
    coordinator hands it the same partitions, and nobody revokes anything."""
    members = [await make(n).start() for n in ("a", "b", "c")]
    try:
        before = await settle(members, partitions)
        for m in members:
            m.revoked.clear()
        await members[1].stop()
        members[1] = await make("b").start()
        after = await settle(members, partitions)
        assert after == before
        assert [m.revoked for m in members] == [[], [], []]
    finally:
        for m in members:
            await m.stop()


async def slow_upgrade(members: list[Any], start: Callable[[int], Awaitable[Any]],
                       partitions: int) -> tuple[int, list[Any]]:
    """Each member stopped, the group left to settle without it, then `start(i)` (its upgraded
    replacement) and the group settled again: the partitions moved over the upgrade (`moved`, from
    the members that were there before and after each step), and every member that took part."""
    everyone = list(members)
    total = 0
    try:
        now = {i: m.partitions() for i, m in enumerate(members)}
        for i in range(len(members)):
            await members[i].stop()
            left = await settle([m for j, m in enumerate(members) if j != i], partitions)
            after_leave = {j: left[m.name] for j, m in enumerate(members) if j != i}
            members[i] = await start(i)
            everyone.append(members[i])
            back = await settle(members, partitions)
            after = {j: back[m.name] for j, m in enumerate(members)}
            total += moved(now, after_leave) + moved(after_leave, after)
            now = after
    finally:
        for member in members:
            await member.stop()
    return total, everyone


async def joins_then_a_rolling_restart(make: Callable[[str, str], Any], kinds: list[str], partitions: int,
                                       members: list[Any], everyone: list[Any]) -> None:
    """A group formed of one member of each of `kinds` (`make(kind, name)`; the first alone
    first, so a classic group's first member leads), then each member restarted in turn (a new
    consumer of its kind at once): after every restart the group owns every partition once, as
    evenly as the partitions allow. `members` are the running ones, `everyone` all that took part
    (both filled here, for the caller's wind-down)."""
    members.append(await make(kinds[0], "m0").start())
    everyone.append(members[0])
    await settle(members, partitions)
    for i, kind in enumerate(kinds[1:], 1):
        members.append(await make(kind, f"m{i}").start())
        everyone.append(members[-1])
    await settle(members, partitions)
    even = sorted([partitions // len(kinds) + (i < partitions % len(kinds)) for i in range(len(kinds))])
    for i, kind in enumerate(kinds):
        await members[i].stop()
        members[i] = await make(kind, f"m{i}-new").start()
        everyone.append(members[i])
        settled = await settle(members, partitions)
        assert sorted(map(len, settled.values())) == even, settled
