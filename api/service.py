"""What the routes share, held by the app (`create_app`) and reached through dependencies: the
planning pool (`Planner`), the metrics (`Metrics`), the body limit (`BodyLimit`), the bearer
token check, and per-group locks. `Annotated` aliases (`PlannerDep`, ...) give each route the
piece it needs."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import multiprocessing
import os
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Annotated

from fastapi import Depends, HTTPException, Request, Response
from fastapi.responses import StreamingResponse
from prometheus_client import CollectorRegistry, Counter, Histogram
from pydantic import BaseModel

from api import work
from api.models import Problem
from api.registry import Registry
from api.settings import Settings
from assignor.solver.claims import DROP_REASONS

log = logging.getLogger("api")

#: The error answers every /v1 call can give (all with a Problem body).
ERRORS: dict[int | str, dict] = {
    401: {"model": Problem, "description": "missing or wrong bearer token (when one is configured)"},
    413: {"model": Problem, "description": "over a configured limit, named in `detail`"},
    422: {"model": Problem, "description": "malformed input; `detail` names the field"},
    503: {"model": Problem, "description": "planning queue full; retry after `Retry-After` seconds"}}
NOT_FOUND: dict[int | str, dict] = {404: {"model": Problem, "description": "no such group in the registry"}}


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
                self._executor = ProcessPoolExecutor(self.workers, mp_context=context, initializer=work.start_worker,
                                                     initargs=(os.getpid(),))
            else:
                self._executor = ThreadPoolExecutor(1)
        return self._executor

    def start(self) -> None:
        """Start every planning process now, not as the first requests come: a process pool
        starts its processes one at a time, when a request finds none idle, and starting one
        holds the event loop (20-40 ms, 60-77 ms on a slower machine), so a request that met
        it, or a /healthz call behind it, waited. Each process gets a no-op to start it; they
        arrive together, so none finds another idle."""
        pool = self._pool()
        for _ in range(max(self.workers, 1)):
            pool.submit(int)

    async def run(self, function: Callable, *args) -> tuple[int, bytes | work.Spooled, dict]:
        """`function(*args)` in the pool (`work.handed_over`: `work.Spooled` bodies and answers
        cross as files); 503 when the pool is full."""
        try:
            if self.in_flight >= self.capacity:
                raise HTTPException(503, f"planning queue full ({self.capacity} requests); retry shortly",
                                    headers={"Retry-After": "1"})
            self.in_flight += 1
            try:
                future = self._pool().submit(work.handed_over, function, *args)
                try:
                    return await asyncio.wrap_future(future)
                except asyncio.CancelledError:
                    future.add_done_callback(_discard_answer)
                    raise
            finally:
                self.in_flight -= 1
        finally:
            release(*args)  # a spooled body is read by now, or never will be

    def close(self, wait: bool = True) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=wait, cancel_futures=True)
            self._executor = None


def in_background(function: Callable, *args) -> None:
    """Run a blocking clean-up in a thread, not on the event loop: removing a large spooled file
    (its unlink, or the last close of an unlinked one) has the kernel free its pages there and
    then, tens of milliseconds per 100 MB."""
    try:
        asyncio.get_running_loop().run_in_executor(None, function, *args)
    except RuntimeError:  # no loop running (a stream finalised after the loop stopped)
        function(*args)


def release(*values) -> None:
    """Remove the files of the `work.Spooled` among `values`, in the background (`in_background`);
    removing one already gone is fine."""
    if any(isinstance(value, work.Spooled) for value in values):
        in_background(work.discard, *values)


def _discard_answer(future: Future) -> None:
    """A cancelled request's answer, when it comes: its spooled file, if any, is removed."""
    if not future.cancelled() and future.exception() is None:
        work.discard(future.result()[1])


