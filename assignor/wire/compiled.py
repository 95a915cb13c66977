"""A fast path for reading responses: the plain codec's `decode` of an unversioned message,
compiled once per (message, version) into closures that read each struct's run of fixed-size
fields with one ``struct`` call and an array of INT32 with one, instead of walking the table
value by value. It reads what `assignor.wire.codec.decode` reads, value for value (a property
test holds the two equal on every table of `assignor.wire.admin`); bytes it cannot read go to
the plain codec, which raises the `ProtocolError` naming the field and offset.

A long array of structs of integers and INT32 arrays whose elements share one layout (a
Metadata response's partitions) is read in columns, as `assignor.wire.rows.Rows`: the same
tuples, made only when asked for.

It earns its place on Metadata: a million partitions read in a fraction of the plain codec's
time (`bench/fastpaths.py`), which a snapshot of a large group's topics waits for.

Flexible arrays of KIP-848's topic partitions and of names (a consumer-protocol group's
ConsumerGroupDescribe: each member's subscribed topics, assignment and target) are read in C
(`assignor/wire/_compact_arrays.c`), value for value as the closures read them (what they leave
to the closures: anything not read plainly). Responses are read with the cyclic collector
paused (a large one's values are millions of objects, none in a cycle).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from assignor._arrays import gc_paused
from assignor.topic_ids import text_of_bytes
from assignor.wire import codec
from assignor.wire.rows import Rows
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

try:  # flexible arrays of topic partitions and of names in C; a build without a compiler reads them below
    import assignor.wire._compact_arrays as _in_c
except ImportError:
    _in_c = None  # type: ignore[assignment]

__all__ = ["Irregular", "decode", "skip_tagged"]

#: A reader: (the bytes, where to start) -> (the value, where it ended).
Reader = Callable[[bytes, int], tuple[Any, int]]

_FIXED = {INT8: "b", INT16: "h", INT32: "i", INT64: "q", BOOL: "?", UUID: "16s"}
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


#: KIP-848's topic partitions (`admin._ASSIGNMENT`'s entries), as `_array_reader` knows them: the
#: fields' types, each present. A flexible array of them, or of strings, is read in C where it
#: was built (`assignor/wire/_compact_arrays.c`).
_TOPIC_PARTITIONS = ((UUID, True), (STRING, True), (Array(INT32), True))

#: The texts of topic ids and of names, by their bytes, for the closures and the C part alike: a
#: response names each of a cluster's few thousand topics many times (ConsumerGroupDescribe: twice
#: per member and topic). Forgotten before a response once either holds more than `_KEPT`.
_KEPT = 1 << 14
_ids: dict[bytes, str] = {}
_names: dict[bytes, str] = {}


def _topic_id_text(raw: bytes) -> str:
    text = _ids.get(raw)
    if text is None:
        text = _ids[raw] = text_of_bytes(raw)
    return text


@cache
def _ints(count: int) -> struct.Struct:
    return struct.Struct(f">{count}i")


class Irregular(Exception):
    """Bytes the compiled reader does not read: the plain codec reads them again and says why."""


def decode(message: Message, data: bytes, version: int) -> dict[str, Any]:
    """`codec.decode(message, data, version)`'s values, for an unversioned message.

    Raises
    ------
    ProtocolError
        As `codec.decode` would (it is called to say why).
    """
    try:
        if len(_names) > _KEPT or len(_ids) > _KEPT:
            _names.clear()
            _ids.clear()
        with gc_paused():  # (values of a large response are millions of objects, none in a cycle)
            values, _end = _reader(message, version)(data, 0)
    except (Irregular, struct.error, IndexError, UnicodeDecodeError, ValueError):
        return codec.decode(message, data, version)[1]  # raises, naming the field
    return dict(zip((f.name for f in message.fields), values))


@cache
def _reader(message: Message, version: int) -> Reader:
    if message.versioned:
        raise ValueError(f"{message.name}: the compiled reader reads unversioned messages")
    return _struct_reader(message.fields, message.flexible, version)


def _varint(data: bytes, at: int) -> tuple[int, int]:
    byte = data[at]
    if byte < 0x80:
        return byte, at + 1
    value, shift = byte & 0x7F, 7
    while True:
        at += 1
        byte = data[at]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            if value > 0xFFFFFFFF:
                raise Irregular
            return value, at + 1
        shift += 7
        if shift >= 35:
            raise Irregular


def _length(flexible: bool, wide: bool) -> Reader:
    """A string's, bytes' or array's length (-1: null), as `codec._Reader.length` reads it."""
    if flexible:
        def compact(data: bytes, at: int) -> tuple[int, int]:
            value, at = _varint(data, at)
            return value - 1, at
        return compact
    form = _INT32 if wide else _INT16

    def classic(data: bytes, at: int) -> tuple[int, int]:
        return form.unpack_from(data, at)[0], at + form.size
    return classic


