"""The HTTP service in its own process on a free loopback port, as users run it (``python -m api``)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.broker import free_port


def _listener(port: int) -> str | None:
    """The inode of the socket listening on `port` of the loopback (Linux: /proc/net/tcp)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()  # sl, local address, remote address, state, ..., inode (the tenth)
        if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
            return fields[9]
    return None


def _sockets(pid: int) -> set[str]:
    """The inodes of the sockets process `pid` holds (its /proc/PID/fd links ``socket:[N]``)."""
    found = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:  # (closed meanwhile)
            continue
        if target.startswith("socket:["):
            found.add(target[len("socket:["):-1])
    return found


def _limit_open_files(soft: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


class _PortTaken(Exception):
    """Another process bound the free port first (`free_port` gives it back before the service
    binds it: a test in the other lane may take it meanwhile)."""


class Service:
    def __init__(self, tmp_path: Path, token: str | None = None, workers: int = 1,
                 env: dict[str, str] | None = None, log: Path | None = None, open_files: int | None = None) -> None:
        """`log`: a file for the service's log (by default it shares the tests' output);
        `open_files`: the soft open-file limit it starts with (as a shell's ``ulimit -n``)."""
        env = {**os.environ, "ASSIGNOR_REGISTRY": str(tmp_path / "registry.sqlite3"),
               "ASSIGNOR_WORKERS": str(workers), **(env or {})}
        env.pop("ASSIGNOR_API_TOKEN", None)
        if token:
            env["ASSIGNOR_API_TOKEN"] = token
        for attempt in range(3):
            self.port = free_port()
            self.url = f"http://127.0.0.1:{self.port}"
            output = None if log is None else log.open("ab" if attempt else "wb")
            self.process = subprocess.Popen(
                [sys.executable, "-m", "api", "--host", "127.0.0.1", "--port", str(self.port), "--log-level",
                 "warning"],
                env=env, preexec_fn=None if open_files is None else lambda: _limit_open_files(open_files),
                stdin=subprocess.DEVNULL,
                stdout=output, stderr=output)
            if output is not None:
                output.close()  # the service holds its own copy
            started = time.monotonic()
            try:
                self._wait_until_healthy(timeout=30)
            except _PortTaken:
                continue
            #: Seconds from launch until /healthz answered: a baseline for bounds in the same run.
            self.started_in = time.monotonic() - started
            return
        raise RuntimeError("three free ports in a row were taken before the service bound them")

    def _wait_until_healthy(self, timeout: float) -> None:
        """Until /healthz answers from this service's own process (the answer of another process
        that took the port would be another service's)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                if _listener(self.port) is not None:
                    raise _PortTaken
                raise RuntimeError(f"the service exited with {self.process.returncode}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=1) as reply:
                    if reply.status == 200 and _listener(self.port) in _sockets(self.process.pid):
                        return
            except OSError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the service did not answer on {self.url} within {timeout} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()  # this process only, by its own PID
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
