"""The broker's assignors (KIP-848) through the public API at the sizes Kafka's own figures were
taken at (`bench/kip848_times.json`, from the reference data's README), ours beside Kafka's warm
JVM: `assignor.assign_columns` (the current targets in, the new targets out, as columns: the
shape of Kafka's own call, whose members' assignments are maps of topic id to a set of
partition numbers), and `assignor.assign` (every partition a `TopicPartition` object, in and out).

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

from assignor import Claims, Group, Member, TopicPartition, assign, assign_columns

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


def after_columns(group: Group, plan: Claims, step: str) -> tuple[Group, Claims]:
    """`after` with the members' current targets as columns (the plan before)."""
    if step == "join":
        return Group(group.topics, [*group.members, Member("member-joining", group.members[0].topics)]), plan
    staying = plan.member > 0
    return (Group(group.topics, group.members[1:]),
            Claims(plan.member[staying] - 1, plan.topic[staying], plan.partition[staying], plan.names))


def kafka_ms(assignor: str, case: str, members: int, partitions: int, step: str) -> float | None:
    for row in json.loads(TIMES.read_text())["times_ms"]:
        if (row["assignor"], row["case"], row["members"], row["partitions"], row["step"]) == (
                assignor, case, members, partitions, step):
            return float(row["ms"])
    return None


def median_ms(strategy: str, group: Group, repeat: int) -> tuple[float, dict[str, list[TopicPartition]]]:
    """The median of `repeat` runs of `assign` after one warm-up (Kafka's figures are warm-JVM
    medians)."""
    assign(strategy, group)
    times, plan = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        plan = assign(strategy, group)
        times.append((time.perf_counter() - start) * 1000)
    assert plan is not None
    return statistics.median(times), plan.assignment


def median_columns_ms(strategy: str, group: Group, owned: Claims | None, repeat: int) -> tuple[float, Claims]:
    """`median_ms` of `assign_columns`."""
    assign_columns(strategy, group, owned)
    times, plan = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        plan = assign_columns(strategy, group, owned)
        times.append((time.perf_counter() - start) * 1000)
    assert plan is not None
    return statistics.median(times), plan


def main(quick: bool = False, repeat: int = 3) -> None:
    print("broker assignor (KIP-848) | group | members / partitions | step | ours ms (columns) | Kafka ms | ratio | "
          "ours ms (objects) | ratio", flush=True)
    for assignor in ("uniform", "range"):
        strategy = f"kip848-{assignor}"
        for case, members, topics, partitions, step in CASES:
            total = topics * partitions
            if quick and total >= 1_000_000:
                continue
            group = group_of(case, members, topics, partitions)
            full_columns, plan = median_columns_ms(strategy, group, None, repeat)
            next_columns, _ = median_columns_ms(strategy, *after_columns(group, plan, step), repeat)
            full_ms, assignment = median_ms(strategy, group, repeat)
            next_ms, _ = median_ms(strategy, after(group, assignment, step), repeat)
            for name, columns, objects in (("full", full_columns, full_ms), (step, next_columns, next_ms)):
                kafka = kafka_ms(assignor, case, members, total, name)
                print(f"{assignor} | {case} | {members:,} / {total:,} | {name} | {columns:.1f} | "
                      f"{'-' if kafka is None else f'{kafka:.1f}'} | {_ratio(columns, kafka)} | {objects:.1f} | "
                      f"{_ratio(objects, kafka)}", flush=True)


def _ratio(ours: float, kafka: float | None) -> str:
    return "-" if kafka is None else f"{ours / kafka:.1f}x Kafka's time"
