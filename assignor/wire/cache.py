"""What a group leader repeats from one rebalance to the next, kept to spare the work: the
names and topic lists members send (`DecodeCache`), and the bytes of the names, topic lists and
racks it writes (`EncodeCache`). The same bytes always decode the same way, and the same values
encode the same way, so a kept cache never changes an answer, only its cost."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple, cast

import numpy as np

from assignor.ordering import java_order
from assignor.wire.buffers import NameTable, at_offset, row_hashes, rows_at
from assignor.wire.codec import encode_value
from assignor.wire.schema import NULLABLE_STRING, STRING

__all__ = ["TOPIC_LIST_PREFIX", "DecodeCache", "EncodeCache", "topic_list_prefix"]


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
        # a member's topics -> the list as it sends them (Java-sorted), one tuple per distinct list
        self.sent_topic_lists: dict[tuple[str, ...], tuple[str, ...]] = {}
        self.sendable: set[tuple[str, str | None]] = set()  # (field, value) known to fit, see `check_sendable`
        self._held = 0  # bytes its entries hold, estimated as they are added: see `nbytes`

    def sent_topic_list(self, topics: tuple[str, ...]) -> tuple[str, ...]:
        """`topics` as a member sends them and the leader reads them (`EncodeCache.topic_list`
        writes them Java-sorted), without the bytes: the same tuple for the same list at every
        rebalance, as `read_join_group` gives (the planner finds subscriptions by identity).
        A name the wire cannot carry raises the encoder's ProtocolError."""
        found = self.sent_topic_lists.get(topics)
        if found is None:
            self.check_sendable(topics, STRING, "topics")
            ordered = tuple(topics[i] for i in java_order(topics))
            found = self.sent_topic_lists[topics] = self.sent_topic_lists.setdefault(ordered, ordered)
            self._held += 32 * len(topics) + 2 * _ENTRY_BYTES
        return found

    def sent_topic_lists_of(self, subscriptions: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
        """`sent_topic_list` of each of `subscriptions`: one look-up each where every list was
        seen before (a leader's every rebalance after its first)."""
        found = list(map(self.sent_topic_lists.get, subscriptions))
        return cast(list[tuple[str, ...]], found) if None not in found else \
            list(map(self.sent_topic_list, subscriptions))

    def check_sendable(self, values: Iterable[str | None], kind: str, field: str) -> None:
        """Raise the encoder's ProtocolError for a value a `kind` field cannot carry (a STRING
        past 32,767 bytes, text that is not UTF-8), as writing it would; each value checked once."""
        for value in values:
            if (field, value) not in self.sendable:
                encode_value(kind, value, field)
                self.sendable.add((field, value))
                self._held += 2 * len(value or "") + _ENTRY_BYTES

    def text(self, raw: bytes) -> str | None:
        """`raw` decoded as UTF-8, once per distinct value; None when it is not UTF-8."""
        text = self.names.get(raw)
        if text is None:
            try:
                text = self.names[raw] = raw.decode("utf-8")
            except UnicodeDecodeError:
                return None
            self._held += 2 * len(raw) + _ENTRY_BYTES
        return text

    def remember_by_hash(self, key: int, found: tuple[bytes, tuple[str, ...]]) -> None:
        """A topic list found by the hash of its count and first bytes (a leader's bulk lookup)."""
        self.topic_lists_by_hash[key] = found
        self._held += len(found[0]) + 8 * len(found[1]) + _ENTRY_BYTES

    def entries(self) -> int:
        """How many entries it holds (what its owner's bound counts: `LeaderCache`)."""
        return (len(self.names) + len(self.topic_lists) + len(self.topic_lists_by_hash)
                + sum(len(table.names) for table in self.sized.values()) + len(self.sent_topic_lists)
                + len(self.sendable))

    def nbytes(self) -> int:
        """What its entries hold, in bytes, estimated as they are added (its owner's other bound:
        `LeaderCache.max_bytes`)."""
        return self._held

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
            self.sized[size] = table
            self._held += rows_new.nbytes + new_keys.nbytes + 8 * len(texts)
            index = _look_up(table, keys)
        if rows is not None and not (rows == table.rows[index]).all():
            return _distinct_names(rows, self)  # two names with one hash: compare whole names
        return index, table.names

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
            seen = self.topic_lists[key] = []
        if len(seen) < 8:  # subscriptions that share a long prefix: keep a few, not all
            seen.append((data[start:end], names))
            self._held += end - start + 8 * len(names) + _ENTRY_BYTES


#: An entry's own cost beside the bytes it holds (its keys, tuples and dict slots), roughly.
_ENTRY_BYTES = 100

#: Topic lists are known by their count and their first bytes, up to this many.
TOPIC_LIST_PREFIX = 64


def topic_list_prefix(entries: np.ndarray, first_name_length: np.ndarray) -> np.ndarray:
    """A lower bound on how many of a topic list's first bytes belong to it, at most
    `TOPIC_LIST_PREFIX`: a list of `entries` names whose first name has this length spans at
    least ``2 + first_name_length + 2 * (entries - 1)`` bytes. Works on ints and on numpy
    arrays alike (a leader groups its members' lists by this many bytes at once)."""
    bound = 2 + np.maximum(first_name_length, 0) + 2 * (entries - 1)
    prefix: np.ndarray = np.clip(bound, 0, TOPIC_LIST_PREFIX) * (entries > 0)
    return prefix


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



def _name_keys(buffer: np.ndarray, at: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray | None]:
    """A uint64 key per name of `size` bytes at `at`: the bytes themselves when they fit
    (exact), else a 64-bit FNV-1a style hash of them, returned with the names' bytes as rows of
    a uint8 matrix so that the caller can catch a collision. Reads up to 8 bytes past a short
    name (the padding of `Joined` keeps that in bounds)."""
    if size <= 8:
        return at_offset(buffer, ">u8")[at] >> np.uint64(64 - 8 * size), None
    rows = rows_at(buffer, at, size)
    return row_hashes(rows), rows



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
    if None in names:
        return None
    return inverse.ravel(), cast(list[str], names)

class EncodeCache:
    """What the members of one group repeat when they encode: their topic lists (Java-sorted
    and encoded once per distinct list). May be kept across rebalances (`LeaderCache`)."""

    def __init__(self) -> None:
        self.topic_lists: dict[tuple[str, ...], bytes] = {}
        self.names: dict[str, bytes] = {}  # topic -> STRING bytes
        self.racks: dict[str | None, bytes] = {}  # rack -> NULLABLE_STRING bytes
        self.by_object: dict[int, tuple[tuple[str, ...], bytes]] = {}
        self.name_tables: dict[tuple[str, ...], NameTable] = {}
        # Each member's topic list and rack, found by the identity of its topics tuple and rack.
        self.member_topic_lists = _Interned(self.topic_list)
        self.member_racks = _Interned(self.rack)
        self._held = 0  # bytes its entries hold, estimated as they are added: see `nbytes`

    def nbytes(self) -> int:
        """What its entries hold, in bytes, estimated as they are added (its owner's other bound:
        `LeaderCache.max_bytes`)."""
        return self._held + self.member_topic_lists.held + self.member_racks.held

    def entries(self) -> int:
        """How many entries it holds (what its owner's bound counts: `LeaderCache`)."""
        return (len(self.topic_lists) + len(self.names) + len(self.racks) + len(self.by_object)
                + len(self.name_tables) + len(self.member_topic_lists.values) + len(self.member_racks.values))

    def name(self, topic: str, field_name: str = "topics") -> bytes:
        """A topic name's UTF-8 bytes (as in a STRING, without the length)."""
        found = self.names.get(topic)
        if found is None:
            found = self.names[topic] = encode_value(STRING, topic, field_name)
            self._held += 2 * len(found) + _ENTRY_BYTES
        return found[2:]

    def name_table(self, topics: Sequence[str], field_name: str) -> NameTable:
        """The `NameTable` of these topics, kept for the next call with the same names (a
        leader encodes the same topics every rebalance)."""
        key = (field_name, *topics)
        table = self.name_tables.get(key)
        if table is None:
            table = self.name_tables[key] = NameTable.of([self.name(t, field_name) for t in topics])
            self._held += 24 * len(key) + _ENTRY_BYTES  # (the names' bytes are counted in `names`)
        return table

    def rack(self, rack: str | None) -> bytes:
        """NULLABLE_STRING of a rack id."""
        found = self.racks.get(rack)
        if found is None:
            found = self.racks[rack] = encode_value(NULLABLE_STRING, rack, "rack_id")
            self._held += 2 * len(found) + _ENTRY_BYTES
        return found

    def topic_list(self, topics: Sequence[str]) -> bytes:
        """``[STRING]`` of `topics` sorted as Java sorts them."""
        # Members keep their topics tuple from one rebalance to the next: finding it by identity
        # spares hashing a long tuple each time (the entry holds the tuple, so its id stays its own).
        seen = self.by_object.get(id(topics))
        if seen is not None and seen[0] is topics:
            return seen[1]
        key = tuple(topics)
        found = self.topic_lists.get(key)
        if found is None:
            names = self.names
            for topic in key:
                if topic not in names:
                    self.name(topic)
            ordered = [key[i] for i in java_order(key)]
            found = self.topic_lists[key] = len(ordered).to_bytes(4, "big") + b"".join(names[t] for t in ordered)
            self._held += len(found) + 8 * len(key) + _ENTRY_BYTES
        if isinstance(topics, tuple):
            if id(topics) not in self.by_object:
                self._held += _ENTRY_BYTES
            self.by_object[id(topics)] = (topics, found)
        return found



class _Interned:
    """Encodings of values (members' topics tuples, racks) found by the values' identity.

    A member keeps its topics tuple and rack from one rebalance to the next, so once a group
    has been seen, encoding every member's is one search of their ids in a sorted table, with
    no per-member Python call. The table holds each value (so its id stays its own) and each
    distinct encoding once (``encode`` returns one cached object for equal values).
    """

    def __init__(self, encode: Callable[[Any], bytes]) -> None:
        self.encode = encode
        self.ids = np.zeros(0, dtype=np.uint64)  # sorted
        self.slots = np.zeros(0, dtype=np.int64)  # encoding index of each id
        self.values: list[object] = []
        self.encodings: list[bytes] = []
        self.slot_of_encoding: dict[int, int] = {}
        self.held = 0  # bytes of its table, estimated (the encodings' own are the encode cache's)

    def encode_all(self, values: Sequence[object]) -> tuple[list[bytes], np.ndarray]:
        """The encodings this table knows and each value's index among them."""
        ids = np.fromiter(map(id, values), dtype=np.uint64, count=len(values))
        slot = self._find(ids)
        missing = np.flatnonzero(slot < 0)
        if len(missing):
            new_ids, first = np.unique(ids[missing], return_index=True)
            new = [values[i] for i in missing[first].tolist()]
            new_slots = []
            for encoding in map(self.encode, new):
                slot_of = self.slot_of_encoding.setdefault(id(encoding), len(self.encodings))
                if slot_of == len(self.encodings):
                    self.encodings.append(encoding)
                new_slots.append(slot_of)
            self.values.extend(new)
            self.held += 40 * len(new)
            order = np.argsort(np.concatenate([self.ids, new_ids]))
            self.ids = np.concatenate([self.ids, new_ids])[order]
            self.slots = np.concatenate([self.slots, np.array(new_slots, dtype=np.int64)])[order]
            slot = self._find(ids)
        return self.encodings, slot

    def _find(self, ids: np.ndarray) -> np.ndarray:
        if not len(self.ids):
            return np.full(len(ids), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.ids, ids), len(self.ids) - 1)
        return np.where(self.ids[at] == ids, self.slots[at], -1)
