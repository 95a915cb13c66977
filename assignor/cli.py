"""The ``assignor`` command line.

``assignor plan [--strategy NAME] GROUP.json`` reads a group in the JSON form (``-`` for stdin)
and prints ``{"assignment": ..., "metrics": ...}`` where metrics is the oracle's report.

``assignor whatif GROUP.json --event KIND:ARGS ...`` replays events under each strategy and
prints a table per strategy and a summary (``--json`` for the engine's full output).

``assignor pipeline fleet-whatif|key-skew|make-sample ...`` runs the Spark jobs (`pipeline.cli`).

``assignor simulate --preset kip794-series1`` runs the producer simulator on one of the KIPs'
experiments and prints a table per run (``--json``; ``--plot DIR`` for PNG charts).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from assignor.errors import AssignorError
from assignor.events import KINDS
from assignor.json_format import group_from_json, readable_json, strict_loads
from assignor.limits import DEFAULT_LIMITS
from assignor.plan_answer import plan_answer
from assignor.strategies import DEFAULT_STRATEGY, REGISTRY, STRATEGIES, strategy_named


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="assignor", description="Plan Kafka consumer-group assignments.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    plan = commands.add_parser("plan", help="plan one assignment of a group given as JSON, or of a live group")
    plan.add_argument("group_file", metavar="group", nargs="?",
                      help="group JSON file (the body of POST /v1/plans), or - for stdin; or --bootstrap-server "
                           "and --group")
    add_cluster_flags(plan, one_group=True)
    plan.add_argument("--strategy", choices=sorted(STRATEGIES),
                      help=f"default: the file's \"strategy\", else {DEFAULT_STRATEGY.name}")
    plan.add_argument("--compact", action="store_true", help="print the JSON on one line")
    whatif = commands.add_parser("whatif", help="replay events on a group under each strategy")
    whatif.add_argument("group_file", metavar="group", nargs="?",
                        help="group JSON file, or - for stdin; or --bootstrap-server and --group")
    add_cluster_flags(whatif, one_group=True)
    whatif.add_argument("--event", action="append", default=[], metavar="KIND:ARGS",
                        help="repeatable; one of " + ", ".join(kind.form for kind in KINDS.values()))
    whatif.add_argument("--strategy", action="append", choices=sorted(STRATEGIES),
                        help="strategies to compare (repeatable; default: all)")
    whatif.add_argument("--json", action="store_true", help="print the engine's output as JSON")
    whatif.add_argument("--plans", action="store_true", help="include each step's assignment (with --json)")
    whatif.add_argument("--migrate", metavar="STRATEGY",
                        choices=sorted(s.name for s in REGISTRY.values() if not s.protocol.classic),
                        help="rehearse converting the group to KIP-848's consumer protocol with this broker "
                             "assignor (the first --strategy is the classic one it runs today; default: a live "
                             "group's own)")
    add_settings_flags(whatif)
    snapshot = commands.add_parser("snapshot", help="read live groups from a cluster, read-only, as group JSON")
    add_cluster_flags(snapshot, one_group=False)
    snapshot.add_argument("--all", action="store_true", help="every consumer group of the cluster (ListGroups)")
    snapshot.add_argument("--summary", action="store_true",
                          help="each group's protocol, assignor, state and member count only, its members not read "
                               "(as kafka-consumer-groups.sh --describe --state)")
    snapshot.add_argument("--out", metavar="FILE", help="write the JSON here (default: stdout)")
    # Parsed by the jobs' own parser (`main` hands it everything after the word, --help too).
    pipeline = commands.add_parser("pipeline", help="Spark jobs: fleet-whatif, key-skew, make-sample",
                                   add_help=False)
    pipeline.add_argument("job", nargs=argparse.REMAINDER, help="the job and its options (`pipeline.cli`)")
    simulate = commands.add_parser("simulate", help="simulate producer partitioners (KIP-480, KIP-794)")
    simulate.add_argument("--preset", default="kip794-series1",
                          help="kip794-series1, kip794-series2 or kip480 (default: kip794-series1)")
    simulate.add_argument("--records", type=int, help="shorten (or lengthen) every run to this many records")
    simulate.add_argument("--seed", type=int, help="seed every run with this value")
    simulate.add_argument("--json", action="store_true", help="print the runs as JSON")
    simulate.add_argument("--plot", metavar="DIR", help="write PNG charts (bytes per broker, latency) into DIR")
    return parser


#: The largest group file read (a group at every limit of `DEFAULT_LIMITS` is well under it):
#: past it the file is refused, not read to its end (``/dev/zero`` would never end).
MAX_FILE_BYTES = 256 * 1024 * 1024


def _read_json(path: str) -> Any:
    """The JSON value in the file at `path` (``-``: stdin), read by the rules every entry point
    reads JSON by (`json_format.strict_loads`), at most `MAX_FILE_BYTES`."""
    try:
        if path == "-":
            text = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
        else:
            with open(path, "rb") as handle:
                text = handle.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise AssignorError(f"cannot read {path}: {error.strerror}") from None
    if len(text) > MAX_FILE_BYTES:
        raise AssignorError(f"{path}: larger than {MAX_FILE_BYTES} bytes, not read further")
    try:
        return strict_loads(text)
    except UnicodeDecodeError:
        raise AssignorError(f"{path}: not valid JSON (not UTF-8)") from None
    except ValueError as error:
        raise AssignorError(f"{path}: not valid JSON ({error})") from None


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kafka-sticky-assignor")
    except PackageNotFoundError:  # (run from a checkout that was never installed)
        return "unknown"


def _plan(args: argparse.Namespace) -> dict[str, Any]:
    return plan_output(_group_data(args), args.strategy)


def plan_output(data: Any, strategy: str | None) -> dict[str, Any]:
    """What ``plan`` prints for the group JSON `data` (a file's or a live group's snapshot):
    planned with `strategy` (else the one the JSON names, else the default), its assignment and
    metrics."""
    if isinstance(data, dict):  # the body of POST /v1/plans: the group, its strategy and generation
        data = dict(data)
        named = data.pop("strategy", None)
        data.pop("generation", None)  # (stamped into user data bytes, which the CLI does not print)
        if strategy is None and named is not None:
            if not isinstance(named, str):
                raise AssignorError("strategy: expected a string")
            strategy = named
    group = group_from_json(data)
    DEFAULT_LIMITS.check_group(group)  # as whatif and the service do: a 60-byte file can ask for 16 GiB
    answer = plan_answer(strategy_named(strategy or DEFAULT_STRATEGY.name), group)  # (the service's answer)
    return {**answer.assignment, "metrics": answer.report}


def add_cluster_flags(parser: argparse.ArgumentParser, *, one_group: bool) -> None:
    """``--bootstrap-server``, ``--command-config`` (Kafka's client properties, as its tools take
    them: `assignor.cluster.settings`) and ``--group`` (once, or repeatable for a snapshot)."""
    parser.add_argument("--bootstrap-server", metavar="HOST:PORT[,...]", help="read the group from this cluster")
    parser.add_argument("--command-config", metavar="FILE",
                        help="client properties (security.protocol, ssl.*, client.id, request.timeout.ms, ...)")
    if one_group:
        parser.add_argument("--group", metavar="GROUP_ID", help="the live group (with --bootstrap-server)")
    else:
        parser.add_argument("--group", action="append", default=[], metavar="GROUP_ID", help="repeatable")


def cluster_settings(args: argparse.Namespace) -> Any:
    """The `ClientSettings` of the flags `add_cluster_flags` added (the properties a snapshot
    does not read named on stderr)."""
    from assignor.cluster import read_properties, settings_of

    properties = read_properties(args.command_config) if args.command_config else {}
    settings = settings_of(args.bootstrap_server, properties)
    if settings.ignored:
        print(f"assignor: ignoring client properties a snapshot does not read: {', '.join(settings.ignored)}",
              file=sys.stderr)
    return settings


def _group_data(args: argparse.Namespace) -> Any:
    """The group JSON a command answers for: the file named, or a snapshot of ``--group`` on
    the cluster (`assignor.cluster`)."""
    live = args.bootstrap_server is not None or args.group is not None
    if args.group_file is not None and live:
        raise AssignorError("give a group JSON file or --bootstrap-server with --group, not both")
    if not live:
        if args.group_file is None:
            raise AssignorError("give a group JSON file, or --bootstrap-server HOST:PORT --group GROUP_ID")
        return _read_json(args.group_file)
    if args.group is None:
        raise AssignorError("--bootstrap-server: name the group with --group GROUP_ID")
    from assignor.cluster import snapshot

    return _one_group(snapshot(cluster_settings(args), [args.group]), args.group)


def live_snapshot(args: argparse.Namespace, command: str, summary: bool = False) -> tuple[Any, Any]:
    """The settings and the snapshot (or with `summary` the summaries) of the groups the flags
    name (``--group``, repeatable, or ``--all``), with a progress bar on a terminal:
    ``snapshot`` and the fleet job's."""
    from assignor.cluster import snapshot

    if args.all == bool(args.group):
        raise AssignorError(f"{command}: name the groups with --group (repeatable), or --all")
    settings = cluster_settings(args)
    with _progress("snapshot", None) as advance:
        return settings, snapshot(settings, None if args.all else args.group, advance, summary=summary)


