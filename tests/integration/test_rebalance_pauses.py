"""The rolling-restart experiment (`bench.rebalance`) at a small size, in one run: our
cooperative aiokafka consumers against aiokafka's eager default, on the same broker."""

from __future__ import annotations

import pytest

from bench import rebalance

pytestmark = [pytest.mark.integration, pytest.mark.anyio]


async def test_cooperative_consumers_pause_less_than_aiokafkas_eager_default(broker):
    eager = await rebalance.run(broker.bootstrap, "aiokafka, default assignor (eager)", consumers=3, partitions=6,
                                rate=100)
    ours = await rebalance.run(broker.bootstrap, "aiokafka + our cooperative-sticky", consumers=3, partitions=6,
                               rate=100)
    for run in (eager, ours):
        assert run["lost"] == 0 and run["overlaps"] == 0, run
    # Eager revokes every survivor's partitions at every restart; ours revokes none (a restarted
    # member's partitions go to the survivors, and back to its replacement only from a survivor
    # that hands them over, which counts).
    assert eager["revoked_from_survivors"] > ours["revoked_from_survivors"], (eager, ours)
    assert ours["paused_partition_s"] < eager["paused_partition_s"], (eager, ours)
    assert ours["unowned_partition_s"] < eager["unowned_partition_s"], (eager, ours)
    assert ours["consumed_twice"] == 0, ours  # committed before every hand-over


def test_the_figures_of_a_run():
    """Gaps, unowned time and rounds from hand-made records and callbacks."""
    from bench.ownership import Timeline

    ticks = iter([0.0, 2.0, 5.0])
    timeline = Timeline(clock=lambda: next(ticks, 10.0))

    class Member:
        records = [(0.5, 0, 0), (1.0, 0, 1), (4.0, 0, 2), (4.0, 0, 2)]
        revoked = [{0}]

    timeline.take("a", {0})     # 0.0
    timeline.release("a", {0})  # 2.0
    timeline.take("b", {0})     # 5.0
    row = rebalance.figures("c", "restart", [Member()], timeline, sent=4, started=0.0, ended=6.0, partitions=1)
    assert row["longest_gap_s"] == 3.0 and row["paused_partition_s"] == 5.0  # gaps 3.0 (1 -> 4) and 2.0 (4 -> 6)
    assert row["unowned_partition_s"] == 3.0 and row["consumed_twice"] == 1 and row["lost"] == 1
    assert row["rebalances"] == 2 and row["revoked_from_survivors"] == 1 and row["overlaps"] == 0
