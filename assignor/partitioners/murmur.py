"""Keyed partitioning exactly as the Java producer does it (``Utils.murmur2``).

Java hashes the serialised key with MurmurHash2 (seed ``0x9747b28c``), reads the 32-bit result
as a *signed* int, clears the sign bit (``toPositive``, not ``abs``: ``abs(MIN_VALUE)`` is
negative) and takes it modulo the number of *all* partitions of the topic, available or not,
so a key keeps its partition while a leader is down.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence

import numpy as np

from assignor.errors import PartitionerError

__all__ = ["PartitionerError", "murmur2", "murmur2_many", "partition_for_key", "partitions_for_keys"]

_SEED = 0x9747B28C
_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


def murmur2(key: bytes) -> int:
    """Java's ``Utils.murmur2`` of `key`, as the signed 32-bit int Java returns.

    Examples
    --------
    >>> murmur2(b"21")
    -973932308
    """
    if type(key) is not bytes:
        if not isinstance(key, bytes | bytearray | memoryview):
            raise PartitionerError(f"key must be bytes, got {type(key).__name__}")
        key = bytes(key)
    length = len(key)
    h = _SEED ^ length
    blocks = length >> 2
    if blocks:
        for k in _blocks(blocks).unpack_from(key):  # all 4-byte little-endian blocks in one call
            k = (k * _M) & _MASK
            k ^= k >> 24
            h = ((h * _M) & _MASK) ^ ((k * _M) & _MASK)
    if length & 3:  # Java's switch falls through from case 3 to case 1
        h = ((h ^ int.from_bytes(key[blocks << 2 :], "little")) * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - 0x100000000 if h & 0x80000000 else h


_BLOCK_STRUCTS = tuple(struct.Struct(f"<{n}I") for n in range(64))


def _blocks(count: int) -> struct.Struct:
    return _BLOCK_STRUCTS[count] if count < 64 else struct.Struct(f"<{count}I")


def to_positive(value: int) -> int:
    """Java's ``Utils.toPositive``: the low 31 bits (not ``abs``, whose answer for the most
    negative int is negative)."""
    return value & 0x7FFFFFFF


def partitions_of_hashes(hashes: np.ndarray, num_partitions: int) -> np.ndarray:
    """Java's keyed formula, ``toPositive(murmur2(key)) % numPartitions``, over an array of
    murmur2 hashes (int32 array); the one vectorised copy of `partition_for_key`'s last step."""
    positive = hashes.view(np.uint32) & np.uint32(0x7FFFFFFF)
    return (positive % np.uint32(num_partitions)).astype(np.int32)


def partition_for_key(key: bytes, num_partitions: int) -> int:
    """The partition the Java producer picks for `key` among `num_partitions` (all partitions).

    Examples
    --------
    >>> partition_for_key(b"", 6)  # a golden vector written by the Java producer
    3
    """
    _check_partitions(num_partitions)
    if key is None:
        raise PartitionerError("a null key has no hash partition (keyless records use the sticky partitioner)")
    return to_positive(murmur2(key)) % num_partitions


def murmur2_many(keys: Sequence[bytes] | np.ndarray, offsets: np.ndarray | None = None) -> np.ndarray:
    """`murmur2` of many keys at once, as an int32 array.

    Parameters
    ----------
    keys : sequence of bytes, or a flat uint8 buffer when `offsets` is given
        With `offsets` (n + 1 ascending ints, as Arrow lays out a binary column), key i is
        ``keys[offsets[i]:offsets[i + 1]]``; nothing is copied per key.

    All keys advance together one 4-byte block at a time, so the work is a few full-array
    numpy passes for short keys (about the length of the longest key / 4 of them).
    """
    data, starts, lengths = flatten_keys(keys, offsets)
    h = (np.uint32(_SEED) ^ lengths.astype(np.uint32)).astype(np.uint32)
    h = hash_rows(data, starts, lengths, h, _mix_rows)
    m = np.uint32(_M)
    h ^= h >> np.uint32(13)
    h = h * m
    h ^= h >> np.uint32(15)
    return h.view(np.int32)


