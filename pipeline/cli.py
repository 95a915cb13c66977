"""``assignor pipeline ...``: the Spark jobs from the command line.

    assignor pipeline make-sample --out DIR [--groups N --records N]
    assignor pipeline fleet-whatif --groups G --topics T --event rolling_restart --out DIR [--master URL]
    assignor pipeline fleet-whatif --bootstrap-server HOST:PORT --all --event rolling_restart --out DIR
    assignor pipeline snapshot --bootstrap-server HOST:PORT --all --out DIR
    assignor pipeline fleet-whatif --groups G --topics T --event ... --migrate kip848-uniform --out DIR
    assignor pipeline key-skew --records R --partitions 12,16,24 --out DIR [--master URL] [--plot]

``--master`` defaults to ``local[*]``; ``spark://host:7077`` (or ``spark-submit`` of
``pipeline/cli.py``) runs the same job on a cluster, which needs only the third-party libraries:
the job ships this project's code to the executors and checks their Python first
(`pipeline.ship`). ``--conf KEY=VALUE`` (repeatable), ``--py-files`` and ``--archives`` pass
through to Spark. ``--local`` runs the single-process path instead of Spark. Both write the same
layout: each table a directory of Parquet files under ``--out`` (``results/``, ``errors/``, ...),
and the job prints where. Spark shows stage progress while a job runs; a summary table is
printed at the end.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Nothing of ours at the top: `spark-submit pipeline/cli.py` runs this file before `__main__` below
# puts the checkout on the path (tests/test_layers.py holds it to that).
if TYPE_CHECKING:
    import pandas as pd


def add_jobs(commands: Any) -> None:
    """Each job's parser, added to `commands` (an argparse sub-parsers object)."""
    from assignor.cli import add_cluster_flags, add_settings_flags
    from assignor.events import KINDS

    sample = commands.add_parser("make-sample", help="write a sample fleet and records (Parquet)",
                                 description="Write a sample fleet (groups.parquet: one row per member; "
                                             "topics.parquet: partition counts) and records.parquet (keys and "
                                             "sizes) for fleet-whatif and key-skew.")
    sample.add_argument("--out", required=True, help="the folder to write into (created)")
    sample.add_argument("--clusters", type=_positive, default=2, help="Kafka clusters (default: 2)")
    sample.add_argument("--groups", type=_positive, default=50,
                        help="consumer groups in all, shared out over the clusters (default: 50)")
    sample.add_argument("--topics", type=_positive, default=20, help="topics per cluster (default: 20)")
    sample.add_argument("--records", type=_positive, default=100_000,
                        help="records in records.parquet (default: 100000)")
    sample.add_argument("--seed", type=int, default=7, help="the random seed; same seed, same files (default: 7)")
    sample.add_argument("--no-bad-rows", action="store_true",
                        help="leave out the malformed rows meant to land in errors/")
    snapshot = commands.add_parser("snapshot", help="a cluster's live consumer groups as fleet-whatif's rows",
                                   description="Read every consumer group of a cluster, read-only (`assignor "
                                               "snapshot --all`), and write them as fleet-whatif's input: "
                                               "groups.parquet and topics.parquet.")
    snapshot.add_argument("--out", required=True, help="the folder to write into (created)")
    fleet = commands.add_parser("fleet-whatif", help="replay events on every group under each strategy")
    fleet.add_argument("--groups", help="member rows (Parquet, or JSON lines ending in .json/.jsonl)")
    fleet.add_argument("--topics", help="topic rows (Parquet or JSON lines)")
    fleet.add_argument("--event", action="append", default=[], metavar="KIND:ARGS",
                       help="repeatable; one of " + ", ".join(kind.form for kind in KINDS.values()))
    fleet.add_argument("--strategy", action="append",
                       help="default: every strategy; with --migrate, the classic strategies groups run today "
                            "(default: the cooperative ones)")
    fleet.add_argument("--migrate", metavar="STRATEGY",
                       help="rehearse moving every group to KIP-848's consumer protocol with this broker "
                            "assignor (kip848-uniform or kip848-range): writes migration/")
    fleet.add_argument("--plans", action="store_true", help="include each group's final plan (JSON)")
    add_settings_flags(fleet)
    fleet.add_argument("--plot", action="store_true",
                       help="write a PNG of what switching from Java's assignors to ours changes")
    skew = commands.add_parser("key-skew", help="records per partition for several partition counts")
    skew.add_argument("--records", required=True, help="records (Parquet, or CSV with a header)")
    skew.add_argument("--partitions", required=True, help="partition counts, e.g. 12,16,24")
    skew.add_argument("--key-encoding", choices=("utf-8", "base64"), default="utf-8",
                      help="how text keys encode the key bytes")
    skew.add_argument("--plot", action="store_true", help="write PNG charts of records per partition")
    for job in (snapshot, fleet):
        add_cluster_flags(job, one_group=False)
        job.add_argument("--all", action="store_true", help="every consumer group of the cluster")
    for job in (fleet, skew):
        job.add_argument("--out", required=True)
        job.add_argument("--master", default="local[*]")
        job.add_argument("--local", action="store_true", help="single process, no Spark")
        job.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                         help="a Spark setting (repeatable)")
        job.add_argument("--py-files", default="", help="comma-separated .py/.zip/.egg files for the executors")
        job.add_argument("--archives", default="",
                         help="comma-separated archives unpacked on the executors (e.g. env.tar.gz#env)")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def run(argv: list[str]) -> int:
    """Parse a job's command line and run it (``assignor pipeline ...`` calls this)."""
    top = argparse.ArgumentParser(prog="assignor pipeline", description=__doc__.splitlines()[0])
    add_jobs(top.add_subparsers(dest="job", required=True))
    return main(top.parse_args(argv))


