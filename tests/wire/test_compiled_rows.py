"""The compiled reader's columns (`assignor.wire.rows.Rows`) against the plain codec: long arrays
of Metadata partitions with one layout (read in columns), with one element that differs (a
replica more, a tagged field: read one by one), and cut anywhere."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from assignor.wire import admin, codec, compiled
from assignor.wire.rows import Rows
from tests.budget import examples

INT32 = st.integers(-(1 << 31), (1 << 31) - 1)


@st.composite
def metadata(draw: st.DrawFn) -> tuple[bytes, bool]:
    """A Metadata response with one topic of 64-200 partitions, every one with `replicas`
    replicas, unless one (`odd`) has another count."""
    count = draw(st.integers(compiled.PERIODIC_LEAST, 200))
    replicas = draw(st.integers(0, 4))
    odd = draw(st.none() | st.integers(0, count - 1))
    partitions = []
    for p in range(count):
        nodes = draw(st.lists(INT32, min_size=replicas, max_size=replicas))
        if p == odd:
            nodes = [*nodes, draw(INT32)]
        partitions.append((draw(st.integers(-(1 << 15), (1 << 15) - 1)), draw(INT32), draw(INT32), draw(INT32),
                           nodes, nodes[:1], []))
    response = {"throttle_time_ms": 0, "brokers": [(1, "h", 9092, None)], "cluster_id": None, "controller_id": 1,
                "topics": [(0, "t", "AAAAAAAAAAAAAAAAAAAAAA", False, partitions, 0)]}
    return codec.encode(admin.METADATA.response, response, admin.METADATA.version), odd is None


@examples(200)
@given(metadata(), st.data())
def test_partitions_read_in_columns_equal_the_plain_codecs(sample, data):
    raw, uniform = sample
    version = admin.METADATA.version
    expected = codec.decode(admin.METADATA.response, raw, version)[1]
    got = compiled.decode(admin.METADATA.response, raw, version)
    assert got == expected
    partitions = got["topics"][0][4]
    assert isinstance(partitions, Rows) == uniform
    if uniform:
        assert list(partitions) == expected["topics"][0][4]
        assert partitions[-1] == expected["topics"][0][4][-1] and partitions[2:5] == expected["topics"][0][4][2:5]
        assert partitions.column("partition_index").tolist() == [p[1] for p in expected["topics"][0][4]]
    cut = data.draw(st.integers(0, len(raw) - 1))
    try:
        truncated: object = codec.decode(admin.METADATA.response, raw[:cut], version)[1]
    except Exception as error:  # noqa: BLE001  (the same error either way)
        truncated = str(error)
    try:
        fast: object = compiled.decode(admin.METADATA.response, raw[:cut], version)
    except Exception as error:  # noqa: BLE001
        fast = str(error)
    assert fast == truncated


def test_a_tagged_field_in_one_element_reads_them_one_by_one():
    """An element's tagged field (Kafka may add one) is not in the first element's layout."""
    partitions = [(0, p, 1, 0, [1], [1], []) for p in range(100)]
    raw = bytearray(codec.encode(admin.METADATA.response, {
        "throttle_time_ms": 0, "brokers": [], "cluster_id": None, "controller_id": 1,
        "topics": [(0, "t", "AAAAAAAAAAAAAAAAAAAAAA", False, partitions, 0)]}, admin.METADATA.version))
    element = bytes([0, 0, 0, 0, 0, 50, 0, 0, 0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 1, 2, 0, 0, 0, 1, 1, 0])
    at = raw.index(element)
    raw[at:at + len(element)] = element[:-1] + bytes([1, 7, 2, 0xAB, 0xCD])  # one tagged field: tag 7, 2 bytes
    expected = codec.decode(admin.METADATA.response, bytes(raw), admin.METADATA.version)[1]
    got = compiled.decode(admin.METADATA.response, bytes(raw), admin.METADATA.version)
    assert got == expected and not isinstance(got["topics"][0][4], Rows)
