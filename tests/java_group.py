"""One consumer group of Java members on the test broker, as the rehearsal tests drive it: each
member started under a fresh name (a restarted consumer is a new one), a classic group formed as
Kafka's tools would see it (the first member alone, so it leads), and the group as the rehearsal
reads it (`assignor.whatif`)."""

from __future__ import annotations

import uuid
from typing import Any

from assignor import Group, Member, TopicPartition
from bench.java_members import CLASSIC, CONSUMER, COOPERATIVE_STICKY
from bench.rebalance import create_topic, settle

#: Consumer-protocol members with the broker's ``uniform``; classic cooperative-sticky ones.
UNIFORM = {**CONSUMER, "group.remote.assignor": "uniform"}
COOPERATIVE = {**CLASSIC, "partition.assignment.strategy": COOPERATIVE_STICKY}


class JavaGroup:
    """A new topic of `partitions` and a group of Java members reading it."""

    def __init__(self, broker: Any, java_members: Any, prefix: str, partitions: int) -> None:
        self.broker, self.java_members, self.partitions = broker, java_members, partitions
        self.group = f"{prefix}-{uuid.uuid4().hex[:8]}"
        self.topic = ""
        self.started = 0

    async def create(self) -> JavaGroup:
        self.topic = await create_topic(self.broker.bootstrap, self.partitions)
        return self

    async def start(self, i: int, settings: dict[str, str]) -> Any:
        """Member `i` (a new consumer each time, under a fresh name), started."""
        self.started += 1
        return await self.java_members.member(f"{self.group}.m{i}.{self.started}", self.broker.bootstrap, self.group,
                                              [self.topic], settings).start()

    async def classic(self, size: int, settings: dict[str, str] = COOPERATIVE) -> tuple[list[Any], dict[int, set[int]]]:
        """`size` classic members, the first alone first (it leads), settled: the members and
        what each owns."""
        members = [await self.start(0, settings)]
        await settle(members, self.partitions)
        members += [await self.start(i, settings) for i in range(1, size)]
        owned = await settle(members, self.partitions)
        return members, {i: owned[m.name] for i, m in enumerate(members)}

    def rehearsed(self, owned: dict[int, set[int]]) -> Group:
        """The group as the rehearsal reads it: members ``m0``, ``m1``, ... owning what they own."""
        return Group({self.topic: self.partitions}, [
            Member(f"m{i}", [self.topic], [TopicPartition(self.topic, p) for p in sorted(ps)], 1)
            for i, ps in owned.items()])


def moved(before: dict[Any, set[int]], after: dict[Any, set[int]]) -> int:
    """Partitions taken from a member in the group before and after."""
    return sum(len(before[m] - after[m]) for m in before if m in after)
