"""Liveness, readiness, metrics and the web page: answered from the event loop."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from api.bodies import reply
from api.dependencies import MetricsDep, PlannerDep, RegistryDep, SettingsDep, authorised
from api.models import Problem
from assignor.events import KINDS
from assignor.strategies import REGISTRY, kafka_strategy

PAGE = Path(__file__).resolve().parent.parent / "page.html"

router = APIRouter()


@router.get("/healthz", tags=["health"])
async def healthz() -> dict[str, Any]:
    """Liveness: answers from the event loop, whatever the planners are doing."""
    return {"status": "ok"}


_NOT_READY = "registry unreachable, or no planning process can plan"


@router.get("/readyz", tags=["health"], responses={503: {"model": Problem, "description": _NOT_READY}})
async def readyz(registry: RegistryDep, planner: PlannerDep) -> Response:
    """Readiness: the registry answers and every planning process runs (a process that ended is
    replaced here, and the service is ready again once its replacement runs)."""
    if not planner.revive():
        return reply(503, b'{"detail": "a planning process ended; new ones are starting"}')
    if await run_in_threadpool(registry.ping):
        return reply(200, b'{"status": "ready"}')
    return reply(503, b'{"detail": "registry unreachable"}')


@router.get("/metrics", tags=["health"], response_class=Response,
            responses={200: {"content": {CONTENT_TYPE_LATEST: {"schema": {"type": "string"}}},
                             "description": "Prometheus text format"}})
async def prometheus(request: Request, metrics: MetricsDep, settings: SettingsDep) -> Response:
    """Prometheus metrics. They hold counts and timings, no group data, so by default they need
    no token; with ``ASSIGNOR_METRICS_NEED_TOKEN=true`` (and a token set) they need the same
    bearer token as /v1."""
    if settings.metrics_need_token:
        await authorised(request, settings)
    # Built in a thread: the labels are a fixed set (`api.middleware.Measure`), but a scrape is
    # still the event loop's longest piece of work if done on it.
    text = await run_in_threadpool(generate_latest, metrics.registry)
    return Response(text, media_type=CONTENT_TYPE_LATEST)


#: The page's icon: a partition handed from one member to another, drawn in the page's colours.
_ICON = (b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" '
         b'fill="#2f6fdf"/><rect x="5" y="8" width="9" height="16" rx="2" fill="#fff"/><rect x="18" y="8" '
         b'width="9" height="16" rx="2" fill="#fff"/><path d="M10 16h12" stroke="#e0661b" stroke-width="3"/></svg>')


@router.get("/favicon.svg", include_in_schema=False)
@router.get("/favicon.ico", include_in_schema=False)
async def favicon() -> Response:
    """The icon browsers ask for (as SVG, which they all draw, also under the .ico name)."""
    return Response(_ICON, media_type="image/svg+xml", headers={"Cache-Control": "public, max-age=86400"})


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
async def page() -> HTMLResponse:
    """The what-if page, with a checkbox per registered strategy (`assignor.strategies.REGISTRY`:
    a strategy added there shows here with no change to the page) and the event kinds
    (`assignor.events.KINDS`, likewise)."""
    return HTMLResponse(rendered_page())


def rendered_page() -> str:
    """The page as served (`api.middleware.page_policy` hashes its inline script and style)."""
    # A live classic group's assignor names a protocol; the box of the strategy Kafka's clients
    # run under it (`kafka_strategy`) says so, for the rehearsal of that group's move.
    kafka = {name: strategy.protocol.name for name, strategy in REGISTRY.items()
             if kafka_strategy(strategy.protocol.name) is strategy}
    boxes = "".join(f'<label><input type="checkbox" value="{html.escape(name)}" '
                    f'data-classic="{str(strategy.protocol.classic).lower()}"'
                    + (f' data-kafka-for="{html.escape(kafka[name])}"' if name in kafka else "")
                    + f' checked>{html.escape(name)}</label>'
                    for name, strategy in REGISTRY.items())
    targets = "".join(f'<option value="{html.escape(name)}">{html.escape(name)}</option>'
                      for name, strategy in REGISTRY.items() if not strategy.protocol.classic)
    events = " · ".join(html.escape(kind.form) for kind in KINDS.values())
    return (PAGE.read_text(encoding="utf-8").replace(_STRATEGIES, boxes).replace(_MIGRATE, targets)
            .replace(_EVENTS, events))


_STRATEGIES = "<!-- STRATEGIES: one checkbox per registered strategy -->"
_EVENTS = "<!-- EVENTS: each event kind's form -->"
_MIGRATE = "<!-- MIGRATE: one option per consumer-protocol strategy -->"
