"""Sticky assignor benchmark at the Java client's scales: `python -m bench [--quick]`.

Each case runs in its own process (so peak memory is the case's own): it builds the input with
the workloads the tests use too (`assignor.workloads`), times our `assign("sticky", ...)` (best of
--repeat), checks the plan with the oracle, and when asked runs aiokafka's assignor on the same
input in the same process, with a time limit. The Java column is the Java client's own
assignor on the same input in the same sitting (`bench.java_client`: kafka-clients of the
pinned descriptor in a JVM, the median of --repeat calls after a warm-up, with the same limit).

Every table goes to standard output and, as Markdown, into the README between the markers
``<!-- bench:SECTION -->`` and ``<!-- /bench:SECTION -->`` (with ``--write-readme``, which
`make bench` passes), so the README's figures are regenerated, not pasted.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bench import report
from bench.child import answer, in_child


# (name, kind, topics, partitions per topic, members, step, run aiokafka)
@dataclass(frozen=True)
class Case:
    name: str
    kind: str
    topics: int
    partitions: int
    members: int
    step: str  # fresh | leave10 | kafka2 | join10
    peer: bool = False
    quick: bool = True
    racks: bool = False  # members on 3 racks, each partition replicated on 2 of them


CASES = [
    Case("uniform", "uniform", 500, 2000, 2000, "fresh", quick=False),
    Case("uniform", "uniform", 500, 2000, 2000, "leave10", quick=False),
    Case("uniform", "uniform", 500, 2000, 2000, "join10", quick=False),
    Case("nonequal_kafka", "nonequal_kafka", 500, 2000, 2000, "fresh", quick=False),
    Case("nonequal_kafka", "nonequal_kafka", 500, 2000, 2000, "kafka2", quick=False),
    Case("uniform", "uniform", 100, 100, 100, "fresh", peer=True),
    Case("random50", "random50", 100, 100, 100, "fresh", peer=True),
    Case("random50", "random50", 100, 100, 100, "leave10", peer=True),
    Case("random50", "random50", 200, 100, 200, "fresh"),
    Case("random50", "random50", 1000, 100, 1000, "fresh", peer=True),
    Case("random50", "random50", 1000, 100, 1000, "join10"),
    Case("random50", "random50", 500, 2000, 2000, "fresh", quick=False),
    Case("random50", "random50", 500, 2000, 2000, "leave10", quick=False),
    Case("random50", "random50", 500, 2000, 2000, "join10", quick=False),
    Case("random50+racks", "random50", 1000, 100, 1000, "fresh", racks=True),
    Case("uniform+racks", "uniform", 500, 2000, 2000, "fresh", racks=True, quick=False),
    Case("random50+racks", "random50", 500, 2000, 2000, "fresh", racks=True, quick=False),
    Case("random50+racks", "random50", 500, 2000, 2000, "leave10", racks=True, quick=False),
]

RACKS = ("r0", "r1", "r2")
README = Path(__file__).resolve().parent.parent / "README.md"


def java_text(java: dict | None, limit: float) -> str:
    """The Java client's median time and loads (`java_client.java_time`), or over its limit."""
    if java is None:
        return "-"
    if java["seconds"] is None:
        return f"> {limit:.0f} s"
    return f"{java['seconds']:.3g} s ({java['loads']})"


def _with_racks(group):
    """Members round-robin over 3 racks; partition p of topic j on racks (j+p) and (j+p+1) mod 3."""
    from assignor import Group, Member

    placement = {t: [[RACKS[(j + p) % 3], RACKS[(j + p + 1) % 3]] for p in range(n)]
                 for j, (t, n) in enumerate(sorted(group.topics.items()))}
    return Group(topics=group.topics, partition_racks=placement,
                 members=[Member(m.id, m.topics, m.owned, m.generation, RACKS[i % 3])
                          for i, m in enumerate(group.members)])


