"""The service under load on loopback: wrk posting plans, /healthz sampled meanwhile.

1. 32 connections post ``/v1/plans`` for a 10,000-partition / 100-member group for 30 s
   (wrk, 2 threads); a sampler thread calls ``/healthz`` every 20 ms on its own connection.
2. One 1,000,000-partition / 2,000-member plan, with ``/healthz`` sampled while it runs.

The server runs as users run it (uvicorn, one planning process per core) with room in its
queue for all 32 clients; wrk and the sampler share the same 2 cores, so the figures are a floor.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path


def _group(kind: str, topics: int, partitions: int, members: int) -> dict:
    from assignor.json_format import group_to_json
    from assignor.workloads import java_large

    return {"strategy": "sticky", **group_to_json(java_large(kind, topics, partitions, members))}


class _Sampler(threading.Thread):
    def __init__(self, url: str, every: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.url, self.every, self.latencies = url, every, []
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            start = time.perf_counter()
            with urllib.request.urlopen(self.url + "/healthz", timeout=10) as reply:
                reply.read()
            self.latencies.append(time.perf_counter() - start)
            time.sleep(self.every)

    def p99_ms(self) -> float:
        ordered = sorted(self.latencies)
        return 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] if ordered else float("nan")


def _serve(tmp: Path) -> tuple[subprocess.Popen, str]:

    port = _free_port()
    env = {**os.environ, "ASSIGNOR_REGISTRY": str(tmp / "registry.sqlite3"), "ASSIGNOR_MAX_PENDING": "64"}
    env.pop("ASSIGNOR_API_TOKEN", None)
    process = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory", "api.app:create_app",
                                "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"], env=env)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(url + "/healthz", timeout=1).read()
            return process, url
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("the service did not start")


def _wrk(url: str, body_path: Path, seconds: int, connections: int) -> dict:
    wrk = shutil.which("wrk")
    if wrk is None:
        raise RuntimeError("wrk is missing: `make bench` installs Debian's wrk")
    script = body_path.with_suffix(".lua")
    script.write_text(
        'wrk.method = "POST"\n'
        'wrk.headers["Content-Type"] = "application/json"\n'
        f'local f = io.open("{body_path}", "rb"); wrk.body = f:read("*all"); f:close()\n')
    out = subprocess.run([wrk, "-t2", f"-c{connections}", f"-d{seconds}s", "--timeout", "30s", "--latency",
                          "-s", str(script), url + "/v1/plans"], capture_output=True, text=True, check=True).stdout

    def latency(label: str) -> float:
        match = re.search(rf"^\s*{label}%\s+([\d.]+)(us|ms|s)\s*$", out, re.MULTILINE)
        value, unit = float(match.group(1)), match.group(2)
        return value * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"requests_per_s": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            "p50_ms": latency("50"), "p99_ms": latency("99"), "non_2xx": int(errors.group(1)) if errors else 0}


def run(seconds: int = 30, connections: int = 32) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="assignor-bench-"))
    process, url = _serve(tmp)
    try:
        body = tmp / "plan-10k.json"
        body.write_text(json.dumps(_group("random50", 100, 100, 100)))
        sampler = _Sampler(url)
        sampler.start()
        load = _wrk(url, body, seconds, connections)
        sampler.stopped.set()
        sampler.join()
        load["healthz_p99_ms"] = sampler.p99_ms()

        big = json.dumps(_group("uniform", 500, 2000, 2000)).encode()
        sampler = _Sampler(url)
        sampler.start()
        start = time.perf_counter()
        request = urllib.request.Request(url + "/v1/plans", big, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=600) as reply:
            answer = json.loads(reply.read())
        load["big_seconds"] = time.perf_counter() - start
        load["big_valid"] = answer["metrics"]["valid"]
        sampler.stopped.set()
        sampler.join()
        load["big_healthz_p99_ms"] = sampler.p99_ms()
        load["big_healthz_samples"] = len(sampler.latencies)
        return load
    finally:
        process.terminate()
        process.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)


def _free_port() -> int:
    """A loopback port nobody listens on now."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
