"""``/v1/clusters``: live groups of the clusters named in the service's settings, read by a
snapshot (`assignor.cluster`) in a planning worker, as every heavy answer is: a large group's
responses are tens of megabytes to decode and build (`api.handlers.clusters`). The alias is
checked here first: an unknown one costs no worker."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Response

from api.bodies import reply
from api.dependencies import CLUSTER_REFUSED, PlannerDep, SettingsDep
from api.errors import Rejected
from api.handlers import clusters as clusters_handlers
from api.handlers.answers import dumps
from api.handlers.groups import MAX_GROUP_ID

router = APIRouter(tags=["clusters"])

Alias = Annotated[str, Path(pattern=r"^[A-Za-z0-9._-]{1,64}$", description="a cluster's alias (ASSIGNOR_CLUSTERS)")]


@router.get("/clusters")
async def clusters(settings: SettingsDep) -> dict[str, list[str]]:
    """The aliases of the clusters this service reads live groups from."""
    return {"clusters": sorted(settings.clusters)}


@router.get("/clusters/{alias}/groups", responses=CLUSTER_REFUSED)
async def cluster_groups(alias: Alias, settings: SettingsDep, planner: PlannerDep) -> Response:
    """A snapshot of every consumer group of the cluster: ``groups`` (the group JSON of each)
    and ``skipped`` (a group that is rebalancing or not a consumer group, and why)."""
    try:
        clusters_handlers.cluster_settings(settings.clusters, alias)
    except Rejected as error:
        return reply(error.status, dumps({"detail": error.detail}))
    status, payload, _stats = await planner.run(clusters_handlers.groups_answer, settings.clusters, alias)
    return reply(status, payload)


@router.get("/clusters/{alias}/groups/{group_id}", responses=CLUSTER_REFUSED)
async def cluster_group(alias: Alias, group_id: Annotated[str, Path(max_length=MAX_GROUP_ID)],
                        settings: SettingsDep, planner: PlannerDep) -> Response:
    """A snapshot of one live group: the group JSON `POST /v1/whatif` and `POST /v1/plans` take
    (or name it in `POST /v1/whatif` with ``cluster`` and ``group_id``)."""
    try:
        clusters_handlers.cluster_settings(settings.clusters, alias)
    except Rejected as error:
        return reply(error.status, dumps({"detail": error.detail}))
    status, payload, _stats = await planner.run(clusters_handlers.group_answer, settings.clusters, alias, group_id)
    return reply(status, payload)