def _one_group(found: Any, group_id: str) -> Any:
    """The one group a snapshot was asked for, or the reason it was skipped (AssignorError)."""
    if not found["groups"]:
        raise AssignorError(f"group {group_id!r}: {found['skipped'][0]['reason']}")
    return found["groups"][0]


def _snapshot(args: argparse.Namespace) -> int:
    _settings, found = live_snapshot(args, "snapshot", args.summary)
    if not args.all and len(args.group) == 1:
        output: Any = _one_group(found, args.group[0])
    else:
        output = found
        for skipped in found["skipped"]:
            print(f"assignor: skipped group {skipped['group_id']!r}: {skipped['reason']}", file=sys.stderr)
    text = readable_json(output) + "\n"
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as error:
            raise AssignorError(f"--out {args.out}: {error.strerror}") from None
    else:
        sys.stdout.write(text)
    return 0


def add_settings_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per setting of the rehearsal (``--restart-seconds``, ``--consumer-heartbeat-ms``,
    ..., ``--migration-policy``, ...): `assignor.whatif.TIMING_SETTINGS` and
    `CONVERSION_SETTINGS`; `timing_from` and `conversion_from` read them back."""
    from assignor.whatif import CONVERSION_SETTINGS, TIMING_SETTINGS
    from assignor.whatif.refusals import POLICIES

    for name, meaning in {**TIMING_SETTINGS, **CONVERSION_SETTINGS}.items():
        flag = "--" + name.replace("_", "-")
        if name == "assignment_user_data":
            parser.add_argument(flag, action="store_true", default=None, help=meaning)
        elif name == "migration_policy":
            parser.add_argument(flag, choices=list(POLICIES), help=meaning)
        else:
            seconds = name.endswith("_seconds")
            parser.add_argument(flag, type=float if seconds else int,
                                metavar="SECONDS" if seconds else "MS" if name.endswith("_ms") else "N", help=meaning)


def timing_from(args: argparse.Namespace) -> Any:
    """The `Timing` of the flags `add_settings_flags` added."""
    from assignor.whatif import TIMING_SETTINGS, timing_of

    return timing_of({name: getattr(args, name) for name in TIMING_SETTINGS})


def conversion_from(args: argparse.Namespace, described: Any = None) -> Any:
    """The `Conversion` of the flags `add_settings_flags` added (refused without ``--migrate``,
    where nothing converts: `conversion_of`), ``--assignment-user-data`` by default as a
    snapshot of the group says (`described`: its group JSON)."""
    from assignor.whatif import CONVERSION_SETTINGS, conversion_of

    return conversion_of({name: getattr(args, name) for name in CONVERSION_SETTINGS}, migrating=bool(args.migrate),
                         described=described if isinstance(described, dict) else None)


def _whatif(args: argparse.Namespace) -> int:
    from assignor import whatif

    if args.plans and not args.json:
        raise AssignorError("--plans adds each step's assignment to the JSON output: use it with --json")
    data = _group_data(args)
    group = group_from_json(data)
    events = [whatif.parse_event(text) for text in args.event]
    if args.migrate:
        classic = whatif.rehearsed_from(data, args.strategy)  # (a live group: from the strategy it runs)
        migration = whatif.migrate(group, events, args.migrate, classic, include_plans=args.plans,
                                   timing=timing_from(args), conversion_rules=conversion_from(args, data))
        if args.json:
            print(readable_json(migration))
        else:
            _migration_tables(migration)
        return 0
    conversion_from(args)  # (its flags need --migrate)
    strategies = tuple(args.strategy) if args.strategy else whatif.compared_for(data if isinstance(data, dict) else {})
    total = DEFAULT_LIMITS.check_events(group, events, strategies=len(strategies), plans=args.plans) * len(strategies)
    with _progress("what-if", total) as advance:
        output = whatif.run(group, events, strategies, include_plans=args.plans, progress=advance,
                            timing=timing_from(args))
    if args.json:
        print(readable_json(output))
    else:
        _whatif_tables(output)
    return 0


@contextlib.contextmanager
def _progress(label: str, total: int | None) -> Iterator[Callable[..., None]]:
    """A progress bar on stderr while the work runs, shown only on a terminal and only once it
    has run for a second (short runs print nothing extra); ``advance(done)`` moves it,
    ``advance(done, total)`` too where the total is learnt on the way."""
    from rich.console import Console
    from rich.progress import Progress

    console = Console(stderr=True)
    if not console.is_terminal:
        yield lambda *_: None
        return
    started = time.monotonic()
    with Progress(console=console, transient=True, auto_refresh=False) as bar:
        task = bar.add_task(label, total=total, visible=False)

        def advance(done: int, total: int | None = None) -> None:
            if total is not None:
                bar.update(task, total=total)
            if time.monotonic() - started >= 1.0:
                bar.update(task, completed=done, visible=True, refresh=True)

        yield advance


def table_console() -> Any:
    """Tables for stdout (the CLI's and the Spark jobs'): at the terminal's width, or when
    piped or redirected at the width they need (a cut number is a wrong number). Every cell is
    text as given, never Rich markup or emoji codes: an event names members and topics, and a
    member ``[/x]`` was a traceback, ``new`` in ``member_join:new:t`` an emoji."""
    from rich.console import Console

    return Console(width=None if sys.stdout.isatty() else 10_000, markup=False, emoji=False)


def _whatif_tables(output: Any) -> None:
    from rich.table import Table

    console = table_console()
    columns = ("rounds", "revoked", "moved", "reassigned", "balance_score", "spread", "topic_spread",
               "rack_locality")
    for name, result in output["strategies"].items():
        table = Table(title=name, title_justify="left")
        table.add_column("step")
        for column in columns:
            table.add_column(column.replace("_", " "), justify="right", no_wrap=True)
        for step in result["steps"]:
            event = step["event"] + (" [Java fails]" if "failed" in step else "")
            table.add_row(event, *(_cell(step[c]) for c in columns))
        console.print(table)
        for step in result["steps"]:
            if "failed" in step:
                console.print(f"  {step['event']}: {step['failed']}")
    after = max((len(result["steps"]) - 1 for result in output["strategies"].values()), default=0)
    summary = Table(title="summary (steps after the current state)" if after else
                    "summary (no events: nothing after the current state to add up)", title_justify="left")
    keys = ("steps", "rounds", "revoked", "moved", "reassigned", "final_balance_score", "max_spread", "rack_locality")
    summary.add_column("strategy")
    for key in keys:
        summary.add_column(key.replace("_", " "), justify="right", no_wrap=True)
    for name, result in output["strategies"].items():
        summary.add_row(name, *(_cell(result["summary"][k]) for k in keys))
    console.print(summary)
    if output.get("comparisons"):
        compared = Table(title="switching from Java's assignor to ours (positive: ours does better)",
                         title_justify="left")
        figures = list(next(iter(output["comparisons"].values())))
        compared.add_column("pair")
        for key in figures:
            compared.add_column(key.replace("_", " "), justify="right", no_wrap=True)
        for pair, values in output["comparisons"].items():
            compared.add_row(pair, *(_cell(values[k]) for k in figures))
        console.print(compared)


def _migration_tables(migration: Any) -> None:
    from rich.table import Table

    console = table_console()
    columns = ("rounds", "seconds", "revoked", "moved", "reassigned", "max_unowned_seconds", "paused_members",
               "balance_score", "spread")
    table = Table(title=f"{migration['classic']} today, then KIP-848's consumer protocol with {migration['target']} "
                        "(rounds: heartbeat intervals once converted; seconds: until every member has its target; "
                        "revoked: expected (least-most) where eager members rejoin)", title_justify="left")
    table.add_column("step")
    for column in columns:
        table.add_column(column.replace("_seconds", " s").replace("_", " "), justify="right", no_wrap=True)
    steps = [migration["today"], *migration["upgrade"]["steps"], *(e["consumer"] for e in migration["events"])]
    for step in steps:
        table.add_row(step["event"], *(_migration_cell(step, c) for c in columns))
    console.print(table)
    console.print("(seconds, max unowned and paused members are the consumer protocol's reconciliation figures: "
                  "'-' on a classic step, where every member rebalances through JoinGroup/SyncGroup)")
    upgrade = migration["upgrade"]
    refused = migration["refused"]
    if refused is not None:
        console.print(f"Kafka refuses the conversion at \"{refused['step']}\": {refused['reason']}; the member "
                      f"gets GROUP_ID_NOT_FOUND and the group stays classic. To upgrade: {refused['change']}.")
        return
    console.print(f"rolling upgrade: {upgrade['restarts']} restarts (the group runs mixed until the last), "
                  f"{upgrade['moved']} partitions moved, {_revoked(upgrade['revoked'], upgrade['revoked_range'])} "
                  f"revoked, longest unowned {upgrade['max_unowned_seconds']:g} s "
                  f"({upgrade['max_unowned']:g} heartbeat intervals)")
    if migration["events"]:
        saved = Table(title="per later event, what the consumer protocol saves against staying classic "
                            "(positive: saved)", title_justify="left")
        keys = list(next(iter(migration["events"][0]["saved"].values())))
        saved.add_column("event")
        saved.add_column("classic strategy")
        for key in keys:
            saved.add_column(key.replace("_", " "), justify="right", no_wrap=True)
        for event in migration["events"]:
            for name, figures in event["saved"].items():
                saved.add_row(event["event"], name, *(_cell(figures[k]) for k in keys))
        console.print(saved)
    best = migration["vs_optimum"]
    console.print(f"against the optimum (our sticky on the same events): balance score {best['balance_score']} vs "
                  f"{best['sticky_balance_score']}, spread {best['spread']} vs {best['sticky_spread']}, "
                  f"{best['worse_balance_steps']} step(s) less balanced")


def _migration_cell(step: Any, column: str) -> str:
    """A migration table's cell: seconds to two places, revocations with their range."""
    if column not in step:
        return _cell(None)
    if column in ("seconds", "max_unowned_seconds"):
        return f"{step[column]:.2f}"
    if column == "revoked" and "revoked_range" in step:
        return _revoked(step["revoked"], step["revoked_range"])
    return _cell(step[column])


