"""Who gets in: planning requests admitted by their expected wait, request bodies by a budget
taken before they are read, and requests of a broken pool run once more in the new one."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import pytest
from fastapi import HTTPException

from api.app import create_app
from api.pool import Planner
from tests.api.test_api import client_for, settings
from tests.api.test_durability import _answer, _planning_processes, _running
from tests.service import Service

PLAN = {"topics": {"t": 6}, "members": [{"id": "a", "topics": ["t"]}]}


def test_a_request_is_queued_while_it_would_start_within_the_wait_limit(tmp_path):
    """With the defaults, 32 clients posting plans got 503 on 92% of their requests: two workers
    plus a queue of 16 admitted 18 at a time although every one would have been answered in
    well under a second. Now a request is refused only when it would wait past
    ``max_wait_seconds`` (the queue ahead of it times the recent planning time, over the
    workers), with ``Retry-After`` saying how long."""
    planner = Planner(settings(tmp_path, workers=2, max_wait_seconds=5.0))
    planner.typical = 0.1  # a tenth of a second per request
    planner.in_flight = 90  # 89 ahead of the next over 2 workers: 4.45 s
    planner.admit()
    assert planner.expected_wait() == pytest.approx(4.45)
    planner.typical = 0.5  # 22 s
    with pytest.raises(HTTPException) as refused:
        planner.admit()
    assert refused.value.status_code == 503
    assert refused.value.detail.startswith("max_wait_seconds: a request now would wait about 22.2 s")
    assert refused.value.headers == {"Retry-After": "18"}
    planner.in_flight = 1  # a worker is free: no wait, whatever the planning time
    planner.admit()
    planner.in_flight, planner.typical = planner.capacity, None  # nothing learned yet: the cap holds
    with pytest.raises(HTTPException) as full:
        planner.admit()
    assert full.value.detail.startswith("max_pending: planning queue full")


def test_the_pool_learns_the_planning_time_from_its_answers(tmp_path):
    planner = Planner(settings(tmp_path))
    planner._learn(1.0)
    assert planner.typical == 1.0
    planner._learn(2.0)
    assert planner.typical == pytest.approx(1.2)


@pytest.mark.anyio
async def test_a_refused_request_is_refused_before_its_body_is_read(tmp_path):
    """The queue's verdict comes before the body: a refused upload is not read (nor spooled)."""
    app = create_app(settings(tmp_path))
    read = 0

    async def body():
        nonlocal read
        for _ in range(4):
            read += 1
            yield b" " * 1024
        yield json.dumps(PLAN).encode()

    try:
        async with await client_for(app) as client:
            app.state.planner.in_flight = app.state.planner.capacity
            answer = await client.post("/v1/plans", content=body(), headers={"Content-Type": "application/json"})
            assert answer.status_code == 503 and answer.headers["retry-after"] == "1"
            assert read <= 1  # (the client's transport may start the stream before the answer)
            app.state.planner.in_flight = 0
            assert (await client.post("/v1/plans", json=PLAN)).status_code == 200
    finally:
        app.state.planner.close()


@pytest.mark.anyio
async def test_bodies_past_the_budget_are_refused_before_they_are_read(tmp_path):
    """16 uploads that each sent 60 MiB and stalled held 960 MiB of /dev/shm for as long as they
    stayed open. Bodies now take their share of ``body_budget_bytes`` from their declared length
    before they are read (or as they come, without one) and give it back when answered."""
    app = create_app(settings(tmp_path, body_budget_bytes=2000))
    budget = app.state.body_budget
    try:
        async with await client_for(app) as client:
            padded = json.dumps(PLAN).encode() + b" " * 1500
            assert (await client.post("/v1/plans", content=padded, headers={"Content-Type": "application/json"})
                    ).status_code == 200
            assert budget.held == 0  # given back
            budget.held = 1000  # another upload holds half of it
            refused = await client.post("/v1/plans", content=padded, headers={"Content-Type": "application/json"})
            assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
            assert refused.json()["detail"].startswith("body_budget_bytes: the service holds 2000 bytes")

            async def unsized():  # no Content-Length: taken piece by piece
                yield padded[:1000]
                yield padded[1000:]

            chunked = await client.post("/v1/plans", content=unsized(), headers={"Content-Type": "application/json"})
            assert chunked.status_code == 503
            assert budget.held == 1000  # only what the other upload holds
            budget.held = 0
            chunked = await client.post("/v1/plans", content=unsized(), headers={"Content-Type": "application/json"})
            assert chunked.status_code == 200 and budget.held == 0
    finally:
        app.state.planner.close()


