"""Spark pipeline rows: key-skew against the single-process path on the same data, a 100M-record
key-skew generated on the fly (memory of the driver), and fleet-whatif on 10,000 groups."""

from __future__ import annotations

import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

COUNTS = [12, 16, 24]


def _keys(ids: np.ndarray, width: int = 6):
    """Binary keys b"user-000123" built as one byte matrix (no Python object per key)."""
    import pyarrow as pa

    digits = np.zeros((len(ids), width), dtype=np.uint8)
    rest = ids.astype(np.int64)
    for column in range(width - 1, -1, -1):
        digits[:, column] = ord("0") + rest % 10
        rest //= 10
    prefix = np.frombuffer(b"user-", dtype=np.uint8)
    matrix = np.hstack([np.broadcast_to(prefix, (len(ids), 5)), digits])
    fixed = pa.FixedSizeBinaryArray.from_buffers(pa.binary(5 + width), len(ids),
                                                 [None, pa.py_buffer(np.ascontiguousarray(matrix).tobytes())])
    return fixed.cast(pa.binary())


def records_table(count: int, keys: int = 1_000_000, seed: int = 5):
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    ids = (np.minimum(rng.zipf(1.2, size=count), keys) - 1) * 2654435761 % keys
    topics = np.array(["events-0", "events-1", "events-2"], dtype=object)[rng.integers(0, 3, size=count)]
    sizes = np.maximum(1, rng.lognormal(6.0, 0.7, size=count).astype(np.int64))
    return pa.table({"topic": pa.array(topics, pa.string()), "key": _keys(ids), "size": pa.array(sizes)})


def _peak_rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _jvm_pids() -> list[int]:
    """The Java processes started under this one (the local-mode driver JVM)."""
    me, found = os.getpid(), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(fields[1])
        if b"java" in command.split(b"\0")[0] and (parent == me or _ancestor(parent, me)):
            found.append(int(entry.name))
    return found


def _ancestor(pid: int, ancestor: int) -> bool:
    for _ in range(5):
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except OSError:
            return False
        if pid == ancestor:
            return True
        if pid <= 1:
            return False
    return False


def key_skew(records: int = 10_000_000) -> dict:
    import pyarrow.parquet as pq

    from pipeline import skew
    from pipeline.session import spark_session

    tmp = Path(tempfile.mkdtemp(prefix="assignor-skew-"))
    try:
        path = tmp / "records.parquet"
        pq.write_table(records_table(records), path, row_group_size=1_000_000)
        start = time.perf_counter()
        local = skew.run_local(str(path), COUNTS)
        local_seconds = time.perf_counter() - start
        local_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        start = time.perf_counter()
        spark = spark_session("local[2]", "bench-key-skew")
        # Warm up once on a small file (JVM JIT, Python workers): what remains is the job itself.
        small = tmp / "warm.parquet"
        pq.write_table(records_table(200_000, seed=1), small)
        skew.run_spark(spark, skew.read_spark(spark, str(small)), COUNTS)
        startup = time.perf_counter() - start
        start = time.perf_counter()
        distributed, _errors = skew.run_spark(spark, skew.read_spark(spark, str(path)), COUNTS)
        spark_seconds = time.perf_counter() - start
        same = all(local[n].equals(distributed[n]) or local[n].round(9).astype(str).equals(
            distributed[n].round(9).astype(str)) for n in ("partitions", "skew", "moves"))
        return {"records": records, "local_s": local_seconds, "local_rss_mb": local_rss, "spark_s": spark_seconds,
                "spark_startup_s": startup, "same": same}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def key_skew_on_the_fly(records: int = 100_000_000) -> dict:
    """Generate records inside Spark (nothing on disk, nothing in the driver) and run the job."""
    from pyspark.sql import functions as F

    from pipeline import skew
    from pipeline.session import spark_session

    spark = spark_session("local[2]", "bench-key-skew-100m")
    generated = (spark.range(records, numPartitions=200)
                 .select(F.concat(F.lit("events-"), (F.col("id") % 3).cast("string")).alias("topic"),
                         # log-uniform ids: a few hot keys, a long tail (close to Zipf with s = 1)
                         F.encode(F.concat(F.lit("user-"), F.lpad(F.floor(F.exp(F.rand(7) * F.log(F.lit(1e6))))
                                                                  .cast("string"), 6, "0")), "UTF-8").alias("key"),
                         (F.floor(F.exp(F.randn(8) * 0.7 + 6.0)) + 1).cast("long").alias("size")))
    start = time.perf_counter()
    tables, _errors = skew.run_spark(spark, generated, COUNTS)
    seconds = time.perf_counter() - start
    python_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    jvm_rss = sum(_peak_rss_mb(pid) for pid in _jvm_pids())
    return {"records": records, "spark_s": seconds, "driver_python_mb": python_rss, "driver_jvm_mb": jvm_rss,
            "counted": int(tables["skew"].query("partitions_n == 12")["records"].sum())}


