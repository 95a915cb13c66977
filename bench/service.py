"""The service under load on loopback, as users run it (uvicorn, one planning process per core).

1. 32 connections post ``/v1/plans`` for a 10,000-partition / 100-member group for 30 s (wrk,
   2 threads); a sampler calls ``/healthz`` every 20 ms on its own connection meanwhile.
2. One 1,000,000-partition / 2,000-member plan, timed to the last byte of the answer, in the
   default form and as ``?format=columns&bytes=false``.
3. The worst ``/healthz`` wait while the heaviest request of each endpoint runs, at the service's
   limits (a stall shows as the worst wait, not a mean).
4. ``/v1/groups/{id}/sync`` of 100 members / 10,000 partitions, one generation after another
   on one kept-alive connection, as a leader holds it.
5. Soak: 1,000 distinct groups syncing for 60 s: answers that are not 200, and the resident
   memory of the service (its process and workers) after warm-up and at the end.

wrk, the sampler and the service share the same 2 cores, so the figures are a floor.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path


def _group(kind: str, topics: int, partitions: int, members: int) -> dict:
    from assignor.json_format import group_to_json
    from assignor.workloads import java_large

    return {"strategy": "sticky", **group_to_json(java_large(kind, topics, partitions, members))}


class _Sampler:
    """Calls /healthz every 20 ms from a process of its own (a thread beside a client reading a
    70 MB answer would measure that client's GIL, not the service), until stopped."""

    # One kept-alive connection, as a monitoring probe holds: a new connection and urllib's
    # machinery per call cost the sampler more CPU than the call, on the cores the service uses.
    _LOOP = """
import http.client, json, sys, threading, time, urllib.parse
stop, latencies = threading.Event(), []
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
where = urllib.parse.urlsplit(sys.argv[1])
connection = http.client.HTTPConnection(where.hostname, where.port, timeout=10)
while not stop.is_set():
    start = time.perf_counter()
    connection.request("GET", "/healthz")
    connection.getresponse().read()
    latencies.append(time.perf_counter() - start)
    time.sleep(float(sys.argv[2]))
print(json.dumps(latencies))
"""

    def __init__(self, url: str, every: float = 0.02) -> None:
        self.url, self.every, self.latencies = url, every, []
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", self._LOOP, self.url, str(self.every)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        time.sleep(0.2)  # its first calls are in before the work starts

    def stop(self) -> None:
        out, _ = self.process.communicate("", timeout=60)
        self.latencies = json.loads(out)

    def worst_ms(self) -> float:
        return 1000 * max(self.latencies, default=float("nan"))

    def p99_ms(self) -> float:
        ordered = sorted(self.latencies)
        return 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] if ordered else float("nan")


