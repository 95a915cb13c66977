"""Time bounds relative to a baseline measured in the same run.

A bound in absolute seconds fails on a shared machine having a slow minute and, made loose enough
not to, catches nothing on a fast one. So a test states its bound as it holds on a quiet run of
this project's 2-core machine, and scales it by how much slower this machine runs *now*: the
best of a few runs of a fixed piece of pure-Python work, against that work's time on the quiet
machine. Where a test has a natural baseline of its own (the same request's duration, the first
start of the same service), it compares with that instead.
"""

from __future__ import annotations

import time

#: The best time of `_work()` on a quiet run of the 2-core machine the bounds were written on.
QUIET_SECONDS = 0.040


def _work() -> int:
    total = 0
    data = list(range(20_000))
    for i in range(150):
        data.reverse()
        total += sum(x * i for x in data[::3])
    return total


def slowdown(runs: int = 3) -> float:
    """How many times slower than the quiet machine this one runs now (at least 1)."""
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        _work()
        best = min(best, time.perf_counter() - started)
    return max(1.0, best / QUIET_SECONDS)


def scaled(seconds: float) -> float:
    """`seconds`, a bound on the quiet machine, as it holds on this one now."""
    return seconds * slowdown()
