"""librdkafka's partitioners, for polyglot producers (C, Go, Python, .NET clients built on it).

The hash functions follow librdkafka's ``rd_kafka_msg_partitioner_*`` exactly:

===================  ==============================================  ==============================
name                 keyed                                           NULL key (empty key)
===================  ==============================================  ==============================
``random``           random                                          random
``consistent``       ``crc32(key) % n``                              partition of ``crc32(b"")``: 0
``consistent_random`` ``crc32(key) % n``                             random (empty: random too)
``murmur2``          ``(murmur2(key) & 0x7fffffff) % n`` (= Java's)  murmur2 of no bytes (empty same)
``murmur2_random``   as murmur2                                      random (empty: murmur2)
``fnv1a``            ``fnv1a(key) % n`` (abs value, as Sarama)       fnv1a of no bytes (empty same)
``fnv1a_random``     as fnv1a                                        random (empty: fnv1a)
===================  ==============================================  ==============================

`partition_function` is the bare function. `LibrdkafkaPartitioner` adds what the producer does
before calling it (``rd_kafka_msg_partitioner``): where the partitioner would pick at random, a
NULL key (and an empty key under ``consistent_random``, the default) goes instead to the topic's
*sticky* partition, a random one renewed every ``sticky.partitioning.linger.ms`` (10 ms by
default). That is every partitioner but ``consistent``, ``murmur2`` and ``fnv1a``, which hash a
NULL key like any other (every NULL key to one fixed partition), and ``random`` included: its
NULL-key records stay on one partition while keyed ones spread. A linger of 0 turns stickiness
off.
"""

from __future__ import annotations

import random as _random
import time
import zlib
from collections.abc import Callable, Sequence

import numpy as np

from assignor.partitioners.keyless import _count
from assignor.partitioners.murmur import (
    PartitionerError,
    flatten_keys,
    hash_rows,
    partition_for_key,
    partitions_for_keys,
)

__all__ = ["LIBRDKAFKA_PARTITIONERS", "LibrdkafkaPartitioner", "crc32_many", "fnv1a", "fnv1a_many",
           "partition_function", "partitions_for_keys_as"]

LIBRDKAFKA_PARTITIONERS = ("random", "consistent", "consistent_random", "murmur2", "murmur2_random", "fnv1a",
                           "fnv1a_random")

#: The partitioners that hash every key, NULL included: no stickiness.
_HASHING = ("consistent", "murmur2", "fnv1a")


def fnv1a(key: bytes | None) -> int:
    """librdkafka's ``rd_fnv1a``: 32-bit FNV-1a read as signed, made non-negative by negation (to
    match Sarama's hash partitioner); ``-2**31`` stays ``0x80000000``.

    Examples
    --------
    >>> hex(fnv1a(b"kafka")), hex(fnv1a(b""))
    ('0xd33c4e1', '0x7ee3623b')
    """
    h = 0x811C9DC5
    for byte in key or b"":
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    if h >= 0x80000000:  # negative as int32
        h = (-(h - 0x100000000)) & 0xFFFFFFFF
    return h


def fnv1a_many(keys: Sequence[bytes] | np.ndarray, offsets: np.ndarray | None = None) -> np.ndarray:
    """`fnv1a` of many keys at once (uint32 array), keys as in `murmur2_many`: every key of one
    length takes one numpy pass per byte."""
    data, starts, lengths = flatten_keys(keys, offsets)
    h = np.full(len(lengths), 0x811C9DC5, dtype=np.uint32)
    h = hash_rows(data, starts, lengths, h, _fnv1a_rows)
    negative = h >= np.uint32(0x80000000)  # read as int32 and negated, as `fnv1a`
    h[negative] = (np.uint32(0) - h[negative]).astype(np.uint32)
    return h


def _fnv1a_rows(rows: np.ndarray, h: np.ndarray) -> np.ndarray:
    prime = np.uint32(0x01000193)
    for column in range(rows.shape[1]):
        h = (h ^ rows[:, column]) * prime
    return h


def _crc32_table() -> np.ndarray:
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        table = np.where(table & 1, (table >> np.uint32(1)) ^ np.uint32(0xEDB88320), table >> np.uint32(1))
    return table.astype(np.uint32)


_CRC32_TABLE = _crc32_table()


def crc32_many(keys: Sequence[bytes] | np.ndarray, offsets: np.ndarray | None = None) -> np.ndarray:
    """``zlib.crc32`` of many keys at once (uint32 array), one table lookup per byte column."""
    data, starts, lengths = flatten_keys(keys, offsets)
    crc = np.full(len(lengths), 0xFFFFFFFF, dtype=np.uint32)
    return hash_rows(data, starts, lengths, crc, _crc32_rows) ^ np.uint32(0xFFFFFFFF)


