"""The reference codec: reads and writes any message of `assignor.wire.schema` by walking its
table, one field at a time.

This is the plain definition of the bytes. The batch paths (`assignor.wire.columnar`) read and
write whole groups at once and are held equal to this codec by property tests; the one-message
functions of `assignor.protocol` use it directly.

Values are plain Python: ``int`` for INT16/INT32, ``str`` (or None) for strings, ``bytes`` (or
None) for NULLABLE_BYTES, a list for an array, and a tuple in field order for an element of an
array of fields: ``TOPIC_PARTITIONS`` reads as ``[("t0", [0, 1]), ...]``.

Decoding untrusted bytes raises `ProtocolError` naming the field (``owned_partitions.topic``)
and the byte offset; every length and count is checked against the bytes that remain before
anything is allocated.

Examples
--------
>>> from assignor.wire.schema import ASSIGNMENT
>>> data = encode(ASSIGNMENT, {"assigned_partitions": [("t0", [0])], "user_data": None}, version=0)
>>> data.hex()
'000000000001000274300000000100000000ffffffff'
>>> decode(ASSIGNMENT, data)
(0, {'assigned_partitions': [('t0', [0])], 'user_data': None})
"""

from __future__ import annotations

import numbers
import struct
from collections.abc import Mapping

from assignor.errors import ProtocolError
from assignor.wire.schema import (
    INT16,
    INT32,
    NULLABLE_BYTES,
    NULLABLE_STRING,
    STRING,
    Array,
    Field,
    Message,
)

__all__ = ["check_version", "decode", "encode", "encode_value"]

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_MAX_STRING = 0x7FFF


