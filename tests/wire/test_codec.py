"""The plain reference codec over the schema tables: Java's golden bytes both ways, round trips
of every message built from its own table, and hostile bytes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignor.errors import ProtocolError
from assignor.wire import codec, schema
from tests import golden
from tests.budget import examples

CONSUMER = json.loads((golden.GOLDEN / "userdata" / "consumer_protocol.json").read_text())


def _values(kind: str | schema.Array) -> st.SearchStrategy:
    """Values of one wire type, as the codec reads them back."""
    if isinstance(kind, schema.Array):
        if isinstance(kind.of, str):
            return st.lists(_values(kind.of), max_size=4)
        return st.lists(st.tuples(*(_values(f.type) for f in kind.of)), max_size=4)
    return {
        schema.INT16: st.integers(-(2**15), 2**15 - 1),
        schema.INT32: st.integers(-(2**31), 2**31 - 1),
        schema.STRING: st.text(max_size=6),
        schema.NULLABLE_STRING: st.none() | st.text(max_size=6),
        schema.NULLABLE_BYTES: st.none() | st.binary(max_size=8),
    }[kind]


MESSAGES = [schema.SUBSCRIPTION, schema.ASSIGNMENT, schema.STICKY_USER_DATA_V0, schema.STICKY_USER_DATA_V1,
            schema.COOPERATIVE_USER_DATA]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: m.name)
@examples(150)
@given(data=st.data())
def test_every_message_round_trips_through_its_table(message, data):
    version = data.draw(st.integers(0, message.highest_version)) if message.versioned else None
    values = {f.name: data.draw(_values(f.type)) for f in message.fields}
    # Arrays of fields read back as tuples; the drawn ones already are.
    decoded_version, decoded = codec.decode(message, codec.encode(message, values, version))
    assert decoded_version == version
    for field in message.fields:
        expected = values[field.name] if version is None or field.since <= version else field.default
        assert decoded[field.name] == expected, field.name


@pytest.mark.parametrize("case", CONSUMER["subscriptions"], ids=lambda c: c["name"])
def test_subscription_tables_read_javas_bytes_at_every_version(case):
    """The table, walked by the plain codec, reads what Java's ConsumerProtocol wrote, field for
    field, at each version (fields newer than the version take their defaults)."""
    for version, entry in case["versions"].items():
        read_version, values = codec.decode(schema.SUBSCRIPTION, bytes.fromhex(entry["hex"]))
        assert read_version == int(version)
        assert sorted(values["topics"]) == sorted(case["input"]["topics"])
        present = {f.name for f in schema.SUBSCRIPTION.fields_at(int(version))}
        for field in schema.SUBSCRIPTION.fields:
            if field.name not in present:
                assert values[field.name] == field.default


@pytest.mark.parametrize("case", CONSUMER["assignments"], ids=lambda c: c["name"])
def test_assignment_table_writes_javas_bytes(case):
    for version, entry in case["versions"].items():
        _, values = codec.decode(schema.ASSIGNMENT, bytes.fromhex(entry["hex"]))
        assert codec.encode(schema.ASSIGNMENT, values, int(version)).hex() == entry["hex"]


def test_the_subscription_table_follows_kafkas_versions():
    """Fields and the versions they appeared in, as ConsumerProtocolSubscription.json has them."""
    assert [(f.name, f.since) for f in schema.SUBSCRIPTION.fields] == [
        ("topics", 0), ("user_data", 0), ("owned_partitions", 1), ("generation_id", 2), ("rack_id", 3)]
    assert schema.SUBSCRIPTION.highest_version == schema.ASSIGNMENT.highest_version == 3


@pytest.mark.parametrize(("data", "message"), [
    # A count is checked against the bytes left before anything is allocated.
    (b"\x00\x00\x7f\xff\xff\xff", "assigned_partitions: 2147483647 elements need at least 12884901882 bytes"),
    (b"\x00\x00\x00\x00\x00\x01\x00\x09abcd", "assigned_partitions.topic: needs 9 bytes at offset 8, 4 left"),
    (b"\x00", "version: needs 2 bytes at offset 0, 1 left"),
])
def test_hostile_bytes_name_the_field_and_offset(data, message):
    with pytest.raises(ProtocolError) as raised:
        codec.decode(schema.ASSIGNMENT, data)
    assert str(raised.value).startswith(message)


@pytest.mark.parametrize(("values", "version", "message"), [
    ({"assigned_partitions": [("t", [2**31])], "user_data": None}, 0, "assigned_partitions.partitions"),
    ({"assigned_partitions": [("t", [0])], "user_data": "text"}, 0, "user_data: expected bytes"),
    ({"assigned_partitions": [("x" * 40000, [0])], "user_data": None}, 0, "more than a STRING holds"),
    ({"assigned_partitions": [], "user_data": None}, 4, "version: must be 0..3"),
])
def test_values_that_do_not_fit_are_refused(values, version, message):
    with pytest.raises(ProtocolError, match=message):
        codec.encode(schema.ASSIGNMENT, values, version)
