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
