"""``[Topic STRING, Partitions [INT32]]`` arrays of many messages at once, in columns.

A group of 2,000 members owning a million partitions sends a million (topic, partition) pairs:
reading or writing them one Python object at a time costs seconds. Here they are columns
(message, topic id, partition): `read_tp_columns` reads the arrays of many messages in C
(`assignor/wire/_tp_arrays.c`), or in numpy rounds without it (`read_tp_columns_in_rounds`), and
`frame_tp_columns` lays many out in one buffer with numpy. All are held equal to the plain codec
(`assignor.wire.codec`) by property tests (tests/wire).
"""

from __future__ import annotations

import numbers
import struct
from collections.abc import Callable, Sequence
from itertools import chain
from operator import itemgetter
from typing import NamedTuple, cast

import numpy as np

from assignor._arrays import appended, run_starts, stable_order
from assignor.errors import ProtocolError
from assignor.model import TopicPartition
from assignor.wire.buffers import Messages, NameTable, at_offset, ints_at
from assignor.wire.cache import DecodeCache

try:  # the arrays of many messages in C; a build without a compiler reads them in numpy rounds
    import assignor.wire._tp_arrays as _in_c
except ImportError:
    _in_c = None  # type: ignore[assignment]

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


# A topic name of a given length followed by its partition count, read in one call.
_NAME_AND_COUNT = tuple(struct.Struct(f">{n}si") for n in range(256))


def _name_and_count(length: int) -> struct.Struct:
    return _NAME_AND_COUNT[length] if length < 256 else struct.Struct(f">{length}si")


# A run of partition counts or partitions: numpy from a strided run, a list from single entries.
Chunk = np.ndarray | list[int]
# Entries read by one round: message, name start, name length, partitions start, partition count.
Rows = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]

_INT32S = tuple(struct.Struct(f">{n}i") for n in range(64))


def _int32s(count: int) -> struct.Struct:
    return _INT32S[count] if count < 64 else struct.Struct(f">{count}i")



class RunReader:
    """Reads the long arrays of one message in runs: a topic list (`strings`) or the entries of
    a ``[Topic STRING, Partitions [INT32]]`` array (`topic_partition_entries`), each equal to
    what the plain codec reads. A leader decoding a whole group gives every member's reader
    the same `DecodeCache`, since members share most topic names and often whole
    subscriptions."""

    def __init__(self, data: bytes, cache: DecodeCache, offset: int = 0):
        self.data = data
        self.offset = offset
        self.cache = cache
        self.names = cache.names

    @property
    def remaining(self) -> int:
        return len(self.data) - self.offset

    def _need(self, size: int, field: str) -> int:
        if size > self.remaining:
            raise ProtocolError(f"{field}: needs {size} bytes at offset {self.offset}, {self.remaining} left")
        start = self.offset
        self.offset += size
        return start

    def int32(self, field: str) -> int:
        value: int = _INT32.unpack_from(self.data, self._need(4, field))[0]
        return value

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

    def _name_run(self, at: int, length: int, left: int, out: list[str], field: str) -> int:
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
        out.extend(self._names(raws, at + 2, stride, field))
        return run

    def topic_partition_entries(self, entries: int, field: str) -> tuple[list[str], np.ndarray, np.ndarray]:
        """The `entries` entries of such an array, from here (its count already read)."""
        names: list[str] = []
        counts: list[Chunk] = []  # chunks: numpy arrays from runs, Python lists from single entries
        parts: list[Chunk] = []
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

    def _entry(self, field: str, names: list[str], counts: list[Chunk], parts: list[Chunk]) -> tuple[int, int]:
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
        last_counts, last_parts = (counts[-1], parts[-1]) if counts else (None, None)
        if not isinstance(last_counts, list) or not isinstance(last_parts, list):
            last_counts, last_parts = [], []  # open a Python chunk after a numpy run
            counts.append(last_counts)
            parts.append(last_parts)
        last_counts.append(count)
        last_parts.extend(_int32s(count).unpack_from(self.data, at))
        self.offset = at + 4 * count
        return length, count

    def _stride_run(self, left: int, field: str, names: list[str], counts: list[Chunk], parts: list[Chunk]) -> int:
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

        def view(offset: int, dtype: str, shape: tuple[int, ...] = ()) -> np.ndarray:
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
        names.extend(self._names(raws, begin + stride + 2, stride, f"{field}.topic"))
        counts.append(np.full(more, count, dtype=np.int64))
        if count:
            parts.append(view(2 + length + 4, ">i4", (count,))[:more].reshape(-1))
        self.offset = begin + stride * (more + 1)
        return more + 1

    def _names(self, raws: list[bytes], at: int, stride: int, field: str) -> list[str]:
        """Names read `stride` bytes apart from offset `at`: the cache's, decoded where new."""
        known = self.names
        return [known.get(raw) or self._name(raw, at + i * stride, field) for i, raw in enumerate(raws)]

    def _name(self, raw: bytes, at: int, field: str) -> str:
        name = self.cache.text(raw)
        if name is None:
            raise ProtocolError(f"{field}: invalid UTF-8 at offset {at}")
        return name

    def _short(self, field: str, size: int, at: int) -> ProtocolError:
        return ProtocolError(f"{field}: needs {size} bytes at offset {at}, {len(self.data) - at} left")


