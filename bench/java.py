"""Rows for the Java-faithful strategies at the Java client's recorded scales: `java-sticky` and
`java-cooperative-sticky`, aiokafka's `StickyPartitionAssignor` (a Python port of the same
KIP-54 algorithm) on the same input in the same process, and the Java client's own
``StickyAssignor`` on the same input in the same sitting (`bench.java_client`).

Inputs as the Java recording built them (tests/golden/README.md): uniform and nonequal_kafka
with 500 topics of 2,000 partitions; random50 with 10 topics (10,000 / 100 has 1,000 partitions
a topic, 20,000 / 200 has 2,000), whose Java runs end at loads 99-101. leave10 carries the
fresh step's `java-sticky` plan, as Java's second step carried Java's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    kind: str
    topics: int
    partitions: int  # per topic
    members: int
    step: str  # fresh | leave10
    quick: bool = True


CASES = [
    Case("uniform", 500, 2000, 2000, "fresh", quick=False),
    Case("uniform", 500, 2000, 2000, "leave10", quick=False),
    Case("nonequal_kafka", 500, 2000, 2000, "fresh", quick=False),
    Case("random50", 10, 1000, 100, "fresh"),
    Case("random50", 10, 1000, 100, "leave10"),
    Case("random50", 10, 2000, 200, "fresh"),
    Case("random50", 10, 2000, 200, "leave10"),
]


def inputs(case: Case):
    from assignor import assign
    from assignor.workloads import java_large, next_step

    fresh = java_large(case.kind, case.topics, case.partitions, case.members)
    if case.step == "fresh":
        return fresh
    return next_step(fresh, assign("java-sticky", fresh), case.step)


def run(case: Case, repeat: int, limit: float, queue) -> None:
    """In a child process: our two strategies' best times and loads and the Java client's
    ``StickyAssignor`` on the same group (`bench.java_client`, up to `limit` seconds a call),
    then aiokafka's (the parent stops waiting for it at its limit)."""
    from assignor import assign, validate
    from bench.peer import aiokafka_sticky

    group = inputs(case)
    row: dict = {}
    for name in ("java-sticky", "java-cooperative-sticky"):
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            plan = assign(name, group)
            best = min(best, time.perf_counter() - start)
        report = validate.report(group, plan)
        row[name] = {"seconds": best, "loads": f"{report['min_load']}-{report['max_load']}",
                     "valid": report["valid"]}
    if limit > 0:
        from bench.java_client import java_time

        row["java"] = java_time(group, "sticky", repeat, limit)
    queue.put(row)
    start = time.perf_counter()
    peer = validate.report(group, aiokafka_sticky(group))
    queue.put({"peer": time.perf_counter() - start, "peer_loads": f"{peer['min_load']}-{peer['max_load']}"})
