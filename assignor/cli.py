"""The ``assignor`` command line.

``assignor plan [--strategy NAME] GROUP.json`` reads a group in the JSON form (``-`` for stdin)
and prints ``{"assignment": ..., "metrics": ...}`` where metrics is the oracle's report.
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


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
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
