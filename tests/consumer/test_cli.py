import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assignor import cli
from assignor.json_format import readable_json

ROOT = Path(__file__).resolve().parents[2]


def run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "assignor.cli", *args], input=stdin, capture_output=True,
                          text=True, cwd=ROOT, check=False)


@pytest.mark.external
def test_plan_prints_assignment_and_metrics():
    result = run("plan", "--strategy", "sticky", "examples/group.json")
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert set(output) == {"assignment", "metrics"}
    assert output["metrics"]["valid"] and output["metrics"]["balanced"]


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"topics": {"t": -2}, "members": []}', "partition count"),
        ('{"topics": {"t": 1}, "members": [{"topics": ["t"]}]}', "members[0].id: required"),
        ('{"topics": {"t": 1}, "members": [{"id": "a", "owned": [["t"]]}]}', "members[0].owned[0]"),
        ('{"topics": {"t": 1}, "members": [], "extra": 1}', "unknown field"),
        # Each of these printed a traceback, or planned what the service refuses.
        ("[" * 100_000 + "]" * 100_000, "nested deeper than the JSON reader follows"),
        ('{"topics": {"t": ' + "9" * 5000 + '}, "members": []}', "not valid JSON"),
        ('{"topics": {"t": 1}, "topics": {"t": 2}, "members": []}', "the key 'topics' appears twice"),
        ('{"topics": {"t": 1}}', "members: required"),
        ('{"topics": {"t": 1}, "members": [{"id": "a", "generation": null}]}', "members[0].generation"),
        ('{"topics": {"t": NaN}, "members": []}', "NaN is not JSON"),
        ('{"topics": {"\\ud800": 1}, "members": []}', "lone surrogate"),
        # 60 bytes asking for 16 GiB: the limits whatif and the service apply.
        ('{"topics": {"t": 2147483647}, "members": [{"id": "a", "topics": ["t"]}]}', "max_partitions"),
    ],
)
@pytest.mark.external
def test_bad_input_is_a_clear_error(stdin, message):
    result = run("plan", "-", stdin=stdin)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr  # one line


@pytest.mark.external
@pytest.mark.parametrize("encoding", ["latin-1", "utf-16"])
def test_a_file_not_in_utf8_is_one_line(tmp_path, encoding):
    path = tmp_path / "group.json"
    path.write_text('{"topics": {"caf\u00e9": 1}, "members": []}', encoding=encoding)
    result = run("plan", str(path))
    assert result.returncode == 2 and result.stderr == f"assignor: error: {path}: not valid JSON (not UTF-8)\n"


def test_an_endless_file_is_refused_at_the_bound(monkeypatch, capsys):
    """``/dev/zero`` was read to 3.8 GB; now reading stops past `MAX_FILE_BYTES`."""
    monkeypatch.setattr(cli, "MAX_FILE_BYTES", 1 << 20)
    assert cli.main(["plan", "/dev/zero"]) == 2
    assert capsys.readouterr().err == f"assignor: error: /dev/zero: larger than {1 << 20} bytes, not read further\n"


def test_ctrl_c_ends_quietly_with_130(monkeypatch, capsys):
    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_whatif", interrupted)
    monkeypatch.setattr(cli, "_simulate", interrupted)
    for argv in (["whatif", "examples/group.json", "--event", "rolling_restart"], ["simulate"]):
        assert cli.main(argv) == 130
    assert capsys.readouterr() == ("", "")


def test_missing_file(capsys):
    assert cli.main(["plan", "does-not-exist.json"]) == 2
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.external
def test_version_and_the_pipelines_help():
    """``assignor pipeline --help`` printed "unrecognized arguments: --help" (exit 2); there was
    no ``--version``."""
    version = run("--version")
    assert version.returncode == 0 and re.fullmatch(r"assignor \S+\n", version.stdout)
    for flag in ("--help", "-h"):
        shown = run("pipeline", flag)
        assert shown.returncode == 0 and "make-sample" in shown.stdout and "fleet-whatif" in shown.stdout
    sample = run("pipeline", "make-sample", "--help")
    assert "consumer groups in all, shared out over the clusters (default: 50)" in " ".join(sample.stdout.split())
    assert run("plan", "--nope", "examples/group.json").returncode == 2


@pytest.mark.external
def test_plan_reads_the_body_of_post_v1_plans():
    """The README says the CLI reads the same form as ``/v1/plans``, which adds ``strategy``
    and ``generation``; the CLI refused them (unknown fields)."""
    body = json.loads((ROOT / "examples" / "group.json").read_text())
    named = run("plan", "-", stdin=json.dumps({**body, "strategy": "range", "generation": 7}))
    assert named.returncode == 0, named.stderr
    assert json.loads(named.stdout) == json.loads(run("plan", "--strategy", "range", "examples/group.json").stdout)
    wins = run("plan", "--strategy", "sticky", "-", stdin=json.dumps({**body, "strategy": "range"}))
    assert json.loads(wins.stdout) == json.loads(run("plan", "--strategy", "sticky", "examples/group.json").stdout)


