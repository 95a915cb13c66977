"""Spark jobs over the assignor core: fleet-wide what-if and key-skew analysis.

Each job has a Spark path (``run_spark``) and a single-process path (``run_local``) that share
the per-group or per-batch functions, so the two give the same rows. PySpark is imported only by
the Spark paths and `pipeline.session`.
"""
