"""``/v1/clusters``: live groups of the clusters named in the service's settings, read by a
snapshot (`assignor.cluster`) in a planning worker, as every heavy answer is: a large group's
responses are tens of megabytes to decode and build (`api.handlers.clusters`). The alias is
checked here first: an unknown one costs no worker."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, Response

from api.bodies import reply
from api.dependencies import CLUSTER_REFUSED, MetricsDep, PlannerDep, SettingsDep
from api.errors import Rejected
from api.handlers import clusters as clusters_handlers
from api.handlers import plans as plans_handlers
from api.handlers.answers import dumps
from api.handlers.groups import MAX_GROUP_ID
from api.models import StrategyName
from api.routes.group_paths import suffix_sent
from api.routes.plans import BYTES_DOC, FORMAT_DOC, AnswerFormat
from assignor.model import INT32_MAX
from assignor.strategies import DEFAULT_STRATEGY

router = APIRouter(tags=["clusters"])

Alias = Annotated[str, Path(pattern=r"^[A-Za-z0-9._-]{1,64}$", description="a cluster's alias (ASSIGNOR_CLUSTERS)")]
GroupId = Annotated[str, Path(min_length=1, max_length=MAX_GROUP_ID, description=(
    "a group id; a '/' in it sent as %2F (`api.routes.group_paths`)"))]


def _unknown_alias(clusters: Mapping[str, Mapping[str, str]], alias: str) -> Response | None:
    """The 404 of an alias not in the settings (before any worker is asked), or None."""
    try:
        clusters_handlers.cluster_settings(clusters, alias)
    except Rejected as error:
        return reply(error.status, dumps({"detail": error.detail}))
    return None


@router.get("/clusters")
async def clusters(settings: SettingsDep) -> dict[str, list[str]]:
    """The aliases of the clusters this service reads live groups from."""
    return {"clusters": sorted(settings.clusters)}


@router.get("/clusters/{alias}/groups", responses=CLUSTER_REFUSED)
async def cluster_groups(
        alias: Alias, settings: SettingsDep, planner: PlannerDep,
        summary: Annotated[bool, Query(description=(
            "each group's group_id, protocol, assignor, state and member_count only (its members not read): "
            "a list to pick a group from"))] = False) -> Response:
    """A snapshot of every consumer group of the cluster: ``groups`` (the group JSON of each,
    or with `summary` what ``kafka-consumer-groups.sh --describe --state`` says of it) and
    ``skipped`` (a group that is rebalancing, unless summarised, or not a consumer group, and
    why)."""
    if (unknown := _unknown_alias(settings.clusters, alias)) is not None:
        return unknown
    status, payload, _stats = await planner.run(clusters_handlers.groups_answer, settings.clusters, alias, summary)
    return reply(status, payload)


@router.get("/clusters/{alias}/groups/{group_id:group_id}/plan", responses=CLUSTER_REFUSED)
async def cluster_group_plan(
        alias: Alias, group_id: GroupId, request: Request, settings: SettingsDep, planner: PlannerDep,
        metrics: MetricsDep,
        strategy: Annotated[StrategyName, Query(description="the strategy to plan with")] = DEFAULT_STRATEGY.name,
        generation: Annotated[int | None, Query(ge=0, le=INT32_MAX, description=(
            "the generation to stamp into sticky/cooperative user data (default: the group's next)"))] = None,
        answer_format: Annotated[AnswerFormat, Query(alias="format", description=FORMAT_DOC)] = "pairs",
        with_bytes: Annotated[bool, Query(alias="bytes", description=BYTES_DOC)] = True) -> Response:
    """One live group planned: its snapshot (as ``GET /v1/clusters/{alias}/groups/{group_id}``
    reads it, and fails) planned with `strategy`, answered as ``POST /v1/plans`` answers."""
    if not suffix_sent(request, "plan"):  # (``x%2Fplan``: the snapshot of the group ``x/plan``)
        return await cluster_group(alias, f"{group_id}/plan", settings, planner)
    if (unknown := _unknown_alias(settings.clusters, alias)) is not None:
        return unknown
    status, payload, stats = await planner.run(plans_handlers.live_plan, settings.clusters, alias, group_id, strategy,
                                               generation, settings.limits, answer_format == "columns", with_bytes)
    metrics.observe(stats)
    return reply(status, payload)


@router.get("/clusters/{alias}/groups/{group_id:group_id}", responses=CLUSTER_REFUSED)
async def cluster_group(alias: Alias, group_id: GroupId, settings: SettingsDep, planner: PlannerDep) -> Response:
    """A snapshot of one live group: the group JSON `POST /v1/whatif` and `POST /v1/plans` take
    (or name it in `POST /v1/whatif` with ``cluster`` and ``group_id``)."""
    if (unknown := _unknown_alias(settings.clusters, alias)) is not None:
        return unknown
    status, payload, _stats = await planner.run(clusters_handlers.group_answer, settings.clusters, alias, group_id)
    return reply(status, payload)
