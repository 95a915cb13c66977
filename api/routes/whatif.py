"""``POST /v1/whatif``: replay events on a group under each strategy."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Response
from fastapi.concurrency import run_in_threadpool

from api import work
from api.models import WhatIfRequest
from api.service import NOT_FOUND, PlannerDep, RegistryDep, SettingsDep, reply

router = APIRouter(tags=["planning"])


@router.post("/whatif", responses=NOT_FOUND)
async def whatif(body: WhatIfRequest, planner: PlannerDep, registry: RegistryDep, settings: SettingsDep) -> Response:
    """Replay events on a group under each strategy: moves, revocations, rounds, balance."""
    request = body.model_dump()
    if (body.group is None) == (body.group_id is None):
        raise HTTPException(422, "give exactly one of group (inline) or group_id (from the registry)")
    if body.group_id is not None:
        latest = await run_in_threadpool(registry.latest, body.group_id)
        if latest is None:
            raise HTTPException(404, f"no group {body.group_id!r} in the registry")
        request["group"] = registered_group(latest)
    status, payload, _stats = await planner.run(work.whatif, request, settings.limits())
    return reply(status, payload)


def registered_group(latest: dict[str, Any]) -> dict:
    """The registered group as it stands after its latest plan: members own what they were given."""
    state, assignment = latest["state"], latest["plan"]["assignment"]
    members = [{**m, "owned": assignment.get(m["id"], []), "generation": latest["generation"]}
               for m in state["members"]]
    return {**state, "members": members}
