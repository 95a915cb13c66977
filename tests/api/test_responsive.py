"""The service stays responsive while heavy requests run: every heavy endpoint works in the
planning workers, not on the event loop. A reduced-size regression of the benchmark's probe:
`/healthz` polled every 20 ms, and the *worst* wait counts (a stall hides in a mean)."""

from __future__ import annotations

import json
import threading
import time
import urllib.request

import pytest

from tests.service import Service

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    running = Service(tmp_path_factory.mktemp("responsive"), workers=1)
    yield running
    running.stop()


def _post(url: str, body: dict) -> int:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as reply:
        reply.read()
        return reply.status


def _worst_healthz_while(service: Service, heavy) -> tuple[float, int]:
    """The longest /healthz answer (seconds) while `heavy` runs, and how many were sent."""
    done = threading.Event()
    waits: list[float] = []

    def poll() -> None:
        while not done.is_set():
            start = time.perf_counter()
            with urllib.request.urlopen(f"{service.url}/healthz", timeout=30) as reply:
                reply.read()
            waits.append(time.perf_counter() - start)
            time.sleep(0.02)

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        heavy()
    finally:
        done.set()
        poller.join()
    return max(waits), len(waits)


@pytest.mark.parametrize("partitioner", ["fnv1a", "consistent", "murmur2"])
def test_healthz_answers_while_a_large_partitions_request_runs(service, partitioner):
    keys = [f"user-{i}" for i in range(200_000)]  # 17.5 s per million on the event loop before
    body = {"keys": keys, "partitions": 64, "partitioner": partitioner}
    worst, polls = _worst_healthz_while(service, lambda: _post(f"{service.url}/v1/partitions", body))
    assert polls >= 3 and worst < 0.5, (worst, polls)


def test_partitions_answers_match_the_per_key_partitioner(service):
    from assignor.producer.librdkafka import partition_function

    keys = ["", "a", "user-1", "ключ", "x" * 300]
    for partitioner in ("fnv1a", "consistent", "murmur2"):
        request = urllib.request.Request(
            f"{service.url}/v1/partitions",
            json.dumps({"keys": keys, "partitions": 7, "partitioner": partitioner}).encode(),
            {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as reply:
            placed = json.load(reply)["partitions"]
        assert placed == [partition_function(partitioner, k.encode(), 7) for k in keys]
