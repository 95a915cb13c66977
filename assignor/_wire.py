"""Kafka's classic (non-flexible) primitive types: a bounds-checked reader and a writer.

Every read names the field it is for, so errors say what was being read and where. Lengths and
counts are checked against the bytes that remain *before* anything is allocated, so a hostile
count of 2**31 - 1 fails at once instead of exhausting memory.
"""

from __future__ import annotations

import numbers
import struct
from collections.abc import Sequence
from itertools import chain
from operator import itemgetter
from typing import NamedTuple

import numpy as np

from assignor._arrays import appended, run_starts, stable_order
from assignor._layout import gc_paused
from assignor.errors import AssignorError
from assignor.model import TopicPartition

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


# A topic name of a given length followed by its partition count, read in one call.
_NAME_AND_COUNT = tuple(struct.Struct(f">{n}si") for n in range(256))


def _name_and_count(length: int) -> struct.Struct:
    return _NAME_AND_COUNT[length] if length < 256 else struct.Struct(f">{length}si")


_INT32S = tuple(struct.Struct(f">{n}i") for n in range(64))


def _int32s(count: int) -> struct.Struct:
    return _INT32S[count] if count < 64 else struct.Struct(f">{count}i")


class ProtocolError(AssignorError):
    """Bytes that are not a valid encoding of the expected message (field and offset named)."""


class DecodeCache:
    """What members of one group repeat: topic names, and whole subscription topic lists. A
    leader may keep one across rebalances: the same bytes always decode the same way."""

    def __init__(self) -> None:
        self.names: dict[bytes, str] = {}
        # `_topic_list_key` (count, first bytes) -> the topic lists read with it: (their bytes, names)
        self.topic_lists: dict[tuple[int, bytes], list[tuple[bytes, tuple[str, ...]]]] = {}
        # a hash of (count, first bytes) -> a topic list read with them (a leader's bulk lookup)
        self.topic_lists_by_hash: dict[int, tuple[bytes, tuple[str, ...]]] = {}
        self.sized: dict[int, _SizedNames] = {}  # names by byte length, see `names_at`

    def text(self, raw: bytes) -> str | None:
        """`raw` decoded as UTF-8, once per distinct value; None when it is not UTF-8."""
        text = self.names.get(raw)
        if text is None:
            try:
                text = self.names[raw] = raw.decode("utf-8")
            except UnicodeDecodeError:
                return None
        return text

    #: At most this many names of one length are kept (a hostile stream of fresh names must
    #: not grow the cache without end; past it, names are still read, just not remembered).
    MAX_NAMES_PER_LENGTH = 1 << 16

    def names_at(self, buffer: np.ndarray, at: np.ndarray, size: int) -> tuple[np.ndarray, list[str]] | None:
        """The names of `size` bytes at offsets `at` of `buffer`, as an index per offset into a
        list of names (which may hold names not used here); None on invalid UTF-8.

        Names are found by a uint64 key in a sorted table (a leader sees the same few topic
        names at every rebalance, so after the first most lookups are one binary search)."""
        if size == 0:
            return np.zeros(len(at), dtype=np.int64), [""]
        keys, rows = _name_keys(buffer, at, size)
        table = self.sized.get(size) or _SizedNames(np.zeros(0, dtype=np.uint64), [], np.zeros((0, size), np.uint8))
        index = _look_up(table, keys)
        missing = index < 0
        if missing.any():
            new_keys, first = np.unique(keys[missing], return_index=True)
            starts = at[missing][first].tolist()
            raw = [buffer[a : a + size].tobytes() for a in starts]
            texts = [self.text(r) for r in raw]
            if None in texts:
                return None
            order = np.argsort(np.concatenate([table.keys, new_keys]), kind="stable")
            names = table.names + texts
            rows_new = np.frombuffer(b"".join(raw), dtype=np.uint8).reshape(-1, size)
            table = _SizedNames(np.concatenate([table.keys, new_keys])[order], [names[i] for i in order.tolist()],
                                np.concatenate([table.rows, rows_new])[order])
            if len(table.names) <= self.MAX_NAMES_PER_LENGTH:
                self.sized[size] = table
            index = _look_up(table, keys)
        if rows is not None and not (rows == table.rows[index]).all():
            return _distinct_names(rows, self)  # two names with one hash: compare whole names
        return index, table.names

    #: At most this many distinct topic-list keys are kept (see `MAX_NAMES_PER_LENGTH`).
    MAX_TOPIC_LISTS = 1 << 14

    def known_topic_list(self, data: bytes, start: int, entries: int) -> tuple[bytes, tuple[str, ...]] | None:
        """A topic list read before whose bytes are the ones at `start` (past its count)."""
        for raw, names in self.topic_lists.get(_topic_list_key(data, start, entries), ()):
            if data.startswith(raw, start):
                return raw, names
        return None

    def remember_topic_list(self, data: bytes, start: int, end: int, entries: int, names: tuple[str, ...]) -> None:
        key = _topic_list_key(data, start, entries)
        seen = self.topic_lists.get(key)
        if seen is None:
            if len(self.topic_lists) >= self.MAX_TOPIC_LISTS:
                return
            seen = self.topic_lists[key] = []
        if len(seen) < 8:  # subscriptions that share a long prefix: keep a few, not all
            seen.append((data[start:end], names))


#: Topic lists are known by their count and their first bytes, up to this many.
TOPIC_LIST_PREFIX = 64


def topic_list_prefix(entries, first_name_length):
    """A lower bound on how many of a topic list's first bytes belong to it, at most
    `TOPIC_LIST_PREFIX`: a list of `entries` names whose first name has this length spans at
    least ``2 + first_name_length + 2 * (entries - 1)`` bytes. Works on ints and on numpy
    arrays alike (a leader groups its members' lists by this many bytes at once)."""
    bound = 2 + np.maximum(first_name_length, 0) + 2 * (entries - 1)
    return np.clip(bound, 0, TOPIC_LIST_PREFIX) * (entries > 0)


