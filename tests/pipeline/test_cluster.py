"""Both jobs on a real standalone Spark cluster whose executors' Python has the third-party
libraries but not this project: the job ships its own code, and its tables equal ``--local``
row for row. An executor Python without the libraries stops the job at once, with a message
that names what is missing and how to provide it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from pipeline import sample
from pipeline.standalone import SPARK_HOME, StandaloneCluster, worker_python

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    running = StandaloneCluster(tmp_path_factory.mktemp("spark-cluster"))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return sample.write(tmp_path_factory.mktemp("fleet-sample"), groups=8, topics=6, records_count=5000, seed=11)


@pytest.fixture(scope="module")
def executors_python(tmp_path_factory):
    return worker_python(tmp_path_factory.mktemp("executor-env") / "env")


def job(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    """The CLI in its own process, as a user runs it (driver bound to loopback)."""
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    env.pop("PYSPARK_PYTHON", None)
    return subprocess.run([sys.executable, "-m", "assignor.cli", "pipeline", *argv], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=600)


def on_cluster(cluster, python: Path) -> list[str]:
    return ["--master", cluster.master, "--conf", f"spark.pyspark.python={python}",
            "--conf", "spark.executor.memory=1g", "--conf", "spark.sql.shuffle.partitions=2"]


def table(directory: Path, drop: tuple[str, ...] = ()) -> pd.DataFrame:
    frame = pd.read_parquet(directory).drop(columns=[c for c in drop if c], errors="ignore")
    frame = frame.astype(object).where(frame.notna(), None)
    return frame.sort_values(list(frame.columns), key=lambda c: c.astype(str), ignore_index=True)


def submit(cluster, python: Path, *argv: str, cwd: Path) -> subprocess.CompletedProcess:
    """The documented spark-submit command, with this project installed nowhere but the driver's
    checkout (the entry point finds its packages beside it)."""
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_HOME": str(SPARK_HOME),
           "PYSPARK_DRIVER_PYTHON": sys.executable}
    env.pop("PYSPARK_PYTHON", None)
    settings = on_cluster(cluster, python)[2:]  # the --conf pairs
    return subprocess.run([str(SPARK_HOME / "bin" / "spark-submit"), "--master", cluster.master, *settings,
                           str(ROOT / "pipeline" / "cli.py"), *argv, "--master", cluster.master, *settings],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=600)


def test_both_jobs_on_the_cluster_equal_local(cluster, data, executors_python, tmp_path):
    """fleet-whatif from our CLI, key-skew through spark-submit of the entry point: each table
    equals the --local run's row for row (the plan-time column aside)."""
    events = ["--event", "member_leave:consumer-0-0", "--event", "partitions_added:t003:40"]
    fleet_args = ["fleet-whatif", "--groups", str(data["groups"]), "--topics", str(data["topics"]), *events,
                  "--strategy", "sticky", "--strategy", "java-sticky", "--strategy", "range"]
    skew_args = ["key-skew", "--records", str(data["records"]), "--partitions", "6,12"]
    for name, args, tables, timing, on_spark in (
            ("fleet", fleet_args, ("results", "errors", "switching"), ("plan_seconds",),
             lambda out: job(*args, "--out", str(out), *on_cluster(cluster, executors_python), cwd=tmp_path)),
            ("skew", skew_args, ("partitions", "skew", "hot_keys", "moves", "errors"), (),
             lambda out: submit(cluster, executors_python, *args, "--out", str(out), cwd=tmp_path))):
        local = job(*args, "--out", str(tmp_path / f"{name}-local"), "--local", cwd=tmp_path)
        assert local.returncode == 0, local.stderr
        spread = on_spark(tmp_path / f"{name}-cluster")
        assert spread.returncode == 0, spread.stderr[-3000:]
        for table_name in tables:
            assert f"wrote {tmp_path / f'{name}-cluster' / table_name}/" in spread.stdout
            pd.testing.assert_frame_equal(table(tmp_path / f"{name}-local" / table_name, timing),
                                          table(tmp_path / f"{name}-cluster" / table_name, timing), check_dtype=False)


def test_executors_without_the_libraries_fail_fast_and_clearly(cluster, data, tmp_path):
    bare = worker_python(tmp_path / "bare", third_party=False)
    failed = job("key-skew", "--records", str(data["records"]), "--partitions", "6", "--out", str(tmp_path / "out"),
                 *on_cluster(cluster, bare), cwd=tmp_path)
    assert failed.returncode == 2
    message = failed.stderr
    assert "lacks" in message and "numpy" in message and "--archives" in message and "Traceback" not in message
