"""``POST /v1/plans``, and ``GET /v1/clusters/{alias}/groups/{id}/plan`` (a live group's), in a
planning process: `assignor.plan_answer`'s answer, with the strategy, the generation and the
time planning took.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from api.errors import Rejected
from api.handlers.answers import Answer, Handled, answer, json_object
from api.handlers.clusters import live_group
from api.protocol_io import b64
from assignor.json_format import group_from_json
from assignor.limits import Limits
from assignor.model import INT32_MAX
from assignor.plan_answer import plan_answer
from assignor.strategies import DEFAULT_STRATEGY, strategy_named


def plan(body: bytes, limits: Limits, columns: bool = False, with_bytes: bool = True) -> Answer:
    """`columns`: the assignment as topic -> partitions per member (compact for big groups);
    `with_bytes`: each member's SyncGroup assignment and next user data, base64."""
    return answer(_plan, body, limits, columns, with_bytes)


def _plan(body: bytes, limits: Limits, columns: bool, with_bytes: bool) -> Handled:
    return _plan_group(json_object(body), limits, columns, with_bytes)


def live_plan(clusters: Mapping[str, Mapping[str, str]], alias: str, group_id: str, strategy: str,
              generation: int | None, limits: Limits, columns: bool = False, with_bytes: bool = True) -> Answer:
    """``GET /v1/clusters/{alias}/groups/{group_id}/plan``: the live group (`clusters.live_group`,
    its failures each their status) planned with `strategy` as ``POST /v1/plans`` plans its JSON."""
    return answer(_live_plan, clusters, alias, group_id, strategy, generation, limits, columns, with_bytes)


def _live_plan(clusters: Mapping[str, Mapping[str, str]], alias: str, group_id: str, strategy: str,
               generation: int | None, limits: Limits, columns: bool, with_bytes: bool) -> Handled:
    data = live_group(clusters, alias, group_id)
    return _plan_group({**data, "strategy": strategy, **({} if generation is None else {"generation": generation})},
                       limits, columns, with_bytes)


def _plan_group(data: dict[str, Any], limits: Limits, columns: bool, with_bytes: bool) -> Handled:
    """A group in the JSON group form (`data`, with ``strategy`` and ``generation`` beside it) planned."""
    from api.models import next_generation_problem, partition_racks_problem

    strategy = data.pop("strategy", DEFAULT_STRATEGY.name)
    generation = data.pop("generation", None)
    # Every field's shape first (422), the limits after (413): a malformed body is malformed
    # whatever its size.
    if not isinstance(strategy, str):
        raise Rejected(422, "strategy: expected a string")
    planner = strategy_named(strategy)
    if generation is not None and (not isinstance(generation, int) or isinstance(generation, bool)
                                   or not 0 <= generation <= INT32_MAX):
        raise Rejected(422, f"generation: expected an integer in [0, 2**31), got {generation!r}")
    group = group_from_json(data)
    problem = partition_racks_problem(group.topics, group.partition_racks or {})
    if generation is None:
        problem = problem or next_generation_problem([m.generation for m in group.members])
    if problem:
        raise Rejected(422, problem)
    limits.check_group(group)
    if generation is None:
        generation = max((m.generation for m in group.members), default=-1) + 1
    planned = plan_answer(planner, group, columns=columns, generation=generation if with_bytes else None)
    out = {**planned.assignment, "strategy": strategy, "generation": generation}
    if planned.encoded is not None:
        out["members"] = {m: {"assignment_b64": b64(planned.encoded[m]), "user_data_b64": b64(planned.user_data.get(m))}
                          for m in planned.members}
    out.update(metrics=planned.report, plan_seconds=planned.seconds)
    return out, {"strategy": strategy, "partitions": planned.report["partitions"], "seconds": planned.seconds}
