"""A real PostgreSQL server for the registry tests: Debian's ``postgresql`` package (``make test``
installs it), one throwaway cluster per test session on a free loopback port.

initdb and the server refuse to run as root, so under root they run as the ``postgres`` user
the package creates, in a directory that user owns. The server is stopped by its own PID.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from tests.broker import free_port


def server_binaries() -> Path:
    """The folder holding initdb and postgres (Debian keeps them off PATH)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).resolve().parent
    raise RuntimeError("no PostgreSQL server found: `make test` installs Debian's postgresql package")


class Postgres:
    def __init__(self) -> None:
        binaries = server_binaries()
        self.port = free_port()
        self.directory = Path(tempfile.mkdtemp(prefix="assignor-pg-"))
        run_as: dict = {}
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.directory, user.pw_uid, user.pw_gid)
            run_as = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
        data = self.directory / "data"
        subprocess.run([str(binaries / "initdb"), "-D", str(data), "-U", "assignor", "--auth=trust",
                        "--encoding=UTF8", "--no-instructions"], check=True, capture_output=True,
                       cwd=self.directory, **run_as)
        self.log_path = self.directory / "server.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [str(binaries / "postgres"), "-D", str(data), "-p", str(self.port), "-k", str(self.directory),
             "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off"],
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.directory, **run_as)
        self.admin_url = self.url("postgres")
        self._wait_until_ready(timeout=30)

    def url(self, database: str) -> str:
        return f"postgresql://assignor@127.0.0.1:{self.port}/{database}"

    def _wait_until_ready(self, timeout: float) -> None:
        import psycopg

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                log = self.log_path.read_text()[-2000:]
                raise RuntimeError(f"postgres exited with {self.process.returncode}: {log}")
            try:
                psycopg.connect(self.admin_url, connect_timeout=2).close()
                return
            except (OSError, psycopg.OperationalError):
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"postgres did not accept connections on port {self.port} within {timeout} s")

    def new_database(self) -> str:
        """A fresh empty database; returns its URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.admin_url, autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # by its own PID; "fast" shutdown, clients or not
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        shutil.rmtree(self.directory, ignore_errors=True)
