import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from assignor import cli

ROOT = Path(__file__).resolve().parents[2]


def run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "assignor.cli", *args], input=stdin, capture_output=True,
                          text=True, cwd=ROOT, check=False)


def test_plan_prints_assignment_and_metrics():
    result = run("plan", "--strategy", "sticky", "examples/group.json")
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert set(output) == {"assignment", "metrics"}
    assert output["metrics"]["valid"] and output["metrics"]["balanced"]


def test_readme_cli_example_is_real_output():
    """The README shows the CLI's real output: regenerate it when behaviour changes."""
    readme = (ROOT / "README.md").read_text()
    shown = re.search(r"\$ assignor plan --strategy sticky examples/group.json\n(.*?)\n```", readme, re.S)
    assert shown, "README must show `assignor plan --strategy sticky examples/group.json` and its output"
    assert run("plan", "--strategy", "sticky", "examples/group.json").stdout.strip() == shown.group(1).strip()


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"topics": {"t": -2}, "members": []}', "partition count"),
        ('{"topics": {"t": 1}, "members": [{"topics": ["t"]}]}', "members[0].id: required"),
        ('{"topics": {"t": 1}, "members": [{"id": "a", "owned": [["t"]]}]}', "members[0].owned[0]"),
        ('{"topics": {"t": 1}, "members": [], "extra": 1}', "unknown field"),
    ],
)
def test_bad_input_is_a_clear_error(stdin, message):
    result = run("plan", "-", stdin=stdin)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_missing_file(capsys):
    assert cli.main(["plan", "does-not-exist.json"]) == 2
    assert "cannot read" in capsys.readouterr().err
