"""Who owned which partition when, from the members' rebalance callbacks, and whether two
members ever owned one partition at the same instant (the safety check of a rebalance run)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable


class Timeline:
    """Ownership intervals per (member, partition) on one clock (``time.monotonic`` by default)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.open: dict[tuple[str, int], float] = {}
        self.closed: list[tuple[int, float, float, str]] = []  # (partition, start, end, member)

    def take(self, member: str, partitions: Iterable[int], at: float | None = None) -> None:
        """`member` owns `partitions` from `at` (a time on this clock; now when left out: a
        member in another process reports when its callback ran)."""
        now = self.clock() if at is None else at
        for p in partitions:
            self.open.setdefault((member, p), now)

    def release(self, member: str, partitions: Iterable[int], at: float | None = None) -> None:
        now = self.clock() if at is None else at
        for p in partitions:
            start = self.open.pop((member, p), None)
            if start is not None:
                self.closed.append((p, start, now, member))

    def owned_by(self, member: str) -> set[int]:
        return {p for m, p in self.open if m == member}

    def intervals(self) -> list[tuple[int, float, float, str]]:
        now = self.clock()
        return sorted(self.closed + [(p, start, now, m) for (m, p), start in self.open.items()])

    def overlaps(self) -> list[tuple[int, str, str]]:
        """(partition, member, member) for every two intervals of one partition that overlap."""
        found = []
        by_partition: dict[int, list[tuple[float, float, str]]] = {}
        for p, start, end, m in self.intervals():
            by_partition.setdefault(p, []).append((start, end, m))
        for p, spans in by_partition.items():
            latest_end, holder = float("-inf"), ""
            for start, end, m in sorted(spans):
                if start < latest_end and m != holder:
                    found.append((p, holder, m))
                if end > latest_end:
                    latest_end, holder = end, m
        return found