def tp_columns_of(groups: Sequence[Sequence[tuple[str, int]]], field: str
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[bytes]]:
    """Groups of (topic, partition) pairs as the columns `frame_tp_columns` takes (group,
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
    if not all(issubclass(kind, numbers.Integral) and not issubclass(kind, bool) for kind in set(map(type, values))):
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

    def joined(self, per: int = 1) -> Messages:
        """The messages as a `Messages`; with `per`, each message spans that many frames."""
        base, limit = self.start[::per], self.end[per - 1 :: per]
        # The buffer itself, not a copy (`out` ends with the padding `Messages` wants).
        return Messages(self.out.data, self.out, base, limit)

    def messages(self) -> list[bytes]:
        return self.joined().messages()



def frame_tp_columns(member: np.ndarray, tid: np.ndarray, parts: np.ndarray, encoded: Sequence[bytes] | NameTable,
                     messages: int, before: np.ndarray | int = 0,
                     after: np.ndarray | int | Callable[[np.ndarray], np.ndarray] = 0) -> Frames:
    """Lay out ``[Topic STRING, Partitions [INT32]]`` arrays from columns into `Frames`: message
    (non-decreasing), topic id into `encoded` (each name's UTF-8 bytes, at most 32767 long) and
    partition (in [0, 2**31)) per pair; ``before[i]`` and ``after[i]`` bytes are left free
    around message i's array (uninitialised: the caller fills them). `after` may be a function
    of the arrays' sizes in bytes (for fields that hold a copy of the array). The names may
    come as a `NameTable`."""
    table = encoded if isinstance(encoded, NameTable) else NameTable.of(encoded)
    encoded = table.encoded
    key = member * max(len(encoded), 1) + tid
    order = _grouped(key)
    if order is not None:
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


def grouped_by_topic(member: np.ndarray, tid: np.ndarray, topics: int) -> np.ndarray | None:
    """The order in which `frame_tp_columns` writes pairs (message non-decreasing, topic ids
    below `topics`): each message's pairs grouped by topic, topics in order of first
    appearance, each topic's partitions as given; None when that is the order they are in."""
    if topics <= 1:  # (one topic: grouped, members in order)
        return None
    return _grouped(member * topics + tid)


def _grouped(key: np.ndarray) -> np.ndarray | None:
    """`grouped_by_topic` of ``member * topics + tid`` keys (usually grouped already).
    (Sorting, not np.unique: numpy 2's hash-based unique is several times slower here.)"""
    if not len(key) or not (key[1:] < key[:-1]).any():
        return None  # keys in order cannot have a pair in two runs
    run_keys = key[run_starts(key)]
    run_keys.sort()
    if not (run_keys[1:] == run_keys[:-1]).any():
        return None
    by_key = key.argsort(kind="stable")
    starts = run_starts(key[by_key])
    first = np.empty_like(by_key)
    first[by_key] = by_key[starts][starts.cumsum() - 1]  # first position of each pair's key
    return first.argsort(kind="stable")


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
        chosen: slice | np.ndarray
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



def read_tp_columns(blobs: Sequence[bytes] | Messages, starts: Sequence[int] | np.ndarray, cache: DecodeCache
                    ) -> TPColumns:
    """Read a ``[Topic STRING, Partitions [INT32]]`` array from each blob at once: in C where
    the package was built with it (`assignor/wire/_tp_arrays.c`), else in numpy rounds
    (`read_tp_columns_in_rounds`, the reference a property test holds it to). Offsets
    (`starts`, and ``end`` in the result) count from each message's start. A message whose
    array is not well formed gets ``ok`` False and no entries (the caller reads it again
    plainly). The topics are indices into ``names``, each name once; which index a name gets
    may differ between the two.
    """
    joined = blobs if isinstance(blobs, Messages) else Messages.of(blobs)
    if _in_c is None:
        return read_tp_columns_in_rounds(joined, starts, cache)
    base = joined.base
    position = base + np.asarray(starts, dtype=np.int64)
    ok, end, message, topic, count, partitions, names = _in_c.read(
        joined.buffer, position, joined.limit, cache.names, cache.text)
    message_of, topic_of, count_of, parts = (np.frombuffer(c, dtype=np.int64)
                                             for c in (message, topic, count, partitions))
    return TPColumns(np.frombuffer(ok, dtype=np.bool_), np.frombuffer(end, dtype=np.int64) - base, message_of,
                     topic_of, count_of, parts, names)


def read_tp_columns_in_rounds(blobs: Sequence[bytes] | Messages, starts: Sequence[int] | np.ndarray,
                              cache: DecodeCache) -> TPColumns:
    """Read a ``[Topic STRING, Partitions [INT32]]`` array from each blob at once, in numpy.

    For a leader with many members, each with a small array, per-message overhead dominates;
    so all messages are read together, in rounds (`_read_runs`): a round reads, in every
    message that has entries left, the next entry and the run of entries after it that have
    the same shape (name length and partition count), which lie a fixed stride apart. Arrays
    usually hold few shapes (names of one length, one partition per topic), so a round or
    two reads everything. Where shapes change every few entries (partition counts that vary,
    say), runs are short and a round costs far more than the one entry per message a step
    (`_read_step`) reads, so after two rounds of short runs in a row the reader takes steps for
    a while. When few messages are left and some of them with many entries, each of those is
    finished on its own by a `RunReader` (strided runs). A message whose array is not well formed
    gets ``ok`` False and no entries (the caller re-reads it one message at a time, which
    raises the precise error, or applies its fallback). Offsets (`starts`, and ``end`` in the
    result) count from each message's start; a field inside a larger message is read as a
    message of its own (`Messages` of where each lies).
    """
    joined = blobs if isinstance(blobs, Messages) else Messages.of(blobs)
    count_of, buffer, base = len(joined.base), joined.buffer, joined.base
    limit = joined.limit
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
        reader = RunReader(bytes(joined.data[base[i] : limit[i]]), cache, int(position[i] - base[i]))
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
               window: np.ndarray, ok: np.ndarray) -> Rows:
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
               ok: np.ndarray) -> Rows:
    """One entry of each message in `live`, as `_read_runs` reads the first of its run."""
    live, at, end, name_length, count, stride = _next_entries(buffer, live, position, limit, ok)
    position[live] = at + stride
    left[live] -= 1
    return live, at + 2, name_length, at + 6 + name_length, count


def _next_entries(buffer: np.ndarray, live: np.ndarray, position: np.ndarray, limit: np.ndarray, ok: np.ndarray
                  ) -> tuple[np.ndarray, ...]:
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
    topic: np.ndarray | None = np.zeros(len(at), dtype=np.int64) if len(sizes) != 1 else None
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
    return cast(np.ndarray, topic), names  # set above: one size returned inside the loop
