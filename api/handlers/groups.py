"""``POST /v1/groups/{id}/sync`` and the registry's reads (``GET /v1/groups``, ``/{id}``,
``/{id}/history``) in a planning process: a group of a million partitions is 20 MB of JSON,
and the list of groups has a row for every group that ever synced.
"""

from __future__ import annotations

import logging
import time
import unicodedata
from collections.abc import Callable
from typing import Any, TypeVar

from api.errors import Rejected
from api.handlers.answers import Answer, Handled, answer, validated
from api.protocol_io import b64, unb64
from api.registry import OlderGenerationError, Registry, RegistryFullError, open_registry
from assignor.leader import LeaderCache, sync
from assignor.limits import Limits

log = logging.getLogger("api")

_Found = TypeVar("_Found")

def group_sync(group_id: str, body: bytes, limits: Limits, history: int, max_groups: int, registry_path: str
               ) -> Answer:
    """`body` is validated here with `SyncRequest`. The generation is recorded in the registry
    from here (one transaction), so a large group's state never crosses processes."""
    return answer(_group_sync, group_id, body, limits, history, max_groups, registry_path)


def _group_sync(group_id: str, body: bytes, limits: Limits, history: int, max_groups: int, registry_path: str
                ) -> Handled:
    from api.models import SyncRequest

    check_group_id(group_id)
    request = validated(SyncRequest, body).model_dump()
    registry = registry_at(registry_path)
    newest = registry.newest_generation(group_id)
    if newest is not None and request["generation"] < newest:  # (before planning; the write checks again)
        raise Rejected(409, str(OlderGenerationError(group_id, request["generation"], newest)))
    members = request["members"]
    limits.check_sizes(members=len(members), partitions=0, topics=len(request["topics"]))
    metadata: dict[str, bytes] = {}
    instance_ids: dict[str, str] = {}
    for i, member in enumerate(members):
        if member["member_id"] in metadata:
            raise Rejected(422, f"members[{i}].member_id: duplicate {member['member_id']!r}")
        metadata[member["member_id"]] = unb64(member["metadata_b64"], f"members[{i}].metadata_b64")
        if member.get("group_instance_id") is not None:
            instance_ids[member["member_id"]] = member["group_instance_id"]
    topics = {name: spec["partitions"] for name, spec in request["topics"].items()}
    racks = {name: spec["racks"] for name, spec in request["topics"].items() if spec.get("racks") is not None}
    limits.check_sizes(members=len(members), partitions=sum(topics.values()), topics=len(topics))
    started = time.perf_counter()
    result = sync(request["protocol"], request["generation"], topics, metadata, racks or None, cache=_LEADER_CACHE,
                  strategy=request.get("strategy"), instance_ids=instance_ids)
    seconds = time.perf_counter() - started
    report = result.report()
    # Kept packed (the registry unpacks on reading): a pair per partition, twice, would cost
    # this call more than the planning did.
    state, plan = result.packed_json()
    try:
        registry.record(group_id, request["generation"], request["protocol"], state, plan, report, keep=history,
                        max_groups=max_groups)
    except OlderGenerationError as error:  # (a sync of a newer generation landed while this one planned)
        raise Rejected(409, str(error)) from None
    except RegistryFullError as error:
        raise Rejected(507, str(error)) from None
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


def registered_groups(registry_path: str, after: str, limit: int) -> Answer:
    return answer(_registered_groups, registry_path, after, limit)


def _registered_groups(registry_path: str, after: str, limit: int) -> Handled:
    """A page of groups in id order; ``next`` is the ``after`` of the next page (None at the end)."""
    rows = registry_at(registry_path).groups(after, limit)
    return {"groups": rows, "next": rows[-1]["group_id"] if len(rows) == limit else None}, {}


def registered(group_id: str, registry_path: str) -> Answer:
    """The latest generation of a group (404 when the registry has none)."""
    return answer(_registered, group_id, registry_path)


def _registered(group_id: str, registry_path: str) -> Handled:
    return _of_a_group(group_id, registry_path, Registry.latest), {}


def forget(group_id: str, registry_path: str) -> Answer:
    """Delete a group from the registry (404 when it has none)."""
    return answer(_forget, group_id, registry_path)


def _forget(group_id: str, registry_path: str) -> Handled:
    deleted = _of_a_group(group_id, registry_path, Registry.delete)
    return {"group_id": group_id, "deleted_generations": deleted}, {}


def registered_history(group_id: str, registry_path: str) -> Answer:
    """One row per kept generation of a group (404 when the registry has none)."""
    return answer(_registered_history, group_id, registry_path)


def _registered_history(group_id: str, registry_path: str) -> Handled:
    rows = _of_a_group(group_id, registry_path, Registry.history)
    return {"group_id": group_id, "generations": rows}, {}


def _of_a_group(group_id: str, registry_path: str, read: Callable[[Registry, str], _Found | None]) -> _Found:
    """`read` of a valid group id from the registry; a 404 when it finds nothing (None, no
    rows, no generations deleted)."""
    check_group_id(group_id)
    found = read(registry_at(registry_path), group_id)
    if not found:
        raise no_such_group(group_id)
    return found


def no_such_group(group_id: str) -> Rejected:
    return Rejected(404, f"no group {group_id!r} in the registry")


#: The longest group id the registry takes (Kafka sets none; ids are names people choose).
MAX_GROUP_ID = 255


def check_group_id(group_id: str, where: str = "group_id") -> None:
    """422 for an id the registry would store as something else or that would mislead whoever
    reads it: empty, longer than `MAX_GROUP_ID`, holding U+FFFD (what a path's invalid UTF-8,
    such as ``%FF`` or the overlong ``%C0%AE``, decodes to: different ids would collide),
    control characters (NUL, CR, LF), format characters (U+202E turns text around) or
    unassigned ones."""
    if not group_id:
        raise Rejected(422, f"{where}: empty")
    if len(group_id) > MAX_GROUP_ID:
        raise Rejected(422, f"{where}: {len(group_id)} characters, the limit is {MAX_GROUP_ID}")
    for i, char in enumerate(group_id):
        if char == "\ufffd":
            raise Rejected(422, f"{where}: character {i} is U+FFFD (the id was not valid UTF-8)")
        if unicodedata.category(char) in _NOT_PRINTABLE:
            raise Rejected(422, f"{where}: character {i} (U+{ord(char):04X}) is not printable")


_NOT_PRINTABLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