@pytest.mark.integration
def test_requests_waiting_in_a_broken_pool_are_planned_by_the_new_one(tmp_path):
    """A planning process killed under the pool breaks it, and every request in it failed with
    500, also those only waiting behind the killed one. Now each runs once more in the new pool:
    a plan queued behind a long simulation whose process is killed answers 200."""
    service = Service(tmp_path, workers=1, env={"ASSIGNOR_REQUEST_SECONDS": "0"})
    try:
        assert _answer(f"{service.url}/v1/plans", PLAN)[0] == 200
        results: dict[str, int] = {}
        long_one = threading.Thread(target=lambda: results.__setitem__(
            "simulation", _answer(f"{service.url}/v1/simulations", {"preset": "kip794-series1"})[0]))
        long_one.start()
        time.sleep(1.0)  # the simulation holds the only process
        queued = threading.Thread(target=lambda: results.__setitem__("plan", _answer(f"{service.url}/v1/plans",
                                                                                      PLAN)[0]))
        queued.start()
        time.sleep(0.5)
        workers = _planning_processes(service.process.pid)
        assert len(workers) == 1
        for pid in workers:
            os.kill(pid, signal.SIGKILL)
        queued.join(60)
        long_one.join(120)
        assert results["plan"] == 200
        assert results["simulation"] == 200  # run again, whole, by the new process
        assert not any(_running(pid) for pid in workers)
    finally:
        service.stop()


def test_the_bench_measures_the_settings_make_serve_uses(tmp_path, monkeypatch):
    """The service bench set ``ASSIGNOR_MAX_PENDING=64``: its figure was one a user of
    ``make serve`` did not get. It now serves as ``make serve`` does, with none of the
    environment's ``ASSIGNOR_*`` settings."""
    import sys

    from bench.service import serve_command

    monkeypatch.setenv("ASSIGNOR_MAX_PENDING", "64")
    monkeypatch.setenv("ASSIGNOR_API_TOKEN", "secret")
    argv, env = serve_command(tmp_path, 8123)
    assert argv[:3] == [sys.executable, "-m", "api"] and "--port" in argv and "8123" in argv
    assert {name for name in env if name.startswith("ASSIGNOR_")} == {"ASSIGNOR_REGISTRY"}


@pytest.mark.anyio
@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "streamed"])
async def test_the_body_limit_at_its_bound(tmp_path, declared):
    """A body of exactly ``max_body_bytes`` is read; one byte more is a 413, whether its length
    is declared (refused before reading) or it streams in without one (cut off as it passes).
    Removing either check, or loosening it, went unnoticed before."""
    limit = 1000
    app = create_app(settings(tmp_path, max_body_bytes=limit))
    plan = json.dumps(PLAN).encode()

    def body(size: int):
        padded = plan + b" " * (size - len(plan))
        if declared:
            return padded

        async def pieces():
            for start in range(0, size, 100):
                yield padded[start : start + 100]

        return pieces()

    try:
        async with await client_for(app) as client:
            for size, status in ((limit - 1, 200), (limit, 200), (limit + 1, 413)):
                answer = await client.post("/v1/plans", content=body(size),
                                           headers={"Content-Type": "application/json"})
                assert answer.status_code == status, (size, answer.text)
                if status == 413:
                    assert answer.json()["detail"] == ("max_body_bytes: the request body is over the limit of 1000 "
                                                       "bytes")
            assert app.state.body_budget.held == 0
    finally:
        app.state.planner.close()
