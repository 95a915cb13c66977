"""``POST /v1/partitions``: the partition of each key, as a producer would choose it."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from api.bodies import documented_body, read_body, reply
from api.dependencies import MetricsDep, PlannerDep, SettingsDep
from api.handlers import partitions as partitions_handlers
from api.models import PartitionsRequest

router = APIRouter(tags=["partitioning"])

# A million keys are CPU work (parsing, decoding, hashing): all of it runs in a planning worker,
# which validates the body with `PartitionsRequest`.
@router.post("/partitions", openapi_extra=documented_body(PartitionsRequest))
async def partitions(request: Request, planner: PlannerDep, metrics: MetricsDep, settings: SettingsDep) -> Response:
    """The partition of each key: Java's producer formula (murmur2 over all partitions) or
    librdkafka's CRC32 or FNV-1a hash partitioner, each vectorised."""
    status, payload, stats = await planner.run(partitions_handlers.partitions, await read_body(request),
                                               settings.limits)
    metrics.observe(stats)
    return reply(status, payload)
