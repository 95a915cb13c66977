"""The ``assignor`` command line.

``assignor plan [--strategy NAME] GROUP.json`` reads a group in the JSON form (``-`` for stdin)
and prints ``{"assignment": ..., "metrics": ...}`` where metrics is the oracle's report.

``assignor whatif GROUP.json --event KIND:ARGS ...`` replays events under each strategy and
prints a table per strategy and a summary (``--json`` for the engine's full output).
"""

from __future__ import annotations

import argparse
import json
import sys

from assignor import validate
from assignor.errors import AssignorError
from assignor.json_format import group_from_json, plan_to_json
from assignor.strategies import STRATEGIES, assign


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="assignor", description="Plan Kafka consumer-group assignments.")
    commands = parser.add_subparsers(dest="command", required=True)
    plan = commands.add_parser("plan", help="plan one assignment of a group given as JSON")
    plan.add_argument("group", help="group JSON file, or - for stdin")
    plan.add_argument("--strategy", default="sticky", choices=sorted(STRATEGIES))
    plan.add_argument("--compact", action="store_true", help="print the JSON on one line")
    whatif = commands.add_parser("whatif", help="replay events on a group under each strategy")
    whatif.add_argument("group", help="group JSON file, or - for stdin")
    whatif.add_argument("--event", action="append", default=[], metavar="KIND:ARGS",
                        help="e.g. member_leave:c3, partitions_added:orders:24, rolling_restart (repeatable)")
    whatif.add_argument("--strategy", action="append", choices=sorted(STRATEGIES),
                        help="strategies to compare (repeatable; default: all)")
    whatif.add_argument("--json", action="store_true", help="print the engine's output as JSON")
    whatif.add_argument("--plans", action="store_true", help="include each step's assignment (with --json)")
    return parser


def _read_json(path: str):
    try:
        if path == "-":
            return json.load(sys.stdin)
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as error:
        raise AssignorError(f"cannot read {path}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise AssignorError(f"{path}: not valid JSON ({error})") from None


def _plan(args: argparse.Namespace) -> dict:
    group = group_from_json(_read_json(args.group))
    plan = assign(args.strategy, group)
    return {**plan_to_json(plan), "metrics": validate.report(group, plan)}


def _whatif(args: argparse.Namespace) -> int:
    from assignor import whatif

    group = group_from_json(_read_json(args.group))
    events = [whatif.parse_event(text) for text in args.event]
    strategies = tuple(args.strategy) if args.strategy else whatif.ALL_STRATEGIES
    output = whatif.run(group, events, strategies, include_plans=args.plans)
    if args.json:
        print(json.dumps(output, indent=2))
    else:
        _whatif_tables(output)
    return 0


def _whatif_tables(output: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    columns = ("rounds", "revoked", "moved", "reassigned", "balance_score", "spread", "topic_spread",
               "rack_locality")
    for name, result in output["strategies"].items():
        table = Table(title=name, title_justify="left")
        table.add_column("step")
        for column in columns:
            table.add_column(column.replace("_", " "), justify="right")
        for step in result["steps"]:
            table.add_row(step["event"], *(_cell(step[c]) for c in columns))
        console.print(table)
    summary = Table(title="summary (steps after the current state)", title_justify="left")
    keys = ("steps", "rounds", "revoked", "moved", "reassigned", "final_balance_score", "max_spread", "rack_locality")
    summary.add_column("strategy")
    for key in keys:
        summary.add_column(key.replace("_", " "), justify="right")
    for name, result in output["strategies"].items():
        summary.add_row(name, *(_cell(result["summary"][k]) for k in keys))
    console.print(summary)


def _cell(value) -> str:
    if value is None:
        return "-"
    return f"{value:.1%}" if isinstance(value, float) else str(value)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "whatif":
            return _whatif(args)
        output = _plan(args)
    except AssignorError as error:
        print(f"assignor: error: {error}", file=sys.stderr)
        return 2
    print(json.dumps(output, separators=(",", ":")) if args.compact else _pretty(output))
    return 0


def _pretty(output: dict) -> str:
    """Indented JSON with each member's partition list on one line."""
    lines = ["{", '  "assignment": {']
    members = list(output["assignment"].items())
    for i, (member, partitions) in enumerate(members):
        comma = "," if i < len(members) - 1 else ""
        lines.append(f"    {json.dumps(member)}: {json.dumps(partitions)}{comma}")
    lines.append("  },")
    metrics = json.dumps(output["metrics"], indent=2).replace("\n", "\n  ")
    lines.append(f'  "metrics": {metrics}')
    lines.append("}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
