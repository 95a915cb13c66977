"""The service on a network: only JSON bodies, only the host names it answers to, security
headers on every answer, forwarded headers believed only from configured proxies."""

from __future__ import annotations

import json

import pytest

from api.app import create_app
from tests.api.test_api import client_for, join_metadata, settings

pytestmark = pytest.mark.anyio

SYNC = {"protocol": "sticky", "generation": 1, "topics": {"t": {"partitions": 2}},
        "members": [{"member_id": "a", "metadata_b64": join_metadata(["t"])}]}


@pytest.fixture
async def loopback(tmp_path):
    """A service with the default host names (no token: the loopback names only)."""
    app = create_app(settings(tmp_path, allowed_hosts=None))
    async with await client_for(app) as client:
        client.base_url = "http://127.0.0.1:8000"
        yield client
    app.state.planner.close()


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                                          None])
async def test_a_body_not_declared_json_is_415(loopback, content_type):
    """A page on another origin wrote a group into the registry with ``fetch(..., {mode:
    "no-cors", headers: {"Content-Type": "text/plain"}})``: bodies were read whatever their
    type. Only a JSON body is read now, which a browser sends to another origin only after a
    CORS preflight that this service never grants."""
    headers = {"Content-Type": content_type} if content_type else {}
    answer = await loopback.post("/v1/groups/evil/sync", content=json.dumps(SYNC), headers=headers)
    assert answer.status_code == 415
    assert answer.json()["detail"].startswith("content-type: the body must be application/json")
    assert (await loopback.get("/v1/groups/evil")).status_code == 404
    for declared in ("application/json", "application/json; charset=utf-8", "Application/JSON"):
        assert (await loopback.post("/v1/plans", content=b'{"topics": {}, "members": []}',
                                    headers={"Content-Type": declared})).status_code == 200


@pytest.mark.parametrize("host", ["attacker.example", "attacker.example:8000", "127.0.0.1.nip.io", "",
                                  "localhost.attacker.example"])
async def test_another_host_name_is_refused(loopback, host):
    """Any Host header was accepted (``Host: attacker.example`` got the registry listing), so a
    DNS-rebinding page could read it. Without a token only the loopback names are answered."""
    for path in ("/v1/groups", "/", "/healthz"):
        answer = await loopback.get(path, headers={"Host": host})
        assert answer.status_code == 400, path
        assert "is not among the names this service answers to (ASSIGNOR_ALLOWED_HOSTS)" in answer.json()["detail"]
        assert answer.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost", "LOCALHOST:1", "[::1]:8000", "127.0.0.1"])
async def test_the_loopback_names_are_answered(loopback, host):
    assert (await loopback.get("/v1/groups", headers={"Host": host})).status_code == 200


async def test_allowed_hosts_are_configurable_and_any_with_a_token(tmp_path):
    app = create_app(settings(tmp_path, allowed_hosts=("assignor", "*.example.com")))
    async with await client_for(app) as client:
        assert (await client.get("/healthz", headers={"Host": "assignor:8000"})).status_code == 200
        assert (await client.get("/healthz", headers={"Host": "a.example.com"})).status_code == 200
        assert (await client.get("/healthz", headers={"Host": "example.com"})).status_code == 400
        assert (await client.get("/healthz", headers={"Host": "localhost"})).status_code == 400
    app.state.planner.close()
    with_token = create_app(settings(tmp_path, allowed_hosts=None, token="s3cret"))
    assert with_token.state.settings.allowed_hosts == ("*",)
    with_token.state.planner.close()


async def test_every_answer_carries_the_security_headers(loopback):
    """No Content-Security-Policy, frame-ancestors, nosniff or Referrer-Policy: the page with
    its token field could be framed; every answer said ``server: uvicorn``."""
    answers = {path: await loopback.get(path) for path in ("/", "/healthz", "/v1/groups", "/docs", "/nowhere")}
    answers["413"] = await loopback.post("/v1/plans", content=b"x" * (65 * 1024 * 1024),
                                         headers={"Content-Type": "application/json"})
    for path, answer in answers.items():
        headers = answer.headers
        assert headers["x-content-type-options"] == "nosniff", path
        assert headers["referrer-policy"] == "no-referrer", path
        assert headers["x-frame-options"] == "DENY", path
        assert "frame-ancestors 'none'" in headers["content-security-policy"], path
        assert "server" not in headers, path
    data = answers["/v1/groups"].headers["content-security-policy"]
    assert data.startswith("default-src 'none';")
    page = answers["/"].headers["content-security-policy"]
    assert "script-src 'sha256-" in page and "'unsafe-inline'" not in page and "connect-src 'self'" in page


def test_the_page_policy_hashes_exactly_its_inline_blocks():
    from api.middleware import page_policy

    policy = page_policy("<style>b{}</style><script>go()</script><script>x()</script>").decode()
    assert policy.count("'sha256-") == 3
    assert "script-src 'sha256-" in policy and "style-src 'sha256-" in policy
    assert "script-src 'none'" in page_policy("<p>no code</p>").decode()


def test_forwarded_headers_are_believed_only_from_configured_proxies(monkeypatch):
    """``X-Forwarded-For`` was trusted from loopback (uvicorn's default), so anything on the
    machine could claim any client address. `python -m api` now believes none unless
    ``ASSIGNOR_FORWARDED_ALLOW_IPS`` names the proxies."""
    import api.__main__ as serving

    runs: list[dict] = []
    monkeypatch.setattr(serving.uvicorn, "run", lambda *args, **kwargs: runs.append(kwargs))
    monkeypatch.delenv("ASSIGNOR_FORWARDED_ALLOW_IPS", raising=False)
    serving.main(["--port", "1"])
    assert runs[-1]["proxy_headers"] is False and runs[-1]["server_header"] is False
    monkeypatch.setenv("ASSIGNOR_FORWARDED_ALLOW_IPS", "10.0.0.5")
    serving.main(["--port", "1"])
    assert runs[-1]["proxy_headers"] is True and runs[-1]["forwarded_allow_ips"] == "10.0.0.5"


@pytest.mark.parametrize(("path", "body", "key"), [
    ("/v1/plans", b'{"topics": {"a": 1, "a": 2000000000}, "members": []}', "a"),
    ("/v1/plans", b'{"topics": {}, "members": [], "members": [{"id": "x", "topics": []}]}', "members"),
    ("/v1/groups/dup/sync", json.dumps(SYNC)[:-1].encode() + b', "generation": 9}', "generation"),
    ("/v1/partitions", b'{"keys": ["k"], "partitions": 3, "partitions": 7}', "partitions"),
    ("/v1/whatif", b'{"group": {"topics": {"t": 1, "t": 9}, "members": []}, "events": []}', "t"),
])
async def test_a_key_twice_in_one_object_is_422(loopback, path, body, key):
    """``{"topics": {"a": 1, "a": 2000000000}}`` was read with the last value, so a filter in
    front that keeps the first saw another request. A repeated key is now refused, at any depth."""
    answer = await loopback.post(path, content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"] == f"body: not valid JSON (the key {key!r} appears twice in one object)"


async def test_json_outside_rfc_8259_is_422(loopback):
    for body, words in ((b'{"topics": {"t": NaN}, "members": []}', "NaN is not JSON"),
                        (b'{"topics": {"\\ud800": 1}, "members": []}', "a string is not UTF-8"),
                        (b'{"topics": {}, "members": []', "not valid JSON")):
        answer = await loopback.post("/v1/plans", content=body, headers={"Content-Type": "application/json"})
        assert answer.status_code == 422 and words in answer.json()["detail"], answer.text
