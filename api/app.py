"""The FastAPI application factory (``python -m api`` serves it: see `api.__main__`, which sends no
``server`` header and sets the timeouts; ``uvicorn --factory api.app:create_app`` runs it with
uvicorn's own defaults, a ``server: uvicorn`` header among them).

`create_app` builds the shared pieces (`api.pool`, `api.metrics`, the registry, per-group locks
from `api.dependencies`), installs the body limit and the error handlers, and includes one router per resource
(`api.routes`). Planning (plans, leader syncs, what-if, simulations) runs in a process pool sized
to the machine, behind a bounded queue: when the queue is full the answer is 503 with
``Retry-After``, and the event loop stays free for ``/healthz`` and the page. Bad input is a 4xx
naming the field or limit.
"""

from __future__ import annotations

import gc
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.routing import Match, Route

from api import transport
from api.bodies import hoist_definitions, reply
from api.dependencies import ERRORS, GroupLocks, authorised, known_query
from api.errors import field_path
from api.metrics import ClaimWarnings, Metrics
from api.middleware import BodyBudget, BodyLimit, Measure, SecurityHeaders, page_policy
from api.pool import Planner
from api.registry import open_registry
from api.routes import clusters, groups, health, partitions, plans, protocol, simulations, whatif
from api.settings import Settings

log = logging.getLogger("api")

#: The /v1 resources, each its own module of `api.routes`.
V1_ROUTERS = (plans, groups, whatif, simulations, protocol, partitions, clusters)


def create_app(settings: Settings | None = None) -> FastAPI:
    """The service, with `settings` (from the environment when omitted)."""
    settings = settings or Settings.from_env()
    planner = Planner(settings)
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        # What exists now lives as long as the service (FastAPI, pydantic's schemas, the routes:
        # some 70,000 objects): out of the cyclic collector's sight, a full collection no longer
        # walks them, which held the event loop about 20 ms each time.
        gc.freeze()
        for path in transport.sweep_spool():
            log.warning("removed %s, left by a process that no longer runs (killed mid-request)", path)
        planner.start()  # before the first request, which would otherwise wait for it
        yield
        planner.close()

    # /docs and /redoc from assets installed with fastapi-offline (Swagger UI, ReDoc): they render
    # on networks that cannot reach a CDN, and run no code fetched from elsewhere.
    app = FastAPIOffline(title="kafka-sticky-assignor", version="0.1.0", lifespan=lifespan, favicon_url="/favicon.svg",
                  description="Kafka consumer-group assignment planning (sticky KIP-54/341, cooperative-sticky "
                              "KIP-429, range, roundrobin), rebalance what-if, the consumer protocol on the wire "
                              "and Java-exact keyed partitioning.")
    app.state.settings, app.state.planner, app.state.metrics = settings, planner, metrics
    app.state.registry = open_registry(settings.registry)
    app.state.group_locks = GroupLocks()
    app.state.claim_warnings = ClaimWarnings()

    # Plain ASGI middleware (not @app.middleware, whose task group would turn the body limit's
    # signal into a 500); the last added runs first: every answer, 413s included, is measured,
    # and every answer, a refused Host's included, carries the security headers.
    app.state.body_budget = BodyBudget(settings.body_budget_bytes)
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes, budget=app.state.body_budget)
    app.add_middleware(Measure, metrics=metrics)
    assert settings.allowed_hosts is not None  # (settled by Settings)
    app.add_middleware(SecurityHeaders, allowed_hosts=settings.allowed_hosts,
                       page=page_policy(health.rendered_page()))
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(StarletteHTTPException, _http_error)  # FastAPI's HTTPException derives from it
    app.add_exception_handler(ClientDisconnect, _client_left)

    app.include_router(health.router)
    v1 = APIRouter(prefix="/v1", dependencies=[Depends(authorised), Depends(known_query)], responses=ERRORS)
    for resource in V1_ROUTERS:
        v1.include_router(resource.router)
    app.include_router(v1)
    generated = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = hoist_definitions(generated())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


async def _invalid_request(_request: Request, error: Exception) -> Response:
    """422 with one readable line per problem, each naming the field (``members[0].id``)."""
    assert isinstance(error, RequestValidationError)  # registered for it alone
    problems = [f"{field_path(e['loc'])}: {e['msg']}" for e in error.errors()]
    return reply(422, json.dumps({"detail": "; ".join(problems[:20])}).encode())


async def _client_left(_request: Request, _error: Exception) -> Response:
    """The client went away before its body was in (a load tester stopping, a client timing out):
    nobody to answer and nothing wrong here, so no error and no traceback in the log. Counted
    in the metrics as 499, the status proxies log for it."""
    return Response(status_code=499)


async def _http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, StarletteHTTPException)  # registered for it alone
    # FastAPI answers 400 to a body it cannot parse; malformed JSON is a 422 like any bad field.
    status, detail, headers = error.status_code, error.detail, error.headers
    if status == 400:
        status, detail = 422, f"body: not valid JSON ({detail})"
    if status == 405:
        # Starlette names the methods of the first route whose path matched; a path served by
        # two routes (GET and DELETE of one group) has both (RFC 9110 15.5.6).
        headers = {**(headers or {}), "Allow": ", ".join(_methods_of(request))}
    return Response(json.dumps({"detail": detail}), status_code=status, media_type="application/json",
                    headers=headers)


def _methods_of(request: Request) -> list[str]:
    methods: set[str] = set()
    for route in request.app.router.routes:
        if isinstance(route, Route | APIRoute) and route.methods and route.matches(request.scope)[0] != Match.NONE:
            methods |= route.methods
    return sorted(methods)
