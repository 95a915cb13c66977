"""The service's CPU work, as plain functions over JSON bytes, run in a process pool.

Each takes the request (its body as bytes: parsing and validating a large body is itself CPU
work, so it happens here, off the event loop) and returns ``(status, json_bytes, stats)``, where
stats are the few figures the service's metrics need, so the event loop never parses a large
answer. The pool runs them through `handed_over`, which passes large bodies and answers as files.
Errors in the caller's input are 4xx answers with the core's message, never exceptions: the core
raises `AssignorError` (and its `ProtocolError`) for input it cannot use, and those messages name
the field or the member.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import gc
import glob
import os
import select
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import orjson
from pydantic import BaseModel

from api import protocol_io
from api.errors import Rejected
from api.protocol_io import b64, unb64
from api.registry import Registry, open_registry
from assignor import validate
from assignor._arrays import gc_paused
from assignor.errors import AssignorError
from assignor.json_format import group_from_json, plan_json_of_claims
from assignor.leader import LeaderCache, sync
from assignor.model import Group
from assignor.partitioners.librdkafka import partitions_for_keys_as
from assignor.protocol import plan_bytes_of_claims
from assignor.strategies import DEFAULT_STRATEGY, Strategy, strategy_named

Answer = tuple[int, bytes, dict]


class Spooled(NamedTuple):
    """A request body or an answer in a file, handed between the service's process and a
    planning process instead of the bytes (`handed_over`)."""

    path: str
    size: int


#: Bodies and answers larger than this cross processes as files (`handed_over`).
SPOOL_BYTES = 8 << 20


def handed_over(function: Callable[..., Answer], *args: Any) -> tuple[int, bytes | Spooled, dict]:
    """`function(*args)` as the planning pool runs it, with large bodies and answers in files:
    a `Spooled` argument is read here, and an answer larger than `SPOOL_BYTES` is written to a
    file whose path goes back instead. Bytes cross processes pickled, and the service's process
    copies them whole with the interpreter held, which the event loop waits for: joining and
    pickling a 40 MB body held it 75 ms, reading and unpickling a 140 MB plan 190 ms. A file
    is written and read there a megabyte at a time (`api.service.read_body`, `reply`)."""
    status, payload, stats = function(*(_read(a) if isinstance(a, Spooled) else a for a in args))
    if len(payload) <= SPOOL_BYTES:
        return status, payload, stats
    file = spool_file()
    try:
        with file:
            file.write(payload)
    except OSError:  # no room: the answer goes the slow way, but it goes
        discard(Spooled(file.name, 0))
        return status, payload, stats
    return status, Spooled(file.name, len(payload)), stats


#: Spooled files are named this, then the PID of the process that made them (`sweep_spool`).
SPOOL_PREFIX = "kafka-sticky-assignor-"
_SHARED = "/dev/shm"


def spool_file() -> Any:
    """A new file for `Spooled` data; the caller removes it (`discard`). In memory (/dev/shm)
    when that has a gigabyte to spare, else in the temporary folder: a container's /dev/shm is
    often 64 MB, less than one large answer."""
    where = tempfile.gettempdir()
    with contextlib.suppress(OSError):
        room = os.statvfs(_SHARED)
        if room.f_bavail * room.f_frsize >= 1 << 30 and os.access(_SHARED, os.W_OK):
            where = _SHARED
    return tempfile.NamedTemporaryFile(dir=where, prefix=f"{SPOOL_PREFIX}{os.getpid()}-", suffix=".json",
                                       delete=False)


def sweep_spool() -> list[str]:
    """Remove the spooled files of processes that no longer run, and name them. A service killed
    mid-request (SIGKILL, the out-of-memory killer) cannot remove its own, and in /dev/shm they
    hold memory until the machine restarts; the service sweeps when it starts. The files of a
    running process (another service, say) stay."""
    removed = []
    for folder in dict.fromkeys((_SHARED, tempfile.gettempdir())):
        for path in glob.glob(os.path.join(glob.escape(folder), SPOOL_PREFIX + "*")):
            pid = os.path.basename(path)[len(SPOOL_PREFIX):].split("-", 1)[0]
            if pid.isdigit() and not _running(int(pid)):
                with contextlib.suppress(OSError):
                    os.unlink(path)
                    removed.append(path)
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # no signal sent: whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, as another user's
        return True
    return True


def _read(spooled: Spooled) -> bytes:
    with open(spooled.path, "rb") as file:
        return file.read()


def discard(*values: Any) -> None:
    """Remove the file of each `Spooled` among `values` (already gone is fine)."""
    for value in values:
        if isinstance(value, Spooled):
            with contextlib.suppress(OSError):
                os.unlink(value.path)


def start_worker(service: int | None = None) -> None:
    """A planning process's first step: end with the `service` process (its PID), import what
    the handlers need, then hide every object that lives as long as the process from the cyclic
    collector (`gc.freeze`). The modules, numpy's and pydantic's included, are tens of thousands
    of objects that each full collection would walk again for nothing; a plan of 10,000
    partitions allocates enough to set off such collections, and they cost it about 8% (1.7 of
    21 ms, in-process)."""
    if service is not None:
        _end_with(service)
    import api.models  # noqa: F401  (the sync, partitions and what-if handlers validate with it)

    gc.freeze()


def _end_with(pid: int) -> None:
    """Exit when process `pid` ends. A pool's worker waits for work on a queue it holds both
    ends of, so a service killed with SIGKILL left its workers (and, through them, the
    forkserver and the resource tracker) running for good, each holding its memory. A pidfd
    becomes readable when the process ends (Linux 5.3); elsewhere, a check every second."""
    try:
        handle: int | None = os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd here, or the service is gone already
        handle = None

    def watch() -> None:
        if handle is not None:
            select.select([handle], [], [])
        else:
            while _running(pid):
                time.sleep(1)
        os._exit(1)  # nobody is left to answer: no clean-up is owed

    threading.Thread(target=watch, name="end-with-service", daemon=True).start()


def _answer(handler, *args) -> Answer:
    """`handler`'s answer, with the cyclic collector paused while it runs. A 10,000-partition
    plan allocates tens of thousands of containers (the answer's pairs, the members), which set
    off a dozen young collections that each walk whatever is alive at the time, and nothing of
    it is cyclic: refcounting frees it all when `_answered` returns, before the collector is
    back. That saves about 1 ms of a 16 ms plan (in-process, alternating). A request that does
    make cycles (an exception's traceback) leaves them to the next collection."""
    with gc_paused():
        return _answered(handler, *args)


def _answered(handler, *args) -> Answer:
    try:
        out, stats = handler(*args)
        return 200, dumps(out), stats
    except Rejected as error:
        return error.status, dumps({"detail": error.detail}), {}
    except AssignorError as error:
        return 422, dumps({"detail": str(error)}), {}


def dumps(value: Any) -> bytes:
    """JSON bytes by orjson: several times faster than `json` on a plan of a million pairs."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


def _object(body: bytes) -> dict:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as error:
        # A lone surrogate escape ("\\ud800") is text no UTF-8 can hold: say so.
        what = "a string is not UTF-8, " if "surrogate" in str(error) else ""
        raise Rejected(422, f"body: not valid JSON ({what}{error})") from None
    if not isinstance(data, dict):
        raise Rejected(422, "body: expected a JSON object")
    return data


def _validated(model: type[BaseModel], body: bytes) -> Any:
    """`body` parsed (`_object` refuses lone surrogates, naming UTF-8) and validated by
    `model`, the one that documents it in OpenAPI; the first problem named, as a 422."""
    from pydantic import ValidationError

    try:
        return model.model_validate(_object(body))
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "body"
        raise Rejected(422, f"{where}: {first['msg']}") from None


def check_limits(group: Group, limits: dict[str, int]) -> None:
    """413 naming the limit when a group is larger than the service accepts."""
    if len(group.members) > limits["max_members"]:
        raise Rejected(413, f"max_members: {len(group.members)} members, the limit is {limits['max_members']}")
    partitions = sum(group.topics.values())
    if partitions > limits["max_partitions"]:
        raise Rejected(413, f"max_partitions: {partitions} partitions, the limit is {limits['max_partitions']}")


# -- POST /v1/plans ------------------------------------------------------------------------------


def plan(body: bytes, limits: dict[str, int], columns: bool = False, with_bytes: bool = True) -> Answer:
    """`columns`: the assignment as topic -> partitions per member (compact for big groups);
    `with_bytes`: each member's SyncGroup assignment and next user data, base64."""
    return _answer(_plan, body, limits, columns, with_bytes)


def _plan(body: bytes, limits: dict[str, int], columns: bool, with_bytes: bool) -> tuple[dict, dict]:
    data = _object(body)
    strategy = data.pop("strategy", DEFAULT_STRATEGY.name)
    generation = data.pop("generation", None)
    if not isinstance(strategy, str):
        raise Rejected(422, "strategy: expected a string")
    group = group_from_json(data)
    check_limits(group, limits)
    if generation is None:
        generation = max((m.generation for m in group.members), default=-1) + 1
    elif not isinstance(generation, int) or isinstance(generation, bool) or not 0 <= generation < 2**31:
        raise Rejected(422, f"generation: expected an integer in [0, 2**31), got {generation!r}")
    planned = _planned(strategy_named(strategy), group, generation, columns, with_bytes)
    out = {**planned.assignment, "strategy": strategy, "generation": generation}
    if planned.encoded is not None:
        out["members"] = {m: {"assignment_b64": b64(planned.encoded[m]), "user_data_b64": b64(planned.user_data.get(m))}
                          for m in planned.members}
    out.update(metrics=planned.report, plan_seconds=planned.seconds)
    return out, {"strategy": strategy, "partitions": planned.report["partitions"], "seconds": planned.seconds}


class Planned(NamedTuple):
    """One plan as `/v1/plans` answers it: the assignment in the asked form, each member's
    bytes (None when not asked for) and the oracle's report."""

    members: list[str]
    assignment: dict[str, Any]
    encoded: dict[str, bytes] | None
    user_data: dict[str, bytes]
    report: dict[str, Any]
    seconds: float  # planning alone


def _planned(strategy: Strategy, group: Group, generation: int, columns: bool, with_bytes: bool) -> Planned:
    """Every strategy plans on arrays, and the answer is written from them in the order its
    SyncGroup bytes list each member's partitions (Java's, for Java's strategies): no
    TopicPartition per partition made, read back and written again. A property test holds the
    answer to the plan as objects (`assign`)."""
    started = time.perf_counter()
    result = strategy.planned(group)
    seconds = time.perf_counter() - started
    layout, owner = result.layout, result.owner
    members = [m.id for m in layout.members]
    report = validate.report_of_layout(group, layout, owner, strategy)
    if report is None:
        report = validate.report(group, result.plan(strategy.name))
    encoded, user_data = plan_bytes_of_claims(result.assigned, members, strategy.protocol, generation,
                                              as_java=strategy.java) if with_bytes else (None, {})
    return Planned(members, plan_json_of_claims(result.assigned, members, columns), encoded, user_data, report, seconds)


def partitions(body: bytes) -> Answer:
    return _answer(_partitions, body)


def _partitions(body: bytes) -> tuple[dict, dict]:
    """``POST /v1/partitions`` in a worker: validate with the documented model, decode the keys,
    hash them all at once (`partitions_for_keys_as`)."""
    from api.models import PartitionsRequest

    request = _validated(PartitionsRequest, body)
    try:
        if request.encoding == "base64":
            keys = [base64.b64decode(k, validate=True) for k in request.keys]
        else:
            keys = [k.encode("utf-8") for k in request.keys]  # (valid JSON text is valid UTF-8)
    except (binascii.Error, ValueError) as error:
        what = "base64" if request.encoding == "base64" else "UTF-8"
        raise Rejected(422, f"keys: not valid {what} ({error})") from None
    started = time.perf_counter()
    placed = partitions_for_keys_as(request.partitioner, keys, request.partitions).tolist() if keys else []
    return {"partitions": placed}, {"seconds": time.perf_counter() - started}


# -- POST /v1/groups/{group_id}/sync -------------------------------------------------------------


def group_sync(group_id: str, body: bytes, limits: dict[str, int], registry_path: str) -> Answer:
    """`body` is validated here with `SyncRequest`. The generation is recorded in the registry
    from here (one transaction), so a large group's state never crosses processes."""
    return _answer(_group_sync, group_id, body, limits, registry_path)


def _group_sync(group_id: str, body: bytes, limits: dict[str, int], registry_path: str) -> tuple[dict, dict]:
    from api.models import SyncRequest

    request = _validated(SyncRequest, body).model_dump()
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
    _registry(registry_path).record(group_id, request["generation"], request["protocol"], state, plan, report,
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


def _registry(path: str) -> Registry:
    """One Registry (connection) per worker process and location."""
    if path not in _registries:
        _registries[path] = open_registry(path)
    return _registries[path]


# -- POST /v1/whatif -----------------------------------------------------------------------------


def whatif(body: bytes, limits: dict[str, int], registry_path: str) -> Answer:
    return _answer(_whatif, body, limits, registry_path)


def _whatif(body: bytes, limits: dict[str, int], registry_path: str) -> tuple[dict, dict]:
    from api.models import WhatIfRequest
    from assignor import whatif as engine

    request = _validated(WhatIfRequest, body).model_dump()
    if (request["group"] is None) == (request["group_id"] is None):
        raise Rejected(422, "give exactly one of group (inline) or group_id (from the registry)")
    if request["group_id"] is not None:
        latest = _registry(registry_path).latest(request["group_id"])
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
    return out, {"seconds": time.perf_counter() - started}


def registered_group(latest: dict[str, Any]) -> dict:
    """The registered group as it stands after its latest plan: members own what they were given."""
    state, assignment = latest["state"], latest["plan"]["assignment"]
    members = [{**m, "owned": assignment.get(m["id"], []), "generation": latest["generation"]}
               for m in state["members"]]
    return {**state, "members": members}


# -- GET /v1/groups, /v1/groups/{group_id}, .../history -------------------------------------------
# Read and written as JSON here: a group of a million partitions is 20 MB of JSON (writing it
# held the event loop 0.2 s), and the list of groups has a row for every group that ever synced.


def registered_groups(registry_path: str) -> Answer:
    return _answer(_registered_groups, registry_path)


def _registered_groups(registry_path: str) -> tuple[dict, dict]:
    return {"groups": _registry(registry_path).groups()}, {}


def registered(group_id: str, registry_path: str) -> Answer:
    """The latest generation of a group (404 when the registry has none)."""
    return _answer(_registered, group_id, registry_path)


def _registered(group_id: str, registry_path: str) -> tuple[dict, dict]:
    latest = _registry(registry_path).latest(group_id)
    if latest is None:
        raise Rejected(404, f"no group {group_id!r} in the registry")
    return latest, {}


def registered_history(group_id: str, registry_path: str) -> Answer:
    """One row per kept generation of a group (404 when the registry has none)."""
    return _answer(_registered_history, group_id, registry_path)


def _registered_history(group_id: str, registry_path: str) -> tuple[dict, dict]:
    rows = _registry(registry_path).history(group_id)
    if not rows:
        raise Rejected(404, f"no group {group_id!r} in the registry")
    return {"group_id": group_id, "generations": rows}, {}


# -- POST /v1/protocol/decode, /encode ------------------------------------------------------------


def protocol_decode(body: bytes) -> Answer:
    """`body` is validated here with `DecodeRequest`."""
    return _answer(_protocol_decode, body)


def _protocol_decode(body: bytes) -> tuple[dict, dict]:
    from api.models import DecodeRequest

    request = _validated(DecodeRequest, body)
    data = unb64(request.data_b64, "data_b64")
    return {"type": request.type, "value": protocol_io.decode(request.type, data)}, {}


def protocol_encode(body: bytes) -> Answer:
    """`body` is validated here with `EncodeRequest`."""
    return _answer(_protocol_encode, body)


def _protocol_encode(body: bytes) -> tuple[dict, dict]:
    from api.models import EncodeRequest

    request = _validated(EncodeRequest, body)
    data = protocol_io.encode(request.type, request.version, request.value)
    return {"type": request.type, "version": request.version, "data_b64": b64(data)}, {}


# -- POST /v1/simulations ------------------------------------------------------------------------


def simulation(body: bytes, limits: dict[str, int]) -> Answer:
    """`body` is validated here with `SimulationRequest`."""
    return _answer(_simulation, body, limits)


def _simulation(body: bytes, limits: dict[str, int]) -> tuple[dict, dict]:
    from api.models import SimulationRequest
    from assignor.partitioners import simulate

    request = _validated(SimulationRequest, body).model_dump()
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