def serve_command(tmp: Path, port: int) -> tuple[list[str], dict[str, str]]:
    """The command and environment the bench serves with: `make serve`'s (``python -m api``), with
    none of the environment's ``ASSIGNOR_*`` settings but a registry of its own, so the figures
    are those a user of `make serve` gets."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("ASSIGNOR_")}
    env["ASSIGNOR_REGISTRY"] = str(tmp / "registry.sqlite3")
    return [sys.executable, "-m", "api", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"], env


def _serve(tmp: Path) -> tuple[subprocess.Popen, str]:

    port = _free_port()
    argv, env = serve_command(tmp, port)
    process = subprocess.Popen(argv, env=env)
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


def run(seconds: int = 30, connections: int = 32, soak_seconds: int = 60) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="assignor-bench-"))
    process, url = _serve(tmp)
    try:
        body = tmp / "plan-10k.json"
        body.write_text(json.dumps(_group("random50", 100, 100, 100)))
        sampler = _Sampler(url)
        sampler.start()
        load = _wrk(url, body, seconds, connections)
        sampler.stop()
        load["healthz_p99_ms"] = sampler.p99_ms()
        load["healthz_worst_ms"] = sampler.worst_ms()
        big = json.dumps(_group("uniform", 500, 2000, 2000)).encode()
        for form, query in (("pairs", ""), ("columns", "?format=columns&bytes=false")):
            seconds_taken, answer, worst = _timed(url, "/v1/plans" + query, big)
            load[f"big_{form}_seconds"] = seconds_taken
            load[f"big_{form}_mb"] = len(answer) / 1e6
            load[f"big_{form}_valid"] = json.loads(answer)["metrics"]["valid"]
            load[f"big_{form}_healthz_worst_ms"] = worst
        load["stalls"] = _stalls(url)
        load["sync"] = _sync_latency(url)
        load["soak"] = _soak(url, process.pid, soak_seconds)
        return load
    finally:
        process.terminate()
        process.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)


def _post(url: str, path: str, body: bytes | None, timeout: float = 600) -> tuple[int, bytes]:
    """POST `body` (GET when None)."""
    request = urllib.request.Request(url + path, body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _timed(url: str, path: str, body: bytes | None) -> tuple[float, bytes, float]:
    """One request timed to the last byte of its answer (parsing it is the client's business),
    and the worst /healthz wait meanwhile."""
    sampler = _Sampler(url)
    sampler.start()
    start = time.perf_counter()
    status, answer = _post(url, path, body)
    seconds = time.perf_counter() - start
    sampler.stop()
    if status != 200:
        raise RuntimeError(f"{path}: {status} {answer[:200]!r}")
    return seconds, answer, sampler.worst_ms()


def _stalls(url: str) -> dict[str, dict[str, float]]:
    """The worst /healthz wait while the heaviest request of each endpoint runs: at the service's
    limits (2,000,000 partitions, 10,000 members, 1,000,000 keys, a 64 MiB body), except what-if,
    whose cost is per event (its body and answer are far below the limits)."""
    import numpy as np

    from assignor.json_format import group_to_json
    from assignor.model import Claims
    from assignor.protocol import encode_assignments
    from assignor.workloads import java_large

    def assignment_b64(partitions: int) -> str:  # one member's, written on arrays (a tuple each is slow)
        flat = np.arange(partitions, dtype=np.int64)
        claims = Claims(np.zeros(partitions, dtype=np.int64), flat % 500, flat // 500,
                        [f"t{t:03d}" for t in range(500)])
        return base64.b64encode(encode_assignments(claims, 1, "", 0).messages()[0]).decode()

    def whatif_body() -> dict:
        group = group_to_json(java_large("uniform", 100, 1000, 1000))
        return {"group": group, "events": ["member_leave:" + m["id"] for m in group["members"][:10]],
                "strategies": ["sticky"]}

    requests: dict[str, tuple[str, Callable[[], dict] | None]] = {
        "POST /v1/plans (2,000,000 / 10,000)": ("/v1/plans", lambda: _group("uniform", 500, 4000, 10_000)),
        "POST /v1/partitions (1,000,000 keys of 60 bytes, fnv1a)": ("/v1/partitions", lambda: {
            "keys": [f"user-{i:055d}" for i in range(1_000_000)], "partitions": 64, "partitioner": "fnv1a"}),
        "POST /v1/protocol/decode (11,500,000-partition assignment)": ("/v1/protocol/decode", lambda: {
            "type": "assignment", "data_b64": assignment_b64(11_500_000)}),
        "POST /v1/protocol/encode (4,000,000-partition assignment)": ("/v1/protocol/encode", lambda: {
            "type": "assignment", "version": 3,
            "value": {"partitions": [[f"t{i % 500:03d}", i // 500] for i in range(4_000_000)]}}),
        "POST /v1/whatif (100,000 / 1,000, rolling restart of 10, sticky)": ("/v1/whatif", whatif_body),
        "POST /v1/groups/{id}/sync (2,000,000 / 10,000)": ("/v1/groups/big/sync",
                                                          lambda: _sync_body(10_000, 500, 4000, 1)),
        "GET /v1/groups/{id} (that group read back)": ("/v1/groups/big", None),
    }
    out = {}
    for label, (path, make) in requests.items():
        body = None if make is None else json.dumps(make()).encode()
        seconds, _answer, worst = _timed(url, path, body)
        out[label] = {"seconds": seconds, "healthz_worst_ms": worst}
    return out


def _sync_body(members: int, topics: int, partitions: int, generation: int,
               owned: dict[str, list] | None = None, prefix: str = "m") -> dict:
    """A leader's sync request: `members` members of one protocol ("sticky") subscribed to all
    topics, each reporting `owned` (what it was given last time) as Java's client does."""
    from assignor.model import TopicPartition
    from assignor.protocol import Subscription, encode_sticky_user_data, encode_subscription

    names = [f"t{i:03d}" for i in range(topics)]
    ids = [f"{prefix}{i:04d}" for i in range(members)]
    out = []
    for member in ids:
        mine = [TopicPartition(t, p) for t, p in (owned or {}).get(member, [])]
        user_data = encode_sticky_user_data(mine, generation - 1) if owned else None
        metadata = encode_subscription(Subscription(names, user_data))
        out.append({"member_id": member, "metadata_b64": base64.b64encode(metadata).decode()})
    return {"protocol": "sticky", "generation": generation,
            "topics": {t: {"partitions": partitions} for t in names}, "members": out}


def _sync_latency(url: str, rounds: int = 200) -> dict[str, float]:
    """One leader syncing 100 members / 10,000 partitions generation after generation, each
    member reporting what it was given: per-request latency."""
    from assignor.protocol import decode_assignment

    owned: dict[str, list] | None = None
    latencies = []
    where = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=60)  # kept alive, as a leader's
    for generation in range(1, rounds + 1):
        body = json.dumps(_sync_body(100, 100, 100, generation, owned)).encode()
        start = time.perf_counter()
        connection.request("POST", "/v1/groups/steady/sync", body, {"Content-Type": "application/json"})
        reply = connection.getresponse()
        status, answer = reply.status, reply.read()
        latencies.append(time.perf_counter() - start)
        if status != 200:
            raise RuntimeError(f"sync: {status} {answer[:200]!r}")
        given = json.loads(answer)["assignments"]
        owned = {m: [tuple(tp) for tp in decode_assignment(base64.b64decode(data)).partitions]
                 for m, data in given.items()}
    ordered = sorted(latencies[10:])  # after warm-up
    return {"p50_ms": 1000 * ordered[len(ordered) // 2], "p99_ms": 1000 * ordered[int(0.99 * (len(ordered) - 1))],
            "rounds": rounds}


def _rss_mb(pid: int) -> float:
    """Resident memory of a process and its descendants (the planning workers)."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            with open(f"/proc/{current}/status") as status:
                total += next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
            with open(f"/proc/{current}/task/{current}/children") as children:
                pending.extend(int(child) for child in children.read().split())
        except (OSError, StopIteration):
            continue
    return total / 1024


def _soak(url: str, pid: int, seconds: int, groups: int = 1000, clients: int = 8) -> dict[str, float]:
    """`groups` distinct small groups (4 members, 12 partitions) synced round after round by
    `clients` threads for `seconds`: answers that are not 200, and memory after warm-up (a
    tenth of the time) and at the end."""
    bodies = [json.dumps(_sync_body(4, 3, 4, 1, prefix=f"g{g}-")).encode() for g in range(groups)]
    counts = {"ok": 0, "5xx": 0, "other": 0}
    lock = threading.Lock()
    stop = threading.Event()
    next_group = iter(range(10**9))

    def client() -> None:
        while not stop.is_set():
            with lock:
                g = next(next_group) % groups
            status, _ = _post(url, f"/v1/groups/soak-{g}/sync", bodies[g], timeout=60)
            with lock:
                counts["ok" if status == 200 else "5xx" if status >= 500 else "other"] += 1

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for thread in threads:
        thread.start()
    time.sleep(seconds / 10)
    warm = _rss_mb(pid)
    time.sleep(seconds - seconds / 10)
    end = _rss_mb(pid)
    stop.set()
    for thread in threads:
        thread.join()
    return {**counts, "seconds": seconds, "groups": groups, "rss_warm_mb": warm, "rss_end_mb": end,
            "growth": end / warm - 1}


def _free_port() -> int:
    """A loopback port nobody listens on now."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