_CHUNK = 1 << 20


def hash_rows(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, h: np.ndarray,
              mix: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """Run ``h = mix(rows, h)`` over keys of one length at a time, each key a row of a uint8
    matrix: a few full-array numpy passes per byte or block instead of a Python loop per key."""
    if len(lengths) and (lengths == lengths[0]).all() and (starts == np.arange(len(lengths)) * lengths[0]).all():
        # One length, back to back (the common case): the buffer is already the key matrix.
        return mix(data[: len(lengths) * int(lengths[0])].reshape(len(lengths), int(lengths[0])), h)
    padded = np.concatenate([data, np.zeros(1, dtype=np.uint8)])
    for length in np.unique(lengths):
        chosen = np.flatnonzero(lengths == length)
        for part in range(0, len(chosen), _CHUNK):  # bound the gathered matrix's memory
            rows_of = chosen[part : part + _CHUNK]
            rows = padded[starts[rows_of][:, None] + np.arange(int(length))]
            h[rows_of] = mix(rows, h[rows_of])
    return h


def _mix_rows(rows: np.ndarray, h: np.ndarray) -> np.ndarray:
    """The body and tail rounds for keys of one length (one key per row of `rows`)."""
    m = np.uint32(_M)
    length = rows.shape[1]
    blocks = length // 4
    if blocks:
        words = np.ascontiguousarray(rows[:, : 4 * blocks]).view("<u4")
        for b in range(blocks):
            k = words[:, b] * m
            k ^= k >> np.uint32(24)
            h = (h * m) ^ (k * m)
    if length & 3:
        tail = np.zeros(len(rows), dtype=np.uint32)
        for lane in range(length & 3):
            tail |= rows[:, 4 * blocks + lane].astype(np.uint32) << np.uint32(8 * lane)
        h = (h ^ tail) * m
    return h


def partitions_for_keys(keys: Sequence[bytes] | np.ndarray, num_partitions: int,
                        offsets: np.ndarray | None = None) -> np.ndarray:
    """`partition_for_key` for many keys at once (int32 array)."""
    _check_partitions(num_partitions)
    return partitions_of_hashes(murmur2_many(keys, offsets), num_partitions)


def _check_partitions(num_partitions: int) -> None:
    if not isinstance(num_partitions, int) or isinstance(num_partitions, bool) or num_partitions <= 0:
        raise PartitionerError(f"a topic needs at least one partition to place a record, got {num_partitions!r}")


def flatten_keys(keys: Sequence[bytes] | np.ndarray | bytes, offsets: np.ndarray | None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keys as one uint8 buffer, each key's start and length (see `murmur2_many`)."""
    if offsets is not None:
        data = np.frombuffer(keys, dtype=np.uint8) if isinstance(keys, bytes | bytearray | memoryview) \
            else np.asarray(keys, dtype=np.uint8)
        offsets = np.asarray(offsets, dtype=np.int64)
        if offsets.ndim != 1 or len(offsets) < 1 or (np.diff(offsets) < 0).any() or offsets[0] < 0 \
                or offsets[-1] > len(data):
            raise PartitionerError("offsets must be n + 1 ascending positions within the buffer")
        return data, offsets[:-1], np.diff(offsets)
    keys = keys if isinstance(keys, list) else list(keys)
    try:
        joined = b"".join(keys)  # also the type check: only bytes-like keys join
    except TypeError:
        raise PartitionerError("every key must be bytes (a null key has no hash partition)") from None
    lengths = np.fromiter(map(len, keys), dtype=np.int64, count=len(keys))
    return np.frombuffer(joined, dtype=np.uint8), np.cumsum(lengths) - lengths, lengths
