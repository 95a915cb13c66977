"""``POST /v1/plans``: plan one rebalance of a group given in the JSON group form."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request, Response

from api.bodies import documented_body, read_body, reply
from api.dependencies import MetricsDep, PlannerDep, SettingsDep
from api.handlers import plans as plans_handlers
from api.models import PlanRequest

router = APIRouter(tags=["planning"])

# The body is read as bytes and parsed in a planning worker, not by FastAPI: parsing a group of a
# million partitions is CPU work that must stay off the event loop. So `PlanRequest` documents
# the body in OpenAPI, while the worker's `json_format.group_from_json` checks it, with the same
# rules (tests/api/test_api_schema.py holds the two to the same verdicts).
_BODY = documented_body(PlanRequest)


AnswerFormat = Literal["pairs", "columns"]
FORMAT_DOC = ("`pairs`: each member's `[topic, partition]` pairs; `columns`: per member, each topic's partitions "
              "(compact for big groups)")
BYTES_DOC = "include each member's SyncGroup assignment and next user data (base64)"


@router.post("/plans", openapi_extra=_BODY)
async def plans(request: Request, planner: PlannerDep, metrics: MetricsDep, settings: SettingsDep,
                answer_format: Annotated[AnswerFormat, Query(alias="format", description=FORMAT_DOC)] = "pairs",
                with_bytes: Annotated[bool, Query(alias="bytes", description=BYTES_DOC)] = True) -> Response:
    """Plan one rebalance of a group given in the JSON group form.

    Returns the assignment, per member the SyncGroup ``assignment_b64`` and the
    ``user_data_b64`` it will send next (unless ``bytes=false``), and the oracle's report
    (``metrics``, dropped claims included).
    """
    status, payload, stats = await planner.run(plans_handlers.plan, await read_body(request), settings.limits,
                                               answer_format == "columns", with_bytes)
    metrics.observe(stats)
    return reply(status, payload)
