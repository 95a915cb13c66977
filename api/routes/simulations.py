"""``POST /v1/simulations``: the producer simulator (KIP-480, KIP-794)."""

from __future__ import annotations

from fastapi import APIRouter, Response

from api import work
from api.models import SimulationRequest
from api.service import PlannerDep, SettingsDep, reply

router = APIRouter(tags=["partitioning"])


@router.post("/simulations")
async def simulations(body: SimulationRequest, planner: PlannerDep, settings: SettingsDep) -> Response:
    """Run the producer simulator: a preset (``kip794-series1``, ``kip794-series2``,
    ``kip480``), optionally shortened to ``records``, or up to 8 runs of your own. Each run
    reports throughput, latency percentiles, bytes and batches per broker, and a timeline."""
    status, payload, _stats = await planner.run(work.simulation, body.model_dump(), settings.limits())
    return reply(status, payload)
