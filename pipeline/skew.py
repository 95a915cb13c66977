"""key-skew: how records spread over N partitions, and what moves from N to M partitions.

Input
    records: ``topic``, ``key`` (bytes, or text: UTF-8 as Java's StringSerializer writes it, or
    base64 with ``key_encoding="base64"``), ``size`` (bytes), optional ``timestamp``; Parquet or
    CSV (with a header).
Output
    ``partitions``: records and bytes per topic, partition count N and partition (empty
    partitions included); ``skew``: per topic and N, the largest partition over the mean, for
    records and bytes; ``hot_keys``: the 10 busiest keys per topic; ``moves``: per topic and
    N -> M, the fraction of distinct keys and of bytes whose partition changes; ``errors``: the
    rows that could not be placed (null key, negative size, bad encoding), with the reason.

Both paths first reduce records to one row per (topic, key), hash each key once with the
vectorised Java-exact murmur2 over Arrow buffers, and hand three small aggregates to the same
`finalize`, so they give the same tables.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from assignor.partitioners import murmur2_many
from assignor.partitioners.murmur import partitions_of_hashes

HOT_KEYS = 10
NULL_KEY = "null key: keyless records are not placed by key"
BAD_SIZE = "size missing or negative"
NULL_TOPIC = "topic missing"
BAD_BASE64 = "key is not valid base64"


def check_counts(counts: Sequence[int]) -> list[int]:
    counts = list(counts)
    if not counts or any(not isinstance(n, int) or isinstance(n, bool) or n <= 0 for n in counts):
        raise ValueError(f"partition counts must be positive integers, got {counts}")
    if len(set(counts)) != len(counts):
        raise ValueError(f"partition counts must differ, got {counts}")
    return counts


def pairs(counts: Sequence[int]) -> list[tuple[int, int]]:
    """Every N -> M with N listed before M."""
    return [(a, b) for i, a in enumerate(counts) for b in counts[i + 1:]]


# -- hashing a batch of distinct keys (Arrow in, Arrow out) -------------------------------------


def binary_hashes(keys: pa.Array) -> np.ndarray:
    """Java's murmur2 of every key of a binary Arrow array, straight from its buffers."""
    keys = keys.cast(pa.large_binary()) if keys.type != pa.large_binary() else keys
    if len(keys) == 0:
        return np.zeros(0, dtype=np.int32)
    _validity, offsets, data = keys.buffers()
    offsets = np.frombuffer(offsets, dtype=np.int64)[keys.offset : keys.offset + len(keys) + 1]
    buffer = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
    return murmur2_many(buffer, offsets)


def with_partitions(batch: pa.RecordBatch, counts: Sequence[int]) -> pa.RecordBatch:
    """Add ``p_N`` (int32) for each N to a batch with a binary ``key`` column."""
    hashes = binary_hashes(batch.column("key"))
    columns = list(batch.columns) + [pa.array(partitions_of_hashes(hashes, n)) for n in counts]
    return pa.RecordBatch.from_arrays(columns, names=list(batch.schema.names) + [f"p_{n}" for n in counts])


# -- shared final step --------------------------------------------------------------------------