def decode(message: Message, data: bytes) -> tuple[int | None, dict[str, object]]:
    """Read `message` from the start of `data`: its version (None when unversioned) and its
    values by field name. Fields newer than the version read take their defaults; trailing
    bytes are ignored.

    Raises
    ------
    ProtocolError
        When the bytes do not hold the message (the field and offset are named), or the
        version is negative.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise ProtocolError(f"expected bytes, got {type(data).__name__}")
    reader = _Reader(bytes(data))
    version = None
    if message.versioned:
        version = reader.int16("version")
        if version < 0:
            raise ProtocolError(f"version: unsupported version {version} of {message.name}")
    values: dict[str, object] = {}
    for field in message.fields:
        if version is None or field.since <= version:
            values[field.name] = reader.value(field.type, field.name)
        else:
            values[field.name] = field.default
    return version, values


def encode(message: Message, values: Mapping[str, object], version: int | None = None) -> bytes:
    """Write `message` at `version` (required for a versioned message, None otherwise); a
    field missing from `values` is written as its default.

    Raises
    ------
    ProtocolError
        When a value does not fit its field (naming the field).
    """
    parts: list[bytes] = []
    if message.versioned:
        parts.append(_pack(_INT16, check_version(message, version), "version"))
    for field in message.fields:
        if version is None or field.since <= version:
            _write(parts, field.type, values.get(field.name, field.default), field.name)
    return b"".join(parts)


def check_version(message: Message, version: object) -> int:
    """`version` when `message` can be written at it (0 to its highest version).

    Raises
    ------
    ProtocolError
        Naming the versions there are.
    """
    if not isinstance(version, int) or isinstance(version, bool) or not 0 <= version <= message.highest_version:
        raise ProtocolError(f"version: must be 0..{message.highest_version}, got {version!r}")
    return version


def encode_value(kind: str | Array, value: object, name: str) -> bytes:
    """One value of a wire type on its own (a STRING's length and bytes, say)."""
    parts: list[bytes] = []
    _write(parts, kind, value, name)
    return b"".join(parts)


class _Reader:
    """A cursor over one message's bytes; every read checks what remains first."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.offset = 0

    def remaining(self) -> int:
        return len(self.data) - self.offset

    def take(self, size: int, name: str) -> int:
        if size > self.remaining():
            raise ProtocolError(f"{name}: needs {size} bytes at offset {self.offset}, {self.remaining()} left")
        start = self.offset
        self.offset += size
        return start

    def int16(self, name: str) -> int:
        value: int = _INT16.unpack_from(self.data, self.take(2, name))[0]
        return value

    def int32(self, name: str) -> int:
        value: int = _INT32.unpack_from(self.data, self.take(4, name))[0]
        return value

    def value(self, kind: str | Array, name: str) -> object:
        if isinstance(kind, Array):
            return self.array(kind, name)
        if kind == INT16:
            return self.int16(name)
        if kind == INT32:
            return self.int32(name)
        if kind in (STRING, NULLABLE_STRING):
            return self.string(name, nullable=kind == NULLABLE_STRING)
        if kind == NULLABLE_BYTES:
            return self.nullable_bytes(name)
        raise TypeError(f"unknown wire type {kind!r}")

    def string(self, name: str, nullable: bool) -> str | None:
        at = self.offset
        length = self.int16(name)
        if length == -1 and nullable:
            return None
        if length < 0:
            kind = "invalid" if nullable else "negative"
            raise ProtocolError(f"{name}: {kind} string length {length} at offset {at}")
        start = self.take(length, name)
        try:
            return self.data[start : start + length].decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError(f"{name}: invalid UTF-8 at offset {start}") from None

    def nullable_bytes(self, name: str) -> bytes | None:
        at = self.offset
        length = self.int32(name)
        if length == -1:
            return None
        if length < 0:
            raise ProtocolError(f"{name}: invalid bytes length {length} at offset {at}")
        start = self.take(length, name)
        return self.data[start : start + length]

    def array(self, kind: Array, name: str) -> list[object]:
        at = self.offset
        count = self.int32(name)
        if count < 0:
            raise ProtocolError(f"{name}: invalid array length {count} at offset {at}")
        least = count * kind.min_element_size
        if least > self.remaining():
            raise ProtocolError(f"{name}: {count} elements need at least {least} bytes at offset {self.offset}, "
                                f"{self.remaining()} left")
        if isinstance(kind.of, str):
            return [self.value(kind.of, name) for _ in range(count)]
        fields = kind.of
        return [tuple(self.value(f.type, f"{name}.{f.name}") for f in fields) for _ in range(count)]


def _write(parts: list[bytes], kind: str | Array, value: object, name: str) -> None:
    if isinstance(kind, Array):
        _write_array(parts, kind, value, name)
    elif kind == INT16:
        parts.append(_pack(_INT16, value, name))
    elif kind == INT32:
        parts.append(_pack(_INT32, value, name))
    elif kind in (STRING, NULLABLE_STRING):
        if value is None and kind == NULLABLE_STRING:
            parts.append(_INT16.pack(-1))
        else:
            encoded = _utf8(value, name)
            parts.append(_INT16.pack(len(encoded)))
            parts.append(encoded)
    elif kind == NULLABLE_BYTES:
        if value is None:
            parts.append(_INT32.pack(-1))
        elif isinstance(value, bytes | bytearray | memoryview):
            parts.append(_INT32.pack(len(value)))
            parts.append(bytes(value))
        else:
            raise ProtocolError(f"{name}: expected bytes, got {type(value).__name__}")
    else:
        raise TypeError(f"unknown wire type {kind!r}")


def _write_array(parts: list[bytes], kind: Array, value: object, name: str) -> None:
    if isinstance(value, str | bytes) or not hasattr(value, "__len__"):
        raise ProtocolError(f"{name}: expected a list, got {type(value).__name__}")
    items = list(value)  # type: ignore[call-overload]
    parts.append(_INT32.pack(len(items)))
    if isinstance(kind.of, str):
        for item in items:
            _write(parts, kind.of, item, name)
        return
    fields: tuple[Field, ...] = kind.of
    for item in items:
        if not isinstance(item, tuple | list) or len(item) != len(fields):
            raise ProtocolError(f"{name}: expected ({', '.join(f.name for f in fields)}) elements")
        for f, v in zip(fields, item):
            _write(parts, f.type, v, f"{name}.{f.name}")


def _utf8(value: object, name: str) -> bytes:
    if not isinstance(value, str):
        raise ProtocolError(f"{name}: expected a string, got {type(value).__name__}")
    try:
        encoded = value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate, which JSON input can carry
        raise ProtocolError(f"{name}: {value!r} is not encodable as UTF-8") from None
    if len(encoded) > _MAX_STRING:
        raise ProtocolError(f"{name}: {len(encoded)} bytes, more than a STRING holds ({_MAX_STRING})")
    return encoded


def _pack(form: struct.Struct, value: object, name: str) -> bytes:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise ProtocolError(f"{name}: expected an integer, got {type(value).__name__}")
    try:
        return form.pack(int(value))
    except struct.error:
        raise ProtocolError(f"{name}: {value!r} does not fit the field") from None