def _crc32_rows(rows: np.ndarray, crc: np.ndarray) -> np.ndarray:
    for column in range(rows.shape[1]):
        crc = _CRC32_TABLE[(crc ^ rows[:, column]) & np.uint32(0xFF)] ^ (crc >> np.uint32(8))
    return crc


def partitions_for_keys_as(partitioner: str, keys: Sequence[bytes] | np.ndarray, num_partitions: int,
                           offsets: np.ndarray | None = None) -> np.ndarray:
    """The partition of each (non-NULL) key under a hashing partitioner, vectorised: Java's
    ``murmur2`` (= librdkafka's), librdkafka's ``consistent`` (CRC32) or ``fnv1a`` (int32 array).
    Each equals `partition_function` key by key (a property test holds them equal)."""
    _count("topic", num_partitions)  # checks the count (a list of every partition would be needless)
    if partitioner == "murmur2":
        return partitions_for_keys(keys, num_partitions, offsets)
    if partitioner == "consistent":
        return (crc32_many(keys, offsets) % np.uint32(num_partitions)).astype(np.int32)
    if partitioner == "fnv1a":
        return (fnv1a_many(keys, offsets) % np.uint32(num_partitions)).astype(np.int32)
    raise PartitionerError(f"partitioner: one of murmur2, consistent, fnv1a, got {partitioner!r}")


def _random_partition(num_partitions: int, available: Sequence[int] | None, rng: _random.Random) -> int:
    # rd_kafka_msg_partitioner_random: one draw; an unavailable pick gets one more draw, unchecked.
    pick = rng.randrange(num_partitions)
    if available is not None and pick not in set(available):
        pick = rng.randrange(num_partitions)
    return pick


def partition_function(name: str, key: bytes | None, num_partitions: int, available: Sequence[int] | None = None,
                       rng: _random.Random | None = None) -> int:
    """librdkafka's partitioner function `name` on one key (no stickiness; see the table)."""
    if name not in LIBRDKAFKA_PARTITIONERS:
        raise PartitionerError(f"partitioner: one of {LIBRDKAFKA_PARTITIONERS}, got {name!r}")
    _count("topic", num_partitions)  # checks the count (a list of every partition would be needless)
    if key is not None and not isinstance(key, bytes | bytearray | memoryview):
        raise PartitionerError(f"key must be bytes or None, got {type(key).__name__}")
    rng = rng or _random.Random()
    if name == "random":
        return _random_partition(num_partitions, available, rng)
    if name == "consistent_random" and not key:
        return _random_partition(num_partitions, available, rng)
    if name in ("murmur2_random", "fnv1a_random") and key is None:
        return _random_partition(num_partitions, available, rng)
    data = bytes(key or b"")
    if name.startswith("consistent"):
        return zlib.crc32(data) % num_partitions
    if name.startswith("murmur2"):
        return partition_for_key(data, num_partitions)
    return fnv1a(data) % num_partitions


class LibrdkafkaPartitioner:
    """A librdkafka producer's partitioning for one configuration, per instance.

    Examples
    --------
    >>> p = LibrdkafkaPartitioner("murmur2_random", seed=1)
    >>> p.partition("t", b"user-1", 12) == partition_function("murmur2", b"user-1", 12)
    True
    """

    def __init__(self, partitioner: str = "consistent_random", *, sticky_linger_ms: float = 10.0,
                 seed: int | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        if partitioner not in LIBRDKAFKA_PARTITIONERS:
            raise PartitionerError(f"partitioner: one of {LIBRDKAFKA_PARTITIONERS}, got {partitioner!r}")
        if sticky_linger_ms < 0:
            raise PartitionerError(f"sticky.partitioning.linger.ms must be >= 0, got {sticky_linger_ms}")
        self.name = partitioner
        self.sticky_linger_ms = sticky_linger_ms
        self._rng = _random.Random(seed)
        self._clock = clock
        self._sticky: dict[str, tuple[int, float]] = {}  # topic -> (partition, chosen at, in ms)

    def partition(self, topic: str, key: bytes | None, num_partitions: int | None,
                  available: Sequence[int] | None = None) -> int:
        num_partitions = _count(topic, num_partitions)
        # librdkafka's `rkt_conf.random_partitioner` flag, read the right way round: stickiness
        # for the partitioners that pick at random, with a linger above 0.
        sticky = self.sticky_linger_ms > 0 and self.name not in _HASHING and (
            key is None or (not key and self.name == "consistent_random"))
        if not sticky:
            return partition_function(self.name, key, num_partitions, available, self._rng)
        now = self._clock() * 1000.0
        current = self._sticky.get(topic)
        expired = current is None or now - current[1] >= self.sticky_linger_ms or current[0] >= num_partitions
        if current is not None and not expired and available is not None and current[0] not in set(available):
            expired = True  # librdkafka renews the sticky partition when it becomes unavailable
        if current is None or expired:
            current = (_random_partition(num_partitions, available, self._rng), now)
            self._sticky[topic] = current
        return current[0]
