"""The broker's assignors (KIP-848) through the public API (`assignor.assign` with
``kip848-uniform`` / ``kip848-range``) at the sizes Kafka's own figures were taken at
(`bench/kip848_times.json`, from the reference data's README), ours beside Kafka's warm JVM.

Groups: homogeneous, every member on every topic (100 topics of 1,000 partitions for 10,000
members; 1,000 of 1,000 for 2,000 members); heterogeneous, 1,000 members on 100 topics of 100
partitions, member ``i`` on the topics whose index is not ``i`` mod 4 (overlapping subscriptions).
``full``: every member new; ``join`` / ``leave``: from the full plan as the members' current
targets, one member joins (a new id) or the first leaves.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from assignor import Group, Member, TopicPartition, assign

TIMES = Path(__file__).with_name("kip848_times.json")

#: (case, members, topics, partitions per topic, the step after full)
CASES = [("homogeneous", 10_000, 100, 1_000, "join"), ("heterogeneous", 1_000, 100, 100, "join"),
         ("homogeneous", 2_000, 1_000, 1_000, "leave")]


def group_of(case: str, members: int, topics: int, partitions: int) -> Group:
    names = [f"topic-{t:04d}" for t in range(topics)]
    if case == "homogeneous":
        subscriptions = [names] * members
    else:
        subscriptions = [[n for t, n in enumerate(names) if t % 4 != i % 4] for i in range(members)]
    return Group({n: partitions for n in names}, [Member(f"member-{i:05d}", s) for i, s in enumerate(subscriptions)])


def after(group: Group, plan_assignment: dict[str, list[TopicPartition]], step: str) -> Group:
    members = [Member(m.id, m.topics, plan_assignment[m.id]) for m in group.members]
    if step == "join":
        members.append(Member("member-joining", group.members[0].topics))
    else:
        members = members[1:]
    return Group(group.topics, members)


def kafka_ms(assignor: str, case: str, members: int, partitions: int, step: str) -> float | None:
    for row in json.loads(TIMES.read_text())["times_ms"]:
        if (row["assignor"], row["case"], row["members"], row["partitions"], row["step"]) == (
                assignor, case, members, partitions, step):
            return float(row["ms"])
    return None


def median_ms(strategy: str, group: Group, repeat: int) -> tuple[float, dict[str, list[TopicPartition]]]:
    """The median of `repeat` runs after one warm-up (Kafka's figures are warm-JVM medians)."""
    assign(strategy, group)
    times, plan = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        plan = assign(strategy, group)
        times.append((time.perf_counter() - start) * 1000)
    assert plan is not None
    return statistics.median(times), plan.assignment


def main(quick: bool = False, repeat: int = 3) -> None:
    print("broker assignor (KIP-848) | group | members / partitions | step | ours ms | Kafka ms | ratio", flush=True)
    for assignor in ("uniform", "range"):
        for case, members, topics, partitions, step in CASES:
            total = topics * partitions
            if quick and total >= 1_000_000:
                continue
            group = group_of(case, members, topics, partitions)
            full_ms, assignment = median_ms(f"kip848-{assignor}", group, repeat)
            next_ms, _ = median_ms(f"kip848-{assignor}", after(group, assignment, step), repeat)
            for name, ours in (("full", full_ms), (step, next_ms)):
                kafka = kafka_ms(assignor, case, members, total, name)
                ratio = "-" if kafka is None else f"{ours / kafka:.1f}x Kafka's time"
                print(f"{assignor} | {case} | {members:,} / {total:,} | {name} | {ours:.1f} | "
                      f"{'-' if kafka is None else f'{kafka:.1f}'} | {ratio}", flush=True)
