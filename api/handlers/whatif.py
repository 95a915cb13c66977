"""``POST /v1/whatif`` in a planning process.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping

from api.errors import Rejected
from api.handlers.answers import Answer, Handled, answer, validated
from api.handlers.clusters import live_group
from api.handlers.groups import check_group_id, no_such_group, registered_group, registry_at
from assignor.errors import LimitExceededError
from assignor.json_format import group_from_json
from assignor.limits import Limits

log = logging.getLogger("api")

def whatif(body: bytes, limits: Limits, registry_path: str,
           clusters: Mapping[str, Mapping[str, str]] | None = None) -> Answer:
    return answer(_whatif, body, limits, registry_path, clusters or {})


def _whatif(body: bytes, limits: Limits, registry_path: str, clusters: Mapping[str, Mapping[str, str]]) -> Handled:
    from api.models import WhatIfRequest
    from assignor import whatif as engine

    request = validated(WhatIfRequest, body).model_dump()
    if (request["group"] is None) == (request["group_id"] is None):
        raise Rejected(422, "give exactly one of group (inline) or group_id (from the registry, or with cluster "
                            "a live group)")
    if request["cluster"] is not None:
        if request["group_id"] is None:
            raise Rejected(422, "cluster: name the live group with group_id")
        check_group_id(request["group_id"])
        request["group"] = live_group(clusters, request["cluster"], request["group_id"])
    elif request["group_id"] is not None:
        check_group_id(request["group_id"])
        latest = registry_at(registry_path).latest(request["group_id"])
        if latest is None:
            raise no_such_group(request["group_id"])
        request["group"] = registered_group(latest)
    if len(request["events"]) > limits.max_events:  # (before parsing them)
        raise LimitExceededError("max_events", len(request["events"]), limits.max_events, "events")
    events = []
    for i, text in enumerate(request["events"]):
        try:
            events.append(engine.parse_event(text))
        except engine.WhatIfError as error:
            raise Rejected(422, f"events[{i}]: {error}") from None
    group = group_from_json(request["group"])  # every shape before the limits (413 after 422)
    limits.check_group(group)
    timing = engine.timing_of({name: request.get(name) for name in engine.TIMING_SETTINGS})
    rules = engine.conversion_of({name: request.get(name) for name in engine.CONVERSION_SETTINGS},
                                 migrating=request.get("migrate") is not None, described=request["group"])
    started = time.perf_counter()
    if request.get("migrate") is not None:
        try:
            classic = engine.rehearsed_from(request["group"], request.get("strategies"))
            migration = engine.migrate(group, events, request["migrate"], classic,
                                       include_plans=request.get("include_plans", False), limits=limits,
                                       timing=timing, conversion_rules=rules)
        except engine.WhatIfError as error:
            raise Rejected(422, f"migrate: {error}") from None
        return {"migration": dict(migration)}, {"seconds": time.perf_counter() - started}
    strategies = request.get("strategies") or engine.compared_for(request["group"])
    out = engine.run(group, events, strategies, include_plans=request.get("include_plans", False), limits=limits,
                     timing=timing)
    return dict(out), {"seconds": time.perf_counter() - started}