async def read_body(request: Request) -> bytes | work.Spooled:
    """The request's body as bytes or, once past `work.SPOOL_BYTES`, written to a file a chunk
    at a time for the worker to read (`work.handed_over`): a large body joined into one bytes
    object and pickled for a worker held the event loop 75 ms per 40 MB."""
    chunks: list[bytes] = []
    size, file = 0, None
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if file is not None:
                file.write(chunk)
                continue
            chunks.append(chunk)
            if size > work.SPOOL_BYTES:
                file = work.spool_file()
                file.writelines(chunks)
                chunks = []
    except BaseException as error:
        if file is not None:
            file.close()
            release(work.Spooled(file.name, size))
        if isinstance(error, OSError):  # no room for it where bodies are spooled
            raise HTTPException(503, f"cannot take the body now ({error.strerror}); retry shortly",
                                headers={"Retry-After": "1"}) from None
        raise
    if file is None:
        return b"".join(chunks)
    file.close()
    return work.Spooled(file.name, size)


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
        self.dropped_claims = Counter("assignor_dropped_claims", "Owned-partition claims leader syncs dropped "
                                      "(assignor.solver.claims.DROP_REASONS)", ["reason"], registry=self.registry)
        for reason in DROP_REASONS:  # every reason shows, at 0 until it happens
            self.dropped_claims.labels(reason)

    def observe(self, stats: dict) -> None:
        if "partitions" in stats:
            self.plan_partitions.observe(stats["partitions"])
            self.plan_seconds.labels(stats["strategy"]).observe(stats["seconds"])
        for reason, dropped in stats.get("dropped_claims", {}).get("by_reason", {}).items():
            self.dropped_claims.labels(reason).inc(dropped["count"])


class ClaimWarnings:
    """One log warning per group and generation whose sync dropped claims (Java's leader logs
    them too): an operator sees a KAFKA-12984 zombie or stale metadata. A retried sync of a
    generation already warned about stays quiet; the groups remembered are bounded."""

    def __init__(self, remember: int = 10_000) -> None:
        self._warned: OrderedDict[str, int] = OrderedDict()
        self._remember = remember

    def sync(self, group_id: str, generation: int, dropped: dict) -> bool:
        """Log `dropped` (a report's ``dropped_claims``) unless empty or already logged."""
        if not dropped.get("count") or self._warned.get(group_id) == generation:
            return False
        self._warned[group_id] = generation
        self._warned.move_to_end(group_id)
        while len(self._warned) > self._remember:
            self._warned.popitem(last=False)
        reasons = ", ".join(f"{entry['count']} {reason}" for reason, entry in dropped["by_reason"].items())
        example = next(iter(dropped["by_reason"].values()))["first"][0]
        log.warning("group %r generation %d: dropped %d owned-partition claim(s) (%s), e.g. %s of member %r",
                    group_id, generation, dropped["count"], reasons, example["claim"], example["member"])
        return True


