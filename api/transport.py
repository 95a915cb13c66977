"""How work crosses between the service's process and its planning processes: large bodies and
answers as files (`Spooled`, `handed_over`), the spool's clean-up, and a planning process's
start-up (`start_worker`: end with the service, freeze what lives as long as the process).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import glob
import json
import logging
import os
import resource
import select
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from api.handlers.answers import Answer

log = logging.getLogger("api")

class Spooled(NamedTuple):
    """A request body or an answer in a file, handed between the service's process and a
    planning process instead of the bytes (`handed_over`)."""

    path: str
    size: int


#: Bodies and answers larger than this cross processes as files (`handed_over`).
SPOOL_BYTES = 8 << 20


def handed_over(seconds: float, function: Callable[..., Answer], *args: Any
                ) -> tuple[int, bytes | Spooled, dict[str, Any], float]:
    """`function(*args)` as the planning pool runs it, within `seconds` (0: no limit), with
    large bodies and answers in files: a `Spooled` argument is read here, and an answer larger
    than `SPOOL_BYTES` is written to a file whose path goes back instead. Bytes cross processes
    pickled, and the service's process copies them whole with the interpreter held, which the
    event loop waits for: joining and pickling a 40 MB body held it 75 ms, reading and
    unpickling a 140 MB plan 190 ms. A file is written and read there a megabyte at a time
    (`api.bodies.read_body`, `reply`).

    Past `seconds` the work stops (a timer signal raises in it) and the answer is a 504; an
    allocation past the process's memory ceiling (`start_worker`) is a 507. Either way the
    process goes on planning the next request.

    Returns the status, the answer (bytes or `Spooled`), the handler's stats and the seconds it
    took here (the pool's admission learns from them: `api.pool.Planner.admit`)."""
    started = time.perf_counter()
    try:
        with _time_limit(seconds):
            status, payload, stats = function(*(_read(a) if isinstance(a, Spooled) else a for a in args))
        if time.perf_counter() - started > _TRIM_AFTER_SECONDS:
            _give_back_memory()
    except _OutOfTime:
        return 504, _problem(f"request_seconds: the request ran past the time limit of {seconds:g} s"), {}, seconds
    except MemoryError:
        gc.collect()
        return 507, _problem("worker_memory_mb: the request needed more memory than a planning process may use "
                             f"({_ceiling_mb()} MB)"), {}, time.perf_counter() - started
    if len(payload) <= SPOOL_BYTES:
        return status, payload, stats, time.perf_counter() - started
    file = spool_file()
    try:
        with file:
            file.write(payload)
    except OSError:  # no room: the answer goes the slow way, but it goes
        discard(Spooled(file.name, 0))
        return status, payload, stats, time.perf_counter() - started
    return status, Spooled(file.name, len(payload)), stats, time.perf_counter() - started


#: A request that planned this long allocated enough that its freed memory is worth handing
#: back to the system (`_give_back_memory`); shorter ones skip the millisecond it costs.
_TRIM_AFTER_SECONDS = 0.05


def _give_back_memory() -> None:
    """Return the heap's free pages to the system (glibc's ``malloc_trim``). A planning process
    keeps what a large request freed in its allocator's arenas otherwise, and its resident size
    swings with the last request (95-155 MB over twenty 1,000-topic what-ifs) instead of
    settling where the first left it; elsewhere than glibc, nothing."""
    gc.collect()  # (the request's reference cycles first: they pin the pages their objects sit on)
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)


#: glibc's ``mallopt`` parameter number for the size from which a block is mapped on its own.
_M_MMAP_THRESHOLD = -3


@functools.cache
def _libc() -> Any:
    import ctypes

    try:
        # glibc's soname, loaded by name: `ctypes.util.find_library` would run ``ldconfig -p`` in
        # every planning process as it starts. (Without glibc there is no malloc_trim to call.)
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim  # noqa: B018  (glibc only)
    except (OSError, AttributeError):
        return None
    return libc


#: Spooled files are named this, then the PID of the process that made them (`sweep_spool`).
SPOOL_PREFIX = "kafka-sticky-assignor-"


_SHARED = "/dev/shm"


def spool_file() -> Any:
    """A new file for `Spooled` data; the caller removes it (`discard`). In memory (/dev/shm)
    when that has a gigabyte to spare, else in the temporary folder: a container's /dev/shm is
    often 64 MB, less than one large answer."""
    where = tempfile.gettempdir()
    with contextlib.suppress(OSError):
        room = os.statvfs(_SHARED)
        if room.f_bavail * room.f_frsize >= 1 << 30 and os.access(_SHARED, os.W_OK):
            where = _SHARED
    return tempfile.NamedTemporaryFile(dir=where, prefix=f"{SPOOL_PREFIX}{os.getpid()}-", suffix=".json",
                                       delete=False)


