"""The tests' service harness (`tests.service.Service`) talks to its own process: a free port can
be taken by another process (a test in the other lane) before the service binds it, and that
process's /healthz would answer for it."""

from __future__ import annotations

import http.server
import threading

import pytest

from tests import service as harness
from tests.broker import free_port

pytestmark = pytest.mark.integration


class _Healthy(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        body = b'{"status": "ok"}'
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_port_another_service_took_first_is_not_taken_for_ours(tmp_path, monkeypatch):
    other = http.server.HTTPServer(("127.0.0.1", 0), _Healthy)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    ports = iter([other.server_address[1], free_port()])
    monkeypatch.setattr(harness, "free_port", lambda: next(ports))
    try:
        service = harness.Service(tmp_path)
        try:
            assert service.port != other.server_address[1]
            assert harness._listener(service.port) in harness._sockets(service.process.pid)
        finally:
            service.stop()
    finally:
        other.shutdown()
        other.server_close()