def _inputs(case: Case):
    from assignor import Group, assign
    from assignor.workloads import java_large, next_step

    full = java_large(case.kind, case.topics, case.partitions, case.members)
    if case.racks:
        full = _with_racks(full)
    if case.step == "fresh":
        return full
    if case.step == "join10":
        # 10% of the members (index ending in 9) join a group that had balanced without them.
        base = Group(topics=full.topics, members=[m for i, m in enumerate(full.members) if i % 10 != 9],
                     partition_racks=full.partition_racks)
        plan = assign("sticky", base)
        from assignor.workloads import carry

        carried = {m.id: m for m in carry(base, plan, 1).members}
        return Group(topics=full.topics, members=[carried.get(m.id, m) for m in full.members])
    return next_step(full, assign("sticky", full), case.step)


def _run_case(case: Case, repeat: int, peer_limit: float, queue) -> None:
    from assignor import assign, validate

    group = _inputs(case)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        plan = assign("sticky", group)
        best = min(best, time.perf_counter() - start)
    report = validate.report(group, plan)
    row = {"ours": best, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
           "valid": report["valid"], "loads": f"{report['min_load']}-{report['max_load']}",
           "balance": report["balance_score"], "moved": report["moved"],
           "locality": report["rack_locality"]}
    if peer_limit > 0:  # the Java client's StickyAssignor on the same group
        from bench.java_client import java_time

        row["java"] = java_time(group, "sticky", repeat, peer_limit)
    queue.put(row)
    if case.peer and peer_limit > 0:
        from bench.peer import aiokafka_sticky

        start = time.perf_counter()
        peer_plan = aiokafka_sticky(group)
        peer_report = validate.report(group, peer_plan)
        queue.put({"peer": time.perf_counter() - start,
                   "peer_loads": f"{peer_report['min_load']}-{peer_report['max_load']}",
                   "peer_valid": peer_report["valid"]})


def run(case: Case, repeat: int, peer_limit: float) -> dict:
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    process = context.Process(target=_run_case, args=(case, repeat, peer_limit, queue))
    process.start()
    row = answer(queue, process)  # ours always finishes
    if case.peer and peer_limit > 0:
        try:
            row.update(queue.get(timeout=peer_limit))
        except Exception:  # noqa: BLE001 - queue.Empty: the peer ran out of time
            row["peer"] = None
    process.kill()
    process.join()
    return row


def _keys_in_child(queue) -> None:
    from bench import keys

    queue.put(keys.run())


def _whatif_in_child(case: str, queue) -> None:
    from bench import whatif

    queue.put(whatif.run(case))


def _protocol_in_child(repeat: int, queue) -> None:
    from bench import protocol

    queue.put(protocol.run(repeat))


def _protocol_row(repeat: int, with_peer: bool) -> str:
    """The wire row: decode 2,000 members' metadata (1M owned partitions) + encode assignments."""
    row = in_child(_protocol_in_child, repeat)
    header = "wire (leader) | members / owned | ours decode s | ours encode s | ours total s | " \
             "aiokafka decode s | aiokafka encode s | aiokafka total s | speed-up"
    peer = row.get("peer") if with_peer else None
    cells = ["decode JoinGroup + encode SyncGroup", f"{row['members']:,} / {row['owned']:,}",
             _seconds(row["decode"]), _seconds(row["encode"]), _seconds(row["ours"]),
             _seconds(row.get("peer_decode") if peer else None), _seconds(row.get("peer_encode") if peer else None),
             _seconds(peer), f"{peer / row['ours']:.1f}x" if peer else "-"]
    return header + "\n" + " | ".join(cells)


def _adapter_in_child(kind: str, step: str, limit: float, queue) -> None:
    from bench import adapter

    queue.put(adapter.run(kind, step, limit))


def _service_in_child(queue) -> None:
    from bench import service

    queue.put(service.run())


def _adapter_rows(limit: float) -> None:
    print("aiokafka leader (assign) | partitions / members | ours s | aiokafka StickyPartitionAssignor s | speed-up",
          flush=True)
    for kind, step in (("uniform", "fresh"), ("random50", "fresh"), ("random50", "leave10")):
        row = in_child(_adapter_in_child, kind, step, limit)
        peer = row["peer"]
        ratio = f"{peer / row['ours']:.0f}x" if peer is not None else f"> {limit / row['ours']:.0f}x"
        print(f"{row['case']} | {row['partitions']:,} / {row['members']:,} | {row['ours']:.3f} | "
              f"{_seconds(peer) if peer is not None else f'> {limit:.0f}'} | {ratio}", flush=True)


