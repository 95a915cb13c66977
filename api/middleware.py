"""The service's ASGI middleware: per-request metrics (`Measure`) and the body limit (`BodyLimit`).
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


class BodyLimit:
    """ASGI middleware: 413 for a body over the limit, by Content-Length or as it streams in."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            return await self._reject(send)
        seen = 0

        async def counting_receive() -> Message:
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

    async def _reject(self, send: Send) -> None:
        body = json.dumps({"detail": f"max_body_bytes: the request body is over the limit of {self.limit} bytes"})
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body.encode()})


class _TooLarge(Exception):
    pass