class Measure:
    """ASGI middleware: each request counted by method, route template and status, and timed."""

    def __init__(self, app, metrics: Metrics) -> None:
        self.app, self.metrics = app, metrics

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started, status = time.perf_counter(), 500

        async def sending(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            # The router writes the matched route into the scope it was given (this one).
            template = getattr(scope.get("route"), "path", "unmatched")
            self.metrics.requests.labels(scope["method"], template, str(status)).inc()
            self.metrics.latency.labels(template).observe(time.perf_counter() - started)


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


def documented_body(model: type[BaseModel]) -> dict:
    """The ``openapi_extra`` of a route that reads its body as bytes and has a worker parse and
    validate it (a large body is CPU work that must stay off the event loop): `model`, which the
    worker validates with, documents the body in OpenAPI."""
    return {"requestBody": {"required": True, "content": {"application/json": {
        "schema": model.model_json_schema(ref_template="#/components/schemas/{model}"),
        "example": model.model_config["json_schema_extra"]["examples"][0]}}}}


#: Answers larger than this go out a piece at a time (see `reply`).
CHUNK = 1 << 20


def reply(status: int, payload: bytes | work.Spooled) -> Response:
    """A JSON answer whose body is already bytes (made in a worker). A large one (a plan of a
    million partitions is 70 MB) is sent a megabyte at a time: written whole, its copy into the
    socket's buffer would hold the event loop for a tenth of a second. A spooled one (a worker
    left it in a file: `work.handed_over`) is read from its file a megabyte at a time."""
    if isinstance(payload, work.Spooled):
        return _spooled_reply(status, payload)
    if len(payload) <= CHUNK:
        return Response(payload, status_code=status, media_type="application/json")
    view = memoryview(payload)

    async def pieces() -> AsyncIterator[bytes]:
        for start in range(0, len(view), CHUNK):
            yield view[start : start + CHUNK]
            await _others_turn()

    return StreamingResponse(pieces(), status_code=status, media_type="application/json",
                             headers={"Content-Length": str(len(payload))})


async def _others_turn() -> None:
    """Let the event loop run whatever else is ready before the next chunk. Sending a chunk
    suspends only when the socket's buffer is full; to a client that reads as fast as it comes
    (loopback) a whole answer went out in one step of the loop: a 167 MB one held /healthz
    60-140 ms."""
    await asyncio.sleep(0)


def _spooled_reply(status: int, spooled: work.Spooled) -> Response:
    file = open(spooled.path, "rb")  # closed by the stream, or when the response is dropped
    os.unlink(spooled.path)  # the open file keeps the data: no file is left behind, whatever happens next

    async def pieces() -> AsyncIterator[bytes]:
        try:
            while chunk := file.read(CHUNK):
                yield chunk
                await _others_turn()
        finally:
            in_background(file.close)  # the last close frees the file's pages

    return StreamingResponse(pieces(), status_code=status, media_type="application/json",
                             headers={"Content-Length": str(spooled.size)})


async def _settings(request: Request) -> Settings:
    return request.app.state.settings


async def _registry(request: Request) -> Registry:
    return request.app.state.registry


async def _planner(request: Request) -> Planner:
    return request.app.state.planner


async def _metrics(request: Request) -> Metrics:
    return request.app.state.metrics


class GroupLocks:
    """One lock per group, kept only while a sync of that group runs or waits: the service sees
    every group id that ever synced, and keeping a lock for each would grow without bound."""

    def __init__(self) -> None:
        self._held: dict[str, tuple[asyncio.Lock, int]] = {}  # group id -> (lock, syncs using it)

    def __len__(self) -> int:
        return len(self._held)

    @contextlib.asynccontextmanager
    async def hold(self, group_id: str) -> AsyncIterator[None]:
        # One event loop: nothing runs between reading and writing the entry.
        lock, users = self._held.get(group_id, (None, 0))
        lock = lock or asyncio.Lock()
        self._held[group_id] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._held[group_id]
            if users == 1:
                del self._held[group_id]
            else:
                self._held[group_id] = (lock, users - 1)


async def _group_locks(request: Request) -> GroupLocks:
    return request.app.state.group_locks


async def _claim_warnings(request: Request) -> ClaimWarnings:
    return request.app.state.claim_warnings


SettingsDep = Annotated[Settings, Depends(_settings)]
RegistryDep = Annotated[Registry, Depends(_registry)]
PlannerDep = Annotated[Planner, Depends(_planner)]
MetricsDep = Annotated[Metrics, Depends(_metrics)]
GroupLocksDep = Annotated[GroupLocks, Depends(_group_locks)]
ClaimWarningsDep = Annotated[ClaimWarnings, Depends(_claim_warnings)]


async def authorised(request: Request, settings: SettingsDep) -> None:
    """The bearer token, when one is configured (compared in constant time)."""
    if settings.token is None:
        return
    given = request.headers.get("authorization", "").encode()
    if not hmac.compare_digest(given, f"Bearer {settings.token}".encode()):
        raise HTTPException(401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"})
