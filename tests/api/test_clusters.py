"""``/v1/clusters`` and a what-if of a live group (`api.handlers.clusters`): the service reads only
the clusters its settings name, by alias; every way that fails is a 4xx or 503 naming the cluster
and the group. The live side is tests/integration/test_snapshot.py."""

from __future__ import annotations

import json
import re
import socket
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from api.app import create_app
from api.handlers.clusters import SKIPPED_STATUS
from api.settings import Settings
from assignor.cluster.snapshot import SkipKind
from tests.api.test_api import client_for, settings
from tests.service import Service
from tests.timing import scaled

pytestmark = pytest.mark.anyio

#: Nothing listens on port 1: a cluster that cannot be reached, quickly.
CLUSTERS = {"prod": {"bootstrap.servers": "127.0.0.1:1", "request.timeout.ms": "2000"}, "dev": {
    "bootstrap.servers": "127.0.0.1:1"}}


@pytest.fixture
async def service(tmp_path):
    app = create_app(settings(tmp_path, clusters=CLUSTERS))
    async with await client_for(app) as c:
        yield c
    app.state.planner.close()


async def test_the_aliases_and_nothing_else(service):
    assert (await service.get("/v1/clusters")).json() == {"clusters": ["dev", "prod"]}
    answer = await service.get("/v1/clusters/staging/groups/g")
    assert answer.status_code == 404
    assert answer.json()["detail"] == "cluster 'staging': not one of this service's clusters (known: dev, prod)"
    # An address is not an alias: nothing is connected to.
    assert (await service.get("/v1/clusters/10.0.0.1:9092/groups/g")).status_code == 422
    answer = await service.post("/v1/whatif", json={"cluster": "evil.example:9092", "group_id": "g"})
    assert answer.status_code == 422 and "cluster" in answer.text


async def test_an_unreachable_cluster_is_a_503_naming_it_and_the_group(service):
    answer = await service.get("/v1/clusters/prod/groups/billing")
    assert answer.status_code == 503
    assert answer.json()["detail"] == ("group 'billing': cluster prod: cannot connect to 127.0.0.1:1 "
                                       "([Errno 111] Connect call failed ('127.0.0.1', 1))")
    for params in ({}, {"summary": "true"}):
        answer = await service.get("/v1/clusters/prod/groups", params=params)
        assert answer.status_code == 503 and answer.json()["detail"].startswith("cluster prod: cannot connect")
    answer = await service.get("/v1/clusters/prod/groups", params={"summary": "maybe"})
    assert answer.status_code == 422 and "summary" in answer.text
    answer = await service.post("/v1/whatif", json={"cluster": "prod", "group_id": "billing",
                                                    "events": ["member_leave:c1"]})
    assert answer.status_code == 503 and answer.json()["detail"].startswith("group 'billing': cluster prod:")


async def test_a_live_plan_is_refused_as_the_live_group_is(service):
    """``GET /v1/clusters/{alias}/groups/{id}/plan``: an alias not configured is a 404 before any
    worker, an unreachable cluster a 503 naming it and the group, a strategy or generation that
    is not one a 422 naming the parameter."""
    answer = await service.get("/v1/clusters/staging/groups/g/plan")
    assert (answer.status_code, answer.json()["detail"]) == (
        404, "cluster 'staging': not one of this service's clusters (known: dev, prod)")
    answer = await service.get("/v1/clusters/prod/groups/billing/plan", params={"strategy": "range"})
    assert answer.status_code == 503
    assert answer.json()["detail"].startswith("group 'billing': cluster prod: cannot connect to 127.0.0.1:1")
    for params, named in (({"strategy": "nope"}, "strategy"), ({"generation": -1}, "generation"),
                          ({"generation": 2**31}, "generation"), ({"format": "xml"}, "format")):
        answer = await service.get("/v1/clusters/prod/groups/billing/plan", params=params)
        assert answer.status_code == 422 and named in answer.json()["detail"], (params, answer.text)


async def test_what_a_live_whatif_must_name(service):
    answer = await service.post("/v1/whatif", json={"cluster": "prod", "group": {"topics": {}, "members": []}})
    assert answer.status_code == 422 and answer.json()["detail"] == "cluster: name the live group with group_id"
    answer = await service.post("/v1/whatif", json={"cluster": "nope", "group_id": "g"})
    assert answer.status_code == 404 and "not one of this service's clusters" in answer.json()["detail"]


