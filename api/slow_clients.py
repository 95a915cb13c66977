"""Read timeouts for HTTP/1.1 connections: a client that does not finish its request's headers
in time, or stops sending its body, is disconnected.

uvicorn times out only an idle kept-alive connection; a connection that sends part of a request
line and then nothing (slowloris), or a body that stalls half-way, stays open for good, holding a
file descriptor and, for a body, the bytes spooled so far. `GuardedH11Protocol` is uvicorn's
HTTP/1.1 protocol with two more timers, run by `python -m api` (`--http`):

- headers: a request's line and headers must arrive within ``header_seconds`` of the connection
  opening or of the previous answer (a trickle of bytes does not extend it);
- body: once the headers are in, the connection may be silent at most ``body_idle_seconds``
  between two pieces of the body.

When one runs out, the connection is closed: a handler reading the body sees the client leave
(`api.bodies.read_body` removes what it spooled). One timer per connection, re-armed only when it
fires, so a fast client costs a dictionary update per read and nothing more.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from api.settings import Settings

log = logging.getLogger("api")

__all__ = ["GuardedH11Protocol"]


class GuardedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with header and body read timeouts (see the module)."""

    #: Set by `configure` (`python -m api` calls it from its settings before serving).
    header_seconds: float = Settings.header_seconds
    body_idle_seconds: float = Settings.body_idle_seconds

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._timer: asyncio.TimerHandle | None = None
        self._request_since = 0.0  # when the request now being read began to be awaited
        self._last_read = 0.0

    @classmethod
    def configure(cls, settings: Settings) -> None:
        cls.header_seconds, cls.body_idle_seconds = settings.header_seconds, settings.body_idle_seconds

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._request_since = self._last_read = self.loop.time()
        self._arm(self.header_seconds)

    def data_received(self, data: bytes) -> None:
        self._last_read = self.loop.time()
        super().data_received(data)
        if self._timer is None and self._reading():
            self._arm(self._remaining())

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # The next request's headers are awaited from now (uvicorn's keep-alive timer closes
        # the connection sooner if nothing at all comes).
        self._request_since = self.loop.time()
        if self._timer is None and self._reading():
            self._arm(self._remaining())

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _reading(self) -> bool:
        """Whether a request is being awaited or read: its headers (IDLE) or its body."""
        return not self.transport.is_closing() and self.conn.their_state in (h11.IDLE, h11.SEND_BODY)

    def _remaining(self) -> float:
        """Seconds left before the phase being read times out (infinite when its limit is 0)."""
        now = self.loop.time()
        if self.conn.their_state is h11.SEND_BODY:
            limit, since = self.body_idle_seconds, self._last_read
        else:
            limit, since = self.header_seconds, self._request_since
        return since + limit - now if limit > 0 else float("inf")

    def _arm(self, seconds: float) -> None:
        self._disarm()
        if seconds != float("inf"):
            self._timer = self.loop.call_later(max(seconds, 0.0), self._check)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _check(self) -> None:
        self._timer = None
        if not self._reading():
            return  # the request is in (or the connection is closing): the handler has it
        waiting_on_us = (self.flow.read_paused  # the handler has not taken what came yet
                         or (self.cycle is not None and not self.cycle.response_complete
                             and self.conn.their_state is h11.IDLE))  # an answer is being written
        if waiting_on_us:  # the client's clock starts again once we read on
            self._last_read = self.loop.time()
            self._arm(max(self.body_idle_seconds, 1.0))
            return
        left = self._remaining()
        if left > 0:
            self._arm(left)
            return
        phase = "its body" if self.conn.their_state is h11.SEND_BODY else "its request headers"
        log.info("closing a connection from %s: %s stalled past the read timeout", _client(self.client), phase)
        self.transport.close()


def _client(address: tuple[str, int] | None) -> str:
    return f"{address[0]}:{address[1]}" if address else "a client"