def main(args: argparse.Namespace) -> int:
    """Run a parsed job. Raises ValueError (a message for the user, not a traceback) for input
    that cannot work, before Spark starts: files that do not exist, bad partition counts."""
    if args.job == "make-sample":
        from pipeline import sample

        paths = sample.write(args.out, clusters=args.clusters, groups=args.groups, topics=args.topics,
                             records_count=args.records, seed=args.seed, bad_rows=not args.no_bad_rows)
        import pyarrow.parquet as pq

        for name, path in paths.items():
            print(f"wrote {path} ({pq.read_metadata(path).num_rows:,} rows)")
        print(f"a sample of {args.groups} groups over {args.clusters} clusters of {args.topics} topics each"
              f"{'' if args.no_bad_rows else ', with malformed rows meant for errors/'}")
        return 0
    if args.job == "snapshot" or (args.job == "fleet-whatif" and args.bootstrap_server is not None):
        _live_rows(args)
        if args.job == "snapshot":
            return 0
    elif args.job == "fleet-whatif" and (args.groups is None or args.topics is None):
        raise ValueError("fleet-whatif: give --groups and --topics, or --bootstrap-server with --all (or --group)")
    for option in ("groups", "topics", "records"):
        given: str | None = getattr(args, option, None)
        if given is not None and "://" not in given and not Path(given).exists():
            raise ValueError(f"--{option}: no such file or folder: {given}")
    counts = _counts(args.partitions) if args.job == "key-skew" else []  # (before Spark starts)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    if args.job == "fleet-whatif" and args.migrate:
        _migration_summary(_fleet(args, out), time.perf_counter() - started)
    elif args.job == "fleet-whatif":
        result = _fleet(args, out)
        _fleet_summary(result, time.perf_counter() - started)
        _switching(result, out, args.plot)
    else:
        tables = _skew(args, out, counts)
        _skew_summary(tables, time.perf_counter() - started)
    return 0


def _live_rows(args: argparse.Namespace) -> None:
    """A snapshot of the cluster's groups (``--all``, or ``--group``) written as the fleet job's
    rows (`pipeline.snapshot_rows`): into ``--out`` for ``snapshot``, into ``--out``/snapshot for
    ``fleet-whatif``, which then reads them."""
    from assignor.cli import live_snapshot
    from pipeline.snapshot_rows import write_rows

    if args.job == "fleet-whatif" and (args.groups is not None or args.topics is not None):
        raise ValueError("fleet-whatif: --groups and --topics, or --bootstrap-server: not both")
    settings, found = live_snapshot(args, args.job)
    for skipped in found["skipped"]:
        print(f"skipped group {skipped['group_id']!r}: {skipped['reason']}", file=sys.stderr)
    out = Path(args.out) if args.job == "snapshot" else Path(args.out) / "snapshot"
    paths = write_rows(found, settings.name, out)
    print(f"read {len(found['groups'])} groups of {settings.name} ({len(found['skipped'])} skipped) into {out}")
    args.groups, args.topics = str(paths["groups"]), str(paths["topics"])