@pytest.mark.parametrize(("value", "message"), [
    ("[1]", "ASSIGNOR_CLUSTERS must be a JSON object of alias -> {property: string value}"),
    ('{"prod": {"bootstrap.servers": 9092}}', "must be a JSON object of alias"),
    ("not json", "ASSIGNOR_CLUSTERS must be a JSON object of alias -> client properties"),
    ('{"a b": {"bootstrap.servers": "h:1"}}', "'a b' is not an alias"),
    ('{"prod": {"bootstrap.servers": "h"}}', "ASSIGNOR_CLUSTERS['prod']: bootstrap.servers: 'h' is not HOST:PORT"),
    ('{"prod": {"bootstrap.servers": "h:1", "security.protocol": "SASL_SSL"}}',
     "ASSIGNOR_CLUSTERS['prod']: sasl.mechanism=GSSAPI: the snapshot authenticates with"),
])
def test_settings_the_service_refuses_to_start_with(monkeypatch, value, message):
    monkeypatch.setenv("ASSIGNOR_CLUSTERS", value)
    with pytest.raises(SystemExit, match=re.escape(message)):
        Settings.from_env()


def test_every_kind_of_skipped_group_has_its_status():
    """A group the snapshot skipped answers by its kind: what a client can do about it."""
    assert SKIPPED_STATUS == {SkipKind.MISSING: 404, SkipKind.UNAUTHORIZED: 403, SkipKind.UNAVAILABLE: 503,
                              SkipKind.REBALANCING: 409, SkipKind.NOT_CONSUMER: 409, SkipKind.UNREADABLE: 409}
    assert set(SKIPPED_STATUS) == set(SkipKind)


@pytest.mark.integration
def test_a_live_read_runs_in_a_planning_worker_under_the_request_time_limit(tmp_path):
    """A live group is read (and decoded and built: tens of megabytes for a large group) in a
    planning process, as every heavy answer is: a cluster that takes the connection and never
    answers ends at the service's ``ASSIGNOR_REQUEST_SECONDS`` with a 504, not at its own
    ``request.timeout.ms``, while the event loop answers ``/healthz``; an alias the settings do
    not name is refused without a worker."""
    silent = socket.create_server(("127.0.0.1", 0))  # accepts (the kernel's backlog), never answers
    clusters = {"silent": {"bootstrap.servers": f"127.0.0.1:{silent.getsockname()[1]}",
                           "request.timeout.ms": "60000", "default.api.timeout.ms": "60000"}}
    service = Service(tmp_path, env={"ASSIGNOR_REQUEST_SECONDS": "1", "ASSIGNOR_CLUSTERS": json.dumps(clusters)})
    try:
        started = time.monotonic()
        with ThreadPoolExecutor(1) as background:
            answer = background.submit(_get, f"{service.url}/v1/clusters/silent/groups/billing")
            time.sleep(0.3)
            assert _get(f"{service.url}/healthz") == (200, {"status": "ok"})
            status, body = answer.result()
        assert status == 504 and time.monotonic() - started < 1 + scaled(4)
        assert body["detail"] == "request_seconds: the request ran past the time limit of 1 s"
        assert _get(f"{service.url}/v1/clusters/nowhere/groups/billing")[0] == 404  # (no worker needed)
    finally:
        service.stop()
        silent.close()


def _get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


async def test_a_group_id_that_holds_a_slash_is_read_and_planned(service):
    """Kafka lets a group id hold '/', which a client sends as %2F (the page, by
    encodeURIComponent): the snapshot and the plan of ``team/orders`` name it whole, and
    ``x%2Fplan`` is the snapshot of the group ``x/plan``, not the plan of ``x``."""
    unreachable = "cluster prod: cannot connect to 127.0.0.1:1"
    for path, group in (("team%2Forders", "team/orders"), ("team%2Forders/plan", "team/orders"),
                        ("team/orders", "team/orders"), ("x%2Fplan", "x/plan"), ("x/plan", "x"),
                        ("x%2Fplan/plan", "x/plan"), ("%2F", "/")):
        answer = await service.get(f"/v1/clusters/prod/groups/{path}")
        assert answer.status_code == 503 and answer.json()["detail"].startswith(f"group {group!r}: {unreachable}"), (
            path, answer.text)
    # A plan's parameters are the plan's: the snapshot takes none.
    assert (await service.get("/v1/clusters/prod/groups/x/plan", params={"strategy": "nope"})).status_code == 422
    assert (await service.get("/v1/clusters/prod/groups/")).status_code == 307  # (no id: the list of groups)
