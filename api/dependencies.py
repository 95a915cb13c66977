"""What the routes share, held by the app (`create_app`) and reached through dependencies:
`Annotated` aliases (`PlannerDep`, ...) give each route the piece it needs; the bearer token
check; per-group locks; the error answers every /v1 call documents.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any, cast

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from api.metrics import ClaimWarnings, Metrics
from api.models import Problem
from api.pool import Planner
from api.registry import Registry
from api.settings import Settings

log = logging.getLogger("api")

#: The error answers every /v1 call can give (all with a Problem body).
ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": Problem, "description": "missing or wrong bearer token (when one is configured)"},
    413: {"model": Problem, "description": "over a configured limit, named in `detail`"},
    422: {"model": Problem, "description": "malformed input; `detail` names the field"},
    500: {"model": Problem, "description": "a planning process ended mid-request (killed); retry"},
    503: {"model": Problem, "description": "planning queue full; retry after `Retry-After` seconds"},
    504: {"model": Problem, "description": "`request_seconds`: the request planned past the time limit"},
    507: {"model": Problem, "description": "`worker_memory_mb`: the request needed more memory than a planning "
                                           "process may use (or, for a sync, the registry is full)"}}


NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": Problem, "description": "no such group in the registry"}}
#: What reading a live group (`api.handlers.clusters`) can meet besides the errors of every call.
CLUSTER_REFUSED: dict[int | str, dict[str, Any]] = {
    403: {"model": Problem, "description": "not authorized to describe the group"},
    404: {"model": Problem, "description": "no such cluster in the service's settings, or no such group"},
    409: {"model": Problem, "description": "the group is rebalancing, is not a consumer group, or its members' "
                                           "metadata does not decode"},
    503: {"model": Problem, "description": "the cluster cannot be read (unreachable, no answer in time; named in "
                                           "`detail`), the group's coordinator cannot answer for it now, or the "
                                           "planning queue is full"}}
#: What a sync can meet in the registry besides the errors of every call.
SYNC_REFUSED: dict[int | str, dict[str, Any]] = {
    409: {"model": Problem, "description": "a generation older than the group's latest, named in `detail`"},
    507: {"model": Problem, "description": "a new group while the registry holds `ASSIGNOR_MAX_GROUPS` groups"}}


async def _settings(request: Request) -> Settings:
    return cast(Settings, request.app.state.settings)


async def _registry(request: Request) -> Registry:
    return cast(Registry, request.app.state.registry)


async def _planner(request: Request) -> Planner:
    return cast(Planner, request.app.state.planner)


async def _metrics(request: Request) -> Metrics:
    return cast(Metrics, request.app.state.metrics)


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
    return cast(GroupLocks, request.app.state.group_locks)


async def _claim_warnings(request: Request) -> ClaimWarnings:
    return cast(ClaimWarnings, request.app.state.claim_warnings)


SettingsDep = Annotated[Settings, Depends(_settings)]


RegistryDep = Annotated[Registry, Depends(_registry)]


PlannerDep = Annotated[Planner, Depends(_planner)]


MetricsDep = Annotated[Metrics, Depends(_metrics)]


GroupLocksDep = Annotated[GroupLocks, Depends(_group_locks)]


ClaimWarningsDep = Annotated[ClaimWarnings, Depends(_claim_warnings)]


#: Declares the bearer scheme in OpenAPI, so /docs has an "Authorize" button that sends the
#: token; `authorised` does the checking itself (the scheme object reads only the first header).
_BEARER = HTTPBearer(auto_error=False, description="the service's ASSIGNOR_API_TOKEN, when it has one")


async def authorised(request: Request, settings: SettingsDep,
                     _declared: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)] = None) -> None:
    """The bearer token, when one is configured: exactly one ``Authorization`` header, the
    scheme in any case (RFC 9110 11.1), the token compared in constant time as the bytes sent
    (UTF-8 for a token that is not ASCII)."""
    if settings.token is None:
        return
    values = request.headers.getlist("authorization")
    scheme, _, token = (values[0] if len(values) == 1 else "").strip().partition(" ")
    # Starlette decodes header bytes as Latin-1: encoding back gives the bytes the client sent.
    given = token.strip(" ").encode("latin-1", errors="replace")
    right = hmac.compare_digest(given, settings.token.encode("utf-8"))
    if not (right and scheme.lower() == "bearer"):
        detail = "send one Authorization header" if len(values) > 1 else "missing or wrong bearer token"
        raise HTTPException(401, detail, headers={"WWW-Authenticate": "Bearer"})


async def known_query(request: Request) -> None:
    """422 for a query parameter the route does not take (``?limt=5`` silently ignored would
    answer another question than the one asked), or one given twice."""
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    if dependant is None:
        return
    known = {param.alias for param in _query_params(dependant)}
    unknown = sorted(set(request.query_params) - known)
    if unknown:
        takes = ", ".join(sorted(known)) or "none"
        raise HTTPException(422, f"query: unknown parameter(s) {unknown}; this route takes {takes}")
    names = [name for name, _value in request.query_params.multi_items()]
    if len(names) != len(set(names)):  # which one counts is each parser's guess (as a JSON key twice)
        twice = sorted({name for name in names if names.count(name) > 1})
        raise HTTPException(422, f"query: parameter(s) {twice} given more than once")


def _query_params(dependant: Any) -> list[Any]:
    found = list(dependant.query_params)
    for sub in dependant.dependencies:
        found += _query_params(sub)
    return found
