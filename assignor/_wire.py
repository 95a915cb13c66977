"""Kafka's classic (non-flexible) primitive types: a bounds-checked reader and a writer.

Every read names the field it is for, so errors say what was being read and where. Lengths and
counts are checked against the bytes that remain *before* anything is allocated, so a hostile
count of 2**31 - 1 fails at once instead of exhausting memory.
"""

from __future__ import annotations

import struct

import numpy as np

from assignor.errors import AssignorError

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


class ProtocolError(AssignorError):
    """Bytes that are not a valid encoding of the expected message (field and offset named)."""


class Reader:
    def __init__(self, data: bytes | bytearray | memoryview):
        if not isinstance(data, bytes | bytearray | memoryview):
            raise ProtocolError(f"expected bytes, got {type(data).__name__}")
        self.data = bytes(data)
        self.offset = 0

    @property
    def remaining(self) -> int:
        return len(self.data) - self.offset

    def _need(self, size: int, field: str) -> int:
        if size > self.remaining:
            raise ProtocolError(f"{field}: needs {size} bytes at offset {self.offset}, {self.remaining} left")
        start = self.offset
        self.offset += size
        return start

    def int16(self, field: str) -> int:
        return _INT16.unpack_from(self.data, self._need(2, field))[0]

    def int32(self, field: str) -> int:
        return _INT32.unpack_from(self.data, self._need(4, field))[0]

    def string(self, field: str) -> str:
        at = self.offset
        length = self.int16(field)
        if length < 0:
            raise ProtocolError(f"{field}: negative string length {length} at offset {at}")
        return self._utf8(length, field)

    def nullable_string(self, field: str) -> str | None:
        at = self.offset
        length = self.int16(field)
        if length == -1:
            return None
        if length < 0:
            raise ProtocolError(f"{field}: invalid string length {length} at offset {at}")
        return self._utf8(length, field)

    def _utf8(self, length: int, field: str) -> str:
        start = self._need(length, field)
        try:
            return self.data[start : start + length].decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError(f"{field}: invalid UTF-8 at offset {start}") from None

    def nullable_bytes(self, field: str) -> bytes | None:
        at = self.offset
        length = self.int32(field)
        if length == -1:
            return None
        if length < 0:
            raise ProtocolError(f"{field}: invalid bytes length {length} at offset {at}")
        start = self._need(length, field)
        return self.data[start : start + length]

    def count(self, field: str, min_element_size: int) -> int:
        """An array's element count, checked against what the elements need at the least."""
        at = self.offset
        n = self.int32(field)
        if n < 0:
            raise ProtocolError(f"{field}: invalid array length {n} at offset {at}")
        if n * min_element_size > self.remaining:
            raise ProtocolError(
                f"{field}: {n} elements need at least {n * min_element_size} bytes at offset {self.offset}, "
                f"{self.remaining} left")
        return n

    def int32_array(self, field: str) -> np.ndarray:
        """[INT32] of partition numbers: all must be >= 0."""
        n = self.count(field, 4)
        start = self._need(4 * n, field)
        values = np.frombuffer(self.data, dtype=">i4", count=n, offset=start).astype(np.int64)
        if n and values.min() < 0:
            bad = int(np.flatnonzero(values < 0)[0])
            raise ProtocolError(f"{field}: negative partition {int(values[bad])} at offset {start + 4 * bad}")
        return values


class Writer:
    def __init__(self):
        self.parts: list[bytes] = []

    def int16(self, value: int, field: str) -> None:
        self.parts.append(_pack(_INT16, value, field))

    def int32(self, value: int, field: str) -> None:
        self.parts.append(_pack(_INT32, value, field))

    def string(self, value: str, field: str) -> None:
        if not isinstance(value, str):
            raise ProtocolError(f"{field}: expected a string, got {type(value).__name__}")
        encoded = value.encode("utf-8")
        if len(encoded) > 0x7FFF:
            raise ProtocolError(f"{field}: {len(encoded)} bytes, more than a STRING holds (32767)")
        self.int16(len(encoded), field)
        self.parts.append(encoded)

    def nullable_string(self, value: str | None, field: str) -> None:
        if value is None:
            self.int16(-1, field)
        else:
            self.string(value, field)

    def nullable_bytes(self, value: bytes | None, field: str) -> None:
        if value is None:
            self.int32(-1, field)
            return
        if not isinstance(value, bytes | bytearray | memoryview):
            raise ProtocolError(f"{field}: expected bytes, got {type(value).__name__}")
        self.int32(len(value), field)
        self.parts.append(bytes(value))

    def int32_array(self, values, field: str) -> None:
        array = np.asarray(values)
        if array.size and (array.dtype.kind not in "iu" or array.min() < 0 or array.max() > 0x7FFFFFFF):
            raise ProtocolError(f"{field}: partitions must be integers in [0, 2**31)")
        self.int32(array.size, field)
        self.parts.append(array.astype(">i4").tobytes())

    def bytes(self) -> bytes:
        return b"".join(self.parts)


def _pack(form: struct.Struct, value: int, field: str) -> bytes:
    try:
        return form.pack(value)
    except struct.error:
        raise ProtocolError(f"{field}: {value!r} does not fit the field") from None
