"""The planning pool (`Planner`): the processes that run the handlers, admission and its queue,
and work handed to a thread so the event loop never waits on it.
"""

from __future__ import annotations

import asyncio
import logging
import math
import multiprocessing
import os
import time
from collections.abc import Callable
from concurrent.futures import BrokenExecutor, Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any

from fastapi import HTTPException

from api import transport
from api.handlers.answers import Answer
from api.settings import Settings

log = logging.getLogger("api")

def _start_forkserver() -> None:
    """Start the process the planning processes are forked from (if it is not running), with
    the C library's allocator in place of Python's own (``PYTHONMALLOC=malloc``), which its
    children inherit. Python's allocator gives memory back a 1 MiB arena at a time, only when
    nothing lives in it: a large request leaves a few small objects in C-level caches (numpy's,
    the interpreter's), each holding an arena, and a planning process grew 1-2 MB with every
    large what-if (59 -> 102 MB over twenty 1,000-topic requests). With the C library's, each
    large request's free pages go back (`transport.handed_over`), and twenty such requests leave
    a process within 4% of where the first did. It costs the heaviest plan (1,000,000
    partitions, in a process) about 8%; the service under load (`bench.service`) no measurable
    rate.

    The variable is set for this call only: the server itself keeps Python's allocator."""
    from multiprocessing import forkserver

    saved = os.environ.get("PYTHONMALLOC")
    os.environ["PYTHONMALLOC"] = "malloc"
    try:
        forkserver.ensure_running()
    finally:
        if saved is None:
            del os.environ["PYTHONMALLOC"]
        else:
            os.environ["PYTHONMALLOC"] = saved


