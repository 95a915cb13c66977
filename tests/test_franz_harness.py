"""The franz-go harness of the benchmark (`bench/franz/`): built from its pinned module, it runs
franz-go's sticky balancer on the groups the bench rows use, and its plans pass our oracle."""

from __future__ import annotations

import pytest

from assignor import assign
from assignor.validate import report
from bench import franz

pytestmark = pytest.mark.external  # runs the go command and the harness


@pytest.mark.parametrize("case", [("uniform", 3, 4, 5, "fresh"), ("random50", 10, 5, 8, "leave10"),
                                  ("nonequal_kafka", 4, 6, 5, "kafka2")])
def test_franz_go_plans_the_bench_groups_validly_and_as_balanced_as_ours(case):
    binary = franz.build()
    assert binary is not None, "Go is on the machine (the bench row says so in one line where it is not)"
    group = franz.group_of(*case)
    seconds, plan = franz.franz(binary, group, repeat=3, warmup=1)
    assert len(seconds) == 3 and all(s > 0 for s in seconds)
    theirs, ours = report(group, franz.as_plan(group, plan)), report(group, assign("sticky", group))
    assert theirs["valid"] and theirs["errors"] == []
    assert theirs["balance_score"] == ours["balance_score"]


def test_the_harness_says_what_it_cannot_read():
    binary = franz.build()
    assert binary is not None
    import subprocess

    done = subprocess.run([binary], input=b'{"topics": 3}', capture_output=True, check=False)
    assert done.returncode == 1 and done.stderr.decode().startswith("franz: reading the group:")