def skip_tagged(data: bytes, at: int) -> int:
    """Where a flexible struct's tagged fields end (each skipped), starting at `at`."""
    count, at = _varint(data, at)
    for _ in range(count):
        _tag, at = _varint(data, at)
        size, at = _varint(data, at)
        at += size
    if at > len(data):
        raise Irregular
    return at


def _struct_reader(fields: tuple[Field, ...], flexible: bool, version: int) -> Reader:
    """The fields present at `version` (others read as their defaults), runs of fixed-size ones
    read by one ``struct`` call, then (flexible) the tagged fields skipped."""
    steps: list[tuple[int, Any, Any]] = []  # (0, constant, _) | (1, Struct, uuid places) | (2, reader, _)
    run: list[str] = []

    def close_run() -> None:
        if run:
            uuids = tuple(i for i, k in enumerate(run) if k == UUID)
            steps.append((1, struct.Struct(">" + "".join(_FIXED[k] for k in run)), uuids))
            run.clear()

    for f in fields:
        if f.since > version:
            close_run()
            steps.append((0, f.default, None))
        elif isinstance(f.type, str) and f.type in _FIXED:
            run.append(f.type)
        else:
            close_run()
            steps.append((2, _value_reader(f.type, flexible, version), None))
    close_run()
    frozen = tuple(steps)

    def read(data: bytes, at: int) -> tuple[Any, int]:
        values: list[Any] = []
        for kind, step, uuids in frozen:
            if kind == 1:
                unpacked = step.unpack_from(data, at)
                at += step.size
                if uuids:
                    unpacked = list(unpacked)
                    for i in uuids:
                        unpacked[i] = _topic_id_text(unpacked[i])
                values.extend(unpacked)
            elif kind == 2:
                value, at = step(data, at)
                values.append(value)
            else:
                values.append(step)
        if flexible:
            if data[at] == 0:  # (no tagged fields: the usual case)
                at += 1
            else:
                at = skip_tagged(data, at)
        return tuple(values), at
    return read


def _value_reader(kind: str | Array | Struct, flexible: bool, version: int) -> Reader:
    if isinstance(kind, Struct):
        fields = _struct_reader(kind.fields, flexible, version)
        if not kind.nullable:
            return fields

        def null_or_fields(data: bytes, at: int) -> tuple[Any, int]:
            if data[at] >= 0x80:  # (an INT8 below zero: null)
                return None, at + 1
            return fields(data, at + 1)
        return null_or_fields
    if isinstance(kind, Array):
        return _array_reader(kind, flexible, version)
    if kind in _FIXED:
        form = struct.Struct(">" + _FIXED[kind])

        def fixed(data: bytes, at: int) -> tuple[Any, int]:
            value = form.unpack_from(data, at)[0]
            return (_topic_id_text(value) if kind == UUID else value), at + form.size
        return fixed
    wide = kind in (BYTES, NULLABLE_BYTES)
    nullable = kind in (NULLABLE_STRING, NULLABLE_BYTES)
    length = _length(flexible, wide)
    text = kind in (STRING, NULLABLE_STRING)
    if kind not in (STRING, NULLABLE_STRING, BYTES, NULLABLE_BYTES):
        raise TypeError(f"unknown wire type {kind!r}")

    def sized(data: bytes, at: int) -> tuple[Any, int]:
        size, at = length(data, at)
        if size < 0:
            if size == -1 and nullable:
                return None, at
            raise Irregular
        end = at + size
        if end > len(data):
            raise Irregular
        raw = data[at:end]
        return (raw.decode("utf-8") if text else raw), end
    return sized


