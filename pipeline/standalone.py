"""A throwaway Spark standalone cluster on this machine, for the tests and the benchmark: a master
and one worker started from the installed pyspark distribution (``spark-class
...deploy.master.Master`` / ``...Worker``) on free loopback ports, killed by their own PIDs at
the end. `worker_python` makes a Python for the executors that has the third-party libraries but
not this project, as on a shared cluster."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyspark

__all__ = ["SPARK_HOME", "StandaloneCluster", "worker_python"]

SPARK_HOME = Path(pyspark.__file__).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def worker_python(directory: Path, third_party: bool = True) -> Path:
    """A virtual environment of this Python version without this project: with `third_party`,
    the test environment's site-packages are on its path (a ``.pth`` line adds the directory
    but runs none of the ``.pth`` files in it, so the project's editable install stays out)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(directory)], check=True)
    python = directory / "bin" / "python"
    if third_party:
        site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              check=True, capture_output=True, text=True).stdout.strip()
        Path(site, "third_party.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    probe = subprocess.run([str(python), "-c", "import assignor"], capture_output=True, cwd=directory)
    if probe.returncode == 0:
        raise RuntimeError(f"{python} imports this project; the executors' Python must not")
    return python


class StandaloneCluster:
    """`master` is the URL to give ``--master``."""

    def __init__(self, directory: Path, cores: int = 2, memory: str = "2g") -> None:
        self.directory = directory
        port, ui = free_port(), free_port()
        self.master = f"spark://127.0.0.1:{port}"
        self.ui = f"http://127.0.0.1:{ui}/json/"
        env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
               "SPARK_NO_DAEMONIZE": "1"}
        env.pop("PYSPARK_PYTHON", None)  # the driver says which Python the executors run
        spark_class = str(SPARK_HOME / "bin" / "spark-class")
        self._logs = [open(directory / name, "wb") for name in ("master.log", "worker.log")]  # noqa: SIM115
        self.processes = [subprocess.Popen(
            [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
             "--webui-port", str(ui)], env=env, stdout=self._logs[0], stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL)]
        try:
            self._wait(lambda state: True, "the master's status page", 60)
            self.processes.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.worker.Worker", self.master, "--host", "127.0.0.1",
                 "--port", str(free_port()), "--webui-port", str(free_port()), "--cores", str(cores),
                 "--memory", memory, "--work-dir", str(directory / "work")],
                env=env, stdout=self._logs[1], stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
            self._wait(lambda state: state.get("aliveworkers", 0) >= 1, "a registered worker", 60)
        except BaseException:
            self.stop()
            raise

    def _wait(self, ready: Callable[[dict[str, Any]], bool], what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for process in self.processes:
                if process.poll() is not None:
                    raise RuntimeError(f"a Spark daemon exited with {process.returncode}: see {self.directory}")
            try:
                with urllib.request.urlopen(self.ui, timeout=1) as answer:
                    if ready(json.load(answer)):
                        return
            except OSError:
                pass
            time.sleep(0.3)
        raise RuntimeError(f"no {what} within {timeout} s: see the logs in {self.directory}")

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                process.kill()  # this daemon only, by its own PID (spark-class execs the JVM)
            process.wait(timeout=30)
        for log in self._logs:
            log.close()