def _service_rows() -> None:
    row = in_child(_service_in_child)
    print("service load (loopback) | requests/s | p50 ms | p99 ms | non-2xx | /healthz p99 ms | /healthz worst ms",
          flush=True)
    print(f"32 clients x 30 s, POST /v1/plans 10,000 / 100 | {row['requests_per_s']:.1f} | {row['p50_ms']:.0f} | "
          f"{row['p99_ms']:.0f} | {row['non_2xx']} | {row['healthz_p99_ms']:.1f} | {row['healthz_worst_ms']:.1f}",
          flush=True)
    print()
    print("one plan 1,000,000 / 2,000, to the last byte | answer | seconds | valid | /healthz worst ms", flush=True)
    for form, label in (("pairs", "POST /v1/plans"), ("columns", "POST /v1/plans?format=columns&bytes=false")):
        print(f"{label} | {row[f'big_{form}_mb']:.1f} MB | {row[f'big_{form}_seconds']:.2f} | "
              f"{row[f'big_{form}_valid']} | {row[f'big_{form}_healthz_worst_ms']:.1f}", flush=True)
    print()
    print("heaviest request (each endpoint, at the limits) | seconds | /healthz worst ms", flush=True)
    for label, figures in row["stalls"].items():
        print(f"{label} | {figures['seconds']:.2f} | {figures['healthz_worst_ms']:.1f}", flush=True)
    print()
    sync, soak = row["sync"], row["soak"]
    print("leader sync (sequential) | rounds | p50 ms | p99 ms", flush=True)
    print(f"POST /v1/groups/{{id}}/sync 100 members / 10,000 | {sync['rounds']} | {sync['p50_ms']:.1f} | "
          f"{sync['p99_ms']:.1f}", flush=True)
    print()
    print("soak | syncs | 200 | 5xx | other | RSS after warm-up MB | RSS at end MB | growth", flush=True)
    total = soak["ok"] + soak["5xx"] + soak["other"]
    print(f"{soak['groups']:,} groups x {soak['seconds']} s, 8 clients | {total:,} | {soak['ok']:,} | {soak['5xx']} | "
          f"{soak['other']} | {soak['rss_warm_mb']:.0f} | {soak['rss_end_mb']:.0f} | {soak['growth']:+.1%}",
          flush=True)


def _simulate_in_child(queue) -> None:
    from assignor.partitioners import simulate

    rows = []
    for name in ("kip794-series1", "kip794-series2", "kip480"):
        for config in simulate.preset(name):
            start = time.process_time()
            result = simulate.run(config)
            rows.append((name, result, time.process_time() - start))
    queue.put([(name, r.row(), cpu) for name, r, cpu in rows])


def _simulate_rows() -> None:
    rows = in_child(_simulate_in_child)
    print("simulator run | records | CPU s | MB/s | p99 ms | MB per broker | batches", flush=True)
    for name, row, cpu in rows:
        brokers = " / ".join(f"{b / 1e6:.1f}" for b in row["bytes_per_broker"])
        print(f"{name}: {row['label']} | {row['records']:,} | {cpu:.2f} | {row['mb_per_s']:.2f} | "
              f"{row['latency_p99_ms']:.0f} | {brokers} | {row['batches']:,}", flush=True)


def _pipeline_in_child(which: str, size: int, queue) -> None:
    from bench import pipeline

    queue.put(getattr(pipeline, which)(size))


