"""One plan as ``assignor plan`` prints it and ``POST /v1/plans`` answers it: the assignment in
the JSON form asked for, each member's SyncGroup bytes when asked for, and the oracle's report.

Every strategy plans on arrays (`Strategy.planned`), and the answer is written from them, in the
order the SyncGroup bytes list each member's partitions (Java's, for Java's strategies): no
`TopicPartition` per partition made, read back and written again: ``assignor plan`` of a group
of 2,000 members and a million partitions takes 0.49 s, where planning it as objects and
measuring that plan again on arrays took 0.80 s. A property test holds the answer to the one
written from the plan as objects (`assign`, `plan_to_json`, `validate.report`:
tests/api/test_work.py).
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

from assignor import validate
from assignor.json_format import plan_json_of_claims
from assignor.model import Group
from assignor.protocol import plan_bytes_of_claims
from assignor.strategies import Strategy

__all__ = ["PlanAnswer", "plan_answer"]


class PlanAnswer(NamedTuple):
    """`plan_answer`'s answer: the members, the assignment in the form asked for, each member's
    SyncGroup bytes and next user data (None when not asked for, or the strategy's protocol has
    no SyncGroup), the oracle's report, and the seconds planning alone took."""

    members: list[str]
    assignment: dict[str, Any]
    encoded: dict[str, bytes] | None
    user_data: dict[str, bytes]
    report: validate.ExactReport
    seconds: float


def plan_answer(strategy: Strategy, group: Group, *, columns: bool = False,
                generation: int | None = None) -> PlanAnswer:
    """`group` planned with `strategy`: the assignment as ``{"assignment": ...}`` (pairs, or with
    `columns` each topic's partitions), and with a `generation` the SyncGroup bytes stamped with
    it (sticky user data, KIP-341)."""
    started = time.perf_counter()
    result = strategy.planned(group)
    seconds = time.perf_counter() - started
    layout, owner = result.layout, result.owner
    members = [m.id for m in layout.members]
    report = validate.report_of_layout(group, layout, owner, strategy)
    if report is None:
        report = validate.report(group, result.plan(strategy.name))
    # KIP-848's consumer protocol has no SyncGroup: its broker assignors' plans carry no bytes
    encoded: dict[str, bytes] | None = None
    user_data: dict[str, bytes] = {}
    if generation is not None and strategy.protocol.classic:
        encoded, user_data = plan_bytes_of_claims(result.assigned, members, strategy.protocol, generation,
                                                  as_java=strategy.java)
    return PlanAnswer(members, plan_json_of_claims(result.assigned, members, columns), encoded, user_data, report,
                      seconds)
