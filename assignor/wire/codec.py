"""The reference codec: reads and writes any message of `assignor.wire.schema` by walking its
table, one field at a time.

This is the plain definition of the bytes. The batch paths (`assignor.wire.columnar`) read and
write whole groups at once and are held equal to this codec by property tests; the one-message
functions of `assignor.protocol` use it directly.

Values are plain Python: ``int`` for INT8/INT16/INT32/INT64, ``bool`` for BOOL, ``str`` (or None) for
strings, ``bytes`` (or None) for BYTES and NULLABLE_BYTES, ``str`` for a UUID (as Kafka prints
it: `assignor.topic_ids`), a list for an array (None for a null one), and a tuple in field order
for an element of an array of fields or a `Struct`: ``TOPIC_PARTITIONS`` reads as
``[("t0", [0, 1]), ...]``. A flexible message (`Message.flexible`) is read and written in its
compact form, tagged fields skipped on reading and none written.

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

from assignor.errors import InvalidGroupError, ProtocolError
from assignor.topic_ids import TopicId, parse_topic_id
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

__all__ = ["check_version", "decode", "encode", "encode_value"]

_INT8 = struct.Struct(">b")
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")
_MAX_STRING = 0x7FFF
_MAX_VARINT_BYTES = 5  # an unsigned varint of 32 bits


def decode(message: Message, data: bytes, version: int | None = None) -> tuple[int | None, dict[str, object]]:
    """Read `message` from the start of `data`: its version (None when unversioned) and its
    values by field name. Fields newer than the version read take their defaults; trailing
    bytes are ignored. `version`: an unversioned message's (a response's, from its request),
    None for all its fields.

    Raises
    ------
    ProtocolError
        When the bytes do not hold the message (the field and offset are named), or the
        version is negative.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise ProtocolError(f"expected bytes, got {type(data).__name__}")
    reader = _Reader(bytes(data), message.flexible)
    if message.versioned:
        version = reader.int16("version")
        if version < 0:
            raise ProtocolError(f"version: unsupported version {version} of {message.name}")
    values = dict(zip((f.name for f in message.fields), reader.fields(message.fields, version, "")))
    return version, values


def encode(message: Message, values: Mapping[str, object], version: int | None = None) -> bytes:
    """Write `message` at `version` (required for a versioned message; for an unversioned one,
    None writes every field); a field missing from `values` is written as its default.

    Raises
    ------
    ProtocolError
        When a value does not fit its field (naming the field).
    """
    parts: list[bytes] = []
    if message.versioned:
        parts.append(_pack(_INT16, check_version(message, version), "version"))
    _Writer(parts, message.flexible).fields(message.fields, [values.get(f.name, f.default) for f in message.fields],
                                            version, "")
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
    _Writer(parts, flexible=False).value(kind, value, name)
    return b"".join(parts)


class _Reader:
    """A cursor over one message's bytes; every read checks what remains first."""

    def __init__(self, data: bytes, flexible: bool = False) -> None:
        self.data = data
        self.offset = 0
        self.flexible = flexible

    def remaining(self) -> int:
        return len(self.data) - self.offset

    def take(self, size: int, name: str) -> int:
        if size > self.remaining():
            raise ProtocolError(f"{name}: needs {size} bytes at offset {self.offset}, {self.remaining()} left")
        start = self.offset
        self.offset += size
        return start

    def int8(self, name: str) -> int:
        value: int = _INT8.unpack_from(self.data, self.take(1, name))[0]
        return value

    def int16(self, name: str) -> int:
        value: int = _INT16.unpack_from(self.data, self.take(2, name))[0]
        return value

    def int32(self, name: str) -> int:
        value: int = _INT32.unpack_from(self.data, self.take(4, name))[0]
        return value

    def varint(self, name: str) -> int:
        """An unsigned varint (at most 32 bits), as the flexible versions write lengths."""
        at, value = self.offset, 0
        for shift in range(0, 7 * _MAX_VARINT_BYTES, 7):
            byte = self.data[self.take(1, name)]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                if value > 0xFFFFFFFF:
                    break
                return value
        raise ProtocolError(f"{name}: an unsigned varint longer than 32 bits at offset {at}")

    def length(self, name: str, wide: bool = False) -> int:
        """A string's, bytes' or array's length: -1 for null. Compact in a flexible message (a
        varint of length + 1), else INT16 (strings) or INT32 (`wide`: bytes and arrays)."""
        if self.flexible:
            return self.varint(name) - 1
        return self.int32(name) if wide else self.int16(name)

    def fields(self, fields: tuple[Field, ...], version: int | None, prefix: str) -> list[object]:
        """Each field's value (its default where `version` predates it), then, in a flexible
        message, the struct's tagged fields skipped."""
        values = [self.value(f.type, prefix + f.name, version) if version is None or f.since <= version
                  else f.default for f in fields]
        if self.flexible:
            self.tagged(prefix + "tagged_fields" if prefix else "tagged_fields")
        return values

    def tagged(self, name: str) -> None:
        for _ in range(self.varint(name)):
            self.varint(name)  # the tag
            self.take(self.varint(name), name)

    def value(self, kind: str | Array | Struct, name: str, version: int | None = None) -> object:
        if isinstance(kind, Array):
            return self.array(kind, name, version)
        if isinstance(kind, Struct):
            if kind.nullable and self.int8(name) < 0:
                return None
            return tuple(self.fields(kind.fields, version, name + "."))
        if kind == INT8:
            return self.int8(name)
        if kind == INT16:
            return self.int16(name)
        if kind == INT32:
            return self.int32(name)
        if kind == INT64:
            value: int = _INT64.unpack_from(self.data, self.take(8, name))[0]
            return value
        if kind == BOOL:
            return self.int8(name) != 0
        if kind == UUID:
            start = self.take(16, name)
            return str(TopicId.of_bytes(self.data[start : start + 16]))
        if kind in (STRING, NULLABLE_STRING):
            return self.string(name, nullable=kind == NULLABLE_STRING)
        if kind in (BYTES, NULLABLE_BYTES):
            return self.bytes(name, nullable=kind == NULLABLE_BYTES)
        raise TypeError(f"unknown wire type {kind!r}")

    def string(self, name: str, nullable: bool) -> str | None:
        at = self.offset
        length = self.length(name)
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

    def bytes(self, name: str, nullable: bool = True) -> bytes | None:
        at = self.offset
        length = self.length(name, wide=True)
        if length == -1 and nullable:
            return None
        if length < 0:
            raise ProtocolError(f"{name}: invalid bytes length {length} at offset {at}")
        start = self.take(length, name)
        return self.data[start : start + length]

    def array(self, kind: Array, name: str, version: int | None = None) -> list[object] | None:
        at = self.offset
        count = self.length(name, wide=True)
        if count == -1 and kind.nullable:
            return None
        if count < 0:
            raise ProtocolError(f"{name}: invalid array length {count} at offset {at}")
        least = count * kind.least(flexible=self.flexible)
        if least > self.remaining():
            raise ProtocolError(f"{name}: {count} elements need at least {least} bytes at offset {self.offset}, "
                                f"{self.remaining()} left")
        if isinstance(kind.of, str):
            return [self.value(kind.of, name) for _ in range(count)]
        fields = kind.of
        return [tuple(self.fields(fields, version, name + ".")) for _ in range(count)]