class Planner:
    """A pool of planning workers with a bounded number of requests in it."""

    def __init__(self, settings: Settings) -> None:
        self.capacity = max(settings.workers, 1) + max(settings.max_pending, 0)
        self.workers = settings.workers
        self.seconds = settings.request_seconds
        self.memory_mb = settings.worker_memory_mb
        self.max_wait = settings.max_wait_seconds
        self._executor: Executor | None = None
        self.in_flight = 0
        #: Recent planning time per request in a worker, seconds (an exponential average); None
        #: until a request has been planned.
        self.typical: float | None = None

    def expected_wait(self) -> float:
        """Seconds a request admitted now would wait before a worker starts it: the requests
        ahead of it in the queue times the recent planning time, over the workers."""
        ahead = self.in_flight + 1 - max(self.workers, 1)
        if ahead <= 0 or self.typical is None:
            return 0.0
        return ahead * self.typical / max(self.workers, 1)

    def admit(self) -> None:
        """Raise a 503 with ``Retry-After`` when a request must not join the queue now: it is
        full (`max_pending`), or the request would wait past `max_wait_seconds` to start. The
        routes ask before they read a body (`api.bodies.read_body`), and `run` asks again."""
        if self.in_flight >= self.capacity:
            raise HTTPException(503, f"max_pending: planning queue full ({self.capacity} requests); retry shortly",
                                headers={"Retry-After": "1"})
        wait = self.expected_wait()
        if wait > self.max_wait:
            raise HTTPException(503, f"max_wait_seconds: a request now would wait about {wait:.1f} s for a planning "
                                     f"process, past the limit of {self.max_wait:g} s; retry later",
                                headers={"Retry-After": str(max(1, math.ceil(wait - self.max_wait)))})

    def _learn(self, seconds: float) -> None:
        self.typical = seconds if self.typical is None else 0.8 * self.typical + 0.2 * seconds

    def _pool(self) -> Executor:
        if self._executor is None:
            if self.workers > 0:
                # forkserver: workers start from a clean process, not a fork of a threaded server.
                context = multiprocessing.get_context("forkserver")
                _start_forkserver()
                self._executor = ProcessPoolExecutor(self.workers, mp_context=context,
                                                     initializer=transport.start_worker,
                                                     initargs=(os.getpid(), self.memory_mb))
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

    async def run(self, function: Callable[..., Answer], *args: Any
                  ) -> tuple[int, bytes | transport.Spooled, dict[str, Any]]:
        """`function(*args)` in the pool (`transport.handed_over`: `transport.Spooled` bodies and answers
        cross as files); 503 when it may not join the queue (`admit`).

        A planning process that ends under the pool (the kernel's out-of-memory killer, a
        SIGKILL, a crash) breaks it, failing every request in it, also those that were only
        waiting: a new pool replaces it, and each such request runs once more there (planning
        writes nothing, so running it again is safe). A request whose process ends twice gets
        a 500 naming what happened."""
        try:
            self.admit()
            self.in_flight += 1
            try:
                for attempt in (1, 2):
                    pool = self._pool()
                    try:
                        status, payload, stats, seconds = await self._submit(pool, function, *args)
                    except BrokenExecutor as error:
                        self._replace(pool)
                        if attempt == 2:
                            raise HTTPException(500, f"the planning process ended: {error or type(error).__name__}; "
                                                     "the service started a new one") from None
                        continue
                    self._learn(seconds)
                    return status, payload, stats
                raise AssertionError("unreachable")
            finally:
                self.in_flight -= 1
        finally:
            release(*args)  # a spooled body is read by now, or never will be

    async def _submit(self, pool: Executor, function: Callable[..., Answer], *args: Any
                      ) -> tuple[int, bytes | transport.Spooled, dict[str, Any], float]:
        future = pool.submit(transport.handed_over, self.seconds, function, *args)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            # The client left: work not started yet is dropped; work under way runs on until it
            # ends or meets its time limit (a process cannot be interrupted safely from here),
            # and its answer is thrown away.
            future.cancel()
            future.add_done_callback(_discard_answer)
            raise

    def _replace(self, broken: Executor) -> None:
        """A new pool in place of `broken` (once, however many requests found it broken)."""
        if self._executor is not broken:
            return  # replaced already
        log.error("a planning process ended; starting new ones")
        broken.shutdown(wait=False, cancel_futures=True)
        self._executor = None
        self.start()

    def ready(self) -> bool:
        """Whether the pool can plan: every process of it alive (a killed one breaks the pool
        until a request finds it broken and replaces it, or `revive` does)."""
        executor = self._executor
        if executor is None or not isinstance(executor, ProcessPoolExecutor):
            return True
        # The executor keeps its processes and its broken flag private (CPython 3.11-3.13 name
        # them `_processes` and `_broken`); read defensively: missing ones read as ready.
        processes = list((getattr(executor, "_processes", None) or {}).values())
        # Every process alive, and all of them there (one the executor dropped is not alive).
        return (not getattr(executor, "_broken", False) and len(processes) >= max(self.workers, 1)
                and all(p.is_alive() for p in processes))

    def revive(self) -> bool:
        """Replace the pool when a process of it ended (`/readyz` calls this), so that a pool
        broken between requests is ready again without waiting for a request to fail first.
        Returns whether it was ready."""
        if self.ready():
            return True
        if self._executor is not None:
            self._replace(self._executor)
        return False

    def close(self, wait: bool = True) -> None:
        """Stop the pool: queued work is dropped; with `wait`, work under way may finish within
        `_CLOSING_SECONDS`, then its processes are ended (SIGTERM must end the service within
        seconds, whatever runs)."""
        executor, self._executor = self._executor, None
        if executor is None:
            return
        processes = list((getattr(executor, "_processes", None) or {}).values())
        executor.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + (_CLOSING_SECONDS if wait else 0)
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join(1)


#: How long closing the pool waits for work under way before it ends the processes.
_CLOSING_SECONDS = 2.0


def in_background(function: Callable[..., object], *args: Any) -> None:
    """Run a blocking clean-up in a thread, not on the event loop: removing a large spooled file
    (its unlink, or the last close of an unlinked one) has the kernel free its pages there and
    then, tens of milliseconds per 100 MB."""
    try:
        asyncio.get_running_loop().run_in_executor(None, function, *args)
    except RuntimeError:  # no loop running (a stream finalised after the loop stopped)
        function(*args)


def release(*values: Any) -> None:
    """Remove the files of the `transport.Spooled` among `values`, in the background (`in_background`);
    removing one already gone is fine."""
    if any(isinstance(value, transport.Spooled) for value in values):
        in_background(transport.discard, *values)


def _discard_answer(future: Future[Any]) -> None:
    """A cancelled request's answer, when it comes: its spooled file, if any, is removed."""
    if not future.cancelled() and future.exception() is None:  # (run on, then answered nobody)
        transport.discard(future.result()[1])