def _pipeline_rows(quick: bool) -> None:
    row = in_child(_pipeline_in_child, "key_skew", 10_000_000)
    print("key-skew (3 partition counts) | records | Spark local[2] s (records/s) | single process s (records/s) | "
          "Spark / single | same tables", flush=True)
    print(f"10M records from Parquet | {row['records']:,} | {row['spark_s']:.1f} "
          f"({row['records'] / row['spark_s']:,.0f}) | "
          f"{row['local_s']:.1f} ({row['records'] / row['local_s']:,.0f}) | {row['spark_s'] / row['local_s']:.2f}x | "
          f"{row['same']} (Spark start and warm-up {row['spark_startup_s']:.0f} s, not counted)", flush=True)
    if not quick:
        big = in_child(_pipeline_in_child, "key_skew_on_the_fly", 100_000_000)
        print(f"100M records generated in Spark | {big['records']:,} | {big['spark_s']:.0f} "
              f"({big['records'] / big['spark_s']:,.0f}) | - | - | "
              f"driver peak RSS: Python {big['driver_python_mb']:.0f} MB"
              f" + JVM {big['driver_jvm_mb']:.0f} MB", flush=True)
        memory = in_child(_pipeline_in_child, "local_in_memory", 100_000_000)
        print(f"100M records, single process | {memory['records']:,} | - | {memory['local_s']:.0f} "
              f"({memory['records'] / memory['local_s']:,.0f}) | - | "
              f"peak RSS {memory['rss_mb']:,.0f} MB (data in memory)",
              flush=True)
    print()
    spread = in_child(_pipeline_in_child, "cluster", 500)
    print("the same jobs, from the command line (Spark start included) | sample | standalone cluster s "
          "(1 worker, 2 cores) | local[2] s | --local s | cluster / local[2]", flush=True)
    for job, times in spread["seconds"].items():
        sample = f"{spread['groups']:,} groups" if job == "fleet-whatif" else f"{spread['records']:,} records"
        print(f"{job} | {sample} | {times['cluster']:.1f} | {times['local[2]']:.1f} | {times['--local']:.1f} | "
              f"{times['cluster'] / times['local[2]']:.2f}x", flush=True)
    print()
    fleet = in_child(_pipeline_in_child, "fleet", 10_000)
    print("fleet-whatif (1 event, 4 strategies) | groups / members | Spark local[2] s (groups/s) | "
          "single process s (groups/s)", flush=True)
    print(f"partitions_added | {fleet['groups']:,} / {fleet['members']:,} | {fleet['spark_s']:.1f} "
          f"({fleet['groups'] / fleet['spark_s']:,.0f}) | {fleet['local_s']:.1f} "
          f"({fleet['groups'] / fleet['local_s']:,.0f})", flush=True)


SECTIONS = ("assign", "franz", "java", "kip848", "wire", "fastpaths", "record", "keys", "whatif", "adapter",
            "rebalance", "simulate", "pipeline", "service", "snapshot")


def _fastpaths_in_child(repeat: int, queue) -> None:
    from bench import fastpaths

    queue.put(fastpaths.run(repeat))


def _fastpath_rows(repeat: int) -> None:
    """Each fast path against its plain reference (`bench/fastpaths.py`)."""
    print("fast path | input | reference | reference s | fast path s | gain", flush=True)
    for row in in_child(_fastpaths_in_child, repeat):
        gain = row["reference_s"] / row["fast_s"]
        shown = f"{gain:.1f}x" if gain >= 1 else f"{gain:.2f}x"
        print(f"{row['fast path']} | {row['input']} | {row['reference']} | {_short(row['reference_s'])} | "
              f"{_short(row['fast_s'])} | {shown}", flush=True)


def _short(seconds: float) -> str:
    """Seconds to the millisecond, or to two figures below 10 ms (the small group's row)."""
    return f"{seconds:.3f}" if seconds >= 0.01 else f"{seconds:.2g}"


def _franz_rows(quick: bool) -> None:
    from bench import franz

    franz.main(quick)


def _kip848_rows(quick: bool, repeat: int) -> None:
    from bench import kip848

    kip848.main(quick, repeat)


def _rebalance_rows(quick: bool) -> None:
    from bench import rebalance

    rebalance.main(quick)


def _record_rows() -> None:
    from bench import record

    record.main()


def _snapshot_rows(quick: bool, repeat: int) -> None:
    from bench import snapshot

    snapshot.main(quick, repeat)


