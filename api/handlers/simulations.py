"""``POST /v1/simulations`` in a planning process.
"""

from __future__ import annotations

import logging
import time

from api.errors import Rejected
from api.handlers.answers import Answer, Handled, answer, validated

log = logging.getLogger("api")

def simulation(body: bytes, limits: dict[str, int]) -> Answer:
    """`body` is validated here with `SimulationRequest`."""
    return answer(_simulation, body, limits)


def _simulation(body: bytes, limits: dict[str, int]) -> Handled:
    from api.models import SimulationRequest
    from assignor.partitioners import simulate

    request = validated(SimulationRequest, body).model_dump()
    if (request.get("preset") is None) == (request.get("runs") is None):
        raise Rejected(422, "give exactly one of preset or runs")
    if request.get("preset") is not None:
        configs = simulate.preset(request["preset"], request.get("records"), request.get("seed"))
    else:
        configs = [simulate.Config(**{**run, "brokers": tuple(run["brokers"])}) for run in request["runs"]]
    total = sum(c.records for c in configs)
    if total > limits["max_sim_records"]:
        raise Rejected(413, f"max_sim_records: {total} records in all runs, the limit is {limits['max_sim_records']}")
    started = time.perf_counter()
    results = [simulate.run(config) for config in configs]
    out = {"preset": request.get("preset"), "runs": [r.to_json() for r in results]}
    return out, {"seconds": time.perf_counter() - started}
