"""Keyed partitioning rows: ours vs aiokafka's pure-Python murmur2 on the same keys."""

from __future__ import annotations

import time


def run(count_scalar: int = 1_000_000, count_many: int = 10_000_000) -> dict:
    from aiokafka.partitioner import murmur2 as peer_murmur2

    from assignor.partitioners import partition_for_key, partitions_for_keys

    keys = [b"user-%d" % i for i in range(count_scalar)]
    start = time.perf_counter()
    ours = partitions_for_keys(keys, 24)
    vectorised = time.perf_counter() - start
    start = time.perf_counter()
    scalar = [partition_for_key(k, 24) for k in keys]
    scalar_seconds = time.perf_counter() - start
    start = time.perf_counter()
    peer = [(peer_murmur2(k) & 0x7FFFFFFF) % 24 for k in keys]
    peer_seconds = time.perf_counter() - start
    assert ours.tolist() == scalar == peer
    import numpy as np

    many = [b"k%09d" % i for i in range(count_many)]
    start = time.perf_counter()
    partitions_for_keys(many, 24)
    many_seconds = time.perf_counter() - start
    # The same keys laid out as an Arrow binary column (one buffer + offsets), as Spark hands them.
    buffer, offsets = b"".join(many), np.arange(count_many + 1, dtype=np.int64) * 10
    start = time.perf_counter()
    partitions_for_keys(buffer, 24, offsets=offsets)
    arrow_seconds = time.perf_counter() - start
    return {"keys": count_scalar, "vectorised": vectorised, "scalar": scalar_seconds, "peer": peer_seconds,
            "many": count_many, "many_seconds": many_seconds, "arrow_seconds": arrow_seconds}
