"""The service's ASGI middleware: per-request metrics (`Measure`) and the body limit and budget
(`BodyLimit`, `BodyBudget`).
"""

from __future__ import annotations

import json
import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.metrics import Metrics

log = logging.getLogger("api")

#: The methods counted by name; any other (a client may send any token as its method) is
#: ``other``, so the metrics keep a fixed set of labels whatever clients send.
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class Measure:
    """ASGI middleware: each request counted by method, route template and status, and timed."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app, self.metrics = app, metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started, status = time.perf_counter(), 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            # The router writes the matched route into the scope it was given (this one).
            template = getattr(scope.get("route"), "path", "unmatched")
            method = scope["method"] if scope["method"] in _METHODS else "other"
            self.metrics.requests.labels(method, template, str(status)).inc()
            self.metrics.latency.labels(template).observe(time.perf_counter() - started)


class BodyBudget:
    """The request-body bytes the service holds at once (`Settings.body_budget_bytes`): a
    request takes its share before its body is read (its Content-Length, or piece by piece as a
    body of unknown length arrives) and gives it back when its answer is sent. Without it, slow
    uploads that stall half-way hold whatever they sent (spooled to memory-backed files) for as
    long as their connections stay open."""

    def __init__(self, limit: int) -> None:
        self.limit, self.held = limit, 0

    def take(self, size: int) -> bool:
        if self.held + size > self.limit:
            return False
        self.held += size
        return True

    def give_back(self, size: int) -> None:
        self.held -= size


class BodyLimit:
    """ASGI middleware: 413 for a body over the limit, by Content-Length or as it streams in;
    503 with Retry-After when the bodies in flight would pass the budget (`BodyBudget`)."""

    def __init__(self, app: ASGIApp, limit: int, budget: BodyBudget) -> None:
        self.app, self.limit, self.budget = app, limit, budget

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared_header = dict(scope.get("headers") or []).get(b"content-length")
        declared = int(declared_header) if declared_header is not None and declared_header.isdigit() else None
        if declared is not None and declared > self.limit:
            return await self._reject(send, 413, f"max_body_bytes: the request body is over the limit of "
                                                 f"{self.limit} bytes")
        taken = seen = 0
        if declared:
            if not self.budget.take(declared):
                return await self._over_budget(send)
            taken = declared

        async def counting_receive() -> Message:
            nonlocal seen, taken
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge
                if seen > taken:  # (a body of unknown length, or longer than it said)
                    if not self.budget.take(seen - taken):
                        raise _OverBudget
                    taken = seen
            return message

        try:
            await self.app(scope, counting_receive, send)
        except _TooLarge:
            await self._reject(send, 413, f"max_body_bytes: the request body is over the limit of {self.limit} bytes")
        except _OverBudget:
            await self._over_budget(send)
        finally:
            self.budget.give_back(taken)

    async def _over_budget(self, send: Send) -> None:
        await self._reject(send, 503, f"body_budget_bytes: the service holds {self.budget.limit} bytes of request "
                                      "bodies at most and is full; retry shortly", [(b"retry-after", b"1")])

    async def _reject(self, send: Send, status: int, detail: str, headers: list[tuple[bytes, bytes]] | None = None
                      ) -> None:
        body = json.dumps({"detail": detail}).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), *(headers or [])]})
        await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    pass


class _OverBudget(Exception):
    pass
