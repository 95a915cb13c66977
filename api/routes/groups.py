"""Groups planned through the service: the leader's remote-assignor call and the registry."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from api.bodies import documented_body, read_body, reply
from api.dependencies import (
    NOT_FOUND,
    SYNC_REFUSED,
    ClaimWarningsDep,
    GroupLocksDep,
    MetricsDep,
    PlannerDep,
    SettingsDep,
)
from api.handlers import groups as groups_handlers
from api.handlers.answers import dumps
from api.models import SyncRequest
from api.pool import release
from api.routes.group_paths import suffix_sent

router = APIRouter(tags=["groups"])


# A planning worker reads the body (validating it with `SyncRequest`): parsing and validating a
# hundred members' metadata took the event loop longer than the worker's whole sync.
@router.post("/groups/{group_id:group_id}/sync", openapi_extra=documented_body(SyncRequest),
             responses=SYNC_REFUSED)
async def group_sync(group_id: str, request: Request, planner: PlannerDep, metrics: MetricsDep,
                     settings: SettingsDep, locks: GroupLocksDep, warnings: ClaimWarningsDep) -> Response:
    """The remote-assignor call of a group leader: raw JoinGroup metadata in, SyncGroup
    assignment bytes out. The generation is recorded in the registry. Claims of owned
    partitions the plan could not keep are in ``metrics.dropped_claims``, logged once per group
    and generation and counted in ``/metrics`` (``assignor_dropped_claims``) by reason."""
    if not suffix_sent(request, "sync"):  # (``x%2Fsync``: the group ``x/sync`` itself, which takes no POST)
        return Response(dumps({"detail": "Method Not Allowed"}), status_code=405, media_type="application/json",
                        headers={"Allow": "GET, DELETE"})
    body = await read_body(request)
    try:
        async with locks.hold(group_id):  # one sync at a time per group: plan and record are one step
            status, payload, stats = await planner.run(groups_handlers.group_sync, group_id, body, settings.limits,
                                                       settings.history, settings.max_groups, settings.registry)
    finally:
        release(body)  # (a spooled body, should this request end while it waits for the lock)
    metrics.observe(stats)
    if "dropped_claims" in stats:
        warnings.sync(group_id, stats["generation"], stats["dropped_claims"])
    return reply(status, payload)


# The registry is read, and its answers written, by a planning worker: a large group's plan is
# megabytes of JSON, and the list has a row for every group that ever synced.
@router.get("/groups")
async def groups(planner: PlannerDep, settings: SettingsDep,
                 after: Annotated[str, Query(max_length=groups_handlers.MAX_GROUP_ID,
                                             description="the group id the page starts after (the last "
                                                         "page's `next`)")] = "",
                 limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> Response:
    """Registered groups, a page at a time in id order: each with its latest generation, that
    generation's time (ISO-8601 UTC) and how many are kept; ``next`` is the ``after`` of the
    next page, null on the last."""
    status, payload, _stats = await planner.run(groups_handlers.registered_groups, settings.registry, after, limit)
    return reply(status, payload)


@router.get("/groups/{group_id:group_id}/history", responses=NOT_FOUND)
async def history(group_id: str, request: Request, planner: PlannerDep, settings: SettingsDep) -> Response:
    """One row per recorded generation: members, partitions moved, balance score."""
    if not suffix_sent(request, "history"):  # (``x%2Fhistory``: the group ``x/history``)
        return await group(f"{group_id}/history", planner, settings)
    status, payload, _stats = await planner.run(groups_handlers.registered_history, group_id, settings.registry)
    return reply(status, payload)


@router.get("/groups/{group_id:group_id}", responses=NOT_FOUND)
async def group(group_id: str, planner: PlannerDep, settings: SettingsDep) -> Response:
    """The latest recorded state (members as they joined) and plan of a group."""
    status, payload, _stats = await planner.run(groups_handlers.registered, group_id, settings.registry)
    return reply(status, payload)


@router.delete("/groups/{group_id:group_id}", responses=NOT_FOUND)
async def forget(group_id: str, planner: PlannerDep, settings: SettingsDep) -> Response:
    """Forget a group: every kept generation is deleted. The registry moves forward only (a
    sync older than the latest generation answers 409), so a group that Kafka deleted and that
    starts again from generation 1 is deleted here first."""
    status, payload, _stats = await planner.run(groups_handlers.forget, group_id, settings.registry)
    return reply(status, payload)