def _topic_list_key(data: bytes, start: int, entries: int) -> tuple[int, bytes]:
    """The list's count and its first `TOPIC_LIST_PREFIX` bytes, or all of it when shorter:
    never a byte past it, or what follows the list (owned partitions, a generation) would
    make a new key for the same list at every rebalance."""
    end, at = min(start + TOPIC_LIST_PREFIX, len(data)), start
    first = int.from_bytes(data[start : start + 2], "big", signed=True) if end >= start + 2 else 0
    if 2 + max(first, 0) + 2 * (entries - 1) >= TOPIC_LIST_PREFIX:  # `topic_list_prefix`: no walk needed
        return entries, data[start:end]
    for _ in range(entries):
        if at + 2 > end:
            break
        length = int.from_bytes(data[at : at + 2], "big", signed=True)
        if length < 0:
            break
        at += 2 + length
    else:
        end = min(at, end)
    return entries, data[start:end]


class Reader:
    """Reads one message. A leader decoding a whole group gives every member's reader the same
    `DecodeCache`, since members share most topic names and often whole subscriptions."""

    def __init__(self, data: bytes | bytearray | memoryview, cache: DecodeCache | None = None):
        if not isinstance(data, bytes | bytearray | memoryview):
            raise ProtocolError(f"expected bytes, got {type(data).__name__}")
        self.data = bytes(data)
        self.offset = 0
        self.cache = DecodeCache() if cache is None else cache
        self.names = self.cache.names

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

    def strings(self, field: str) -> list[str]:
        """[STRING], in one tight loop: a subscription can list thousands of topics.

        Members of a group usually subscribe to the same topics, so their arrays are the same
        bytes: when the bytes here start with an array already read (same count), that parse is
        reused as is. (The same bytes parse the same way, so this is exact, not a guess.)
        """
        entries = self.count(field, 2)
        start = self.offset
        seen = self.cache.known_topic_list(self.data, start, entries)
        if seen is not None:
            self.offset = start + len(seen[0])
            return list(seen[1])  # a list of its own per message: callers may change theirs
        data, at = self.data, self.offset
        read16 = _INT16.unpack_from
        decoded = self.names
        out: list[str] = []
        try:
            while len(out) < entries:
                (length,) = read16(data, at)
                if length < 0:
                    raise ProtocolError(f"{field}: negative string length {length} at offset {at}")
                run = self._name_run(at, length, entries - len(out), out, field) if entries - len(out) >= 8 else 0
                if run:
                    at += run * (2 + length)
                    continue
                at += 2
                raw = data[at : at + length]
                if len(raw) < length:
                    raise self._short(field, length, at)
                name = decoded.get(raw)
                if name is None:
                    name = self._name(raw, at, field)
                out.append(name)
                at += length
        except struct.error:
            raise self._short(field, 2, at) from None
        self.offset = at
        self.cache.remember_topic_list(data, start, at, entries, tuple(out))
        return out

    def _name_run(self, at: int, length: int, left: int, out: list, field: str) -> int:
        """Read consecutive STRINGs of this same length at once (strided view); 0 if fewer than 8."""
        stride = 2 + length
        fits = min(left, (len(self.data) - at) // stride)
        if fits < 8:
            return 0
        lengths = np.ndarray((fits,), ">i2", self.data, at, (stride,))
        run = fits if (lengths == length).all() else int((lengths == length).argmin())
        if run < 8 or (length and (np.ndarray((run,), "u1", self.data, at + 1 + length, (stride,)) == 0).any()):
            return 0  # short run, or names ending in NUL (numpy's fixed-width bytes drop those)
        raws = np.ndarray((run,), f"S{length}", self.data, at + 2, (stride,)).tolist() if length else [b""] * run
        names = list(map(self.names.get, raws))
        if None in names:
            for i, name in enumerate(names):
                if name is None:
                    names[i] = self._name(raws[i], at + i * stride + 2, field)
        out.extend(names)
        return run

    def topic_partitions(self, field: str) -> tuple[list[str], np.ndarray, np.ndarray]:
        """[Topic STRING, Partitions [INT32]]: topic per entry, partitions per entry, all partitions.

        A group of 2,000 members owning a million partitions sends a million such entries, so
        entries are read in runs (`_stride_run`): consecutive entries of the same shape sit at
        a fixed stride and are checked and read through strided numpy views at once; the rest
        are read one by one (`_entry`). Repeated topic names are decoded once.
        """
        return self.topic_partition_entries(self.count(field, 2 + 4), field)

    def topic_partition_entries(self, entries: int, field: str) -> tuple[list[str], np.ndarray, np.ndarray]:
        """The `entries` entries of such an array, from here (its count already read)."""
        names: list[str] = []
        counts: list = []  # chunks: numpy arrays from runs, Python lists from single entries
        parts: list = []
        done, one_by_one = 0, 0
        while done < entries:
            if one_by_one == 0 and entries - done >= 32:  # numpy pays off on long runs only
                run = self._stride_run(entries - done, field, names, counts, parts)
                one_by_one = 0 if run >= 8 else 32  # short runs: do not pay numpy per entry
            else:
                self._entry(field, names, counts, parts)
                run = 1
                one_by_one = max(one_by_one - 1, 0)
            done += run
        if not counts:
            return names, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        partitions = np.concatenate([np.asarray(p, dtype=np.int64) for p in parts])
        if len(partitions) and partitions.min() < 0:
            bad = int(partitions.min())
            raise ProtocolError(f"{field}.partitions: negative partition {bad} before offset {self.offset}")
        return names, np.concatenate([np.asarray(c, dtype=np.int64) for c in counts]), partitions

    def _entry(self, field: str, names: list, counts: list, parts: list) -> tuple[int, int]:
        """Read one entry; returns its (name length, partition count)."""
        at = self.offset
        try:
            (length,) = _INT16.unpack_from(self.data, at)
            if length < 0:
                raise ProtocolError(f"{field}.topic: negative string length {length} at offset {at}")
            raw, count = _name_and_count(length).unpack_from(self.data, at + 2)
        except struct.error:
            raise self._short(f"{field}.topic", 2 if at + 2 > len(self.data) else 2 + 4, at) from None
        at += 2 + length + 4
        if count < 0:
            raise ProtocolError(f"{field}.partitions: invalid array length {count} at offset {at - 4}")
        if at + 4 * count > len(self.data):
            raise self._short(f"{field}.partitions", 4 * count, at)
        names.append(self._name(raw, at - 4 - length, f"{field}.topic"))
        if not counts or not isinstance(counts[-1], list):  # open a Python chunk after a numpy run
            counts.append([])
            parts.append([])
        counts[-1].append(count)
        parts[-1].extend(_int32s(count).unpack_from(self.data, at))
        self.offset = at + 4 * count
        return length, count

    def _stride_run(self, left: int, field: str, names: list, counts: list, parts: list) -> int:
        """Read the entry here and every following one of the same shape (name length and
        partition count) at the stride that shape implies; returns how many were read.

        Exact, not a guess: if entry k has the shape, entry k + 1 starts one stride later, so
        checking each position in turn proves the run.
        """
        begin = self.offset
        length, count = self._entry(field, names, counts, parts)
        stride = 2 + length + 4 + 4 * count
        fits = min(left, (len(self.data) - begin) // stride) - 1
        if fits < 1:
            return 1

        def view(offset: int, dtype: str, shape: tuple = ()) -> np.ndarray:
            dt = np.dtype(dtype)
            return np.ndarray((fits, *shape), dt, self.data, begin + stride + offset,
                              (stride, *([dt.itemsize] if shape else [])))

        same = (view(0, ">i2") == length) & (view(2 + length, ">i4") == count)
        more = fits if same.all() else int(same.argmin())
        if more == 0:
            return 1
        if length and (view(2 + length - 1, "u1")[:more] == 0).any():
            return 1  # numpy's fixed-width bytes drop trailing NULs: read such names one by one
        raws = view(2, f"S{length}")[:more].tolist() if length else [b""] * more
        decoded = list(map(self.names.get, raws))
        if None in decoded:
            for i, name in enumerate(decoded):
                if name is None:
                    decoded[i] = self._name(raws[i], begin + stride * (i + 1) + 2, f"{field}.topic")
        names.extend(decoded)
        counts.append(np.full(more, count, dtype=np.int64))
        if count:
            parts.append(view(2 + length + 4, ">i4", (count,))[:more].reshape(-1))
        self.offset = begin + stride * (more + 1)
        return more + 1

    def _name(self, raw: bytes, at: int, field: str) -> str:
        name = self.cache.text(raw)
        if name is None:
            raise ProtocolError(f"{field}: invalid UTF-8 at offset {at}")
        return name

    def _short(self, field: str, size: int, at: int) -> ProtocolError:
        return ProtocolError(f"{field}: needs {size} bytes at offset {at}, {len(self.data) - at} left")

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
        try:
            encoded = value.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate, which JSON input can carry
            raise ProtocolError(f"{field}: {value!r} is not encodable as UTF-8") from None
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

    def raw(self, data: bytes) -> None:
        self.parts.append(data)

    def bytes(self) -> bytes:
        return b"".join(self.parts)


def _pack(form: struct.Struct, value: int, field: str) -> bytes:
    try:
        return form.pack(value)
    except struct.error:
        raise ProtocolError(f"{field}: {value!r} does not fit the field") from None


def encode_topic_partition_arrays(groups: Sequence[Sequence], field: str) -> list[bytes]:
    """Encode each group of (topic, partition) pairs as ``[Topic STRING, Partitions [INT32]]``.

    Topics are written in the order they first appear in their group, partitions in the given
    order. All groups are laid out in one numpy buffer (a leader encodes 2,000 assignments with
    a million partitions at once), then cut into one bytes object per group.
    """
    with gc_paused():  # the lists below hold a million references; nothing cyclic is made
        return _encode_topic_partition_arrays(groups, field)


def _encode_topic_partition_arrays(groups: Sequence[Sequence], field: str) -> list[bytes]:
    return encode_tp_columns(*tp_columns_of(groups, field), len(groups))


def tp_columns_of(groups: Sequence[Sequence], field: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[bytes]]:
    """Groups of (topic, partition) pairs as the columns `encode_tp_columns` takes (group,
    topic id, partition, each topic's UTF-8 bytes), every value checked."""
    lengths = [len(g) for g in groups]
    pairs = list(chain.from_iterable(groups))
    kinds = set(map(type, pairs))
    # TopicPartition is a 2-tuple by construction; other tuples and lists must be checked.
    if not all(issubclass(kind, tuple | list) for kind in kinds) or (
        pairs and kinds != {TopicPartition} and set(map(len, pairs)) != {2}
    ):
        raise ProtocolError(f"{field}: expected (topic, partition) pairs")
    topics = list(map(itemgetter(0), pairs))
    values = list(map(itemgetter(1), pairs))
    if not all(issubclass(kind, numbers.Integral) and kind is not bool for kind in set(map(type, values))):
        raise ProtocolError(f"{field}.partitions: partitions must be integers in [0, 2**31)")
    parts = np.array(values)  # huge ints come out as object or uint64 and fail the checks below
    if pairs and (parts.dtype.kind not in "iu" or parts.min() < 0 or parts.max() > 0x7FFFFFFF):
        raise ProtocolError(f"{field}.partitions: partitions must be integers in [0, 2**31)")
    if not set(map(type, topics)) <= {str}:
        raise ProtocolError(f"{field}.topic: expected strings")
    distinct = list(dict.fromkeys(topics))
    encoded = []
    for topic in distinct:
        try:
            encoded.append(topic.encode("utf-8"))
        except UnicodeEncodeError:
            raise ProtocolError(f"{field}.topic: {topic!r} is not encodable as UTF-8") from None
        if len(encoded[-1]) > 0x7FFF:
            raise ProtocolError(f"{field}.topic: {len(encoded[-1])} bytes, more than a STRING holds (32767)")
    ids = {t: i for i, t in enumerate(distinct)}
    tid = np.fromiter(map(ids.__getitem__, topics), dtype=np.int64, count=len(topics))
    member = np.repeat(np.arange(len(groups), dtype=np.int64), lengths)
    return member, tid, parts.astype(np.int64), encoded


def encode_tp_columns(member: np.ndarray, tid: np.ndarray, parts: np.ndarray, encoded: Sequence[bytes],
                      messages: int) -> list[bytes]:
    """`encode_topic_partition_arrays` on columns: message (non-decreasing), topic id into
    `encoded` (each name's UTF-8 bytes, at most 32767 long) and partition (in [0, 2**31)) per pair."""
    return frame_tp_columns(member, tid, parts, encoded, messages).messages()


class Frames(NamedTuple):
    """Many messages built in one writable buffer, each around a ``[Topic STRING, Partitions
    [INT32]]`` array: message i is ``out[start[i] : end[i]]``, its array
    ``out[array_at[i] : array_end[i]]``; the bytes before and after the array are the caller's
    to fill (`put_ints`, `put_bytes`)."""

    out: np.ndarray  # uint8, then 8 bytes of padding
    start: np.ndarray
    array_at: np.ndarray
    array_end: np.ndarray
    end: np.ndarray

    def put_ints(self, at: np.ndarray, values: np.ndarray | int, width: int) -> None:
        """Big-endian signed integers of `width` bytes at byte offsets `at`."""
        at_offset(self.out, f">i{width}")[at] = values

    def put_bytes(self, at: np.ndarray, which: np.ndarray, values: Sequence[bytes]) -> None:
        """``values[which[j]]`` at offset ``at[j]``: one scatter per distinct length of the values
        used (members with a subscription each must not cost a pass over all of them each)."""
        used = np.flatnonzero(np.bincount(which, minlength=len(values)))
        sizes = np.array([len(values[k]) for k in used.tolist()], dtype=np.int64)
        size_of = np.zeros(len(values), dtype=np.int64)
        size_of[used] = sizes
        row = np.zeros(len(values), dtype=np.int64)  # each used value's row among those of its length
        by_size = size_of[which]
        for length in np.unique(sizes).tolist():
            if not length:
                continue
            kinds = used[sizes == length]
            row[kinds] = np.arange(len(kinds))
            table = np.frombuffer(b"".join(values[k] for k in kinds.tolist()), f"V{length}")
            chosen = by_size == length if len(kinds) < len(used) else slice(None)
            at_offset(self.out, f"V{length}")[at[chosen]] = table[row[which[chosen]]]

    def copy(self, source: np.ndarray, target: np.ndarray, size: np.ndarray) -> None:
        """Copy ``size[j]`` bytes from ``source[j]`` to ``target[j]`` (ranges must not overlap):
        one scatter per distinct size, each range as one element."""
        for length in np.unique(size).tolist():
            if length:
                chosen = size == length
                view = at_offset(self.out, f"V{length}")
                view[target[chosen]] = view[source[chosen]]

    def joined(self, per: int = 1) -> Joined:
        """The messages as a `Joined`; with `per`, each message spans that many frames."""
        base, limit = self.start[::per], self.end[per - 1 :: per]
        # The buffer itself, not a copy (`out` ends with the padding `Joined` wants).
        return Joined(memoryview(self.out), self.out, base, limit, np.ones(len(base), dtype=bool))

    def messages(self) -> list[bytes]:
        return self.joined().messages()


class NameTable(NamedTuple):
    """Topic names' UTF-8 bytes as `frame_tp_columns` lays them out: end to end in one buffer
    (then 8 bytes of padding), with each name's start and length. An encoder that writes the
    same names again keeps the table (`protocol.EncodeCache.name_table`)."""

    encoded: Sequence[bytes]
    buffer: np.ndarray
    start: np.ndarray
    length: np.ndarray
    heads: dict  # (name length, partition count) -> `entry_heads`

    @classmethod
    def of(cls, encoded: Sequence[bytes]) -> NameTable:
        length = np.array([len(e) for e in encoded], dtype=np.int64)
        buffer = np.frombuffer(b"".join(encoded) + bytes(8), dtype=np.uint8)
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


def frame_tp_columns(member: np.ndarray, tid: np.ndarray, parts: np.ndarray, encoded: Sequence[bytes] | NameTable,
                     messages: int, before: np.ndarray | int = 0, after=0) -> Frames:
    """`encode_tp_columns` into `Frames`, with ``before[i]`` and ``after[i]`` bytes left free
    around message i's array (uninitialised: the caller fills them). `after` may be a function
    of the arrays' sizes in bytes (for fields that hold a copy of the array). The names may
    come as a `NameTable`."""
    table = encoded if isinstance(encoded, NameTable) else NameTable.of(encoded)
    encoded = table.encoded
    # Group each member's pairs by topic in first-appearance order (usually they already are).
    # (Sorting, not np.unique: numpy 2's hash-based unique is several times slower here.)
    key = member * max(len(encoded), 1) + tid
    run = run_starts(key)
    # A pair in two runs needs regrouping; keys in order (the usual case) cannot have one.
    run_keys = key[run] if len(key) and (key[1:] < key[:-1]).any() else np.zeros(0, dtype=np.int64)
    if len(run_keys):
        run_keys.sort()
    if len(run_keys) and (run_keys[1:] == run_keys[:-1]).any():
        by_key = np.argsort(key, kind="stable")
        starts = run_starts(key[by_key])
        first = np.empty_like(by_key)
        first[by_key] = by_key[starts][np.cumsum(starts) - 1]  # first position of each pair's key
        order = np.argsort(first, kind="stable")
        key, tid, member, parts = key[order], tid[order], member[order], parts[order]
        run = run_starts(key)

    names, name_start, name_length = table.buffer, table.start, table.length
    entry_start = np.flatnonzero(run)
    entry_count = np.diff(appended(entry_start, len(key))).astype(np.int64)
    entry_topic, entry_member = tid[entry_start], member[entry_start]
    entry_name = name_length[entry_topic]
    entry_size = 2 + entry_name + 4 + 4 * entry_count
    # Message m: its `before` bytes, INT32 entry count, its entries, its `after` bytes.
    before = np.broadcast_to(np.asarray(before, dtype=np.int64), (messages,))
    entries_per_message = np.bincount(entry_member, minlength=messages)
    array_size = 4 + np.bincount(entry_member, weights=entry_size, minlength=messages).astype(np.int64)
    after = np.broadcast_to(np.asarray(after(array_size) if callable(after) else after, dtype=np.int64),
                            (messages,))
    size = before + array_size + after
    start = np.cumsum(size) - size
    array_at = start + before
    entries_size = array_size - 4
    earlier = np.cumsum(entries_size) - entries_size  # entry bytes of earlier messages
    entry_at = np.cumsum(entry_size) - entry_size + (array_at + 4 - earlier)[entry_member]
    out = np.empty(int(size.sum()) + 8, dtype=np.uint8)  # padding: views reach 8 bytes
    frames = Frames(out, start, array_at, array_at + array_size, start + size)
    frames.put_ints(array_at, entries_per_message, 4)
    rest = _put_common_entries(out, entry_at, entry_topic, entry_name, entry_count, table, entry_start, parts)
    if rest is not None:
        entry_at, entry_name, entry_count = entry_at[rest], entry_name[rest], entry_count[rest]
        name_at, entry_start = name_start[entry_topic[rest]], entry_start[rest]
        _put_entries(frames, entry_at, entry_name, entry_count, names, name_at, entry_start, parts)
    return frames


def _put_entries(frames: Frames, entry_at: np.ndarray, entry_name: np.ndarray, entry_count: np.ndarray,
                 names: np.ndarray, name_at: np.ndarray, entry_start: np.ndarray, parts: np.ndarray) -> None:
    """Write entries field by field: name length, name, partition count, partitions."""
    out = frames.out
    frames.put_ints(entry_at, entry_name, 2)
    # Names: one scatter per name length (topics come in few lengths), a name as one element.
    for length in np.flatnonzero(np.bincount(entry_name)).tolist() if len(entry_name) else []:
        if length:
            of_length = entry_name == length
            at_offset(out, f"V{length}")[entry_at[of_length] + 2] = at_offset(names, f"V{length}")[name_at[of_length]]
    count_at = entry_at + 2 + entry_name
    frames.put_ints(count_at, entry_count, 4)
    total = int(entry_count.sum())
    slot = np.arange(total) - np.repeat(np.cumsum(entry_count) - entry_count, entry_count)
    frames.put_ints(np.repeat(count_at + 4, entry_count) + 4 * slot,
                    parts[np.repeat(entry_start, entry_count) + slot], 4)


def _put_common_entries(out: np.ndarray, entry_at: np.ndarray, entry_topic: np.ndarray, name_length: np.ndarray,
                        count: np.ndarray, table: NameTable, first: np.ndarray, parts: np.ndarray) -> np.ndarray | None:
    """Write the entries of the shapes (name length, partition count) that many entries share,
    each entry as one record: its first fields copied from the topic's `NameTable.entry_heads`,
    its partitions filled as a column, and the records scattered at once (a scatter costs the
    same for 4 bytes or 40). Returns a mask of the entries left to write field by field, None
    when none is left."""
    everything = np.ones(len(entry_at), dtype=bool)
    if len(entry_at) < 256:
        return everything
    width = int(count.max()) + 1
    if (int(name_length.max()) + 1) * width > 1 << 22:
        return everything
    shape = name_length * width + count
    counts = np.bincount(shape)
    commons = np.flatnonzero(counts >= 256).tolist()
    rest = None if len(commons) == 1 and counts[commons[0]] == len(shape) else everything
    for common in commons:
        length, partitions = divmod(common, width)
        head, row = table.entry_heads(length, partitions)
        if rest is None:  # every entry has this shape (the usual case): no selection
            chosen = slice(None)
        else:
            chosen = np.flatnonzero(shape == common)
            rest[chosen] = False
        fields = [("head", head.dtype), ("partitions", ">i4", (partitions,))]
        record = np.empty(int(counts[common]), dtype=fields if partitions else fields[:1])
        record["head"] = head[row[entry_topic[chosen]]]
        if partitions:
            record["partitions"] = parts[first[chosen][:, None] + np.arange(partitions)]
        at_offset(out, f"V{record.dtype.itemsize}")[entry_at[chosen]] = record.view(f"V{record.dtype.itemsize}")
    return None if rest is None or not rest.any() else rest


class TPColumns(NamedTuple):
    """``[Topic STRING, Partitions [INT32]]`` arrays of many messages, as columns: per message
    whether it is well formed and where its array ends; per entry its message (non-decreasing),
    its topic (an index into `names`, each name once) and partition count; all partitions in
    entry order."""

    ok: np.ndarray
    end: np.ndarray
    entry_message: np.ndarray
    entry_topic: np.ndarray
    entry_count: np.ndarray
    partitions: np.ndarray
    names: list[str]

    def only(self, keep_message: np.ndarray) -> TPColumns:
        """The entries of the messages where `keep_message` is True (ok and end unchanged)."""
        if keep_message.all():  # (checked per message first: there are fewer than entries)
            return self
        keep = keep_message[self.entry_message]
        if keep.all():
            return self
        return self._replace(entry_message=self.entry_message[keep], entry_topic=self.entry_topic[keep],
                             entry_count=self.entry_count[keep],
                             partitions=self.partitions[np.repeat(keep, self.entry_count)])


#: Rounds stop when fewer messages than this still have entries, unless none of them has more
#: than `_SHORT_TAIL` left: the rest are read one by one (one message with a million entries of
#: changing shapes must not cost a million numpy rounds; a few with a handful each cost less in
#: a few rounds than one reader each).
_MIN_LIVE = 16
_SHORT_TAIL = 32
#: After two run rounds in a row that read fewer than this many entries per message on average,
#: `read_tp_columns` takes `_STEPS` single-entry rounds, twice as many each further time, up to
#: `_MAX_STEPS`.
_SHORT_RUN = 2
_STEPS = 8
_MAX_STEPS = 64
#: The most entries one round looks at (a bound on its arrays' memory).
_MAX_LOOK = 1 << 22


def at_offset(buffer: np.ndarray, dtype: str) -> np.ndarray:
    """A view of `buffer` (uint8) whose element j is the `dtype` value starting at byte j.

    Stride 1: reading or writing many values at arbitrary byte offsets is then one plain
    gather or scatter, instead of one per byte lane. Writable when `buffer` is.
    """
    kind = _DTYPES.get(dtype)
    if kind is None:  # parsed once: readers make thousands of views (bounded: "V{size}" varies)
        if len(_DTYPES) >= 4096:
            _DTYPES.clear()
        kind = _DTYPES[dtype] = np.dtype(dtype)
    return np.ndarray((max(len(buffer) - kind.itemsize + 1, 0),), dtype=kind, buffer=buffer, strides=(1,))


_DTYPES: dict[str, np.dtype] = {}


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
    return same & (rows[:, words:] == expected[..., words:]).all(axis=1)


def ints_at(buffer: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    """Big-endian signed integers of `width` (2 or 4) bytes at each offset of `buffer` (uint8)."""
    return at_offset(buffer, f">i{width}")[np.asarray(at, dtype=np.int64)].astype(np.int64)


class Joined(NamedTuple):
    """Many messages laid end to end in one buffer, read together with numpy: message i is
    ``data[base[i] : limit[i]]``. Reading some of the messages is `take`, without a copy."""

    data: bytes | memoryview  # the messages, then 8 bytes of padding (masked-out reads stay in bounds)
    buffer: np.ndarray  # the same bytes as uint8
    base: np.ndarray
    limit: np.ndarray
    regular: np.ndarray  # bool: the message was bytes (anything else is laid out as empty)

    @classmethod
    def of(cls, blobs: Sequence) -> Joined:
        regular = [type(b) is bytes for b in blobs]
        blobs = [b if r else b"" for b, r in zip(blobs, regular)]
        lengths = np.array([len(b) for b in blobs], dtype=np.int64)
        base = np.cumsum(lengths) - lengths
        data = b"".join(blobs) + bytes(8)
        return cls(data, np.frombuffer(data, dtype=np.uint8), base, base + lengths, np.array(regular, dtype=bool))

    def message(self, i: int) -> bytes:
        return bytes(self.data[self.base[i] : self.limit[i]])

    def messages(self) -> list[bytes]:
        data = self.data
        return [bytes(data[a:b]) for a, b in zip(self.base.tolist(), self.limit.tolist())]

    def take(self, chosen: np.ndarray) -> Joined:
        return self._replace(base=self.base[chosen], limit=self.limit[chosen], regular=self.regular[chosen])


def read_tp_columns(blobs: Sequence[bytes] | Joined, starts: Sequence[int] | np.ndarray, cache: DecodeCache,
                    ends: Sequence[int] | np.ndarray | None = None) -> TPColumns:
    """Read a ``[Topic STRING, Partitions [INT32]]`` array from each blob at once.

    For a leader with many members, each with a small array, per-message overhead dominates;
    so all messages are read together, in rounds (`_read_runs`): a round reads, in every
    message that has entries left, the next entry and the run of entries after it that have
    the same shape (name length and partition count), which lie a fixed stride apart. Arrays
    usually hold few shapes (names of one length, one partition per topic), so a round or
    two reads everything. Where shapes change every few entries (partition counts that vary,
    say), runs are short and a round costs far more than the one entry per message a step
    (`_read_step`) reads, so after two rounds of short runs in a row the reader takes steps for
    a while. When few messages are left and some of them with many entries, each of those is
    finished on its own by a `Reader` (strided runs). A message whose array is not well formed
    gets ``ok`` False and no entries (the caller re-reads it one message at a time, which
    raises the precise error, or applies its fallback). With `ends`, the array of blob i must
    end by offset ``ends[i]`` (a field inside a larger message). Offsets (`starts`, `ends`,
    and ``end`` in the result) count from each message's start.
    """
    joined = blobs if isinstance(blobs, Joined) else Joined.of(blobs)
    count_of, buffer, base = len(joined.base), joined.buffer, joined.base
    limit = joined.limit if ends is None else np.minimum(base + np.asarray(ends, dtype=np.int64), joined.limit)
    position = base + np.asarray(starts, dtype=np.int64)
    ok = position + 4 <= limit

    left = np.where(ok, ints_at(buffer, np.where(ok, position, 0), 4), 0)  # entries not read yet
    position = position + 4
    ok &= (left >= 0) & (left * 6 <= limit - position)
    left = np.where(ok, left, 0)
    if not left.any():  # empty arrays only (eager members' owned partitions, say)
        none = np.zeros(0, dtype=np.int64)
        return TPColumns(ok, position - base, none, none, none, none, [])
    rows = []  # message, name start, name length, partitions start, partition count
    failed = int(count_of - ok.sum())
    window = left.copy()  # the first round looks at every entry: a one-shape array takes one round
    short_tail = False
    steps, burst = 0, _STEPS  # single-entry rounds due before the next run round, and how many next time
    short = 0  # run rounds in a row that read few entries
    while True:
        live = np.flatnonzero(ok & (left > 0))
        if not live.size:
            break
        if live.size < _MIN_LIVE and not short_tail:
            short_tail = int(left[live].max()) <= _SHORT_TAIL
            if not short_tail:
                break
        if steps:
            rows.append(_read_step(buffer, live, position, limit, left, ok))
            steps -= 1
            continue
        rows.append(_read_runs(buffer, live, position, limit, left, window, ok))
        short = short + 1 if len(rows[-1][0]) < _SHORT_RUN * len(live) else 0
        if short >= 2:
            # Shapes change every few entries (one short round is often a single odd entry):
            # a run round reads little more than a step does, at several times its cost. Step
            # for a while (longer each time this repeats), no further than the messages go.
            steps, burst = min(burst, int(left.max())), min(2 * burst, _MAX_STEPS)
        elif not short:
            burst = _STEPS
    names: list[str] = []
    entry_message = entry_topic = count = partitions = np.zeros(0, dtype=np.int64)
    if rows:
        message, name_at, name_length, parts_at, count = rows[0] if len(rows) == 1 else (
            np.concatenate(c) for c in zip(*rows))
        if count_of - ok.sum() > failed:  # a message failed at a later entry: drop what it read
            keep = ok[message]
            message, name_at, name_length, parts_at, count = (
                a[keep] for a in (message, name_at, name_length, parts_at, count))
        if len(rows) > 1:
            # Each round's rows are in message order and each message's runs come in order of
            # rounds, so a stable sort by message puts each message's entries together, in order.
            order = stable_order(message)
            message, name_at, name_length, parts_at, count = (
                a[order] for a in (message, name_at, name_length, parts_at, count))
        found = _names_at(buffer, name_at, name_length, cache)
        if found is None:  # invalid UTF-8 somewhere: let each message be read on its own
            none = np.zeros(0, dtype=np.int64)
            return TPColumns(np.zeros(count_of, dtype=bool), position - base, none, none, none, none, [])
        entry_topic, names = found
        total = int(count.sum())
        if total == len(count) and (count == 1).all():  # one partition per entry (the usual case)
            partitions = ints_at(buffer, parts_at, 4)
        else:
            first = np.cumsum(count) - count
            partitions = ints_at(buffer, np.repeat(parts_at - 4 * first, count) + 4 * np.arange(total), 4)
        entry_message = message
    # The few messages with entries left: each finished by its own reader.
    tails = [(i, int(left[i])) for i in np.flatnonzero(ok & (left > 0)).tolist()]
    tail_rows = []
    ids = {name: i for i, name in enumerate(names)}
    for i, entries in tails:
        reader = Reader(joined.data[base[i] : limit[i]], cache)
        reader.offset = int(position[i] - base[i])
        try:
            tail_names, tail_counts, tail_parts = reader.topic_partition_entries(entries, "partitions")
        except ProtocolError:
            ok[i] = False
            continue
        position[i] = base[i] + reader.offset
        tail_topics = np.fromiter((ids.setdefault(n, len(ids)) for n in tail_names), dtype=np.int64,
                                  count=len(tail_names))
        tail_rows.append((np.full(len(tail_names), i, dtype=np.int64), tail_topics, tail_counts, tail_parts))
    if tail_rows:
        names = list(ids)
        entry_message, entry_topic, count, partitions = (
            np.concatenate([first_part, *(r[j] for r in tail_rows)])
            for j, first_part in enumerate((entry_message, entry_topic, count, partitions)))
        # A message's tail follows the entries its rounds read: a stable sort by message keeps both in order.
        order = stable_order(entry_message)
        part_order = _expand_order(order, count)
        entry_message, entry_topic, count, partitions = (entry_message[order], entry_topic[order], count[order],
                                                         partitions[part_order])
    negative = partitions < 0
    if negative.any():
        ok[np.repeat(entry_message, count)[negative]] = False
    return TPColumns(ok, position - base, entry_message, entry_topic, count, partitions, names).only(ok)


def _read_runs(buffer: np.ndarray, live: np.ndarray, position: np.ndarray, limit: np.ndarray, left: np.ndarray,
               window: np.ndarray, ok: np.ndarray) -> tuple:
    """One round of `read_tp_columns` over the messages `live`: each one's next entry, checked
    to fit, and the entries after it of the same shape, found by looking at most ``window``
    entries ahead at the shape's stride. Advances `position` and `left` past what it read,
    sets `ok` False for a message whose entry does not fit, and sizes each message's next
    window from this run (twice its length, at least 8), so that a message of changing shapes
    costs each round about what it reads. Returns the entries read, as rows."""
    live, at, end, name_length, count, stride = _next_entries(buffer, live, position, limit, ok)
    # Entries 1.. of a run lie `stride` apart; look only at those that fit in the message.
    look = np.minimum(np.minimum(left[live], window[live]), (end - at) // stride)  # stride >= 6
    if int(look.sum()) > _MAX_LOOK:
        look = np.minimum(look, max(_MAX_LOOK // len(live), 8))
    first = np.cumsum(look) - look  # each run's first entry among all looked at
    # Entry e of the run of message m (first[m] <= e) is at at[m] + stride[m] * (e - first[m]).
    entry_at = np.repeat(at - stride * first, look) + np.repeat(stride, look) * np.arange(int(look.sum()))
    entry_length, entry_count, message = np.repeat(name_length, look), np.repeat(count, look), np.repeat(live, look)
    differs = np.flatnonzero((ints_at(buffer, entry_at, 2) != entry_length)
                             | (ints_at(buffer, entry_at + 2 + entry_length, 4) != entry_count))
    run = look
    if len(differs):
        # A run ends at its message's first differing entry (entry 0 is the shape itself).
        which = np.repeat(np.arange(len(live)), look)
        index = np.arange(len(which)) - first[which]  # entry index within its run
        stopped, at_first = np.unique(which[differs], return_index=True)
        run = look.copy()
        run[stopped] = index[differs[at_first]]
        keep = index < run[which]
        message, entry_at, entry_length, entry_count = (a[keep] for a in (message, entry_at, entry_length, entry_count))
    position[live] = at + run * stride
    left[live] -= run
    window[live] = np.maximum(2 * run, 8)
    return message, entry_at + 2, entry_length, entry_at + 6 + entry_length, entry_count


def _read_step(buffer: np.ndarray, live: np.ndarray, position: np.ndarray, limit: np.ndarray, left: np.ndarray,
               ok: np.ndarray) -> tuple:
    """One entry of each message in `live`, as `_read_runs` reads the first of its run."""
    live, at, end, name_length, count, stride = _next_entries(buffer, live, position, limit, ok)
    position[live] = at + stride
    left[live] -= 1
    return live, at + 2, name_length, at + 6 + name_length, count


def _next_entries(buffer: np.ndarray, live: np.ndarray, position: np.ndarray, limit: np.ndarray, ok: np.ndarray
                  ) -> tuple:
    """The shape of the entry at `position` of each message in `live`: (live, at, end, name
    length, partition count, stride), without the messages where it does not fit (their `ok`
    set False). Reads clamped into the buffer, checked after (it ends with 8 bytes of padding)."""
    at, end = position[live], limit[live]
    last = len(buffer) - 8
    name_length = ints_at(buffer, np.minimum(at, last), 2)
    count = ints_at(buffer, np.clip(at + 2 + name_length, 0, last), 4)
    stride = 6 + name_length + 4 * count
    fits = (np.minimum(name_length, count) >= 0) & (at + stride <= end)
    if not fits.all():
        ok[live[~fits]] = False
        live, at, end, name_length, count, stride = (a[fits] for a in (live, at, end, name_length, count, stride))
    return live, at, end, name_length, count, stride


def _expand_order(order: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Positions of the items of entries taken in `order`, each entry owning `count` items."""
    first = np.cumsum(count) - count
    counts = count[order]
    return np.repeat(first[order] - (np.cumsum(counts) - counts), counts) + np.arange(int(counts.sum()))


def _names_at(buffer: np.ndarray, at: np.ndarray, length: np.ndarray, cache: DecodeCache
              ) -> tuple[np.ndarray, list[str]] | None:
    """The topic names at these offsets: an index per entry into the distinct names (each
    decoded once); None on invalid UTF-8."""
    names: list[str] = []
    sizes = np.flatnonzero(np.bincount(length)).tolist() if len(length) else []
    # Names of one length (the usual case) need no selection and no merge.
    topic = np.zeros(len(at), dtype=np.int64) if len(sizes) != 1 else None
    for size in sizes:
        chosen = slice(None) if topic is None else np.flatnonzero(length == size)
        found = cache.names_at(buffer, at[chosen], size)
        if found is None:
            return None
        index, known = found
        # Only the names these entries use, numbered densely.
        used = np.flatnonzero(np.bincount(index, minlength=len(known)))
        dense = np.zeros(len(known), dtype=np.int64)
        dense[used] = np.arange(len(names), len(names) + len(used))
        names.extend(known[i] for i in used.tolist())
        if topic is None:
            return dense[index], names
        topic[chosen] = dense[index]
    return topic, names


def _name_keys(buffer: np.ndarray, at: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray | None]:
    """A uint64 key per name of `size` bytes at `at`: the bytes themselves when they fit
    (exact), else a 64-bit FNV-1a style hash of them, returned with the names' bytes as rows of
    a uint8 matrix so that the caller can catch a collision. Reads up to 8 bytes past a short
    name (the padding of `Joined` keeps that in bounds)."""
    if size <= 8:
        return at_offset(buffer, ">u8")[at] >> np.uint64(64 - 8 * size), None
    rows = rows_at(buffer, at, size)
    return row_hashes(rows), rows


def rows_at(buffer: np.ndarray, at: np.ndarray, size: int) -> np.ndarray:
    """The `size` bytes at each offset of `buffer` (uint8), as the rows of a contiguous matrix."""
    return np.ascontiguousarray(at_offset(buffer, f"V{size}")[at]).view(np.uint8).reshape(-1, size)


def row_hashes(rows: np.ndarray) -> np.ndarray:
    """A 64-bit FNV-1a style hash of each row of an unsigned integer matrix, column by column."""
    key = np.zeros(len(rows), dtype=np.uint64)
    for lane in range(rows.shape[1]):  # uint64 arithmetic wraps
        key = (key ^ rows[:, lane]) * np.uint64(0x100000001B3)
    return key


class _SizedNames(NamedTuple):
    """The names of one byte length a `DecodeCache` knows, sorted by key."""

    keys: np.ndarray
    names: list[str]
    rows: np.ndarray  # (n, size) uint8: each name's bytes, to check a hashed key


def _look_up(table: _SizedNames, keys: np.ndarray) -> np.ndarray:
    """The row of `table` with each key, -1 where it has none."""
    if not len(table.keys):
        return np.full(len(keys), -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(table.keys, keys), len(table.keys) - 1)
    return np.where(table.keys[at] == keys, at, -1)


def _distinct_names(rows: np.ndarray, cache: DecodeCache) -> tuple[np.ndarray, list[str]] | None:
    """`DecodeCache.names_at` by comparing whole names (the slow, exact way)."""
    _, first, inverse = np.unique(rows.view(f"V{rows.shape[1]}").ravel(), return_index=True, return_inverse=True)
    names = [cache.text(rows[row].tobytes()) for row in first.tolist()]
    return None if None in names else (inverse.ravel(), names)