def _seconds(value):
    return "-" if value is None else f"{value:.3f}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 1M-partition cases")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--peer-limit", type=float, default=120.0,
                        help="seconds allowed to aiokafka per case (0: do not run it)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--write-readme", action="store_true",
                        help="write each section's tables into README.md between its markers")
    parser.add_argument("--only", action="append", choices=SECTIONS,
                        help="run only these sections (repeatable; default: all)")
    args = parser.parse_args(argv)
    only = set(args.only or SECTIONS)
    rows: list[dict] = []
    runs = {
        "assign": lambda: rows.extend(_assign_rows(args)),
        "franz": lambda: _franz_rows(args.quick),
        "java": lambda: _java_rows(args),
        "wire": lambda: print(_protocol_row(args.repeat, args.peer_limit > 0), flush=True),
        "fastpaths": lambda: _fastpath_rows(args.repeat),
        "kip848": lambda: _kip848_rows(args.quick, args.repeat),
        "record": _record_rows,
        "keys": _keys_row,
        "whatif": lambda: _whatif_rows(args.quick, args.repeat),
        "adapter": lambda: _adapter_rows(args.peer_limit),
        "rebalance": lambda: _rebalance_rows(args.quick),
        "simulate": _simulate_rows,
        "pipeline": lambda: _pipeline_rows(args.quick),
        "service": _service_rows,
        "snapshot": lambda: _snapshot_rows(args.quick, args.repeat),
    }
    tables = {}
    for section in SECTIONS:
        if section in only:
            with report.recorded() as lines:
                runs[section]()
            print()
            tables[section] = lines
    if args.write_readme:
        report.write_readme(README, tables)
    if args.json:
        json.dump(rows, sys.stdout, indent=1)
    return 0 if all("INVALID" not in r["loads"] for r in rows) else 1


def _assign_rows(args) -> list[dict]:
    header = ("case", "step", "partitions/members", "ours s", "peak MB", "loads", "balance", "moved",
              "rack-local", "aiokafka s", "aiokafka loads", "speed-up", "Java s (loads)")
    rows = []
    print(" | ".join(header), flush=True)
    for case in CASES:
        if args.quick and not case.quick:
            continue
        row = run(case, args.repeat, args.peer_limit)
        peer = row.get("peer")
        if case.peer and args.peer_limit > 0:
            peer_text = _seconds(peer) if peer is not None else f"> {args.peer_limit:.0f}"
            ratio = f"{peer / row['ours']:.0f}x" if peer is not None else f"> {args.peer_limit / row['ours']:.0f}x"
            peer_loads = row.get("peer_loads", "-")
        else:
            peer_text, ratio, peer_loads = "-", "-", "-"
        cells = (case.name, case.step, f"{case.topics * case.partitions:,} / {case.members:,}",
                 _seconds(row["ours"]), f"{row['rss_mb']:.0f}", row["loads"] + ("" if row["valid"] else " INVALID"),
                 str(row["balance"]), str(row["moved"]),
                 "-" if row["locality"] is None else f"{row['locality']:.0%}", peer_text, peer_loads, ratio,
                 java_text(row.get("java"), args.peer_limit))
        rows.append(dict(zip(header, cells)))
        print(" | ".join(cells), flush=True)
    print()
    return rows


