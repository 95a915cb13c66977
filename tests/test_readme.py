"""The README's examples run, and fail the suite when what they show is not what happens.

- ``python`` blocks run in order, in one namespace per section (``##``), as a reader pastes
  them. A ``print(...)`` whose line ends in ``# TEXT`` must print TEXT; an expression whose line
  ends in ``# VALUE`` (a Python literal: ``3``, ``{'m1': 10}``) must equal VALUE, or be one of
  them after ``# one of 3, 4, 5``. Text after a literal (``# 3, as the Java producer``) is
  commentary.
- ``console`` blocks: each ``$ assignor ...`` line runs (from the project's root) and its output
  must be the lines shown under it.
- A block right after ``<!-- not run: REASON -->`` is skipped (a broker, a server, ``await``);
  the reason names the test that runs it instead. Other blocks (``sh``, ``json``) are not run.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_SKIP = re.compile(r"<!-- not run: ([^>]+) -->\s*$")


def _blocks(language: str) -> list[tuple[str, str, int]]:
    """(section, code, line) of every block in `language` that is to run."""
    found = []
    for match in _FENCE.finditer(README):
        if match.group(1) != language:
            continue
        before = README[: match.start()]
        if _SKIP.search(before):
            continue
        sections = re.findall(r"^## (.+)$", before, re.MULTILINE)
        found.append((sections[-1] if sections else "", match.group(2), before.count("\n") + 1))
    return found


def _sections() -> dict[str, list[tuple[str, int]]]:
    sections: dict[str, list[tuple[str, int]]] = {}
    for section, code, line in _blocks("python"):
        sections.setdefault(section, []).append((code, line))
    return sections


@pytest.mark.parametrize("section", list(_sections()))
def test_the_python_examples_do_what_they_say(section):
    namespace: dict[str, object] = {"__name__": "__readme__"}
    for code, first_line in _sections()[section]:
        for statement in ast.parse(code).body:
            _run(statement, code, first_line, namespace)


def _run(statement: ast.stmt, code: str, first_line: int, namespace: dict[str, object]) -> None:
    line = code.splitlines()[statement.end_lineno - 1]
    where = f"README.md:{first_line + statement.end_lineno}"
    expected = line.split("  # ", 1)[1].strip() if "  # " in line else None
    compiled = compile(ast.Module([statement], []), where, "exec")
    is_print = (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
                and getattr(statement.value.func, "id", None) == "print")
    if is_print:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compiled, namespace)  # noqa: S102  (the README's own code)
        if expected is not None:
            assert printed.getvalue().strip() == expected, where
        return
    if isinstance(statement, ast.Expr) and expected is not None:
        value = eval(compile(ast.Expression(statement.value), where, "eval"), namespace)  # noqa: S307
        if expected.startswith("one of "):
            assert value in ast.literal_eval(f"({expected.removeprefix('one of ')},)"), (where, value)
            return
        literal = _literal(expected)
        if literal is not _NOT_A_LITERAL:
            assert value == literal, (where, value)
        return
    exec(compiled, namespace)  # noqa: S102


_NOT_A_LITERAL = object()


def _literal(text: str) -> object:
    """The Python literal `text` starts with (up to a comma or the end), or _NOT_A_LITERAL."""
    for candidate in (text, text.split(",", 1)[0], text.split(" ", 1)[0]):
        try:
            return ast.literal_eval(candidate)
        except (ValueError, SyntaxError):
            continue
    return _NOT_A_LITERAL


def _console_commands() -> list[tuple[str, str, int]]:
    commands = []
    for _section, code, line in _blocks("console"):
        parts = re.split(r"^\$ (.+)\n", code, flags=re.MULTILINE)
        for command, output in zip(parts[1::2], parts[2::2], strict=True):
            commands.append((command, output, line))
    return commands


@pytest.mark.external
@pytest.mark.parametrize(("command", "shown", "line"), _console_commands(),
                         ids=[c for c, _, _ in _console_commands()])
def test_the_console_examples_print_what_they_show(command, shown, line):
    assert command.startswith("assignor "), f"README.md:{line}: only assignor commands run here"
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    out = subprocess.run(command, shell=True, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)  # noqa: S602
    assert out.returncode == 0, out.stderr
    assert _lines(out.stdout) == _lines(shown), f"README.md:{line}: `{command}` prints otherwise"


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.rstrip().splitlines()]


def test_every_example_block_is_run_or_says_why_not():
    """A python or console block left out must say why (``<!-- not run: ... -->``)."""
    for match in _FENCE.finditer(README):
        skipped = _SKIP.search(README[: match.start()])
        if match.group(1) in ("python", "console") and skipped:
            assert "test" in skipped.group(1), f"say which test runs it instead: {skipped.group(1)!r}"


def test_every_limit_is_in_the_settings_table_with_its_default():
    """Each `Limits` field is a setting of the service (``ASSIGNOR_<NAME>``): the README's table
    names it, on a row that shows its default."""
    from dataclasses import fields

    from assignor.limits import DEFAULT_LIMITS

    rows = [line for line in README.splitlines() if line.startswith("| `ASSIGNOR_")]
    for field in fields(DEFAULT_LIMITS):
        name = f"`ASSIGNOR_{field.name.upper()}`"
        row = next((r for r in rows if name in r), None)
        assert row is not None, name
        names = re.findall(r"`ASSIGNOR_(\w+)`", row.split(" | ")[0])
        defaults = [d.strip() for d in row.rstrip(" |").split(" | ")[-1].split(", ")]
        shown = dict(zip((n.lower() for n in names), defaults, strict=False))
        assert shown[field.name].split(":")[0] == f"{getattr(DEFAULT_LIMITS, field.name):,.0f}", (name, row)
