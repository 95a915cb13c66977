"""``POST /v1/simulations`` in a planning process.
"""

from __future__ import annotations

import logging
import time

from api.errors import Rejected
from api.handlers.answers import Answer, Handled, answer, validated
from assignor.limits import Limits

log = logging.getLogger("api")

def simulation(body: bytes, limits: Limits) -> Answer:
    """`body` is validated here with `SimulationRequest`."""
    return answer(_simulation, body, limits)


def _simulation(body: bytes, limits: Limits) -> Handled:
    from api.models import SimulationRequest
    from assignor.partitioners import simulate

    request = validated(SimulationRequest, body).model_dump()
    if (request.get("preset") is None) == (request.get("runs") is None):
        raise Rejected(422, "give exactly one of preset or runs")
    if request.get("preset") is not None:
        configs = simulate.preset(request["preset"], request.get("records"), request.get("seed"))
    else:
        configs = [simulate.Config(**{**run, "brokers": tuple(run["brokers"])}) for run in request["runs"]]
    limits.check_simulation(configs)  # (all runs together, before the first)
    started = time.perf_counter()
    results = [simulate.run(config, limits=limits) for config in configs]
    out = {"preset": request.get("preset"), "runs": [r.to_json() for r in results]}
    return out, {"seconds": time.perf_counter() - started}
