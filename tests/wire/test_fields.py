"""The schema walker of the columnar paths (`assignor.wire.fields`) held to the plain codec: for
every message of the schema, over well-formed and damaged bytes, it reads what `codec.decode`
reads, fails where it fails, and `field_offsets` puts each field where `codec.encode` does."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignor.errors import ProtocolError
from assignor.wire import codec, schema
from assignor.wire.buffers import Messages
from assignor.wire.fields import LENGTH_SIZE, field_offsets, read_fields
from tests.budget import examples
from tests.wire.test_codec import MESSAGES, _values

#: Every primitive at the top level too (the schema's own messages have STRING only in arrays).
PRIMITIVES = schema.Message("every primitive", (
    schema.Field("a", schema.INT16), schema.Field("b", schema.STRING), schema.Field("c", schema.NULLABLE_STRING),
    schema.Field("d", schema.NULLABLE_BYTES), schema.Field("e", schema.INT32, since=1, default=-1),
), highest_version=1)
WALKED = [*MESSAGES, PRIMITIVES]


def _plain_array_reader(kind: schema.Array):
    """An array reader by the plain codec, one message at a time: the walker alone is tested."""
    one = schema.Message("one array", (schema.Field("array", kind),), versioned=False)

    def read(joined: Messages, rows: np.ndarray, at: np.ndarray):
        values, sizes = [], []
        for row, offset in zip(rows.tolist(), at.tolist()):
            data = joined.message(row)[offset:]
            try:
                value = codec.decode(one, data)[1]["array"]
            except ProtocolError:
                values.append(None)
                sizes.append(-1)
                continue
            values.append(value)
            sizes.append(len(codec.encode_value(kind, value, "array")))
        return values, np.array(sizes, dtype=np.int64)

    return read


def _readers(message: schema.Message):
    return {f.name: _plain_array_reader(f.type) for f in message.fields if isinstance(f.type, schema.Array)}


@st.composite
def _messages(draw, message: schema.Message) -> bytes:
    """A message's bytes: well formed, or cut short, or with a byte changed."""
    version = draw(st.integers(0, message.highest_version + 1)) if message.versioned else None
    values = {f.name: draw(_values(f.type)) for f in message.fields}
    data = codec.encode(message, values, None if version is None else min(version, message.highest_version))
    if version is not None and version > message.highest_version:
        data = version.to_bytes(2, "big") + data[2:]  # a newer version: read with the fields known
    damage = draw(st.sampled_from(["none", "cut", "byte"]))
    if damage == "cut" and data:
        data = data[: draw(st.integers(0, len(data) - 1))]
    elif damage == "byte" and data:
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1 :]
    return data


@pytest.mark.parametrize("message", WALKED, ids=lambda m: m.name)
@examples(150)
@given(data=st.data())
def test_read_fields_reads_what_the_codec_reads(message, data):
    blobs = data.draw(st.lists(_messages(message), min_size=1, max_size=6))
    read = read_fields(message, Messages.of(blobs), _readers(message))
    for i, blob in enumerate(blobs):
        try:
            version, values = codec.decode(message, blob)
        except ProtocolError:
            assert not read.ok[i] or not _texts_decode(message, read, i, blob)
            continue
        assert read.ok[i], blob.hex()
        if message.versioned:
            assert read.version is not None and read.version[i] == version
        for field in message.fields:
            column = read.fields[field.name]
            present = version is None or field.since <= version
            assert column.read[i] == present, field.name
            if not present:
                continue
            value, at = values[field.name], int(column.at[i])
            assert blob[at:].startswith(codec.encode_value(field.type, value, field.name)), field.name
            if isinstance(field.type, schema.Array):
                assert column.value[column.rows.tolist().index(i)] == value
            elif field.type in (schema.INT16, schema.INT32):
                assert column.value[i] == value
            else:
                length = column.value[i]
                payload = blob[at + LENGTH_SIZE[field.type] : at + LENGTH_SIZE[field.type] + max(length, 0)]
                assert (None if length < 0 else payload) == (None if value is None else (
                    value if isinstance(value, bytes) else value.encode()))
        assert read.end[i] == len(codec.encode(message, values, None if version is None else
                                               min(version, message.highest_version)))


def _texts_decode(message: schema.Message, read, i: int, blob: bytes) -> bool:
    """Whether message i's strings are UTF-8: the walker reads their lengths, its caller the text."""
    for field in message.fields:
        column = read.fields[field.name]
        if field.type in (schema.STRING, schema.NULLABLE_STRING) and column.read[i] and column.value[i] > 0:
            start = int(column.at[i]) + LENGTH_SIZE[field.type]
            try:
                blob[start : start + int(column.value[i])].decode()
            except UnicodeDecodeError:
                return False
    return True


@pytest.mark.parametrize("message", WALKED, ids=lambda m: m.name)
@examples(100)
@given(data=st.data())
def test_field_offsets_put_each_field_where_the_codec_writes_it(message, data):
    version = data.draw(st.integers(0, message.highest_version)) if message.versioned else None
    values = {f.name: data.draw(_values(f.type)) for f in message.fields}
    blob = codec.encode(message, values, version)
    present = message.fields if version is None else message.fields_at(version)
    encoded = {f.name: codec.encode_value(f.type, values[f.name], f.name) for f in present}
    offsets, size = field_offsets(message, version, {name: len(b) for name, b in encoded.items()})
    assert size == len(blob)
    assert list(offsets) == [f.name for f in present]
    for name, value_bytes in encoded.items():
        assert blob[offsets[name] : offsets[name] + len(value_bytes)] == value_bytes, name
