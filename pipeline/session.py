"""A SparkSession that starts fast on one machine and runs unchanged on a cluster."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any


def spark_session(master: str = "local[*]", app: str = "kafka-sticky-assignor", *, quick_jit: bool = False,
                  shuffle_partitions: int | None = None, extra: dict[str, str] | None = None,
                  py_files: Sequence[str] = (), archives: Sequence[str] = ()) -> Any:
    """Build (or reuse) the session.

    Local masters bind to 127.0.0.1 and run Python workers with this interpreter (so the workers
    see the same packages). `quick_jit` (tests) runs the JVM with the C1 compiler only, which
    starts sooner on short jobs. `extra`: Spark settings (``--conf``); `archives`: what
    ``--archives`` ships (a packed Python environment, for instance). On any other master
    (``spark://``, ``yarn``, ``k8s://``) the cluster's own settings apply, this project's code
    and `py_files` are shipped to the executors and the executors' Python is checked before the
    job runs (`pipeline.ship`).
    """
    from pyspark.sql import SparkSession

    local = master.startswith("local")
    python = (extra or {}).get("spark.pyspark.python")
    if python and not local:
        # spark-submit turns this setting into the executors' Python; a session built here reads
        # the environment variable instead.
        os.environ["PYSPARK_PYTHON"] = python
    if local:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        os.environ["PYSPARK_PYTHON"] = sys.executable
        os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    builder = (SparkSession.builder.master(master).appName(app)
               .config("spark.sql.execution.arrow.pyspark.enabled", "true")
               .config("spark.ui.showConsoleProgress", "true"))
    if local:
        cores = os.cpu_count() or 2
        builder = (builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
                   .config("spark.ui.enabled", "false")
                   .config("spark.sql.shuffle.partitions", str(shuffle_partitions or 2 * cores)))
    if quick_jit:
        builder = builder.config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
    if archives:
        builder = builder.config("spark.archives", ",".join(archives))
    for key, value in (extra or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if local:
        for path in py_files:
            spark.sparkContext.addPyFile(path)
    else:
        from pipeline.ship import ship

        ship(spark, py_files)
    return spark