def sweep_spool() -> list[str]:
    """Remove the spooled files of processes that no longer run, and name them. A service killed
    mid-request (SIGKILL, the out-of-memory killer) cannot remove its own, and in /dev/shm they
    hold memory until the machine restarts; the service sweeps when it starts. The files of a
    running process (another service, say) stay."""
    removed = []
    for folder in dict.fromkeys((_SHARED, tempfile.gettempdir())):
        for path in glob.glob(os.path.join(glob.escape(folder), SPOOL_PREFIX + "*")):
            pid = os.path.basename(path)[len(SPOOL_PREFIX):].split("-", 1)[0]
            if pid.isdigit() and not _running(int(pid)):
                with contextlib.suppress(OSError):
                    os.unlink(path)
                    removed.append(path)
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # no signal sent: whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, as another user's
        return True
    return True


def _read(spooled: Spooled) -> bytes:
    with open(spooled.path, "rb") as file:
        return file.read()


def discard(*values: Any) -> None:
    """Remove the file of each `Spooled` among `values` (already gone is fine)."""
    for value in values:
        if isinstance(value, Spooled):
            with contextlib.suppress(OSError):
                os.unlink(value.path)


class _OutOfTime(BaseException):
    """Raised into a request's work by its timer (a BaseException: no handler swallows it)."""


def _on_timer(_signal: int, _frame: Any) -> None:
    raise _OutOfTime


@contextlib.contextmanager
def _time_limit(seconds: float) -> Any:
    """A real-time timer around the work of one request, in a planning process's main thread
    (where the pool runs work and where signals arrive; elsewhere, as in the threads of
    ``ASSIGNOR_WORKERS=0``, no limit). The work stops between two bytecodes: a long numpy call
    finishes first."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGALRM, _on_timer)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _problem(detail: str) -> bytes:
    return json.dumps({"detail": detail}).encode()


def _ceiling_mb() -> int:
    soft, _hard = resource.getrlimit(resource.RLIMIT_DATA)
    return -1 if soft == resource.RLIM_INFINITY else soft >> 20


def memory_ceiling_mb(workers: int) -> int:
    """The default memory ceiling of one planning process: three quarters of the machine's
    memory shared among the workers (at least 512 MB), so that no request, or several at once,
    can take the whole machine."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 0
    return max(512, int(total * 0.75) // max(workers, 1) >> 20)


def start_worker(service: int | None = None, memory_mb: int = 0) -> None:
    """A planning process's first step: leave Ctrl-C to the service, end with the `service`
    process (its PID), cap its data memory at `memory_mb` (0: no cap; an allocation past it is a
    MemoryError, which `handed_over` answers with 507, not the kernel's out-of-memory killer),
    import what the handlers need, then hide every object that lives as long as the process from
    the cyclic collector (`gc.freeze`). The modules, numpy's and pydantic's included, are tens
    of thousands of objects that each full collection would walk again for nothing; a plan of
    10,000 partitions allocates enough to set off such collections, and they cost it about 8%
    (1.7 of 21 ms, in-process)."""
    # Ctrl-C at the terminal signals the whole process group: the service stops its pool (and
    # these processes) itself, so a planning process ignores it rather than print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if service is not None:
        _end_with(service)
    if memory_mb > 0:
        # RLIMIT_DATA counts the heap and private anonymous mappings (numpy's large arrays), not
        # the shared libraries' code or the address space threads reserve (Linux 4.7+).
        limit = memory_mb << 20
        resource.setrlimit(resource.RLIMIT_DATA, (limit, resource.getrlimit(resource.RLIMIT_DATA)[1]))
    import api.models  # noqa: F401  (the sync, partitions and what-if handlers validate with it)

    libc = _libc()
    if libc is not None:
        # A fixed threshold (glibc's largest default): blocks under 32 MB come from the heap from
        # the first request on. The moving one started low, so the first request's large arrays
        # were mapped and unmapped, and the second left the heap 6 MB larger than the first had.
        libc.mallopt(_M_MMAP_THRESHOLD, 32 << 20)
    gc.freeze()


def _end_with(pid: int) -> None:
    """Exit when process `pid` ends. A pool's worker waits for work on a queue it holds both
    ends of, so a service killed with SIGKILL left its workers (and, through them, the
    forkserver and the resource tracker) running for good, each holding its memory. A pidfd
    becomes readable when the process ends (Linux 5.3); elsewhere, a check every second."""
    try:
        handle: int | None = os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd here, or the service is gone already
        handle = None

    def watch() -> None:
        if handle is not None:
            select.select([handle], [], [])
        else:
            while _running(pid):
                time.sleep(1)
        os._exit(1)  # nobody is left to answer: no clean-up is owed

    threading.Thread(target=watch, name="end-with-service", daemon=True).start()