def local_in_memory(records: int = 100_000_000) -> dict:
    """The single-process path on the same number of records: the data must fit in memory."""
    import pyarrow as pa

    from pipeline import skew

    table = records_table(records)
    start = time.perf_counter()
    good, _errors = skew.validate_local(table)
    tables = skew.finalize(COUNTS, *skew.aggregate_local(good, COUNTS))
    seconds = time.perf_counter() - start
    del table, good
    return {"records": records, "local_s": seconds, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "arrow_mb": pa.total_allocated_bytes() / 2**20, "topics": len(tables["skew"])}


def fleet(groups: int = 10_000) -> dict:
    import pyarrow.parquet as pq

    from pipeline import fleet as job
    from pipeline import sample
    from pipeline.session import spark_session

    tmp = Path(tempfile.mkdtemp(prefix="assignor-fleet-"))
    try:
        group_table, topic_table = sample.fleet(clusters=10, groups=groups, topics=50, seed=9)
        pq.write_table(group_table, tmp / "groups.parquet")
        pq.write_table(topic_table, tmp / "topics.parquet")
        events, strategies = ["partitions_added:t001:96"], ["sticky", "cooperative-sticky", "range", "roundrobin"]
        spark = spark_session("local[2]", "bench-fleet")
        start = time.perf_counter()
        rows = job.run_spark(spark, spark.read.parquet(str(tmp / "groups.parquet")),
                             spark.read.parquet(str(tmp / "topics.parquet")), events, strategies)
        results = rows.where("kind = 'result'").count()
        spark_seconds = time.perf_counter() - start
        start = time.perf_counter()
        local = job.run_local(group_table.to_pandas(), topic_table.to_pandas(), events, strategies)
        local_seconds = time.perf_counter() - start
        return {"groups": groups, "members": group_table.num_rows, "results": results,
                "local_results": int((local["kind"] == "result").sum()), "spark_s": spark_seconds,
                "local_s": local_seconds}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cluster(groups: int = 500, records: int = 500_000) -> dict:
    """Both jobs from the command line, on a standalone cluster (1 worker, 2 cores, executors
    without this project), on local[2] and with --local, on one sample: wall seconds each,
    Spark's start included (that is the overhead a user meets)."""
    import os
    import subprocess
    import sys

    from pipeline import sample
    from pipeline.standalone import StandaloneCluster, worker_python

    tmp = Path(tempfile.mkdtemp(prefix="assignor-cluster-"))
    running = None
    try:
        data = sample.write(tmp / "data", groups=groups, topics=20, records_count=records, seed=5)
        python = worker_python(tmp / "env")
        running = StandaloneCluster(tmp)
        env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
        env.pop("PYSPARK_PYTHON", None)
        jobs = {"fleet-whatif": ["fleet-whatif", "--groups", str(data["groups"]), "--topics", str(data["topics"]),
                                 "--event", "partitions_added:t001:96", "--strategy", "sticky",
                                 "--strategy", "java-sticky"],
                "key-skew": ["key-skew", "--records", str(data["records"]), "--partitions", "12,16,24"]}
        modes = {"cluster": ["--master", running.master, "--conf", f"spark.pyspark.python={python}",
                             "--conf", "spark.executor.memory=2g"],
                 "local[2]": ["--master", "local[2]"], "--local": ["--local"]}
        seconds: dict[str, dict[str, float]] = {}
        for job, argv in jobs.items():
            for mode, extra in modes.items():
                start = time.perf_counter()
                subprocess.run([sys.executable, "-m", "assignor.cli", "pipeline", *argv, "--out",
                                str(tmp / f"{job}-{mode}"), *extra], check=True, capture_output=True, env=env)
                seconds.setdefault(job, {})[mode] = time.perf_counter() - start
        return {"groups": groups, "records": records, "seconds": seconds}
    finally:
        if running is not None:
            running.stop()
        shutil.rmtree(tmp, ignore_errors=True)
