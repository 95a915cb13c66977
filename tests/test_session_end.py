"""A broker that does not start ends the test session with one line saying why: run one test at a
time, and in `make test`'s lanes (pytest-xdist workers, where `pytest.exit` in a fixture was an
internal error: a page of xdist's traceback, and the other lane ran on)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.external

ROOT = Path(__file__).resolve().parents[1]

#: A plugin that points the broker at jars that are not there, as a checkout without `make kafka`.
NO_KAFKA = "import bench.broker\nfrom pathlib import Path\nbench.broker.LIB = Path('/nonexistent/kafka/lib')\n"


@pytest.mark.parametrize("lanes", [(), ("-n", "2", "--dist", "loadgroup")], ids=["one-process", "lanes"])
def test_a_broker_that_does_not_start_ends_the_session_with_one_line(tmp_path, lanes):
    (tmp_path / "no_kafka.py").write_text(NO_KAFKA)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    first = "tests/integration/test_broker.py::test_the_session_broker_is_the_pinned_apache_kafka"
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no_kafka", "-p", "no:cacheprovider", "-q",
                          f"--basetemp={tmp_path / 'inner'}", "-m", "external", *lanes, first,
                          "tests/integration/test_static_members.py"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    output = run.stdout + run.stderr
    why = "Apache Kafka did not start: Kafka's jars are not resolved in /nonexistent/kafka/lib: run `make kafka`"
    assert run.returncode == 2, output  # interrupted
    assert f"Interrupted: {why} !" in run.stdout, output
    assert "INTERNALERROR" not in output, output
    assert " passed" not in run.stdout.splitlines()[-1], output  # no test ran on
