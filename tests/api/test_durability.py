"""Nothing answered is lost when the service is killed: eight leaders sync their groups without
pause, the service gets SIGKILL mid-stream, and after a restart on the same registry (SQLite and
PostgreSQL) every generation answered 200 is in the history, every row reads whole, and the
service answers within 5 s of starting again. Nothing of the killed service runs on."""

from __future__ import annotations

import base64
import http.client
import json
import os
import threading
import time
import urllib.request

import pytest

from api.registry import open_registry
from assignor.model import TopicPartition
from assignor.protocol import decode_assignment
from tests.api.test_api import join_metadata
from tests.service import Service
from tests.timing import scaled

pytestmark = pytest.mark.integration

LEADERS = 8


@pytest.fixture(params=["sqlite", "postgresql"])
def registry(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "registry.sqlite3")
    return request.getfixturevalue("postgres").new_database()


def _lead(url: str, group: str, answered: list[int], stop: threading.Event) -> None:
    """One leader: generation after generation, each member reporting what it was given."""
    members = [f"{group}-m{i}" for i in range(4)]
    owned: dict[str, list[TopicPartition]] = {m: [] for m in members}
    generation = 0
    while not stop.is_set():
        generation += 1
        body = {"protocol": "sticky", "generation": generation, "topics": {"t": {"partitions": 12}},
                "members": [{"member_id": m, "metadata_b64": join_metadata(["t"], owned[m], generation - 1)}
                            for m in members]}
        request = urllib.request.Request(f"{url}/v1/groups/{group}/sync", json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as reply:
                answer = json.load(reply)
        except (OSError, http.client.HTTPException, ValueError):
            return  # the service is gone (mid-answer, too)
        answered.append(generation)
        owned = {m: list(decode_assignment(base64.b64decode(answer["assignments"][m])).partitions) for m in members}


def test_sigkill_during_syncs_loses_no_answered_generation(tmp_path, registry):
    service = Service(tmp_path, workers=2, env={"ASSIGNOR_REGISTRY": registry})
    answered: dict[str, list[int]] = {f"g{i}": [] for i in range(LEADERS)}
    stop = threading.Event()
    leaders = [threading.Thread(target=_lead, args=(service.url, group, answered[group], stop))
               for group in answered]
    try:
        for leader in leaders:
            leader.start()
        deadline = time.monotonic() + 30
        while sum(map(len, answered.values())) < 200 and time.monotonic() < deadline:
            time.sleep(0.05)
        service.process.kill()  # SIGKILL, by its own PID, while the leaders keep sending
        service.process.wait()
    finally:
        stop.set()
        for leader in leaders:
            leader.join()
        service.stop()
    assert all(answered.values()), answered

    again = Service(tmp_path, workers=1, env={"ASSIGNOR_REGISTRY": registry})
    try:
        # Recovery adds nothing worth seeing to a start: no slower than twice the first one.
        assert again.started_in < 2 * service.started_in + scaled(1), (again.started_in, service.started_in)
        with urllib.request.urlopen(f"{again.url}/readyz", timeout=5) as reply:
            assert reply.status == 200
    finally:
        again.stop()

    store = open_registry(registry)
    for group, generations in answered.items():
        recorded = [row["generation"] for row in store.history(group)]
        assert set(generations) <= set(recorded), group
        latest = store.latest(group)  # the newest row, its JSON fields parsed
        assert latest is not None and latest["generation"] == max(recorded)
        assert set(latest["plan"]["assignment"]) == {m["id"] for m in latest["state"]["members"]}
        assert sum(map(len, latest["plan"]["assignment"].values())) == 12
    # Every row whole: each field of each row parses (a torn write would leave one that does not).
    for row in store._rows("SELECT state, plan, metrics FROM generations"):
        assert all(isinstance(json.loads(row[field]), dict) for field in ("state", "plan", "metrics"))


def _descendants(pid: int, depth: int | None = None) -> set[int]:
    """The processes started by `pid`, by theirs, and so on (from /proc), `depth` generations
    down (None: all)."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parent[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue  # gone meanwhile
    found, frontier = set(), {pid}
    while frontier and depth != 0:
        frontier = {child for child, of in parent.items() if of in frontier} - found
        found |= frontier
        depth = None if depth is None else depth - 1
    return found


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except OSError:
        return False


def test_nothing_of_a_killed_service_runs_on(tmp_path):
    """Its planning processes, the forkserver that started them and the resource tracker end
    with it: they used to run on for good after a SIGKILL, each holding its memory."""
    service = Service(tmp_path, workers=2)
    try:
        started = _descendants(service.process.pid)
        assert len(started) >= 3, started  # the workers start with the service, and the forkserver
        service.process.kill()
        service.process.wait()
        deadline = time.monotonic() + 15
        while (left := {pid for pid in started if _running(pid)}) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not left, left
    finally:
        service.stop()


def _planning_processes(service_pid: int) -> set[int]:
    """The planning processes: the forkserver's children (the forkserver is the service's child
    whose command line names it), not what they start in turn: a library's helper alive for a
    moment (``ctypes.util.find_library`` runs ``ldconfig -p``) was once counted as a third
    process of a pool of two, with the machine busy."""
    found = set()
    for pid in _descendants(service_pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                if b"forkserver" in cmdline.read():
                    found |= _descendants(pid, depth=1)
        except OSError:
            continue
    return found


def _status(url: str, body: bytes | None = None) -> int:
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"} if body else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_killed_planning_processes_are_replaced(tmp_path):
    """Every planning process killed with SIGKILL (as the kernel's out-of-memory killer does):
    the pool broke for good, and every /v1 call answered 500 until a restart while /readyz said
    ready. Now /readyz is not ready while no process can plan, new processes replace them, and
    /v1/plans answers 200 again within 10 s, with no restart."""
    import signal

    body = json.dumps({"topics": {"t": 6}, "members": [{"id": "a", "topics": ["t"]}, {"id": "b", "topics": ["t"]}]})
    service = Service(tmp_path, workers=2)
    try:
        assert _status(f"{service.url}/v1/plans", body.encode()) == 200
        workers = _planning_processes(service.process.pid)
        assert len(workers) == 2, workers
        for pid in workers:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:  # (ended already: once one dies, the pool ends the others)
                pass
        deadline = time.monotonic() + 10
        while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        # The forkserver reaps a killed worker, then tells the pool: between the two the worker
        # is gone from /proc but the pool still reads it as alive, for a moment.
        readiness = [_status(f"{service.url}/readyz")]
        while readiness[-1] == 200 and time.monotonic() < deadline:
            time.sleep(0.05)
            readiness.append(_status(f"{service.url}/readyz"))
        assert readiness[-1] == 503, readiness
        statuses = []
        while time.monotonic() < deadline:
            statuses.append(_status(f"{service.url}/v1/plans", body.encode()))
            if statuses[-1] == 200:
                break
            time.sleep(0.2)
        assert statuses[-1] == 200, statuses
        assert _status(f"{service.url}/readyz") == 200
        assert _status(f"{service.url}/v1/groups") == 200
        replaced = _planning_processes(service.process.pid)
        assert len(replaced) == 2 and not replaced & workers
    finally:
        service.stop()


def _answer(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return int(reply.status), json.load(reply)
    except urllib.error.HTTPError as error:
        return int(error.code), json.load(error)


PLAN = {"topics": {"t": 6}, "members": [{"id": "a", "topics": ["t"]}]}
#: A simulation of several seconds: the five KIP-794 runs at full length.
LONG_SIMULATION = {"preset": "kip794-series1"}


def test_a_request_past_its_time_limit_is_504_and_the_process_plans_on(tmp_path):
    """``rate: 1e-8`` kept a worker at 100% for more than five minutes after its client gave up.
    Any request now stops at ``ASSIGNOR_REQUEST_SECONDS`` with a 504, and the same planning
    process answers the next one."""
    service = Service(tmp_path, env={"ASSIGNOR_REQUEST_SECONDS": "1"})
    try:
        workers = _planning_processes(service.process.pid)
        started = time.monotonic()
        status, answer = _answer(f"{service.url}/v1/simulations", LONG_SIMULATION)
        assert status == 504 and time.monotonic() - started < 1 + scaled(4)
        assert answer["detail"] == "request_seconds: the request ran past the time limit of 1 s"
        assert _answer(f"{service.url}/v1/plans", PLAN)[0] == 200
        assert _planning_processes(service.process.pid) == workers
    finally:
        service.stop()


def test_a_request_past_the_memory_ceiling_is_507_and_the_process_plans_on(tmp_path):
    """A what-if that asked a planning process for 23.6 GB had it killed by the kernel. Past
    its ceiling (``ASSIGNOR_WORKER_MEMORY_MB``) an allocation now fails in the process: that
    request answers 507 and the process plans the next."""
    service = Service(tmp_path, env={"ASSIGNOR_WORKER_MEMORY_MB": "600", "ASSIGNOR_MAX_PARTITIONS": "1000000000",
                                     "ASSIGNOR_MAX_WORK": "100000000000"})
    try:
        workers = _planning_processes(service.process.pid)
        group = {"topics": {"t": 2}, "members": [{"id": "a", "topics": ["t", "x"]}]}
        status, answer = _answer(f"{service.url}/v1/whatif", {"group": group, "events": ["topic_created:x:400000000"],
                                                              "strategies": ["range"]})
        assert status == 507, answer
        assert answer["detail"].startswith("worker_memory_mb: the request needed more memory than a planning")
        assert _answer(f"{service.url}/v1/plans", PLAN)[0] == 200
        assert _planning_processes(service.process.pid) == workers
    finally:
        service.stop()


def test_sigterm_ends_the_service_within_seconds_while_work_runs(tmp_path):
    """SIGTERM waited at "Waiting for background tasks to complete" for as long as a request
    planned (minutes), until a second signal."""
    service = Service(tmp_path, env={"ASSIGNOR_REQUEST_SECONDS": "0"})
    try:
        worker = threading.Thread(target=lambda: _status(f"{service.url}/v1/simulations",
                                                         json.dumps({"preset": "kip794-series2"}).encode()),
                                  daemon=True)
        worker.start()
        time.sleep(1.0)  # the simulation is under way
        workers = _planning_processes(service.process.pid)
        started = time.monotonic()
        service.process.terminate()
        service.process.wait(timeout=15)
        assert time.monotonic() - started < scaled(5)
        deadline = time.monotonic() + 5
        while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_running(pid) for pid in workers)
    finally:
        service.stop()


def test_ctrl_c_at_the_terminal_stops_the_service_without_a_traceback(tmp_path):
    """Ctrl-C signals the terminal's whole process group, planning processes included: one busy
    with a request printed a KeyboardInterrupt traceback. They leave Ctrl-C to the service now."""
    import signal
    import subprocess
    import sys

    from tests.broker import free_port

    port = free_port()
    service = subprocess.Popen([sys.executable, "-m", "api", "--port", str(port)], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True,  # (its own group, as a terminal's)
                               env={**os.environ, "ASSIGNOR_REGISTRY": str(tmp_path / "r.sqlite3"),
                                    "ASSIGNOR_WORKERS": "2"})
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the service did not start"
                time.sleep(0.2)
        busy = threading.Thread(target=lambda: _status(f"http://127.0.0.1:{port}/v1/simulations",
                                                      json.dumps(LONG_SIMULATION).encode()),
                                daemon=True)
        busy.start()
        time.sleep(1.0)  # a planning process is at work
        os.killpg(service.pid, signal.SIGINT)
        output, _ = service.communicate(timeout=60)
    finally:
        if service.poll() is None:
            os.killpg(service.pid, signal.SIGKILL)
            service.wait()
    text = output.decode(errors="replace")
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text[-2000:]


def _resident_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        return int(status.read().split("VmRSS:")[1].split()[0]) / 1024


def test_a_planning_process_holds_no_more_after_many_large_requests_than_after_the_first(tmp_path):
    """Each large what-if left a planning process 1-2 MB larger (59 -> 102 MB over twenty
    1,000-topic requests): a few small objects that C-level caches keep held a 1 MiB arena of
    Python's allocator each. Planning processes use the C library's allocator, whose free pages
    go back after each large request (`api.pool._start_forkserver`), with a fixed threshold for
    mapping a block on its own (`api.transport.start_worker`; a moving one left the second
    request 6 MB above the first)."""
    service = Service(tmp_path, workers=1)
    try:
        [worker] = _planning_processes(service.process.pid)
        resident = []
        for request in range(10):
            topics = {f"topic-{request}-{t:04d}-" + "x" * 100: 50 for t in range(500)}
            members = [{"id": f"member-{request}-{m}-" + "y" * 100, "topics": list(topics)} for m in range(100)]
            status, answer = _answer(f"{service.url}/v1/whatif", {
                "group": {"topics": topics, "members": members}, "strategies": ["sticky", "kip848-uniform"],
                "events": [f"member_leave:{members[0]['id']}"]})
            assert status == 200, answer
            resident.append(_resident_mb(worker))
        assert resident[-1] <= resident[0] * 1.10, resident
    finally:
        service.stop()