def _revoked(expected: int, least_most: list[int]) -> str:
    least, most = least_most
    return str(expected) if least == most else f"{expected} ({least}-{most})"


def _simulate(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from assignor.partitioners import simulate

    if args.plot:
        _need("matplotlib", "plot", "--plot")  # (before the runs, not after)
    configs = simulate.preset(args.preset, args.records, args.seed)
    DEFAULT_LIMITS.check_simulation(configs)
    results = []
    with Progress(console=Console(stderr=True), transient=True) as progress:
        for config in configs:
            task = progress.add_task(config.label, total=config.records)
            results.append(simulate.run(config, functools.partial(_advance, progress, task)))
            progress.update(task, completed=config.records)
    if args.json:
        print(readable_json({"preset": args.preset, "runs": [r.to_json() for r in results]}))
    else:
        table = Table(title=f"{args.preset} ({configs[0].records:,} records of {configs[0].record_size} B)",
                      title_justify="left")
        for column in ("run", "MB/s", "avg ms", "p50 ms", "p99 ms", "p99.9 ms", "latency growth",
                       "MB per broker", "batches", "mean batch B"):
            table.add_column(column, justify="left" if column == "run" else "right")
        for r in results:
            table.add_row(r.config.label, f"{r.mb_per_s:.2f}", f"{r.latency_ms['avg']:.0f}",
                          f"{r.latency_ms['p50']:.0f}", f"{r.latency_ms['p99']:.0f}", f"{r.latency_ms['p99.9']:.0f}",
                          f"{r.latency_growth:.2f}x", " / ".join(f"{b / 1e6:.1f}" for b in r.bytes_per_broker),
                          f"{r.batches:,}", f"{r.mean_batch_bytes:,.0f}")
        table_console().print(table)
    if args.plot:
        from assignor.partitioners.simulate_plot import plot

        for path in plot(results, args.plot, args.preset):
            print(f"wrote {path}", file=sys.stderr)
    return 0


#: Commands that adapters outside the core add (the Spark jobs' ``pipeline``), found by name in
#: this entry-point group of the installed package: the core never imports an adapter.
COMMANDS_GROUP = "assignor.commands"


def _command(name: str) -> Any:
    """The runner an adapter registered for command `name` (``run(argv) -> exit code``)."""
    from importlib.metadata import entry_points

    found = [point for point in entry_points(group=COMMANDS_GROUP) if point.name == name]
    if not found:
        raise AssignorError(f"the {name} command is not installed here (reinstall the package)")
    try:
        return found[0].load()
    except ImportError as error:
        raise AssignorError(f"the {name} command needs the [spark] extra: pip install "
                            f"'kafka-sticky-assignor[spark]' ({error})") from None


def _need(module: str, extra: str, what: str) -> None:
    """AssignorError naming the extra to install when `module` is missing."""
    from importlib.util import find_spec

    if find_spec(module) is None:
        raise AssignorError(f"{what} needs {module}: pip install 'kafka-sticky-assignor[{extra}]'")


def _pipeline(job: list[str]) -> int:
    run_job = _command("pipeline")
    try:
        return int(run_job(job))
    except ImportError as error:  # an extra the job needs is missing (pyarrow, pandas, ...)
        raise AssignorError(f"the pipeline command needs the [spark] extra: pip install "
                            f"'kafka-sticky-assignor[spark]' ({error})") from None
    except ValueError as error:  # bad partition counts and the like, before any work
        raise AssignorError(str(error)) from None
    except OSError as error:  # an --out that is a file, a folder it may not write
        raise AssignorError(f"{error.filename or 'pipeline'}: {error.strerror or error}") from None


def _advance(progress: Any, task: Any, sent: int) -> None:
    progress.update(task, completed=sent)


def _cell(value: object) -> str:
    if value is None:
        return "-"
    return f"{value:.1%}" if isinstance(value, float) else str(value)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = _parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown and args.command != "pipeline":
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        if args.command == "whatif":
            return _whatif(args)
        if args.command == "simulate":
            return _simulate(args)
        if args.command == "snapshot":
            return _snapshot(args)
        if args.command == "pipeline":
            # Everything after the word is the job's (argparse's REMAINDER drops a leading --help).
            return _pipeline(argv[argv.index("pipeline") + 1:])
        output = _plan(args)
    except AssignorError as error:
        print(f"assignor: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: stop quietly, with the shell's status for SIGINT
        return 130
    print(json.dumps(output, separators=(",", ":")) if args.compact else readable_json(output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
