"""Slow clients against the service as users run it (``python -m api``): connections that do
not finish their headers or stall in their body are closed, a crowd of them does not stop the
service answering, and the way the server is started holds on every deployment."""

from __future__ import annotations

import json
import resource
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.service import Service
from tests.timing import scaled

pytestmark = pytest.mark.integration

PLAN = json.dumps({"topics": {"t": 6}, "members": [{"id": "a", "topics": ["t"]}]}).encode()


def _connect(service: Service) -> socket.socket:
    return socket.create_connection(("127.0.0.1", service.port), timeout=10)


def _closed_after(sock: socket.socket, limit: float = 10) -> float:
    """Seconds until the server closes `sock` (reading and dropping what it sends)."""
    started = time.monotonic()
    sock.settimeout(limit)
    while sock.recv(4096):
        pass
    return time.monotonic() - started


def _post(url: str, body: bytes) -> int:
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


@pytest.fixture
def service(tmp_path):
    service = Service(tmp_path, env={"ASSIGNOR_HEADER_SECONDS": "1", "ASSIGNOR_BODY_IDLE_SECONDS": "1",
                                     "ASSIGNOR_BODY_BUDGET_BYTES": "5000"})
    yield service
    service.stop()


def test_unfinished_headers_are_cut_off_and_a_trickle_does_not_extend_them(service):
    """Connections with unfinished headers stayed open for good (slowloris)."""
    with _connect(service) as idle:
        idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # no blank line: the headers never end
        assert 0.5 < _closed_after(idle) < 5
    with _connect(service) as trickle:
        started = time.monotonic()
        trickle.sendall(b"GET /healthz HTTP/1.1\r\n")
        try:
            for _ in range(20):  # a header byte every 0.2 s: 4 s if it were allowed
                time.sleep(0.2)
                trickle.sendall(b"X")
        except OSError:
            pass  # closed under us
        assert _closed_after(trickle) + (time.monotonic() - started) < 4.5


def test_a_stalled_body_is_cut_off_and_gives_its_budget_back(service):
    """16 uploads that sent part of their body and stalled held their spooled bytes for as long
    as they stayed open. A body silent past ``ASSIGNOR_BODY_IDLE_SECONDS`` is now closed, and
    while it waited it held its declared length of the body budget."""
    with _connect(service) as stalled:
        stalled.sendall(b"POST /v1/plans HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        b"Content-Length: 4000\r\n\r\n" + PLAN[:10])
        time.sleep(0.3)
        assert _post(f"{service.url}/v1/plans", PLAN + b" " * 1500) == 503  # 4000 + 1560 > 5000
        assert _closed_after(stalled) < 5
    assert _post(f"{service.url}/v1/plans", PLAN + b" " * 1500) == 200


def test_a_steady_client_is_not_cut_off(service):
    """The timeouts are for stalls: a request whose headers come in pieces within the limit, and
    a body sent in pieces less than the idle time apart, are answered."""
    with _connect(service) as steady:
        head = (b"POST /v1/plans HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(PLAN))
        steady.sendall(head[:20])
        time.sleep(0.4)
        steady.sendall(head[20:])
        for start in range(0, len(PLAN), 20):
            time.sleep(0.3)
            steady.sendall(PLAN[start : start + 20])
        answer = b""
        steady.settimeout(10)
        while chunk := steady.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200 ")


def test_the_service_answers_while_1100_slow_clients_hang(tmp_path):
    """With a 1,024 open-file limit, 1,100 connections with unfinished headers made /healthz
    time out and the accept loop log "Too many open files" without end. The server now raises
    its limit to the system's hard limit, and closes each after ``ASSIGNOR_HEADER_SECONDS``."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2400:
        pytest.skip(f"the hard open-file limit here is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 2400), hard))
    log = tmp_path / "service.log"
    service = Service(tmp_path, open_files=1024, log=log, env={"ASSIGNOR_HEADER_SECONDS": "5"})
    crowd: list[socket.socket] = []
    try:
        for _ in range(1100):
            sock = _connect(service)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            crowd.append(sock)
        started = time.monotonic()
        with urllib.request.urlopen(f"{service.url}/healthz", timeout=5) as reply:
            assert reply.status == 200
        assert time.monotonic() - started < scaled(1)
        assert _post(f"{service.url}/v1/plans", PLAN) == 200
        for sock in crowd[:50]:  # and each is closed in time
            assert _closed_after(sock) < 10
    finally:
        for sock in crowd:
            sock.close()
        service.stop()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert b"Too many open files" not in log.read_bytes()


def test_answers_carry_no_server_header(service):
    with urllib.request.urlopen(f"{service.url}/healthz", timeout=5) as reply:
        assert reply.headers.get("server") is None


def test_a_network_address_needs_a_token_or_an_explicit_word(tmp_path):
    """The container bound 0.0.0.0 with no token: anyone on the network could write the
    registry. ``python -m api`` now refuses a non-loopback address without one."""
    env = {"PATH": "/usr/bin:/bin", "ASSIGNOR_REGISTRY": str(tmp_path / "r.sqlite3")}
    refused = subprocess.run([sys.executable, "-m", "api", "--host", "0.0.0.0", "--port", "1"], env=env,
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2
    assert "--host 0.0.0.0 is reachable from other machines and ASSIGNOR_API_TOKEN is not set" in refused.stderr
