"""``POST /v1/whatif``: replay events on a group under each strategy."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from api.bodies import documented_body, read_body, reply
from api.dependencies import CLUSTER_REFUSED, NOT_FOUND, PlannerDep, SettingsDep
from api.handlers import whatif as whatif_handlers
from api.models import WhatIfRequest

router = APIRouter(tags=["planning"])


# A large group (inline, or the registry's) is CPU work to parse and hand over: a planning
# worker reads the body (validating it with `WhatIfRequest`) and the registry itself.
@router.post("/whatif", responses={**NOT_FOUND, **CLUSTER_REFUSED}, openapi_extra=documented_body(WhatIfRequest))
async def whatif(request: Request, planner: PlannerDep, settings: SettingsDep) -> Response:
    """Replay events on a group under each strategy: moves, revocations, rounds, balance. The
    group inline, registered (``group_id``), or live on a cluster of the service's settings
    (``cluster`` and ``group_id``)."""
    status, payload, _stats = await planner.run(whatif_handlers.whatif, await read_body(request), settings.limits,
                                                settings.registry, settings.clusters)
    return reply(status, payload)
