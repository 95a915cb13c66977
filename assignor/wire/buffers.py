"""Byte buffers that hold many messages, and the numpy idioms that read and write them at
arbitrary byte offsets (the columnar paths' primitives)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from assignor.errors import ProtocolError

__all__ = ["Messages", "NameTable", "at_offset", "equal_rows_at", "ints_at", "row_hashes", "rows_at"]

#: The 8 bytes after a buffer's last message or name: reads of 8 bytes at any offset in it stay in
#: bounds (masked out or checked after).
_PADDING = bytes(8)


class NameTable(NamedTuple):
    """Topic names' UTF-8 bytes as `frame_tp_columns` lays them out: end to end in one buffer
    (then 8 bytes of padding), with each name's start and length. An encoder that writes the
    same names again keeps the table (`EncodeCache.name_table`)."""

    encoded: Sequence[bytes]
    buffer: np.ndarray
    start: np.ndarray
    length: np.ndarray
    heads: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]]  # (name length, partition count) -> `entry_heads`

    @classmethod
    def of(cls, encoded: Sequence[bytes]) -> NameTable:
        length = np.array([len(e) for e in encoded], dtype=np.int64)
        buffer = np.frombuffer(b"".join([*encoded, _PADDING]), dtype=np.uint8)
        return cls(encoded, buffer, np.cumsum(length) - length, length, {})

    def entry_heads(self, length: int, partitions: int) -> tuple[np.ndarray, np.ndarray]:
        """The first fields of an entry of this shape (name length, name, partition count),
        as one element per topic whose name has `length` bytes, and each topic's row among
        them (-1 for other lengths). Kept: an encoder writes the same shapes again."""
        found = self.heads.get((length, partitions))
        if found is None:
            topics = np.flatnonzero(self.length == length)
            fields = [("length", ">i2"), ("name", f"V{length}"), ("count", ">i4")]
            head = np.empty(len(topics), dtype=[f for f in fields if f[0] != "name" or length])
            head["length"] = length
            if length:
                head["name"] = at_offset(self.buffer, f"V{length}")[self.start[topics]]
            head["count"] = partitions
            row = np.full(len(self.length), -1, dtype=np.int64)
            row[topics] = np.arange(len(topics))
            found = self.heads[(length, partitions)] = (head.view(f"V{head.dtype.itemsize}"), row)
        return found



def at_offset(buffer: np.ndarray, dtype: str) -> np.ndarray:
    """A view of `buffer` (uint8) whose element j is the `dtype` value starting at byte j.

    Stride 1: reading or writing many values at arbitrary byte offsets is then one plain
    gather or scatter, instead of one per byte lane. Writable when `buffer` is.
    """
    kind = _dtype(dtype)
    return np.ndarray((max(len(buffer) - kind.itemsize + 1, 0),), dtype=kind, buffer=buffer, strides=(1,))


@lru_cache(maxsize=4096)
def _dtype(text: str) -> np.dtype:
    """A parsed dtype: readers make thousands of views a rebalance, of few distinct dtypes."""
    return np.dtype(text)


def equal_rows_at(buffer: np.ndarray, at: np.ndarray, table: np.ndarray, row: np.ndarray) -> np.ndarray:
    """Whether the bytes at each offset ``at[j]`` of `buffer` (uint8) are ``table[row[j]]`` (a
    uint8 matrix, one value per row; each offset plus its width within the buffer). Compared
    eight bytes at a time: numpy compares void elements byte by byte."""
    size = table.shape[1]
    if not size:
        return np.ones(len(at), dtype=bool)
    rows = rows_at(buffer, at, size)
    expected = table[0] if len(table) == 1 else table[row]
    words = size // 8 * 8
    same = (rows[:, :words].view(np.uint64) == expected[..., :words].view(np.uint64)).all(axis=1)
    both: np.ndarray = same & (rows[:, words:] == expected[..., words:]).all(axis=1)
    return both


def ints_at(buffer: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    """Big-endian signed integers of `width` (2 or 4) bytes at each offset of `buffer` (uint8)."""
    return at_offset(buffer, f">i{width}")[np.asarray(at, dtype=np.int64)].astype(np.int64)


class Messages(NamedTuple):
    """Many messages laid end to end in one buffer, read together with numpy: message i is
    ``data[base[i] : limit[i]]``. Reading some of the messages is `take`, without a copy.

    This is the columnar API's unit: a leader's JoinGroup metadata or SyncGroup assignments,
    one message per member.

    Examples
    --------
    >>> Messages.of([b"ab", b"c"]).messages()
    [b'ab', b'c']
    """

    data: bytes | memoryview  # the messages, then 8 bytes of padding (masked-out reads stay in bounds)
    buffer: np.ndarray  # the same bytes as uint8
    base: np.ndarray
    limit: np.ndarray

    @classmethod
    def of(cls, blobs: Sequence[bytes]) -> Messages:
        """The messages `blobs`, laid end to end.

        Raises
        ------
        ProtocolError
            When a message is not bytes (naming its index).
        """
        blobs = list(blobs)
        if not all(type(b) is bytes for b in blobs):
            i, blob = next((i, b) for i, b in enumerate(blobs) if type(b) is not bytes)
            if not isinstance(blob, bytes | bytearray | memoryview):
                raise ProtocolError(f"message {i}: expected bytes, got {type(blob).__name__}")
            blobs = [bytes(b) for b in blobs]
        lengths = np.array([len(b) for b in blobs], dtype=np.int64)
        base = np.cumsum(lengths) - lengths
        data = b"".join([*blobs, _PADDING])  # (one copy: ``join(...) + padding`` made two)
        return cls(data, np.frombuffer(data, dtype=np.uint8), base, base + lengths)

    @classmethod
    def of_members(cls, metadata: Mapping[str, bytes]) -> Messages:
        """Each member's bytes (a JoinGroup response: member id -> metadata), laid end to end
        in the mapping's order.

        Raises
        ------
        ProtocolError
            Naming the member whose metadata is not bytes.
        """
        for member_id, blob in metadata.items():
            if not isinstance(blob, bytes | bytearray | memoryview):
                raise ProtocolError(f"member {member_id!r}: expected bytes, got {type(blob).__name__}")
        return cls.of([bytes(b) for b in metadata.values()])

    def message(self, i: int) -> bytes:
        return bytes(self.data[self.base[i] : self.limit[i]])

    def messages(self) -> list[bytes]:
        data = self.data
        return [bytes(data[a:b]) for a, b in zip(self.base.tolist(), self.limit.tolist())]

    def take(self, chosen: np.ndarray) -> Messages:
        return self._replace(base=self.base[chosen], limit=self.limit[chosen])



def rows_at(buffer: np.ndarray, at: np.ndarray, size: int) -> np.ndarray:
    """The `size` bytes at each offset of `buffer` (uint8), as the rows of a contiguous matrix."""
    return np.ascontiguousarray(at_offset(buffer, f"V{size}")[at]).view(np.uint8).reshape(-1, size)


def row_hashes(rows: np.ndarray) -> np.ndarray:
    """A 64-bit FNV-1a style hash of each row of an unsigned integer matrix, column by column."""
    key = np.zeros(len(rows), dtype=np.uint64)
    for lane in range(rows.shape[1]):  # uint64 arithmetic wraps
        key = (key ^ rows[:, lane]) * np.uint64(0x100000001B3)
    return key