class _Writer:
    """Appends one message's bytes to `parts`, in its flexible form or not."""

    def __init__(self, parts: list[bytes], flexible: bool) -> None:
        self.parts = parts
        self.flexible = flexible

    def fields(self, fields: tuple[Field, ...], values: list[object], version: int | None, prefix: str) -> None:
        for f, v in zip(fields, values):
            if version is None or f.since <= version:
                self.value(f.type, v, prefix + f.name, version)
        if self.flexible:
            self.parts.append(b"\0")  # no tagged fields

    def length(self, length: int, wide: bool = False) -> None:
        """A length (-1: null) as `_Reader.length` reads it."""
        if self.flexible:
            self.parts.append(_varint(length + 1))
        else:
            self.parts.append((_INT32 if wide else _INT16).pack(length))

    def value(self, kind: str | Array | Struct, value: object, name: str, version: int | None = None) -> None:
        parts = self.parts
        if isinstance(kind, Array):
            self.array(kind, value, name, version)
        elif isinstance(kind, Struct):
            if kind.nullable:
                parts.append(_INT8.pack(-1 if value is None else 1))
                if value is None:
                    return
            if not isinstance(value, tuple | list) or len(value) != len(kind.fields):
                raise ProtocolError(f"{name}: expected ({', '.join(f.name for f in kind.fields)})")
            self.fields(kind.fields, list(value), version, name + ".")
        elif kind == INT8:
            parts.append(_pack(_INT8, value, name))
        elif kind == INT16:
            parts.append(_pack(_INT16, value, name))
        elif kind == INT32:
            parts.append(_pack(_INT32, value, name))
        elif kind == INT64:
            parts.append(_pack(_INT64, value, name))
        elif kind == BOOL:
            if not isinstance(value, bool):
                raise ProtocolError(f"{name}: expected a bool, got {type(value).__name__}")
            parts.append(b"\1" if value else b"\0")
        elif kind == UUID:
            try:
                topic_id = parse_topic_id(value, name)
            except InvalidGroupError as error:
                raise ProtocolError(str(error)) from None
            mask = 0xFFFF_FFFF_FFFF_FFFF
            parts.append((topic_id.msb & mask).to_bytes(8, "big") + (topic_id.lsb & mask).to_bytes(8, "big"))
        elif kind in (STRING, NULLABLE_STRING):
            if value is None and kind == NULLABLE_STRING:
                self.length(-1)
            else:
                encoded = _utf8(value, name)
                self.length(len(encoded))
                parts.append(encoded)
        elif kind in (BYTES, NULLABLE_BYTES):
            if value is None and kind == NULLABLE_BYTES:
                self.length(-1, wide=True)
            elif isinstance(value, bytes | bytearray | memoryview):
                self.length(len(value), wide=True)
                parts.append(bytes(value))
            else:
                raise ProtocolError(f"{name}: expected bytes, got {type(value).__name__}")
        else:
            raise TypeError(f"unknown wire type {kind!r}")

    def array(self, kind: Array, value: object, name: str, version: int | None) -> None:
        if value is None and kind.nullable:
            self.length(-1, wide=True)
            return
        if isinstance(value, str | bytes) or not hasattr(value, "__len__"):
            raise ProtocolError(f"{name}: expected a list, got {type(value).__name__}")
        items = list(value)  # type: ignore[call-overload]
        self.length(len(items), wide=True)
        if isinstance(kind.of, str):
            for item in items:
                self.value(kind.of, item, name)
            return
        fields: tuple[Field, ...] = kind.of
        for item in items:
            if not isinstance(item, tuple | list) or len(item) != len(fields):
                raise ProtocolError(f"{name}: expected ({', '.join(f.name for f in fields)}) elements")
            self.fields(fields, list(item), version, name + ".")


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


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
