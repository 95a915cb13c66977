"""The schema's fields for many messages at once: where each lies and what the fixed-size ones
hold, found by walking a `assignor.wire.schema.Message` table over columns, as the plain codec
(`assignor.wire.codec`) walks it over one message.

The columnar paths (`assignor.wire.columnar`) read and write through these two functions, so a
layout is spelled out once, in `schema`:

- `read_fields`: every message's version and, per field, where it starts, whether it was read,
  and its value (INT16/INT32), its length (-1 for null) for strings and bytes, or what the
  caller's reader returned for an array (arrays of many entries need their own columnar reader:
  a topic list, a ``[Topic STRING, Partitions [INT32]]`` array).
- `field_offsets`: where each field of a message being written starts, from the sizes of the
  variable-size ones.

Examples
--------
>>> from assignor.wire.buffers import Messages
>>> from assignor.wire.schema import COOPERATIVE_USER_DATA
>>> read = read_fields(COOPERATIVE_USER_DATA, Messages.of([bytes([0, 0, 0, 7]), b"", bytes(4)]))
>>> read.ok.tolist(), read.fields["generation"].value.tolist()
([True, False, True], [7, 0, 0])
>>> field_offsets(COOPERATIVE_USER_DATA, None, {})
({'generation': 0}, 4)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from assignor.wire.buffers import Messages, ints_at
from assignor.wire.schema import INT16, INT32, NULLABLE_BYTES, NULLABLE_STRING, STRING, Array, Message, Struct

__all__ = ["ArrayReader", "FieldColumns", "Fields", "field_offsets", "read_fields"]

#: The bytes of a fixed-size primitive, and of the length in front of a variable-size one.
FIXED_SIZE = {INT16: 2, INT32: 4}
LENGTH_SIZE = {STRING: 2, NULLABLE_STRING: 2, NULLABLE_BYTES: 4}

#: Reads one array field of the messages `rows` of a `Messages`, each at its offset (from the
#: message's start, at the array's INT32 count): returns what it read, and each row's array size
#: in bytes (-1 where the array does not read).
ArrayReader = Callable[[Messages, np.ndarray, np.ndarray], tuple[Any, np.ndarray]]


class FieldColumns(NamedTuple):
    """One field of every message: `read` where the message has it (by its version) and it
    reads; `at` its offset from the message's start; `value`: the integers of an INT16/INT32
    (the schema's default where not read), the length of a string or bytes (-1: null or not
    read; the payload starts ``LENGTH_SIZE`` bytes after `at`), or for an array what its reader
    returned for the messages `rows` (those the walk reached that have the field)."""

    read: np.ndarray
    at: np.ndarray
    value: Any
    rows: np.ndarray | None = None


class Fields(NamedTuple):
    """`read_fields`' answer: `ok` where every field the message has reads (a message that is
    not ok is read no further than its first bad field); its version (None when unversioned);
    each field by name; `end`, the offset after the last field read."""

    ok: np.ndarray
    version: np.ndarray | None
    fields: dict[str, FieldColumns]
    end: np.ndarray


def read_fields(message: Message, joined: Messages, arrays: Mapping[str, ArrayReader] | None = None) -> Fields:
    """Walk `message`'s fields over every message of `joined` at once; `arrays` reads the array
    fields (by field name). Lengths and counts are checked against each message's bytes; the
    text of a string is not (its caller decodes it, through a cache: members repeat racks)."""
    arrays = arrays or {}
    n, base, limit, buffer = len(joined.base), joined.base, joined.limit, joined.buffer
    at = np.zeros(n, dtype=np.int64)
    ok = np.ones(n, dtype=bool)
    version = None
    if message.versioned:
        ok = limit - base >= 2
        version = np.where(ok, ints_at(buffer, np.where(ok, base, 0), 2), -1)
        ok &= version >= 0
        at += 2
    fields: dict[str, FieldColumns] = {}
    for field in message.fields:
        here = ok if version is None else ok & (version >= field.since)
        kind = field.type
        if isinstance(kind, Struct) or message.flexible:
            raise TypeError(f"{message.name}: the columnar reader reads the consumer protocol's messages only")
        rows = None
        if isinstance(kind, Array):
            rows = np.flatnonzero(here)
            value, row_size = arrays[field.name](joined, rows, at[rows])
            size = np.full(n, -1, dtype=np.int64)
            size[rows] = row_size
        elif kind in FIXED_SIZE:
            width = FIXED_SIZE[kind]
            size = np.where(base + at + width <= limit, width, -1)
            value = np.full(n, field.default or 0, dtype=np.int64)
            fits = here & (size >= 0)
            value[fits] = ints_at(buffer, base[fits] + at[fits], width)
        else:
            width = LENGTH_SIZE[kind]
            fits = here & (base + at + width <= limit)
            value = np.full(n, -1, dtype=np.int64)
            value[fits] = ints_at(buffer, base[fits] + at[fits], width)
            shortest = 0 if kind == STRING else -1  # -1 is null
            size = np.where((value >= shortest) & (base + at + width + np.maximum(value, 0) <= limit),
                            width + np.maximum(value, 0), -1)
        read = here & (size >= 0)
        ok = ok & (read | ~here)
        if not isinstance(kind, Array) and kind not in FIXED_SIZE:
            value = np.where(read, value, -1)
        fields[field.name] = FieldColumns(read, at, value, rows)
        at = at + np.where(read, size, 0)
    return Fields(ok, version, fields, at)


def field_offsets(message: Message, version: int | None, sizes: Mapping[str, np.ndarray | int]
                  ) -> tuple[dict[str, Any], Any]:
    """Where each field of `message` (at `version`) starts, from the message's start, and the
    message's size: a fixed-size field takes its type's size, the others the size in `sizes`
    (by field name, length or count included). Sizes may be arrays (one per message)."""
    at: Any = 2 if message.versioned else 0
    offsets: dict[str, Any] = {}
    for field in message.fields if version is None else message.fields_at(version):
        offsets[field.name] = at
        kind = field.type
        at = at + (FIXED_SIZE[kind] if isinstance(kind, str) and kind in FIXED_SIZE else sizes[field.name])
    return offsets, at
