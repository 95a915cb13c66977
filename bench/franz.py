"""Our `sticky` beside franz-go's sticky balancer, in one sitting: `python -m bench --only franz`.

franz-go (`bench/franz/`, pinned in its go.mod and go.sum, unmodified) is built here from the Go
module proxy and run through its public API (``kgo.StickyBalancer``: each member's JoinGroup
metadata written and parsed by the balancer, the balancing call timed). Ours: `assign("sticky")`
on objects, what the README shows and the aiokafka assignor, what-if and the service's small
requests use, and `assign_columns("sticky")` with the members' owned partitions as columns (what
a caller of columns has: its last plan). Each cell runs in a fresh process on the same
input (for the second steps, the members own what our fresh plan gave them), `REPEAT` timed
runs after `WARMUP`, the median printed; both plans go through the oracle and must be valid,
their balance scores and moves printed side by side. Ratio: ours / franz-go (below 1, we are
faster).

Without ``go`` on the PATH, or when the harness does not build (no module proxy to fetch
franz-go from, say), the section says so in one line.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import time
from pathlib import Path

from bench.child import in_child

ROOT = Path(__file__).resolve().parent.parent
SOURCE = Path(__file__).with_name("franz")
BINARY = ROOT / "var" / "bench" / "franz"
REPEAT, WARMUP = 25, 3

#: (kind, topics, partitions per topic, members, step): `assignor.workloads`' recipes.
CASES = [
    ("uniform", 500, 2000, 2000, "fresh"),
    ("uniform", 500, 2000, 2000, "leave10"),
    ("uniform", 100, 100, 100, "fresh"),
    ("uniform", 100, 100, 100, "leave10"),
    ("random50", 100, 100, 100, "fresh"),
    ("random50", 1000, 100, 1000, "leave10"),
    ("nonequal_kafka", 500, 2000, 2000, "fresh"),
    ("nonequal_kafka", 500, 2000, 2000, "kafka2"),
]


def build() -> str | None:
    """Build the franz-go harness (the go command caches it); None when there is no Go."""
    go = shutil.which("go")
    if go is None:
        return None
    BINARY.parent.mkdir(parents=True, exist_ok=True)
    # -mod=readonly: the module graph is go.mod's and go.sum's, never updated on the way.
    subprocess.run([go, "build", "-mod=readonly", "-o", str(BINARY), "."], cwd=SOURCE, check=True,
                   capture_output=True, text=True)
    return str(BINARY)


def group_of(kind: str, topics: int, partitions: int, members: int, step: str):
    from assignor import assign
    from assignor.workloads import java_large, next_step

    group = java_large(kind, topics, partitions, members)
    return group if step == "fresh" else next_step(group, assign("sticky", group), step)


def owned_columns(group):
    """The members' owned partitions as `Claims` (what a columns caller passes: its last plan)."""
    from assignor import Claims

    return Claims.of_lists([m.owned for m in group.members])


def franz_json(group, repeat: int, warmup: int) -> bytes:
    """The harness's input (`bench/franz/main.go`)."""
    return json.dumps({
        "topics": dict(group.topics), "repeat": repeat, "warmup": warmup,
        "members": [{"id": m.id, "topics": list(m.topics), "owned": [list(tp) for tp in m.owned],
                     "generation": m.generation} for m in group.members]}).encode()


def franz(binary: str, group, repeat: int = REPEAT, warmup: int = WARMUP) -> tuple[list[float], dict]:
    """franz-go's times and its (last) plan, ``member -> topic -> partitions``."""
    done = subprocess.run([binary], input=franz_json(group, repeat, warmup), capture_output=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"franz-go harness: {done.stderr.decode().strip()}")
    answer = json.loads(done.stdout)
    return answer["seconds"], answer["plan"]


def as_plan(group, plan: dict):
    """franz-go's plan as ours, for the oracle."""
    from assignor import Plan, TopicPartition

    return Plan("sticky", {m.id: [TopicPartition(t, p) for t, ps in sorted(plan.get(m.id, {}).items()) for p in ps]
                           for m in group.members})


def _timed(call, repeat: int, warmup: int) -> tuple[list[float], object]:
    for _ in range(warmup):
        call()
    times, result = [], None
    for _ in range(repeat):
        result = None  # the last plan freed before the clock starts, as Go's collector frees it later
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return times, result


def _ours(case: tuple, repeat: int, warmup: int, queue) -> None:
    from assignor import assign, assign_columns
    from assignor.validate import report

    group = group_of(*case)
    owned = owned_columns(group)
    objects, plan = _timed(lambda: assign("sticky", group), repeat, warmup)
    columns, _ = _timed(lambda: assign_columns("sticky", group, owned), repeat, warmup)
    checked = report(group, plan)  # type: ignore[arg-type]
    queue.put({"objects": statistics.median(objects), "columns": statistics.median(columns),
               "valid": checked["valid"], "balance": checked["balance_score"], "moved": checked["moved"]})


def _franz(case: tuple, binary: str, repeat: int, warmup: int, queue) -> None:
    from assignor.validate import report

    group = group_of(*case)
    seconds, plan = franz(binary, group, repeat, warmup)
    checked = report(group, as_plan(group, plan))
    queue.put({"seconds": statistics.median(seconds), "valid": checked["valid"],
               "balance": checked["balance_score"], "moved": checked["moved"]})


def main(quick: bool, repeat: int = REPEAT) -> None:
    try:
        binary = build()
    except subprocess.CalledProcessError as error:
        said = (error.stderr or "").strip().splitlines()
        print(f"franz-go: not run (`go build` in bench/franz failed: {said[-1] if said else error.returncode})")
        return
    if binary is None:
        print("franz-go: not run (no `go` on the PATH; Go 1.26 builds bench/franz from the module proxy)")
        return
    print("case | step | partitions/members | franz-go s | `assign` s | ratio | `assign_columns` s | ratio | "
          "balance (franz-go / ours) | moved (franz-go / ours)", flush=True)
    for case in CASES:
        kind, topics, partitions, members, step = case
        if quick and topics * partitions >= 1_000_000:
            continue
        theirs = in_child(_franz, case, binary, repeat, WARMUP, start="spawn")
        ours = in_child(_ours, case, repeat, WARMUP, start="spawn")
        if not (theirs["valid"] and ours["valid"]):
            raise RuntimeError(f"{case}: an invalid plan (franz-go {theirs['valid']}, ours {ours['valid']})")
        print(f"{kind} | {step} | {topics * partitions:,} / {members:,} | {theirs['seconds']:.4f} | "
              f"{ours['objects']:.4f} | {ours['objects'] / theirs['seconds']:.2f} | {ours['columns']:.4f} | "
              f"{ours['columns'] / theirs['seconds']:.2f} | {theirs['balance']} / {ours['balance']} | "
              f"{theirs['moved']} / {ours['moved']}", flush=True)
