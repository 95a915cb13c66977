"""``POST /v1/groups/{id}/sync`` and the registry's reads (``GET /v1/groups``, ``/{id}``,
``/{id}/history``) in a planning process: a group of a million partitions is 20 MB of JSON,
and the list of groups has a row for every group that ever synced.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from api.errors import Rejected
from api.handlers.answers import Answer, Handled, answer, validated
from api.protocol_io import b64, unb64
from api.registry import Registry, open_registry
from assignor.leader import LeaderCache, sync

log = logging.getLogger("api")

def group_sync(group_id: str, body: bytes, limits: dict[str, int], registry_path: str) -> Answer:
    """`body` is validated here with `SyncRequest`. The generation is recorded in the registry
    from here (one transaction), so a large group's state never crosses processes."""
    return answer(_group_sync, group_id, body, limits, registry_path)


def _group_sync(group_id: str, body: bytes, limits: dict[str, int], registry_path: str) -> Handled:
    from api.models import SyncRequest

    request = validated(SyncRequest, body).model_dump()
    members = request["members"]
    if len(members) > limits["max_members"]:
        raise Rejected(413, f"max_members: {len(members)} members, the limit is {limits['max_members']}")
    metadata: dict[str, bytes] = {}
    for i, member in enumerate(members):
        if member["member_id"] in metadata:
            raise Rejected(422, f"members[{i}].member_id: duplicate {member['member_id']!r}")
        metadata[member["member_id"]] = unb64(member["metadata_b64"], f"members[{i}].metadata_b64")
    topics = {name: spec["partitions"] for name, spec in request["topics"].items()}
    racks = {name: spec["racks"] for name, spec in request["topics"].items() if spec.get("racks") is not None}
    if sum(topics.values()) > limits["max_partitions"]:
        raise Rejected(413, f"max_partitions: {sum(topics.values())} partitions, the limit is "
                            f"{limits['max_partitions']}")
    started = time.perf_counter()
    result = sync(request["protocol"], request["generation"], topics, metadata, racks or None, cache=_LEADER_CACHE,
                  strategy=request.get("strategy"))
    seconds = time.perf_counter() - started
    report = result.report()
    # Kept packed (the registry unpacks on reading): a pair per partition, twice, would cost
    # this call more than the planning did.
    state, plan = result.packed_json()
    registry_at(registry_path).record(group_id, request["generation"], request["protocol"], state, plan, report,
                                    keep=limits["history"])
    out = {"group_id": group_id, "generation": request["generation"], "protocol": request["protocol"],
           "assignments": {m: b64(data) for m, data in result.assignments.items()}, "metrics": report}
    return out, {"strategy": request["protocol"] if request.get("strategy") is None else request["strategy"],
                 "partitions": report["partitions"], "seconds": seconds, "dropped_claims": report["dropped_claims"],
                 "generation": request["generation"]}


_registries: dict[str, Registry] = {}


#: The leader cache of this worker process, its owner: kept across the syncs the process plans,
#: of any group (a process pool's worker has no other place for state that outlives a call).
#: Entries are keyed by content, so groups share it safely; its one bound keeps it small.
_LEADER_CACHE = LeaderCache()


def registry_at(path: str) -> Registry:
    """One Registry (connection) per worker process and location."""
    if path not in _registries:
        _registries[path] = open_registry(path)
    return _registries[path]


def registered_group(latest: dict[str, Any]) -> dict[str, Any]:
    """The registered group as it stands after its latest plan: members own what they were given."""
    state, assignment = latest["state"], latest["plan"]["assignment"]
    members = [{**m, "owned": assignment.get(m["id"], []), "generation": latest["generation"]}
               for m in state["members"]]
    return {**state, "members": members}


def registered_groups(registry_path: str) -> Answer:
    return answer(_registered_groups, registry_path)


def _registered_groups(registry_path: str) -> Handled:
    return {"groups": registry_at(registry_path).groups()}, {}


def registered(group_id: str, registry_path: str) -> Answer:
    """The latest generation of a group (404 when the registry has none)."""
    return answer(_registered, group_id, registry_path)


def _registered(group_id: str, registry_path: str) -> Handled:
    latest = registry_at(registry_path).latest(group_id)
    if latest is None:
        raise Rejected(404, f"no group {group_id!r} in the registry")
    return latest, {}


def registered_history(group_id: str, registry_path: str) -> Answer:
    """One row per kept generation of a group (404 when the registry has none)."""
    return answer(_registered_history, group_id, registry_path)


def _registered_history(group_id: str, registry_path: str) -> Handled:
    rows = registry_at(registry_path).history(group_id)
    if not rows:
        raise Rejected(404, f"no group {group_id!r} in the registry")
    return {"group_id": group_id, "generations": rows}, {}
