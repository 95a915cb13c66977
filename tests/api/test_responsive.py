"""The service stays responsive while heavy requests run: every heavy endpoint works in the
planning workers, not on the event loop. A reduced-size regression of the benchmark's probe:
`/healthz` polled every 20 ms, and the *worst* wait counts (a stall hides in a mean), against
the heavy request's own time in the same run (`_responsive`)."""

from __future__ import annotations

import base64
import functools
import json
import threading
import time
import urllib.request

import pytest

from assignor.json_format import group_to_json
from assignor.model import TopicPartition
from assignor.protocol import Assignment, Subscription, encode_assignment, encode_subscription
from assignor.workloads import java_large
from tests.service import Service
from tests.timing import scaled

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    running = Service(tmp_path_factory.mktemp("responsive"), workers=1)
    yield running
    running.stop()


def _post(url: str, body: bytes) -> int:
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as reply:
        reply.read()
        return reply.status


def _worst_healthz_while(service: Service, heavy, polls: int = 3) -> tuple[float, int, float]:
    """The longest /healthz answer (seconds) while `heavy` runs, how many were sent, and the
    shortest run of `heavy` (seconds): `heavy` runs again until at least `polls` were (a fast
    run, murmur2 on a quiet machine, would otherwise leave too few to see anything)."""
    done = threading.Event()
    waits: list[float] = []
    runs: list[float] = []

    def timed() -> None:
        started = time.perf_counter()
        heavy()
        runs.append(time.perf_counter() - started)

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
        timed()
        while len(waits) < polls:
            timed()
    finally:
        done.set()
        poller.join()
    return max(waits), len(waits), min(runs)


def _responsive(worst: float, heavy: float) -> bool:
    """Whether the worst /healthz wait shows no stall: work on the event loop would hold a poll
    for about the whole heavy request, so the bound is half the request's own time in this run
    (and, for a request too short to matter, 0.1 s on a quiet machine)."""
    return worst < max(0.5 * heavy, scaled(0.1))


@pytest.mark.parametrize("partitioner", ["fnv1a", "consistent", "murmur2"])
def test_healthz_answers_while_a_large_partitions_request_runs(service, partitioner):
    keys = [f"user-{i}" for i in range(200_000)]  # 17.5 s per million on the event loop before
    # (Encoded first: encoding holds this process's interpreter, and the poller runs in it too.)
    body = json.dumps({"keys": keys, "partitions": 64, "partitioner": partitioner}).encode()
    worst, polls, heavy = _worst_healthz_while(service, lambda: _post(f"{service.url}/v1/partitions", body))
    assert polls >= 3 and _responsive(worst, heavy), (worst, polls, heavy)


@functools.cache
def _heavy_requests() -> dict[str, tuple[str, dict]]:
    """A reduced heavy request of every other endpoint whose cost grows with its input: each
    takes 0.4 s or more of CPU (on this project's 2-core machine), which on the event loop would
    be the worst wait (each fails this test there: tried)."""
    plan_group = group_to_json(java_large("uniform", 250, 2000, 1000))
    whatif_group = group_to_json(java_large("uniform", 100, 1000, 400))
    partitions = [TopicPartition(f"t{i % 100}", i // 100) for i in range(400_000)]
    assignment = encode_assignment(Assignment(partitions))
    topics = [f"t{i:03d}" for i in range(500)]
    metadata = base64.b64encode(encode_subscription(Subscription(topics))).decode()
    return {
        "plans": ("/v1/plans", {**plan_group, "strategy": "sticky"}),
        "protocol-decode": ("/v1/protocol/decode", {"type": "assignment",
                                                    "data_b64": base64.b64encode(assignment).decode()}),
        "protocol-encode": ("/v1/protocol/encode", {"type": "assignment", "version": 3, "value": {
            "partitions": [list(tp) for tp in partitions]}}),
        "whatif": ("/v1/whatif", {"group": whatif_group, "strategies": ["sticky"],
                                  "events": ["member_leave:" + m["id"] for m in whatif_group["members"][:10]]}),
        "sync": ("/v1/groups/responsive/sync", {
            "protocol": "sticky", "generation": 1, "topics": {t: {"partitions": 2000} for t in topics},
            "members": [{"member_id": f"m{i:04d}", "metadata_b64": metadata} for i in range(2000)]}),
    }


@pytest.mark.parametrize("endpoint", ["plans", "protocol-decode", "protocol-encode", "whatif", "sync"])
def test_healthz_answers_while_a_heavy_request_runs(service, endpoint):
    path, request = _heavy_requests()[endpoint]
    body = json.dumps(request).encode()
    worst, polls, heavy = _worst_healthz_while(service, lambda: _post(f"{service.url}{path}", body))
    assert polls >= 3 and _responsive(worst, heavy), (worst, polls, heavy)


def test_healthz_answers_while_a_large_group_is_read_back(service):
    """``GET /v1/groups/{id}`` of a group at the partition limit (2,000,000): 40 MB of JSON to
    write (0.4 s on the event loop before)."""
    _path, request = _heavy_requests()["sync"]
    topics = {f"t{i:04d}": {"partitions": 2000} for i in range(1000)}
    metadata = base64.b64encode(encode_subscription(Subscription(list(topics)))).decode()
    members = [{**m, "metadata_b64": metadata} for m in request["members"]]
    body = json.dumps({**request, "topics": topics, "members": members}).encode()
    assert _post(f"{service.url}/v1/groups/read-back/sync", body) == 200

    answer = []

    def read() -> None:  # parsed after: parsing holds this process's interpreter, the poller's too
        with urllib.request.urlopen(f"{service.url}/v1/groups/read-back", timeout=120) as reply:
            answer.append(reply.read())

    worst, polls, heavy = _worst_healthz_while(service, read)
    assert polls >= 3 and _responsive(worst, heavy), (worst, polls, heavy)
    assert len(json.loads(answer[0])["plan"]["assignment"]) == 2000


def test_partitions_answers_match_the_per_key_partitioner(service):
    from assignor.partitioners.librdkafka import partition_function

    keys = ["", "a", "user-1", "ключ", "x" * 300]
    for partitioner in ("fnv1a", "consistent", "murmur2"):
        request = urllib.request.Request(
            f"{service.url}/v1/partitions",
            json.dumps({"keys": keys, "partitions": 7, "partitioner": partitioner}).encode(),
            {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as reply:
            placed = json.load(reply)["partitions"]
        assert placed == [partition_function(partitioner, k.encode(), 7) for k in keys]
