"""The service's ASGI middleware: per-request metrics (`Measure`), the body limit and budget
(`BodyLimit`, `BodyBudget`), and security headers with the Host check (`SecurityHeaders`).
"""

from __future__ import annotations

import base64
import hashlib
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


#: Headers on every answer: no MIME sniffing, no referrer sent on, never framed, a browsing
#: context and resources of our own origin only.
_ALWAYS = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
           (b"x-frame-options", b"DENY"), (b"cross-origin-opener-policy", b"same-origin"),
           (b"cross-origin-resource-policy", b"same-origin")]
#: An answer that is data (JSON, metrics): nothing in it may run or load anything.
_DATA_POLICY = b"default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
#: Swagger UI and ReDoc (fastapi-offline's assets, served here): their own scripts and styles,
#: the inline start-up script they are rendered with, ReDoc's worker.
_DOCS_POLICY = (b"default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
                b"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; "
                b"frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
_DOCS_PATHS = ("/docs", "/redoc", "/static-offline-docs/")


def page_policy(html: str) -> bytes:
    """The page's Content-Security-Policy: its inline script and style by their hashes (CSP3),
    nothing else inline, requests to this origin only, never framed (the page holds a token
    field: a frame on another site could lure keystrokes into it)."""
    scripts = " ".join(f"'sha256-{_digest(block)}'" for block in _blocks(html, "script")) or "'none'"
    styles = " ".join(f"'sha256-{_digest(block)}'" for block in _blocks(html, "style")) or "'none'"
    return (f"default-src 'none'; script-src {scripts}; style-src {styles}; img-src 'self' data:; "
            "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'").encode()


def _blocks(html: str, tag: str) -> list[str]:
    found, start = [], 0
    while (at := html.find(f"<{tag}>", start)) >= 0:
        end = html.index(f"</{tag}>", at)
        found.append(html[at + len(tag) + 2 : end])
        start = end
    return found


def _digest(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


class SecurityHeaders:
    """ASGI middleware: the headers of `_ALWAYS` and a Content-Security-Policy on every answer
    (the page's own, the docs', or none-of-anything for data), and the Host header checked
    against the allowed names (a DNS-rebinding page reaches the service under its own name)."""

    def __init__(self, app: ASGIApp, allowed_hosts: tuple[str, ...], page: bytes) -> None:
        self.app, self.allowed, self.page = app, tuple(h.lower() for h in allowed_hosts), page

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope["path"]
        policy = self.page if path == "/" else _DOCS_POLICY if path.startswith(_DOCS_PATHS) else _DATA_POLICY

        async def guarded(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"server"]
                message = {**message, "headers": [*headers, *_ALWAYS, (b"content-security-policy", policy)]}
            await send(message)

        host = _host_of(scope)
        if "*" not in self.allowed and not any(_matches(host, allowed) for allowed in self.allowed):
            body = json.dumps({"detail": f"host: {host!r} is not among the names this service answers to "
                                         "(ASSIGNOR_ALLOWED_HOSTS)"}).encode()
            await guarded({"type": "http.response.start", "status": 400,
                           "headers": [(b"content-type", b"application/json")]})
            await guarded({"type": "http.response.body", "body": body})
            return None
        return await self.app(scope, receive, guarded)


def _host_of(scope: Scope) -> str:
    """The Host header's name, without its port (``[::1]:8000`` -> ``::1``), lower-cased."""
    value: bytes = dict(scope.get("headers") or []).get(b"host", b"")
    raw = value.decode("latin-1").strip().lower()
    if raw.startswith("["):
        return raw[1 : raw.find("]")] if "]" in raw else raw
    return raw.rsplit(":", 1)[0] if raw.count(":") == 1 else raw


def _matches(host: str, allowed: str) -> bool:
    if allowed.startswith("*."):
        return host.endswith(allowed[1:]) and host != allowed[2:]
    return host == allowed.strip("[]")
