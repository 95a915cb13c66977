"""``POST /v1/whatif`` in a planning process.
"""

from __future__ import annotations

import logging
import time

from api.errors import Rejected
from api.handlers.answers import Answer, Handled, answer, check_limits, validated
from api.handlers.groups import registered_group, registry_at
from assignor.json_format import group_from_json

log = logging.getLogger("api")

def whatif(body: bytes, limits: dict[str, int], registry_path: str) -> Answer:
    return answer(_whatif, body, limits, registry_path)


def _whatif(body: bytes, limits: dict[str, int], registry_path: str) -> Handled:
    from api.models import WhatIfRequest
    from assignor import whatif as engine

    request = validated(WhatIfRequest, body).model_dump()
    if (request["group"] is None) == (request["group_id"] is None):
        raise Rejected(422, "give exactly one of group (inline) or group_id (from the registry)")
    if request["group_id"] is not None:
        latest = registry_at(registry_path).latest(request["group_id"])
        if latest is None:
            raise Rejected(404, f"no group {request['group_id']!r} in the registry")
        request["group"] = registered_group(latest)
    group = group_from_json(request["group"])
    check_limits(group, limits)
    if len(request["events"]) > limits["max_events"]:
        raise Rejected(413, f"max_events: {len(request['events'])} events, the limit is {limits['max_events']}")
    events = [engine.parse_event(text) for text in request["events"]]
    strategies = request.get("strategies") or engine.ALL_STRATEGIES
    started = time.perf_counter()
    out = engine.run(group, events, strategies, include_plans=request.get("include_plans", False))
    return dict(out), {"seconds": time.perf_counter() - started}
