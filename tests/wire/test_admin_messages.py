"""The snapshot's requests and responses (`assignor.wire.admin`) against the bytes Kafka's own
generated message classes write (kafka-clients 4.3.1, driven by ``jvm/src/MessageBytes.java``):
random values of every field of every table, at every version a table describes, written by
both and read back by ours."""

from __future__ import annotations

import base64
import json
import random
import subprocess

import pytest

from assignor.errors import ProtocolError
from assignor.topic_ids import TopicId
from assignor.wire import admin, codec, membership
from assignor.wire import compiled as fast
from assignor.wire.schema import (
    BOOL,
    BYTES,
    INT8,
    INT16,
    INT32,
    INT64,
    NULLABLE_BYTES,
    NULLABLE_STRING,
    STRING,
    UUID,
    Array,
    Field,
    Message,
    Struct,
)
from bench.java_members import driver_command

APIS = [admin.API_VERSIONS, admin.METADATA, admin.FIND_COORDINATOR, admin.LIST_GROUPS, admin.DESCRIBE_GROUPS,
        admin.CONSUMER_GROUP_DESCRIBE, admin.SASL_HANDSHAKE, admin.SASL_AUTHENTICATE,
        membership.CONSUMER_GROUP_HEARTBEAT, membership.OFFSET_COMMIT]
CASES = [(api, message, version) for api in APIS for message in (api.request, api.response)
         for version in range(api.lowest, api.version + 1)]
_TEXT = ["", "g", "orders", "ünïcødé-grøup", "a" * 300]


def _value(kind: str | Array | Struct, rng: random.Random, version: int) -> object:
    if isinstance(kind, Array):
        if kind.nullable and rng.random() < 0.2:
            return None
        return [_value(kind.of if isinstance(kind.of, str) else Struct(kind.of), rng, version)
                for _ in range(rng.randrange(4))]
    if isinstance(kind, Struct):
        if kind.nullable and rng.random() < 0.2:
            return None
        return tuple(_value(f.type, rng, version) if f.since <= version else f.default for f in kind.fields)
    if kind in (NULLABLE_STRING, NULLABLE_BYTES) and rng.random() < 0.2:
        return None
    if kind in (STRING, NULLABLE_STRING):
        return rng.choice(_TEXT)
    if kind in (BYTES, NULLABLE_BYTES):
        return rng.randbytes(rng.randrange(40))
    if kind == UUID:
        return str(TopicId.of_bytes(rng.randbytes(16)))
    if kind == BOOL:
        return rng.random() < 0.5
    bits = {INT8: 8, INT16: 16, INT32: 32, INT64: 64}[kind]
    return rng.randrange(-(1 << (bits - 1)), 1 << (bits - 1))


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def _json(kind: str | Array | Struct, value: object, version: int) -> object:
    """`value` as Kafka's generated ``*JsonConverter`` reads it."""
    if value is None:
        return None
    if isinstance(kind, Array):
        of = kind.of if isinstance(kind.of, str) else Struct(kind.of)
        return [_json(of, v, version) for v in value]  # type: ignore[attr-defined]
    if isinstance(kind, Struct):
        return _fields_json(kind.fields, value, version)  # type: ignore[arg-type]
    if kind in (BYTES, NULLABLE_BYTES):
        return base64.b64encode(value).decode()  # type: ignore[arg-type]
    return value


def _fields_json(fields: tuple[Field, ...], values: tuple[object, ...], version: int) -> dict[str, object]:
    return {_camel(f.name): _json(f.type, v, version) for f, v in zip(fields, values) if f.since <= version}


def _sample(message: Message, version: int, rng: random.Random) -> dict[str, object]:
    return dict(zip((f.name for f in message.fields), _value(Struct(message.fields), rng, version)))  # type: ignore[arg-type]


@pytest.mark.external
def test_the_tables_write_and_read_javas_bytes():
    rng = random.Random(69)
    samples = [(message, version, _sample(message, version, rng)) for _api, message, version in CASES
               for _ in range(25)]
    lines = [f"{message.name} {version} "
             f"{json.dumps(_fields_json(message.fields, tuple(values.values()), version), ensure_ascii=False)}"
             for message, version, values in samples]
    done = subprocess.run(driver_command("MessageBytes"), input="\n".join(lines),
                          capture_output=True, text=True, check=True, timeout=120)
    javas = done.stdout.split("\n")[:-1]
    assert len(javas) == len(samples)
    for (message, version, values), theirs in zip(samples, javas, strict=True):
        ours = codec.encode(message, values, version)
        assert ours.hex() == theirs, (message.name, version, values)
        assert codec.decode(message, bytes.fromhex(theirs), version) == (version, values)
        if not message.versioned:  # (responses and requests of the admin APIs: what a snapshot reads)
            assert fast.decode(message, bytes.fromhex(theirs), version) == values


@pytest.mark.parametrize(("api", "message", "version"), CASES, ids=[f"{m.name}-v{v}" for _a, m, v in CASES])
def test_truncated_bytes_fail_as_protocol_errors(api, message, version):
    """Each cut of a sample (every one, or 300 spread over a long one) either reads (the cut fell
    in trailing content) or fails as a ProtocolError naming a field, never another error."""
    data = codec.encode(message, _sample(message, version, random.Random(version)), version)
    for cut in range(0, len(data), max(1, len(data) // 300)):  # (at most 300 cuts of a long sample)
        try:
            codec.decode(message, data[:cut], version)
        except ProtocolError as error:
            assert " at offset " in str(error) or "left" in str(error), error


@pytest.mark.parametrize(("data", "message"), [
    # 2**32 - 1 groups after the throttle time: refused before anything is allocated
    (b"\0\0\0\0" + b"\xff\xff\xff\xff\x0f", "groups: 4294967294 elements need at least"),
    # a varint past 32 bits
    (b"\0\0\0\0" + b"\xff" * 6, "groups: an unsigned varint longer than 32 bits"),
    # one group whose id claims 100 bytes of the 11 left
    (b"\0\0\0\0\x02\0\0" + b"\x65" + b"g" * 10, "groups.group_id: needs 100 bytes at offset 8, 10 left"),
])
def test_hostile_counts_and_lengths_fail_at_once(data, message):
    with pytest.raises(ProtocolError, match=message):
        codec.decode(admin.DESCRIBE_GROUPS.response, data, admin.DESCRIBE_GROUPS.version)


@pytest.mark.parametrize(("api", "message", "version"), CASES, ids=[f"{m.name}-v{v}" for _a, m, v in CASES])
def test_the_compiled_reader_reads_what_the_plain_codec_reads(api, message, version):
    """`compiled.decode` (the fast path) against `codec.decode` (its reference): the same values
    on random samples of every table, and on cuts of one (as above) the same answer or the same
    ProtocolError."""
    rng = random.Random(version + 1000)
    for _ in range(40):
        data = codec.encode(message, _sample(message, version, rng), version)
        assert fast.decode(message, data, version) == codec.decode(message, data, version)[1]
    for cut in range(0, len(data), max(1, len(data) // 300)):  # (at most 300 cuts of a long sample)
        try:
            expected: object = codec.decode(message, data[:cut], version)[1]
        except ProtocolError as error:
            expected = str(error)
        try:
            got: object = fast.decode(message, data[:cut], version)
        except ProtocolError as error:
            got = str(error)
        assert got == expected, cut
