"""``POST /v1/simulations``: the producer simulator (KIP-480, KIP-794)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from api.bodies import documented_body, read_body, reply
from api.dependencies import PlannerDep, SettingsDep
from api.handlers import simulations as simulations_handlers
from api.models import SimulationRequest

router = APIRouter(tags=["partitioning"])


# The body is small when valid, but a hostile one can be any size up to the body limit: a planning
# worker parses and validates it (with `SimulationRequest`), as every other body.
@router.post("/simulations", openapi_extra=documented_body(SimulationRequest))
async def simulations(request: Request, planner: PlannerDep, settings: SettingsDep) -> Response:
    """Run the producer simulator: a preset (``kip794-series1``, ``kip794-series2``,
    ``kip480``), optionally shortened to ``records``, or up to 8 runs of your own. Each run
    reports throughput, latency percentiles, bytes and batches per broker, and a timeline."""
    status, payload, _stats = await planner.run(simulations_handlers.simulation, await read_body(request),
                                                settings.limits)
    return reply(status, payload)