def _read_local(path: str, table: str) -> pd.DataFrame:
    import pandas as pd

    from pipeline import fleet

    if path.endswith((".json", ".jsonl")):
        with open(path, encoding="utf-8", errors="surrogateescape") as lines:
            return fleet.json_lines(lines, table)
    return pd.read_parquet(path)


def _session(args: argparse.Namespace, app: str) -> Any:
    """The Spark session of a job, with the command line's Spark settings."""
    from pipeline.session import spark_session

    settings = {}
    for setting in args.conf:
        key, equals, value = setting.partition("=")
        if not equals or not key.strip():
            raise ValueError(f"--conf {setting!r}: expected KEY=VALUE")
        settings[key.strip()] = value
    return spark_session(args.master, app, extra=settings, py_files=_listed(args.py_files),
                         archives=_listed(args.archives))


def _console() -> Any:
    """Tables for stdout: the CLI's (`assignor.cli.table_console`: piped, whole rows, never a
    cut number; group ids, topics and errors' reasons as text, never Rich markup)."""
    from assignor.cli import table_console

    return table_console()


def _listed(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def write_local(frame: pd.DataFrame, out: Path, name: str) -> Path:
    """A pandas table in the layout Spark writes: a directory of Parquet files."""
    directory = out / name
    if directory.exists():
        shutil.rmtree(directory) if directory.is_dir() else directory.unlink()
    directory.mkdir(parents=True)
    frame.to_parquet(directory / "part-00000.parquet", index=False)
    print(f"wrote {directory}/ ({len(frame):,} rows)")
    return directory


def write_spark(frame: Any, out: Path, name: str) -> Path:
    """A Spark table, as Spark writes it: a directory of Parquet files."""
    directory = out / name
    frame.write.mode("overwrite").parquet(str(directory))
    rows = frame.sparkSession.read.parquet(str(directory)).count()  # (what was written, from its metadata)
    print(f"wrote {directory}/ ({rows:,} rows)")
    return directory


def _fleet(args: argparse.Namespace, out: Path) -> pd.DataFrame:
    from assignor.cli import conversion_from, timing_from
    from assignor.whatif import ALL_STRATEGIES, MIGRATE_FROM
    from pipeline import fleet

    migrate = args.migrate
    strategies = args.strategy or list(MIGRATE_FROM if migrate else ALL_STRATEGIES)
    fleet.check_request(args.event, strategies, migrate)
    timing, conversion = timing_from(args), conversion_from(args)
    table = "migration" if migrate else "results"
    if args.local:
        result = fleet.run_local(_read_local(args.groups, "groups"), _read_local(args.topics, "topics"), args.event,
                                 strategies, args.plans, migrate, timing, conversion)
        write_local(result[result["kind"] == "result"].drop(columns=["kind", "member_id", "reason"]), out, table)
        write_local(result[result["kind"] == "error"][["cluster", "group_id", "member_id", "strategy", "reason"]],
                    out, "errors")
        return result
    spark = _session(args, "fleet-whatif")
    groups = _read_spark(spark, args.groups, "groups")
    topics = _read_spark(spark, args.topics, "topics")
    rows = fleet.run_spark(spark, groups, topics, args.event, strategies, args.plans, migrate, timing,
                           conversion).persist()
    write_spark(rows.where("kind = 'result'").drop("kind", "member_id", "reason"), out, table)
    write_spark(rows.where("kind = 'error'").select("cluster", "group_id", "member_id", "strategy", "reason"), out,
                "errors")
    summary = rows.groupBy("kind", "strategy").agg({"group_id": "count"})
    result = rows.toPandas() if rows.count() <= 200_000 else summary.toPandas()
    rows.unpersist()
    return result


def _migration_summary(result: pd.DataFrame, seconds: float) -> None:
    """The fleet's migration answer per classic strategy (`pipeline.fleet.migration_summary`)."""
    from rich.table import Table

    from pipeline import fleet

    console = _console()
    if "kind" not in result or "conversion_moved" not in result:
        console.print(result)  # a fleet too large to collect: its per-group rows are in migration/
        return
    rows = result[result["kind"] == "result"]
    groups = len(rows[["cluster", "group_id"]].drop_duplicates())
    target = rows["target"].iloc[0] if len(rows) else "?"
    table = Table(title=f"fleet-whatif --migrate {target}: {groups} groups in {seconds:.1f} s (paused: partitions "
                        "revoked by the later events, classic before, consumer protocol after; unowned in "
                        "heartbeat intervals; worst: balance score lost)", title_justify="left")
    summary = fleet.migration_summary(rows)
    for column in summary.columns:
        if column != "target":
            table.add_column(column.replace("_", " "), justify="left" if column in ("strategy", "worst_groups")
                             else "right")
    for row in summary.drop(columns=["target"]).itertuples(index=False):
        table.add_row(*(f"{v:,}" if isinstance(v, int) else f"{v:.2f}" if isinstance(v, float) else str(v)
                        for v in row))
    console.print(table)
    errors = result[result["kind"] == "error"]
    if len(errors):
        console.print(f"{len(errors)} rows went to errors (first: {errors.iloc[0]['reason']})")


def _switching(result: pd.DataFrame, out: Path, plot: bool) -> None:
    """The fleet's answer to "what would switching from Java's assignors to ours change":
    `switching/` (Parquet, per group and pair), a table, and with `plot` a chart."""
    from rich.table import Table

    from pipeline import fleet

    if "kind" not in result or "moved" not in result:
        return  # a fleet too large to collect: its per-group rows are in results/
    per_group = fleet.switching(result[result["kind"] == "result"])
    if per_group.empty:
        return
    write_local(per_group, out, "switching")
    summary = fleet.switching_summary(per_group)
    table = Table(title="switching from Java's assignors to ours (positive: ours does better)", title_justify="left")
    for column in summary.columns:
        table.add_column(column.replace("_", " "), justify="left" if column in ("java", "ours") else "right")
    for row in summary.itertuples(index=False):
        table.add_row(*(f"{v:,}" if isinstance(v, int) else str(v) for v in row))
    _console().print(table)
    if plot:
        print(f"wrote {plot_switching(summary, out)}")


def plot_switching(summary: pd.DataFrame, out: Path) -> Path:
    """Bars per pair: moves, revocations and balance score Java's assignor costs more than ours."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = ("moves_saved", "revocations_saved", "balance_score_gained", "unsafe_handovers_avoided")
    figure, axes = plt.subplots(1, len(figures), figsize=(3.2 * len(figures), 3.2))
    labels = [f"{r.java}\nvs {r.ours}" for r in summary.itertuples()]
    for axis, name in zip(axes, figures, strict=True):
        axis.bar(labels, summary[name], color=["#4c78a8", "#f58518"][: len(labels)])
        axis.set_title(name.replace("_", " "), fontsize=9)
        axis.tick_params(axis="x", labelsize=7)
    figure.suptitle(f"switching {int(summary['groups'].max())} groups from Java's assignors to ours", fontsize=10)
    figure.tight_layout()
    path = out / "switching.png"
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def _read_spark(spark: Any, path: str, table: str) -> Any:
    from pipeline import fleet

    if path.endswith((".json", ".jsonl")):
        return fleet.spark_json_lines(spark, path, table)
    return spark.read.parquet(path)


def _fleet_summary(result: pd.DataFrame, seconds: float) -> None:
    from rich.table import Table

    console = _console()
    if "kind" not in result or "moved" not in result:
        console.print(result)
        return
    results = result[result["kind"] == "result"]
    groups = len(results[["cluster", "group_id"]].drop_duplicates())
    table = Table(title=f"fleet-whatif: {groups} groups in {seconds:.1f} s",
                  title_justify="left")
    for column in ("strategy", "groups", "moved", "revoked", "rounds", "worst spread", "groups moving most"):
        table.add_column(column, justify="left" if column in ("strategy", "groups moving most") else "right")
    for strategy, frame in results.groupby("strategy", sort=True):
        worst = frame.sort_values("moved", ascending=False).head(3)
        table.add_row(strategy, str(len(frame)), f"{int(frame['moved'].sum()):,}", f"{int(frame['revoked'].sum()):,}",
                      f"{int(frame['rounds'].sum()):,}", str(int(frame["max_spread"].max())),
                      ", ".join(f"{r.cluster}/{r.group_id} ({int(r.moved)})" for r in worst.itertuples()))
    console.print(table)
    errors = result[result["kind"] == "error"]
    if len(errors):
        console.print(f"{len(errors)} rows went to errors (first: {errors.iloc[0]['reason']})")


def _skew(args: argparse.Namespace, out: Path, counts: list[int]) -> dict[str, pd.DataFrame]:
    from pipeline import skew

    if args.local:
        tables = skew.run_local(args.records, counts, args.key_encoding)
        write_local(tables["errors"], out, "errors")
    else:
        spark = _session(args, "key-skew")
        tables, errors = skew.run_spark(spark, skew.read_spark(spark, args.records), counts, args.key_encoding)
        write_spark(errors, out, "errors")  # (it says how many rows it wrote)
    for name in ("partitions", "skew", "hot_keys", "moves"):
        write_local(tables[name], out, name)
    if args.plot:
        for path in plot_skew(tables["partitions"], out):
            print(f"wrote {path}", file=sys.stderr)
    return tables


def _counts(text: str) -> list[int]:
    """``12,16,24`` as partition counts; anything else is a ValueError naming the option."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts or not all(part.isascii() and part.isdigit() and 0 < int(part) < 2**31 for part in parts):
        raise ValueError(f"--partitions: expected comma-separated partition counts from 1 to 2147483647, got {text!r}")
    return [int(part) for part in parts]


def _skew_summary(tables: dict[str, pd.DataFrame], seconds: float) -> None:
    from rich.table import Table

    console = _console()
    table = Table(title=f"key-skew in {seconds:.1f} s", title_justify="left")
    for column in ("topic", "partitions", "records", "max/mean records", "max/mean bytes", "empty",
                   "hottest key share"):
        table.add_column(column, justify="left" if column == "topic" else "right")
    hottest = tables["hot_keys"][tables["hot_keys"]["rank"] == 1].set_index("topic")["share"]
    for row in tables["skew"].itertuples(index=False):
        table.add_row(row.topic, str(row.partitions_n), f"{row.records:,}", f"{row.records_skew:.2f}",
                      f"{row.bytes_skew:.2f}", str(row.empty_partitions), f"{hottest.get(row.topic, 0):.1%}")
    console.print(table)
    moves = Table(title="keys and bytes that change partition", title_justify="left")
    for column in ("topic", "from -> to", "keys moved", "bytes moved"):
        moves.add_column(column, justify="left" if column == "topic" else "right")
    for row in tables["moves"].itertuples(index=False):
        moves.add_row(row.topic, f"{row.from_n} -> {row.to_n}", f"{row.key_fraction:.1%}", f"{row.byte_fraction:.1%}")
    console.print(moves)
    errors = len(tables["errors"]) if "errors" in tables else None
    if errors is not None:
        console.print(f"{errors:,} rows went to errors/" if errors else "no rows went to errors/")


def plot_skew(partitions: pd.DataFrame, out: Path) -> list[Path]:
    """One PNG per topic: records per partition for each partition count."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    for topic, frame in partitions.groupby("topic", sort=True):
        counts = sorted(frame["partitions_n"].unique())
        figure, axes = plt.subplots(len(counts), 1, figsize=(9, 2.4 * len(counts)), squeeze=False)
        for ax, n in zip(axes[:, 0], counts):
            part = frame[frame["partitions_n"] == n]
            ax.bar(part["partition"], part["records"], color="#2f6fdf")
            ax.axhline(part["records"].sum() / n, color="#e0661b", linewidth=1, label="mean")
            ax.set_ylabel(f"N={n}")
            ax.legend(fontsize=8, loc="upper right")
        axes[0, 0].set_title(f"{topic}: records per partition")
        axes[-1, 0].set_xlabel("partition")
        figure.tight_layout()
        path = out / f"skew-{topic}.png"
        figure.savefig(path, dpi=100)
        plt.close(figure)
        written.append(path)
    return written


if __name__ == "__main__":  # spark-submit pipeline/cli.py key-skew ...
    # Run as a script, this file's directory comes first on the path, not the project's.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    try:
        sys.exit(run(sys.argv[1:]))
    except ValueError as error:  # our errors (bad input, the executors' environment): a message, not a trace
        print(f"pipeline: error: {error}", file=sys.stderr)
        sys.exit(2)