def _java_rows(args) -> None:
    """KIP-54 as Java runs it (`bench/java.py`): ours, aiokafka's port and the Java client's own."""
    from bench import java

    header = ("case", "step", "partitions/members", "java-sticky s", "java-cooperative-sticky s", "loads",
              "Java s (loads)", "vs Java", "aiokafka s", "aiokafka loads", "vs aiokafka")
    print(" | ".join(header), flush=True)
    for case in java.CASES:
        if args.quick and not case.quick:
            continue
        context = multiprocessing.get_context("fork")
        queue = context.Queue()
        process = context.Process(target=java.run, args=(case, args.repeat, args.peer_limit, queue))
        process.start()
        row = answer(queue, process)
        peer = None
        if args.peer_limit > 0:
            try:
                peer = queue.get(timeout=args.peer_limit)
            except Exception:  # noqa: BLE001 - queue.Empty: the peer ran out of time
                peer = None
        process.kill()
        process.join()
        eager, cooperative = row["java-sticky"], row["java-cooperative-sticky"]
        java_s = row["java"]["seconds"] if row.get("java") else None
        loads = eager["loads"] + ("" if eager["valid"] and cooperative["valid"] else " INVALID")
        if peer is not None:
            peer_text, peer_loads = _seconds(peer["peer"]), peer["peer_loads"]
            versus_peer = f"{peer['peer'] / eager['seconds']:.0f}x faster"
        elif args.peer_limit > 0:
            peer_text, peer_loads = f"> {args.peer_limit:.0f}", "-"
            versus_peer = f"> {args.peer_limit / eager['seconds']:.0f}x faster"
        else:
            peer_text = peer_loads = versus_peer = "-"
        if java_s is None:
            versus_java = "-" if not row.get("java") else f"> {args.peer_limit / eager['seconds']:.0f}x faster"
        else:
            versus_java = (f"{java_s / eager['seconds']:.1f}x faster" if java_s >= eager["seconds"]
                           else f"{eager['seconds'] / java_s:.1f}x slower")
        cells = (case.kind, case.step, f"{case.topics * case.partitions:,} / {case.members:,}",
                 _seconds(eager["seconds"]), _seconds(cooperative["seconds"]), loads,
                 java_text(row.get("java"), args.peer_limit), versus_java,
                 peer_text, peer_loads, versus_peer)
        print(" | ".join(cells), flush=True)


def _keys_row() -> None:
    keys = in_child(_keys_in_child)
    print("keyed partitioning | keys | ours vectorised s | ours per key s | aiokafka murmur2 s | speed-up | "
          "10M keys from a list s (keys/s) | 10M keys Arrow layout s (keys/s)", flush=True)
    print(f"murmur2 % 24 | {keys['keys']:,} | {keys['vectorised']:.3f} | {keys['scalar']:.3f} | {keys['peer']:.3f} | "
          f"{keys['peer'] / keys['vectorised']:.0f}x (per key {keys['peer'] / keys['scalar']:.1f}x) | "
          f"{keys['many_seconds']:.2f} ({keys['many'] / keys['many_seconds'] / 1e6:.1f}M) | "
          f"{keys['arrow_seconds']:.2f} ({keys['many'] / keys['arrow_seconds'] / 1e6:.1f}M)", flush=True)


def _whatif_rows(quick: bool, repeat: int) -> None:
    # No other engine replays rebalances through the wire, so the comparison is the target.
    # Best of `repeat` runs, each in a fresh process, as the other sections; every run is shown,
    # since the 2,000-step case is long enough to meet the machine's slow spells.
    print("what-if | partitions / members | strategies | rebalances | seconds (best) | every run s | target s | "
          "of target | ms per rebalance | moved per strategy", flush=True)
    for case, label, size, target in (
            ("one-event", "member_leave, our 4 strategies", "100,000 / 1,000", 3.0),
            ("one-event-java", "member_leave, the 2 Java strategies", "100,000 / 1,000", None),
            ("typical-java", "member_leave, the 2 Java strategies (50 ms a step each)", "1,000 / 50", 0.2),
            ("restart:100", "rolling_restart, sticky", "10,000 / 100", None),
            *([] if quick else [("restart:1000", "rolling_restart, sticky", "10,000 / 1,000", 30.0),
                                ("fleet:1000", "rolling_restart, the sample fleet (one core)", None, 45.0)])):
        runs = [in_child(_whatif_in_child, case) for _ in range(max(repeat, 1))]
        row = min(runs, key=lambda r: r["seconds"])
        every = ", ".join(f"{r['seconds']:.2f}" for r in runs)
        share = "-" if target is None else f"{row['seconds'] / target:.2f}x"
        size = size or row["size"]
        print(f"{label} | {size} | {len(row['moved'])} | {row['rebalances']} | {row['seconds']:.2f} | {every} | "
              f"{target or '-'} | {share} | {1000 * row['seconds'] / row['rebalances']:.1f} | {row['moved']}",
              flush=True)


if __name__ == "__main__":
    sys.exit(main())
