"""The FastAPI application factory: ``uvicorn --factory api.app:create_app``.

Planning (plans, leader syncs, what-if) runs in a process pool sized to the machine, behind a
bounded queue: when the queue is full the answer is 503 with ``Retry-After``, and the event loop
stays free for ``/healthz`` and the page. Bad input is a 4xx naming the field or limit.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import multiprocessing
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from starlette.exceptions import HTTPException as StarletteHTTPException

from api import protocol_io, work
from api.models import (
    DecodeRequest,
    EncodeRequest,
    PartitionsRequest,
    PlanRequest,
    Problem,
    SimulationRequest,
    SyncRequest,
    WhatIfRequest,
)
from api.registry import open_registry
from api.settings import Settings
from assignor.partitioners import murmur2_many, partition_function
from assignor.protocol import ProtocolError

PAGE = Path(__file__).with_name("page.html")

#: The error answers every /v1 call can give (all with a Problem body).
ERRORS = {401: {"model": Problem, "description": "missing or wrong bearer token (when one is configured)"},
          413: {"model": Problem, "description": "over a configured limit, named in `detail`"},
          422: {"model": Problem, "description": "malformed input; `detail` names the field"},
          503: {"model": Problem, "description": "planning queue full; retry after `Retry-After` seconds"}}
NOT_FOUND = {404: {"model": Problem, "description": "no such group in the registry"}}


class Planner:
    """A pool of planning workers with a bounded number of requests in it."""

    def __init__(self, settings: Settings) -> None:
        self.capacity = max(settings.workers, 1) + max(settings.max_pending, 0)
        self.workers = settings.workers
        self._executor: Executor | None = None
        self.in_flight = 0

    def _pool(self) -> Executor:
        if self._executor is None:
            if self.workers > 0:
                # forkserver: workers start from a clean process, not a fork of a threaded server.
                context = multiprocessing.get_context("forkserver")
                self._executor = ProcessPoolExecutor(self.workers, mp_context=context)
            else:
                self._executor = ThreadPoolExecutor(1)
        return self._executor

    async def run(self, function: Callable, *args) -> work.Answer:
        if self.in_flight >= self.capacity:
            raise HTTPException(503, f"planning queue full ({self.capacity} requests); retry shortly",
                                headers={"Retry-After": "1"})
        self.in_flight += 1
        try:
            return await asyncio.wrap_future(self._pool().submit(function, *args))
        finally:
            self.in_flight -= 1

    def close(self, wait: bool = True) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=wait, cancel_futures=True)
            self._executor = None


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("assignor_http_requests", "HTTP requests", ["method", "route", "status"],
                                registry=self.registry)
        self.latency = Histogram("assignor_http_request_seconds", "HTTP request latency", ["route"],
                                 registry=self.registry)
        self.plan_partitions = Histogram("assignor_plan_partitions", "Partitions per planned group",
                                         buckets=(10, 100, 1_000, 10_000, 100_000, 1_000_000, float("inf")),
                                         registry=self.registry)
        self.plan_seconds = Histogram("assignor_plan_seconds", "Time spent planning", ["strategy"],
                                      registry=self.registry)

    def observe(self, stats: dict) -> None:
        if "partitions" in stats:
            self.plan_partitions.observe(stats["partitions"])
            self.plan_seconds.labels(stats["strategy"]).observe(stats["seconds"])


class BodyLimit:
    """ASGI middleware: 413 for a body over the limit, by Content-Length or as it streams in."""

    def __init__(self, app, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            return await self._reject(send)
        seen = 0

        async def counting_receive():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge
            return message

        try:
            await self.app(scope, counting_receive, send)
        except _TooLarge:
            await self._reject(send)

    async def _reject(self, send) -> None:
        body = json.dumps({"detail": f"max_body_bytes: the request body is over the limit of {self.limit} bytes"})
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body.encode()})


class _TooLarge(Exception):
    pass


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings.from_env()
    registry = open_registry(settings.registry)
    planner = Planner(settings)
    metrics = Metrics()
    group_locks: dict[str, asyncio.Lock] = {}
    limits = settings.limits()

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        yield
        planner.close()

    app = FastAPI(title="kafka-sticky-assignor", version="0.1.0", lifespan=lifespan,
                  description="Kafka consumer-group assignment planning (sticky KIP-54/341, cooperative-sticky "
                              "KIP-429, range, roundrobin), rebalance what-if, the consumer protocol on the wire "
                              "and Java-exact keyed partitioning.")
    app.state.settings, app.state.registry, app.state.planner, app.state.metrics = settings, registry, planner, metrics

    @app.middleware("http")
    async def measure(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        started = time.perf_counter()
        response = await call_next(request)
        route = request.scope.get("route")
        template = getattr(route, "path", "unmatched")
        metrics.requests.labels(request.method, template, str(response.status_code)).inc()
        metrics.latency.labels(template).observe(time.perf_counter() - started)
        return response

    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_request: Request, error: RequestValidationError) -> Response:
        """422 with one readable line per problem, each naming the field (``body.members.0.id``)."""
        problems = ["{}: {}".format(".".join(str(part) for part in e["loc"]), e["msg"]) for e in error.errors()]
        return reply(422, json.dumps({"detail": "; ".join(problems[:20])}).encode())

    @app.exception_handler(StarletteHTTPException)  # FastAPI's own HTTPException derives from it
    async def http_error(_request: Request, error: StarletteHTTPException) -> Response:
        # FastAPI answers 400 to a body it cannot parse; malformed JSON is a 422 like any bad field.
        status, detail = error.status_code, error.detail
        if status == 400:
            status, detail = 422, f"body: not valid JSON ({detail})"
        return Response(json.dumps({"detail": detail}), status_code=status, media_type="application/json",
                        headers=error.headers)

    async def authorised(request: Request) -> None:
        if settings.token is None:
            return
        if request.headers.get("authorization", "") != f"Bearer {settings.token}":
            raise HTTPException(401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"})

    v1 = APIRouter(prefix="/v1", dependencies=[Depends(authorised)], responses=ERRORS)

    def reply(status: int, payload: bytes) -> Response:
        return Response(payload, status_code=status, media_type="application/json")

    # -- health ------------------------------------------------------------------------------

    @app.get("/healthz", tags=["health"])
    async def healthz() -> dict:
        """Liveness: answers from the event loop, whatever the planners are doing."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"], responses={503: {"model": Problem, "description": "registry unreachable"}})
    async def readyz() -> Response:
        """Readiness: the registry answers."""
        if await run_in_threadpool(registry.ping):
            return reply(200, b'{"status": "ready"}')
        return reply(503, b'{"detail": "registry unreachable"}')

    @app.get("/metrics", tags=["health"], response_class=Response,
             responses={200: {"content": {CONTENT_TYPE_LATEST: {"schema": {"type": "string"}}},
                              "description": "Prometheus text format"}})
    async def prometheus() -> Response:
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page() -> HTMLResponse:
        return HTMLResponse(PAGE.read_text(encoding="utf-8"))

    # -- planning ----------------------------------------------------------------------------

    @v1.post("/plans", tags=["planning"],
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                 "schema": PlanRequest.model_json_schema(ref_template="#/components/schemas/{model}"),
                 "example": PlanRequest.model_config["json_schema_extra"]["examples"][0]}}}})
    async def plans(request: Request) -> Response:
        """Plan one rebalance of a group given in the JSON group form.

        Returns the assignment, per member the SyncGroup ``assignment_b64`` and the
        ``user_data_b64`` it will send next, and the oracle's report (``metrics``).
        """
        status, payload, stats = await planner.run(work.plan, await request.body(), limits)
        metrics.observe(stats)
        return reply(status, payload)

    @v1.post("/groups/{group_id}/sync", tags=["groups"])
    async def group_sync(group_id: str, body: SyncRequest) -> Response:
        """The remote-assignor call of a group leader: raw JoinGroup metadata in, SyncGroup
        assignment bytes out. The generation is recorded in the registry."""
        lock = group_locks.setdefault(group_id, asyncio.Lock())
        async with lock:  # one sync at a time per group: plan and record are one step
            status, payload, stats = await planner.run(work.group_sync, group_id, body.model_dump(), limits,
                                                       settings.registry)
        metrics.observe(stats)
        return reply(status, payload)

    @v1.get("/groups", tags=["groups"])
    async def groups() -> dict:
        """Registered groups: latest generation and how many were recorded."""
        return {"groups": await run_in_threadpool(registry.groups)}

    @v1.get("/groups/{group_id}", tags=["groups"], responses=NOT_FOUND)
    async def group(group_id: str) -> dict:
        """The latest recorded state (members as they joined) and plan of a group."""
        latest = await run_in_threadpool(registry.latest, group_id)
        if latest is None:
            raise HTTPException(404, f"no group {group_id!r} in the registry")
        return latest

    @v1.get("/groups/{group_id}/history", tags=["groups"], responses=NOT_FOUND)
    async def history(group_id: str) -> dict:
        """One row per recorded generation: members, partitions moved, balance score."""
        rows = await run_in_threadpool(registry.history, group_id)
        if not rows:
            raise HTTPException(404, f"no group {group_id!r} in the registry")
        return {"group_id": group_id, "generations": rows}

    @v1.post("/whatif", tags=["planning"], responses=NOT_FOUND)
    async def whatif(body: WhatIfRequest) -> Response:
        """Replay events on a group under each strategy: moves, revocations, rounds, balance."""
        request = body.model_dump()
        if (body.group is None) == (body.group_id is None):
            raise HTTPException(422, "give exactly one of group (inline) or group_id (from the registry)")
        if body.group_id is not None:
            latest = await run_in_threadpool(registry.latest, body.group_id)
            if latest is None:
                raise HTTPException(404, f"no group {body.group_id!r} in the registry")
            request["group"] = _registered_group(latest)
        status, payload, _stats = await planner.run(work.whatif, request, limits)
        return reply(status, payload)

    @v1.post("/simulations", tags=["partitioning"])
    async def simulations(body: SimulationRequest) -> Response:
        """Run the producer simulator: a preset (``kip794-series1``, ``kip794-series2``,
        ``kip480``), optionally shortened to ``records``, or up to 8 runs of your own. Each run
        reports throughput, latency percentiles, bytes and batches per broker, and a timeline."""
        status, payload, _stats = await planner.run(work.simulation, body.model_dump(), limits)
        return reply(status, payload)

    # -- wire formats and partitioning ------------------------------------------------------------

    @v1.post("/protocol/decode", tags=["protocol"])
    async def protocol_decode(body: DecodeRequest) -> dict:
        """Decode consumer-protocol bytes (base64) into JSON."""
        try:
            return {"type": body.type, "value": protocol_io.decode(body.type, work.unb64(body.data_b64, "data_b64"))}
        except work.Rejected as error:
            raise HTTPException(error.status, error.detail) from None
        except ProtocolError as error:
            raise HTTPException(422, str(error)) from None

    @v1.post("/protocol/encode", tags=["protocol"])
    async def protocol_encode(body: EncodeRequest) -> dict:
        """Encode JSON (the fields `decode` returns) into consumer-protocol bytes, base64."""
        try:
            data = protocol_io.encode(body.type, body.version, body.value)
        except ProtocolError as error:
            raise HTTPException(422, str(error)) from None
        return {"type": body.type, "version": body.version, "data_b64": base64.b64encode(data).decode()}

    @v1.post("/partitions", tags=["partitioning"])
    async def partitions(body: PartitionsRequest) -> dict:
        """The partition of each key: Java's producer formula (murmur2 over all partitions) or
        librdkafka's CRC32 or FNV-1a hash partitioner."""
        try:
            keys = [base64.b64decode(k, validate=True) if body.encoding == "base64" else k.encode("utf-8")
                    for k in body.keys]
        except (binascii.Error, ValueError) as error:
            what = "base64" if body.encoding == "base64" else "UTF-8 (a lone surrogate?)"
            raise HTTPException(422, f"keys: not valid {what} ({error})") from None
        if body.partitioner != "murmur2":
            return {"partitions": [partition_function(body.partitioner, key, body.partitions) for key in keys]}
        hashes = murmur2_many(keys) if keys else []
        return {"partitions": [int(h & 0x7FFFFFFF) % body.partitions for h in hashes]}

    app.include_router(v1)
    return app


def _registered_group(latest: dict[str, Any]) -> dict:
    """The registered group as it stands after its latest plan: members own what they were given."""
    state, assignment = latest["state"], latest["plan"]["assignment"]
    members = [{**m, "owned": assignment.get(m["id"], []), "generation": latest["generation"]}
               for m in state["members"]]
    return {**state, "members": members}

