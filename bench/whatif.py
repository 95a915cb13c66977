"""What-if engine rows: our four strategies, then the two Java ones, on one event at 100k
partitions / 1,000 members; the Java ones on a typical group (1,000 partitions, 50 members); and a
rolling restart (every member leaves and rejoins) under sticky, with the work budget raised
where the default refuses it (1,000 members); and a fleet: the sample fleet `assignor pipeline
make-sample` writes, 1,000 groups, through a rolling restart under all eight strategies, in one
process (`pipeline.fleet.run_local`, one core)."""

from __future__ import annotations

import time

#: Our four strategies, and the two that run KIP-54 as Java does.
OURS = ("sticky", "cooperative-sticky", "range", "roundrobin")
JAVA = ("java-sticky", "java-cooperative-sticky")


def run(case: str) -> dict:
    from assignor import Group, whatif
    from assignor.limits import Limits
    from assignor.whatif import Event
    from assignor.workloads import java_large

    if case.startswith("fleet:"):
        return _fleet(int(case.split(":")[1]))
    if case in ("one-event", "one-event-java"):
        group = java_large("random50", 1000, 100, 1000)
        strategies = OURS if case == "one-event" else JAVA
        events = [Event("member_leave", (group.members[500].id,))]
    elif case == "typical-java":
        # A typical heterogeneous group: 20 topics of 50 partitions, 50 members on half of them.
        group = java_large("random50", 20, 50, 50)
        events, strategies = [Event("member_leave", (group.members[25].id,))], JAVA
    else:
        members = int(case.split(":")[1])
        full = java_large("uniform", 100, 100, 1000)
        group = Group(topics=full.topics, members=full.members[:members])
        events, strategies = [Event("rolling_restart")], ("sticky",)
    # The rolling restart of 1,000 members is past the default work budget (`Limits.max_work`,
    # which the service and the CLI keep): a library caller raises it with `limits=`, as here.
    limits = Limits(max_work=10**9)
    start = time.perf_counter()
    result = whatif.run(group, events, strategies, limits=limits)
    seconds = time.perf_counter() - start
    steps = sum(len(r["steps"]) for r in result["strategies"].values())
    return {"seconds": seconds, "rebalances": steps,
            "moved": {name: r["summary"]["moved"] for name, r in result["strategies"].items()}}


def _fleet(groups: int) -> dict:
    from assignor import whatif
    from pipeline import fleet, sample

    group_table, topic_table = sample.fleet(groups=groups, bad_rows=True)  # as `make-sample --groups N`
    members, topics = group_table.to_pandas(), topic_table.to_pandas()
    start = time.perf_counter()
    rows = fleet.run_local(members, topics, ["rolling_restart"], whatif.ALL_STRATEGIES)
    seconds = time.perf_counter() - start
    results = rows[rows["kind"] == "result"]
    one_per_group = results.drop_duplicates(["cluster", "group_id"])
    return {"seconds": seconds,
            # each strategy's steps after the first, and that first: the group rebalanced as it is
            "rebalances": int(results["steps"].sum()) + len(results),
            "size": f"{int(one_per_group['partitions'].sum()):,} / {int(one_per_group['members'].sum()):,} "
                    f"in {len(one_per_group):,} groups",
            "moved": {name: int(results[results["strategy"] == name]["moved"].sum()) for name in whatif.ALL_STRATEGIES}}
