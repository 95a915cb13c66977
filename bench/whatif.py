"""What-if engine rows: the four strategies on one event at 100k partitions / 1,000 members,
and a rolling restart (every member leaves and rejoins) under sticky."""

from __future__ import annotations

import time


def run(case: str) -> dict:
    from assignor import Group, whatif
    from assignor.whatif import Event
    from assignor.workloads import java_large

    if case == "one-event":
        group = java_large("random50", 1000, 100, 1000)
        events, strategies = [Event("member_leave", (group.members[500].id,))], whatif.ALL_STRATEGIES
    else:
        members = int(case.split(":")[1])
        full = java_large("uniform", 100, 100, 1000)
        group = Group(topics=full.topics, members=full.members[:members])
        events, strategies = [Event("rolling_restart")], ("sticky",)
    start = time.perf_counter()
    result = whatif.run(group, events, strategies)
    seconds = time.perf_counter() - start
    steps = sum(len(r["steps"]) for r in result["strategies"].values())
    return {"seconds": seconds, "rebalances": steps,
            "moved": {name: r["summary"]["moved"] for name, r in result["strategies"].items()}}
