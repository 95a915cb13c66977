"""The body limit holds against clients that lie: on the real service (uvicorn, sockets), a body
streamed without a length, or longer than its declared length, never makes the service read
more than the limit; it answers 413 (or reads only what was declared) and stays healthy."""

from __future__ import annotations

import select
import socket
import time
import urllib.request

import pytest

from tests.service import Service

pytestmark = pytest.mark.integration

LIMIT = 1_000_000


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    running = Service(tmp_path_factory.mktemp("body-limit"), workers=1,
                      env={"ASSIGNOR_MAX_BODY_BYTES": str(LIMIT)})
    yield running
    running.stop()


def _send(service: Service, head: bytes, chunks, seconds: float = 30) -> tuple[bytes, int]:
    """Send `head`, then `chunks` until the service answers (or they run out); the first line of
    its answer and how many body bytes were sent before it came."""
    sent = 0
    with socket.create_connection(("127.0.0.1", service.port), timeout=seconds) as connection:
        connection.sendall(head)
        for chunk in chunks:
            if select.select([connection], [], [], 0)[0]:
                break  # it answered: stop streaming
            try:
                connection.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(chunk)
        deadline = time.monotonic() + seconds
        answer = b""
        while b"\r\n" not in answer and time.monotonic() < deadline:
            try:
                data = connection.recv(4096)
            except ConnectionResetError:
                break
            if not data:
                break
            answer += data
    return answer.split(b"\r\n", 1)[0], sent


def _healthy(service: Service) -> bool:
    with urllib.request.urlopen(f"{service.url}/healthz", timeout=5) as reply:
        return reply.status == 200


def _head(extra: str) -> bytes:
    return (f"POST /v1/plans HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{extra}\r\n"
            ).encode()


def test_a_streamed_body_without_a_length_is_cut_off_at_the_limit(service):
    piece = b"x" * 65536
    chunks = (b"%x\r\n%s\r\n" % (len(piece), piece) for _ in range(50 * LIMIT // len(piece)))
    status, sent = _send(service, _head("Transfer-Encoding: chunked\r\n"), chunks)
    assert status.startswith(b"HTTP/1.1 413"), status
    assert sent < 10 * LIMIT  # answered long before the 50 MB were through
    assert _healthy(service)


def test_a_body_longer_than_its_declared_length_is_read_no_further(service):
    # 20 bytes declared, 5 MB sent: the service reads the 20 (not JSON: 422), never the rest as body.
    chunks = (b"{" * 65536 for _ in range(5 * LIMIT // 65536))
    status, _ = _send(service, _head("Content-Length: 20\r\n"), chunks)
    assert status.startswith(b"HTTP/1.1 422"), status
    assert _healthy(service)


def test_a_declared_length_over_the_limit_is_refused_before_reading(service):
    status, sent = _send(service, _head(f"Content-Length: {50 * LIMIT}\r\n"), (b"x" * 65536 for _ in range(800)))
    assert status.startswith(b"HTTP/1.1 413"), status
    assert sent < 10 * LIMIT
    assert _healthy(service)


def test_a_client_that_leaves_mid_body_is_no_error(tmp_path):
    """A client gone before its body is in (a load tester stopping) leaves no error and no
    traceback in the service's log, and the service carries on."""
    log = tmp_path / "service.log"
    running = Service(tmp_path, workers=1, log=log)
    try:
        for _ in range(3):
            with socket.create_connection(("127.0.0.1", running.port), timeout=10) as connection:
                connection.sendall(_head("Content-Length: 100000\r\n") + b'{"topics": {')
                time.sleep(0.2)  # the route is reading the body when the client leaves
        time.sleep(0.5)
        assert _healthy(running)
        with urllib.request.urlopen(f"{running.url}/metrics", timeout=5) as reply:
            assert 'status="499"' in reply.read().decode()
    finally:
        running.stop()
    text = log.read_text()
    assert "Traceback" not in text and "ERROR" not in text, text