@pytest.mark.external
def test_whatif_tables_are_never_cut_when_piped(tmp_path):
    """Piped, the tables were cut to 80 columns: names became ``curre…`` and 1,797,000 revoked
    became ``17970…``. A cut number is a wrong number."""
    group = {"topics": {f"topic-with-a-long-name-{i}": 20_000 for i in range(3)},
             "members": [{"id": f"member-{i}", "topics": [f"topic-with-a-long-name-{j}" for j in range(3)]}
                         for i in range(3)]}
    path = tmp_path / "group.json"
    path.write_text(json.dumps(group))
    shown = run("whatif", str(path), "--event", "member_join:a-member-with-a-long-id:topic-with-a-long-name-0",
                "--strategy", "range")
    assert shown.returncode == 0, shown.stderr
    assert "…" not in shown.stdout and "60000" in shown.stdout
    assert "member_join:a-member-with-a-long-id:topic-with-a-long-name-0" in shown.stdout


def test_names_in_tables_are_text_never_markup(capsys):
    """A member ``[/x]`` was Rich's closing tag (a MarkupError traceback) and ``new`` in
    ``member_join:new:orders`` an emoji: every cell is printed as given."""
    events = ["member_join:[/x]:orders", "member_join:new:orders", "member_join:[bold]b:orders"]
    assert cli.main(["whatif", "examples/group.json", "--strategy", "sticky",
                     *(part for event in events for part in ("--event", event))]) == 0
    shown = capsys.readouterr().out
    assert all(event in shown for event in events), shown


def test_a_classic_cooperative_sticky_snapshot_is_compared_with_librdkafkas_too(tmp_path, capsys):
    """A snapshot of a classic group on ``cooperative-sticky`` may be librdkafka's members, which
    it cannot tell from Java's: the what-if compares librdkafka's strategy beside every other;
    any other group JSON, every strategy but other clients'."""
    group = json.loads((ROOT / "examples/group.json").read_text())
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps({**group, "protocol": "classic", "assignor": "cooperative-sticky"}))
    for source, librdkafka in ((str(path), True), ("examples/group.json", False)):
        assert cli.main(["whatif", source, "--event", "rolling_restart", "--json"]) == 0
        compared = json.loads(capsys.readouterr().out)["strategies"]
        assert ("librdkafka-cooperative-sticky" in compared) is librdkafka
        assert {"cooperative-sticky", "java-cooperative-sticky"} <= set(compared)


@pytest.mark.external
def test_plans_without_json_and_limits_are_said():
    plans = run("whatif", "examples/group.json", "--plans")
    assert plans.returncode == 2 and "--plans adds each step's assignment to the JSON output" in plans.stderr
    huge = run("whatif", "examples/group.json", "--event", "topic_created:x:2147483647")
    assert huge.returncode == 2
    assert "max_partitions: partitions after event 1 (topic_created:x:2147483647)" in huge.stderr


def test_plot_without_matplotlib_names_the_extra(monkeypatch, capsys):
    """``simulate --plot`` after ``make serve``'s install ended in a traceback (no matplotlib)."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    assert cli.main(["simulate", "--records", "100", "--plot", "out"]) == 2
    assert "--plot needs matplotlib: pip install 'kafka-sticky-assignor[plot]'" in capsys.readouterr().err


@pytest.mark.external
@pytest.mark.parametrize(
    ("args", "message"),
    [(["key-skew", "--records", "no/such.parquet", "--partitions", "12", "--out", "OUT", "--local"],
      "--records: no such file or folder: no/such.parquet"),
     (["key-skew", "--records", "examples/group.json", "--partitions", "12,x", "--out", "OUT", "--local"],
      "--partitions: expected comma-separated partition counts"),
     (["fleet-whatif", "--groups", "no/groups.parquet", "--topics", "examples/group.json", "--out", "OUT"],
      "--groups: no such file or folder")],
)
def test_pipeline_input_errors_are_messages_before_spark_starts(tmp_path, args, message):
    """A missing ``--records`` file was a FileNotFoundError traceback (in Spark mode an
    AnalysisException after 10 s); ``--partitions 12,x`` a ValueError traceback."""
    shown = run("pipeline", *[str(tmp_path / "out") if a == "OUT" else a for a in args])
    assert shown.returncode == 2 and message in shown.stderr and "Traceback" not in shown.stderr


def test_a_job_missing_an_optional_library_names_the_extra(monkeypatch, capsys):
    """``pipeline`` without pyarrow printed an ImportError traceback from inside the job."""
    def job(_argv):
        raise ModuleNotFoundError("No module named 'pyarrow'", name="pyarrow")

    monkeypatch.setattr(cli, "_command", lambda _name: job)
    assert cli.main(["pipeline", "make-sample", "--out", "x"]) == 2
    assert capsys.readouterr().err == ("assignor: error: the pipeline command needs the [spark] extra: pip install "
                                       "'kafka-sticky-assignor[spark]' (No module named 'pyarrow')\n")


_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=5), inner, max_size=4), max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_the_readable_json_reads_as_the_value(value):
    """What the commands print for people (`readable_json`: objects indented, other arrays on
    one line) is JSON of the value, as `json.dumps` writes it, and it indents every object."""
    text = readable_json(value)
    assert json.loads(text) == json.loads(json.dumps(value))
    if isinstance(value, dict) and value:
        assert text.startswith("{\n  ") and text.endswith("\n}")


def test_non_string_keys_read_as_json_dumps_writes_them():
    value = {1: [True], None: {2.5: "x"}}
    assert json.loads(readable_json(value)) == json.loads(json.dumps(value))