def finalize(counts: Sequence[int], per_partition: pd.DataFrame, hot: pd.DataFrame,
             moves: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The output tables from the three aggregates both paths compute.

    per_partition: topic, partitions_n, partition, records, bytes (non-empty partitions only);
    hot: topic, key, records, bytes (the busiest keys, any order, at least HOT_KEYS per topic);
    moves: topic, keys, bytes, and for each N -> M ``keys_moved_N_M`` and ``bytes_moved_N_M``.
    """
    frames = []
    topics = sorted(per_partition["topic"].unique()) if len(per_partition) else []
    for topic in topics:
        for n in counts:
            grid = pd.DataFrame({"topic": topic, "partitions_n": n, "partition": np.arange(n, dtype=np.int64)})
            frames.append(grid)
    grid = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        {"topic": pd.Series(dtype=object), "partitions_n": pd.Series(dtype=np.int64),
         "partition": pd.Series(dtype=np.int64)})
    observed = per_partition.astype({"partitions_n": np.int64, "partition": np.int64, "records": np.int64,
                                     "bytes": np.int64})
    partitions = grid.merge(observed, on=["topic", "partitions_n", "partition"], how="left")
    partitions[["records", "bytes"]] = partitions[["records", "bytes"]].fillna(0).astype(np.int64)
    partitions = partitions.sort_values(["topic", "partitions_n", "partition"], ignore_index=True)

    skew_rows = []
    for (topic, n), frame in partitions.groupby(["topic", "partitions_n"], sort=True):
        records, size = frame["records"].to_numpy(), frame["bytes"].to_numpy()
        mean_records, mean_bytes = records.sum() / n, size.sum() / n
        skew_rows.append({"topic": topic, "partitions_n": int(n), "records": int(records.sum()),
                          "bytes": int(size.sum()), "max_records": int(records.max()),
                          "mean_records": float(mean_records),
                          "records_skew": float(records.max() / mean_records) if mean_records else 0.0,
                          "max_bytes": int(size.max()), "mean_bytes": float(mean_bytes),
                          "bytes_skew": float(size.max() / mean_bytes) if mean_bytes else 0.0,
                          "empty_partitions": int((records == 0).sum())})
    skew = pd.DataFrame(skew_rows, columns=["topic", "partitions_n", "records", "bytes", "max_records",
                                            "mean_records", "records_skew", "max_bytes", "mean_bytes",
                                            "bytes_skew", "empty_partitions"])

    hot = hot.astype({"records": np.int64, "bytes": np.int64})
    hot = hot.assign(key=hot["key"].map(bytes))
    hot = hot.sort_values(["topic", "records", "bytes", "key"], ascending=[True, False, False, True],
                          ignore_index=True)
    hot = hot.groupby("topic", sort=True).head(HOT_KEYS).reset_index(drop=True)
    totals = partitions[partitions["partitions_n"] == counts[0]].groupby("topic")["records"].sum()
    hot["rank"] = hot.groupby("topic").cumcount() + 1
    hot["share"] = hot["records"] / hot["topic"].map(totals)
    hot = hot[["topic", "rank", "key", "records", "bytes", "share"]]

    move_rows = []
    for row in moves.sort_values("topic").itertuples(index=False):
        for a, b in pairs(counts):
            keys_moved = int(getattr(row, f"keys_moved_{a}_{b}"))
            bytes_moved = int(getattr(row, f"bytes_moved_{a}_{b}"))
            move_rows.append({"topic": row.topic, "from_n": a, "to_n": b, "keys": int(row.keys),
                              "keys_moved": keys_moved, "key_fraction": keys_moved / row.keys if row.keys else 0.0,
                              "bytes": int(row.bytes), "bytes_moved": bytes_moved,
                              "byte_fraction": bytes_moved / row.bytes if row.bytes else 0.0})
    moves_out = pd.DataFrame(move_rows, columns=["topic", "from_n", "to_n", "keys", "keys_moved", "key_fraction",
                                                 "bytes", "bytes_moved", "byte_fraction"])
    return {"partitions": partitions, "skew": skew, "hot_keys": hot, "moves": moves_out}


# -- the single-process path (pyarrow + numpy, everything in memory) ----------------------------


def read_local(path: str) -> pa.Table:
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    if str(path).endswith(".csv"):
        # An empty field is null, as Spark's CSV reader reads it.
        return pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(
            column_types={"topic": pa.string(), "key": pa.string(), "size": pa.int64()},
            strings_can_be_null=True))
    return pq.read_table(path)


def _decode_base64(keys: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """Decoded keys and a mask of the ones that were not valid base64."""
    out: list[bytes | None] = []
    bad = np.zeros(len(keys), dtype=bool)
    for i, text in enumerate(keys.to_pylist()):
        if text is None:
            out.append(None)
            continue
        try:
            out.append(base64.b64decode(text, validate=True))
        except (binascii.Error, ValueError):
            out.append(None)
            bad[i] = True
    return pa.array(out, type=pa.large_binary()), bad


def validate_local(table: pa.Table, key_encoding: str = "utf-8") -> tuple[pa.Table, pd.DataFrame]:
    """(good rows as topic, key (large_binary), size) and the error rows with their reason."""
    topic, key, size = table.column("topic").combine_chunks(), table.column("key").combine_chunks(), \
        table.column("size").combine_chunks().cast(pa.int64())
    reason = np.full(len(table), None, dtype=object)
    bad_size = np.asarray(pc.fill_null(pc.less(size, 0), True))
    reason[bad_size] = BAD_SIZE
    reason[np.asarray(key.is_null())] = NULL_KEY
    if pa.types.is_string(key.type) or pa.types.is_large_string(key.type):
        if key_encoding == "base64":
            key, bad = _decode_base64(key)
            reason[bad] = BAD_BASE64
        else:
            key = key.cast(pa.large_binary())
    else:
        key = key.cast(pa.large_binary())
    reason[np.asarray(topic.is_null())] = NULL_TOPIC
    ok = np.array([r is None for r in reason], dtype=bool)
    good = pa.table({"topic": topic.filter(pa.array(ok)), "key": key.filter(pa.array(ok)),
                     "size": size.filter(pa.array(ok))})
    errors = table.filter(pa.array(~ok)).to_pandas()
    errors["reason"] = reason[~ok]
    return good, errors


def aggregate_local(good: pa.Table, counts: Sequence[int]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    keys = good.group_by(["topic", "key"]).aggregate([("size", "count"), ("size", "sum")])
    keys = keys.rename_columns(_renamed(keys.column_names))
    batch = with_partitions(pa.RecordBatch.from_arrays([keys.column("key").combine_chunks()], names=["key"]), counts)
    frame = pd.DataFrame({"topic": keys.column("topic").to_numpy(zero_copy_only=False),
                          "records": keys.column("records").to_numpy(), "bytes": keys.column("bytes").to_numpy()})
    for n in counts:
        frame[f"p_{n}"] = batch.column(f"p_{n}").to_numpy()
    per_partition = pd.concat(
        [frame.groupby(["topic", f"p_{n}"], sort=False)[["records", "bytes"]].sum().reset_index()
         .rename(columns={f"p_{n}": "partition"}).assign(partitions_n=n) for n in counts], ignore_index=True)
    # The busiest keys: every key at least as busy as each topic's 10th (ties are broken by key
    # in `finalize`); only those rows need their bytes objects.
    order = frame.sort_values(["topic", "records", "bytes"], ascending=[True, False, False])
    tenth = order.groupby("topic", sort=False).nth(HOT_KEYS - 1)[["topic", "records", "bytes"]]
    threshold = order["topic"].map(tenth.set_index("topic")["records"]), order["topic"].map(
        tenth.set_index("topic")["bytes"])
    busy = threshold[0].isna() | (order["records"] > threshold[0]) | (
        (order["records"] == threshold[0]) & (order["bytes"] >= threshold[1]))
    top = order[busy.to_numpy()]
    hot = top[["topic", "records", "bytes"]].assign(
        key=keys.column("key").take(pa.array(top.index.to_numpy())).to_pylist())
    moves = frame.groupby("topic", sort=False).agg(keys=("records", "size"), bytes=("bytes", "sum"))
    for a, b in pairs(counts):
        changed = frame[f"p_{a}"] != frame[f"p_{b}"]
        moved = frame.assign(k=changed.astype(np.int64), w=np.where(changed, frame["bytes"], 0))
        sums = moved.groupby("topic", sort=False)[["k", "w"]].sum()
        moves[f"keys_moved_{a}_{b}"], moves[f"bytes_moved_{a}_{b}"] = sums["k"], sums["w"]
    return per_partition, hot[["topic", "key", "records", "bytes"]].reset_index(drop=True), moves.reset_index()


def _renamed(names: list[str]) -> list[str]:
    mapping = {"size_count": "records", "size_sum": "bytes"}  # pyarrow names aggregates this way
    return [mapping.get(n, n) for n in names]



def run_local(path: str, counts: Sequence[int], key_encoding: str = "utf-8") -> dict[str, pd.DataFrame]:
    counts = check_counts(counts)
    good, errors = validate_local(read_local(path), key_encoding)
    tables = finalize(counts, *aggregate_local(good, counts))
    tables["errors"] = errors
    return tables


# -- the Spark path ------------------------------------------------------------------------------


def read_spark(spark: Any, path: str) -> Any:
    if str(path).endswith(".csv"):
        return spark.read.csv(path, header=True, schema="topic string, key string, size long, timestamp long")
    return spark.read.parquet(path)


def validate_spark(records: Any, key_encoding: str = "utf-8") -> Any:
    """(good: topic, key binary, size) and errors (the row + reason), as Spark DataFrames."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    key = F.col("key")
    text_keys = isinstance(records.schema["key"].dataType, StringType)
    bad_key = F.lit(False)
    if text_keys and key_encoding == "base64":
        # Strict base64, as Python's validate=True: whole groups of 4, padding only at the end.
        pattern = r"^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"
        bad_key = key.isNotNull() & ~key.rlike(pattern)
        key_bytes = F.unbase64(key)
    elif text_keys:
        key_bytes = F.encode(key, "UTF-8")
    else:
        key_bytes = key
    reason = (F.when(F.col("topic").isNull(), F.lit(NULL_TOPIC))
              .when(key.isNull(), F.lit(NULL_KEY))
              .when(bad_key, F.lit(BAD_BASE64))
              .when(F.col("size").isNull() | (F.col("size") < 0), F.lit(BAD_SIZE)))
    marked = records.withColumn("reason", reason)
    good = marked.where(F.col("reason").isNull()).select("topic", key_bytes.alias("key"),
                                                          F.col("size").cast("long").alias("size"))
    errors = marked.where(F.col("reason").isNotNull())
    return good, errors


def aggregate_spark(good: Any, counts: Sequence[int]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegerType, StructField, StructType

    keys = good.groupBy("topic", "key").agg(F.count(F.lit(1)).alias("records"), F.sum("size").alias("bytes"))
    schema = StructType([*keys.schema.fields, *(StructField(f"p_{n}", IntegerType(), False) for n in counts)])
    counts = list(counts)

    def hash_batches(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for batch in batches:
            yield with_partitions(batch, counts)

    placed = keys.mapInArrow(hash_batches, schema).persist()
    try:
        # Every partition count in one aggregation: one (n, partition) row per key and count.
        per_count = F.explode(F.array(*(F.struct(F.lit(n).alias("partitions_n"), F.col(f"p_{n}").alias("partition"))
                                        for n in counts))).alias("at")
        per_partition = (placed.select("topic", "records", "bytes", per_count)
                         .groupBy("topic", "at.partitions_n", "at.partition")
                         .agg(F.sum("records").alias("records"), F.sum("bytes").alias("bytes")).toPandas())
        rank = Window.partitionBy("topic").orderBy(F.desc("records"), F.desc("bytes"), F.asc("key"))
        hot = (placed.withColumn("rank", F.row_number().over(rank)).where(F.col("rank") <= HOT_KEYS)
               .select("topic", "key", "records", "bytes").toPandas())
        sums = [F.count(F.lit(1)).alias("keys"), F.sum("bytes").alias("bytes")]
        for a, b in pairs(counts):
            changed = F.col(f"p_{a}") != F.col(f"p_{b}")
            sums += [F.sum(F.when(changed, 1).otherwise(0)).alias(f"keys_moved_{a}_{b}"),
                     F.sum(F.when(changed, F.col("bytes")).otherwise(0)).alias(f"bytes_moved_{a}_{b}")]
        moves = placed.groupBy("topic").agg(*sums).toPandas()
    finally:
        placed.unpersist()
    return per_partition, hot, moves


def run_spark(spark: Any, records: Any, counts: Sequence[int], key_encoding: str = "utf-8") -> Any:
    """The Spark path: (tables as pandas, errors as a Spark DataFrame to write)."""
    counts = check_counts(counts)
    good, errors = validate_spark(records, key_encoding)
    return finalize(counts, *aggregate_spark(good, counts)), errors
