"""A SparkSession that starts fast on one machine and runs unchanged on a cluster."""

from __future__ import annotations

import os
import sys


def spark_session(master: str = "local[*]", app: str = "kafka-sticky-assignor", *, quick_jit: bool = False,
                  shuffle_partitions: int | None = None, extra: dict[str, str] | None = None):
    """Build (or reuse) the session.

    Local masters bind to 127.0.0.1 and run Python workers with this interpreter (so the workers
    see the same packages). `quick_jit` (tests) runs the JVM with the C1 compiler only, which
    starts sooner on short jobs. On ``spark://`` or ``yarn`` masters, the cluster's own settings
    apply; ship this package to the executors (``--py-files`` or an image with it installed).
    """
    from pyspark.sql import SparkSession

    local = master.startswith("local")
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
    for key, value in (extra or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
