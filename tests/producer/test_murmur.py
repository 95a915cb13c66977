"""Keyed partitioning equals the Java producer: golden vectors, Kafka's own UtilsTest values,
and the vectorised path equal to the scalar one."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignor.partitioners import PartitionerError, murmur2, murmur2_many, partition_for_key, partitions_for_keys
from tests.budget import examples
from tests.golden import GOLDEN

VECTORS = [json.loads(line) for line in (GOLDEN / "murmur2_vectors.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("row", VECTORS, ids=lambda r: r["key_desc"])
def test_golden_vectors(row):
    key = bytes.fromhex(row["key_hex"])
    assert murmur2(key) == row["murmur2"]
    for count, partition in row["partitions"].items():
        assert partition_for_key(key, int(count)) == partition


def test_golden_vectors_vectorised():
    keys = [bytes.fromhex(r["key_hex"]) for r in VECTORS]
    assert murmur2_many(keys).tolist() == [r["murmur2"] for r in VECTORS]
    for count in ("1", "3", "6", "10", "12", "16", "100", "1000"):
        assert partitions_for_keys(keys, int(count)).tolist() == [r["partitions"][count] for r in VECTORS]


@pytest.mark.parametrize(
    ("key", "expected"),
    [(b"21", -973932308), (b"foobar", -790332482), (b"a-little-bit-long-string", -985981536),
     (b"a-little-bit-longer-string", -1486304829), (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
     (b"abc", 479470107)],
)
def test_kafka_utils_test_values(key, expected):
    """The values Kafka's own UtilsTest.testMurmur2 asserts."""
    assert murmur2(key) == expected


@examples(300)
@given(st.lists(st.binary(max_size=40), max_size=50), st.integers(1, 5000))
def test_vectorised_equals_scalar(keys, partitions):
    assert murmur2_many(keys).tolist() == [murmur2(k) for k in keys]
    assert partitions_for_keys(keys, partitions).tolist() == [partition_for_key(k, partitions) for k in keys]
    offsets = np.r_[0, np.cumsum([len(k) for k in keys])]
    assert murmur2_many(b"".join(keys), offsets=offsets).tolist() == [murmur2(k) for k in keys]


@pytest.mark.parametrize(
    ("call", "message"),
    [(lambda: partition_for_key(b"k", 0), "at least one partition"),
     (lambda: partition_for_key(None, 3), "null key"),
     (lambda: partitions_for_keys([b"a", None], 3), "every key must be bytes"),
     (lambda: murmur2("text"), "key must be bytes"),
     (lambda: murmur2_many(b"abc", offsets=[0, 5]), "offsets")],
)
def test_bad_input_is_a_clear_error(call, message):
    with pytest.raises(PartitionerError, match=message):
        call()