def _array_reader(kind: Array, flexible: bool, version: int) -> Reader:
    length = _length(flexible, wide=True)
    least = kind.least(flexible=flexible)
    if kind.of == INT32:
        def ints(data: bytes, at: int) -> tuple[Any, int]:
            byte = data[at] if flexible else 0x80
            if byte < 0x80:  # a compact count of one byte: the usual case
                count, at = byte - 1, at + 1
            else:
                count, at = length(data, at)
            if count < 0:
                if count == -1 and kind.nullable:
                    return None, at
                raise Irregular
            end = at + 4 * count
            if end > len(data):
                raise Irregular
            return list(_ints(count).unpack_from(data, at)), end
        return ints
    element = _value_reader(kind.of, flexible, version) if isinstance(kind.of, str) else \
        _struct_reader(kind.of, flexible, version)
    periodic = None if isinstance(kind.of, str) else _periodic_reader(kind.of, flexible, version)

    def array(data: bytes, at: int) -> tuple[Any, int]:
        count, at = length(data, at)
        if count < 0:
            if count == -1 and kind.nullable:
                return None, at
            raise Irregular
        if count * least > len(data) - at:  # (before anything is allocated)
            raise Irregular
        if periodic is not None and count >= PERIODIC_LEAST:
            read = periodic(data, at, count)
            if read is not None:
                return read
        out = []
        for _ in range(count):
            value, at = element(data, at)
            out.append(value)
        return out, at

    # In C where it was built, which reads plainly read bytes and leaves the rest to `array`.
    if _in_c is not None and flexible and not kind.nullable:
        if kind.of == STRING:
            def strings(data: bytes, at: int) -> tuple[Any, int]:
                read = _in_c.strings(data, at, _names)
                return array(data, at) if read is None else read
            return strings
        if not isinstance(kind.of, str) and tuple((f.type, f.since <= version) for f in kind.of) == _TOPIC_PARTITIONS:
            def topic_partitions(data: bytes, at: int) -> tuple[Any, int]:
                read = _in_c.read(data, at, _ids, _names, text_of_bytes)
                return array(data, at) if read is None else read
            return topic_partitions
    return array



#: The fewest elements read in columns (below it, one by one is as quick).
PERIODIC_LEAST = 64

_DTYPES = {INT8: ">i1", INT16: ">i2", INT32: ">i4", INT64: ">i8"}


def _periodic_reader(fields: tuple[Field, ...], flexible: bool,
                     version: int) -> Callable[[bytes, int, int], tuple[Rows, int] | None] | None:
    """For a struct of integers and arrays of INT32 (all present at `version`): a reader of
    `count` elements in columns (`Rows`) when every element has the first one's layout, else
    None (the caller reads them one by one). The first element's array counts and (flexible)
    its empty tagged fields fix every offset in it; when each element has the same bytes at
    those places, each element has that layout, element after element (so the check is sound),
    and every field is a strided view of the bytes."""
    if any(f.since > version or not (f.type in _DTYPES or f.type == Array(INT32)) for f in fields):
        return None
    names = tuple(f.name for f in fields)
    prefix = 1 if flexible else 4

    def read(data: bytes, at: int, count: int) -> tuple[Rows, int] | None:
        places: list[tuple[str, int, int]] = []  # (dtype, offset in the element, INT32s or -1)
        fixed: list[int] = []  # offsets of the bytes every element must share
        offset = 0
        for f in fields:
            if f.type in _DTYPES:
                dtype = _DTYPES[str(f.type)]
                places.append((dtype, offset, -1))
                offset += int(dtype[-1])
                continue
            if at + offset + prefix > len(data):
                return None
            if flexible:
                length = data[at + offset] - 1  # (a count of one byte: below 127 elements)
                if data[at + offset] >= 0x80 or length < 0:
                    return None
            else:
                length = _INT32.unpack_from(data, at + offset)[0]
                if length < 0:
                    return None
            fixed.extend(range(offset, offset + prefix))
            places.append((">i4", offset + prefix, length))
            offset += prefix + 4 * length
        if flexible:
            if at + offset >= len(data) or data[at + offset] != 0:  # (tagged fields: one by one)
                return None
            fixed.append(offset)
            offset += 1
        end = at + count * offset
        if end > len(data):
            return None
        elements = np.frombuffer(data, np.uint8, count * offset, at).reshape(count, offset)
        if fixed and not (elements[:, fixed] == elements[0, fixed]).all():
            return None
        columns = tuple(
            np.ndarray((count,), dtype, data, at + place, (offset,)) if length < 0 else
            np.ndarray((count, length), dtype, data, at + place, (offset, 4))
            for dtype, place, length in places)
        return Rows(names, columns, count), end
    return read
