"""Many messages at once, in columns: what a group leader reads from JoinGroup and writes to
SyncGroup, for every member together.

The columnar API (the object API, one message at a time, is `assignor.wire.messages`):

- `read_join_group`: every member's metadata (`Messages`) -> `Roster` (members and their owned
  partitions as `Claims`); `Roster.owning` gives the members with their owned partitions.
- `encode_join_group`: members, owned `Claims` and generations -> `Messages` (what each member
  sends for its protocol).
- `encode_assignments`: assigned `Claims` -> every member's SyncGroup assignment (`Messages`).
- `read_assignments`: assignments (`Messages`) -> `Claims`.
- `join_group_as_read`, `assignments_as_read`: what `read_join_group` and `read_assignments`
  give back from the two encoders' bytes, without the bytes (the what-if engine's rebalances).

`members_from_metadata`, `assignments_for` and `user_data_for` are the same steps over plain
objects (a mapping of member id to bytes, a `Plan`). Every path here is held equal to the plain codec by
property tests; bytes that are irregular anywhere in a message are read again by the plain
codec, which names the field and offset of what is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from typing import Any, NamedTuple, cast

import numpy as np

from assignor._arrays import appended, filled, gc_paused, run_starts, stable_order
from assignor.errors import ProtocolError
from assignor.java_hash import spread
from assignor.model import UNKNOWN_GENERATION, Claims, Member, Plan, TopicPartition
from assignor.ordering import java_order, string_hashes
from assignor.protocols import Carrier, Protocol, UserData, resolve
from assignor.wire.arrays import (
    Frames,
    RunReader,
    TPColumns,
    frame_tp_columns,
    grouped_by_topic,
    read_tp_columns,
    tp_columns_of,
)
from assignor.wire.buffers import Messages, NameTable, equal_rows_at, ints_at, row_hashes, rows_at
from assignor.wire.cache import TOPIC_LIST_PREFIX, DecodeCache, EncodeCache, topic_list_prefix
from assignor.wire.codec import check_version
from assignor.wire.fields import LENGTH_SIZE, ArrayReader, FieldColumns, Fields, field_offsets, read_fields
from assignor.wire.messages import (
    ASSIGNMENT_VERSION,
    SUBSCRIPTION_VERSION,
    decode_assignment,
    decode_sticky_user_data,
    encode_cooperative_user_data,
    member_from_metadata,
    sticky_topic_order,
)
from assignor.wire.schema import (
    ASSIGNMENT,
    COOPERATIVE_USER_DATA,
    NULLABLE_BYTES,
    NULLABLE_STRING,
    STICKY_USER_DATA_V1,
    STRING,
    SUBSCRIPTION,
)

__all__ = [
    "Messages",
    "Roster",
    "assignments_as_read",
    "assignments_for",
    "encode_assignments",
    "encode_join_group",
    "join_group_as_read",
    "members_from_metadata",
    "plan_bytes",
    "read_assignment",
    "read_assignments",
    "read_assignments_and_user_data",
    "read_join_group",
    "user_data_for",
]


def read_assignments(messages: Messages, cache: DecodeCache | None = None) -> Claims:
    """What each member is assigned (`Claims`, member index in message order), from SyncGroup
    assignment bytes, without a tuple per partition.

    Raises
    ------
    ProtocolError
        For the first assignment that does not decode, as `decode_assignment` would.
    """
    return read_assignments_and_user_data(messages, cache)[0]


def read_assignments_and_user_data(messages: Messages, cache: DecodeCache | None = None) -> tuple[Claims, np.ndarray]:
    """`read_assignments`, and the length of each assignment's user data (-1: null): what Kafka
    looks at before it converts a classic group (KAFKA-18134, ``ConsumerGroup.fromClassicGroup``
    refuses user data it would lose).

    Raises
    ------
    ProtocolError
        As `read_assignments`.
    """
    count = len(messages.base)
    if _small(messages):
        decoded = [decode_assignment(messages.message(i)) for i in range(count)]
        sizes = [-1 if a.user_data is None else len(a.user_data) for a in decoded]
        return Claims.of_lists([a.partitions for a in decoded]), np.array(sizes, dtype=np.int64)
    read, claims = _read_assignments(messages, cache)
    lengths = np.asarray(read.fields["user_data"].value, dtype=np.int64).copy()
    for i in np.flatnonzero(~read.ok).tolist():  # (irregular: read by the reference reader)
        user_data = decode_assignment(messages.message(i)).user_data
        lengths[i] = -1 if user_data is None else len(user_data)
    return claims, lengths


#: Up to this many bytes in all, a group's messages are read one by one by the plain codec: the
#: columnar readers' fixed cost, a few dozen numpy calls (about a millisecond for JoinGroup
#: metadata), is more than the plain codec takes for a dozen small members (3 members of 160
#: bytes: 0.15 ms plain, 0.96 ms in columns; even near 1,000 bytes; 8,000 bytes: 5.5 ms against
#: 1.1 ms). Most consumer groups are that small, and their leaders read them at every rebalance.
PLAIN_UP_TO_BYTES = 1024


def _small(messages: Messages) -> bool:
    return int((messages.limit - messages.base).sum()) <= PLAIN_UP_TO_BYTES


def read_assignment(data: bytes, cache: DecodeCache | None = None) -> tuple[int, Claims, bytes | None]:
    """`decode_assignment` of one assignment as its version, its partitions as `Claims` (member
    0, in the order read) and its user data, without a tuple per partition: 1.2 s where
    `decode_assignment` takes 6.6 s on 11.5 million partitions. A property test holds it to
    `decode_assignment`.

    Raises
    ------
    ProtocolError
        As `decode_assignment` would.
    """
    joined = Messages.of([data])
    read, claims = _read_assignments(joined, cache)
    if not read.ok[0] or read.version is None:  # irregular: read by the reference reader, which has the rest too
        plain = decode_assignment(data)
        return plain.version, claims, plain.user_data
    user_data = read.fields["user_data"]
    length = int(user_data.value[0])
    start = int(joined.base[0] + user_data.at[0]) + LENGTH_SIZE[NULLABLE_BYTES]
    return int(read.version[0]), claims, None if length < 0 else bytes(joined.data[start : start + length])


def _read_assignments(joined: Messages, cache: DecodeCache | None) -> tuple[Fields, Claims]:
    """`read_assignments`, with the fields read: the regular messages at once, the others
    (not `ok` there) by the reference reader."""
    cache = DecodeCache() if cache is None else cache
    with gc_paused():
        read = read_fields(ASSIGNMENT, joined, {"assigned_partitions": _partitions_reader(cache)})
        parts = [_owned_columns(read.fields["assigned_partitions"], read.ok)]
        for i in np.flatnonzero(~read.ok).tolist():  # irregular: the reference reader raises the precise error
            parts.append(_entries_of(i, decode_assignment(joined.message(i)).partitions))
        return read, _claims_from_entries(parts)


def members_from_metadata(metadata: Mapping[str, bytes], protocol: Protocol | str) -> list[Member]:
    """`member_from_metadata` for a whole JoinGroup response (member id -> metadata bytes).

    Raises
    ------
    ProtocolError
        Naming the member whose metadata does not decode.
    """
    return read_join_group(list(metadata), Messages.of_members(metadata), protocol).owning()


class Roster(NamedTuple):
    """A JoinGroup response as the leader decodes it, in columns: the members (owning nothing
    here) and every member's owned partitions as `Claims` (member index in roster order)."""

    members: list[Member]
    claims: Claims

    def owning(self) -> list[Member]:
        """The members, each with its owned partitions as TopicPartition tuples."""
        with gc_paused():  # a large group's owned partitions are a million small tuples
            owned = self.claims.per_member(len(self.members))
            return [Member.decoded(m.id, m.topics, m.generation, m.rack, mine, m.group_instance_id)
                    for m, mine in zip(self.members, owned)]


def read_join_group(ids: Sequence[str], messages: Messages, protocol: Protocol | str,
                    cache: DecodeCache | None = None) -> Roster:
    """`members_from_metadata` as columns, without a tuple per owned partition: member
    ``ids[i]`` sent ``messages.message(i)``.

    The fixed fields of every member's subscription are read at once with numpy, topic lists
    through `DecodeCache` (members repeat them), owned-partition arrays and sticky user data of
    all members together (`read_tp_columns`). A member whose bytes are irregular anywhere is
    read again by `member_from_metadata` (the plain codec), which names the field and offset of
    what is wrong (or, for unreadable sticky user data, applies Java's fallback).

    Raises
    ------
    ProtocolError
        Naming the member whose metadata does not decode.
    """
    if _small(messages):
        return _read_join_group_plainly(list(ids), messages, resolve(protocol))
    return _read_join_group(list(ids), messages, resolve(protocol), cache)


def _read_join_group_plainly(ids: list[str], joined: Messages, protocol: Protocol) -> Roster:
    """`read_join_group` member by member with the plain codec (`member_from_metadata`), for
    groups whose metadata is `PLAIN_UP_TO_BYTES` or less."""
    members, owned = [], []
    for i, member_id in enumerate(ids):
        member = _named(member_id, member_from_metadata, member_id, joined.message(i), protocol)
        owned.append(member.owned)
        members.append(Member.decoded(member_id, member.topics, member.generation, member.rack))
    return Roster(members, Claims.of_lists(owned))


def _read_join_group(ids: list[str], joined: Messages, protocol: Protocol, cache: DecodeCache | None) -> Roster:
    cache = DecodeCache() if cache is None else cache
    with gc_paused():
        read = read_fields(SUBSCRIPTION, joined, {"topics": _topic_lists_reader(cache),
                                                  "owned_partitions": _partitions_reader(cache)})
        ok, fields = read.ok.copy(), read.fields
        racks = _racks(joined, fields["rack_id"], ok, cache)
        topics_read = fields["topics"]
        topics: list[tuple[str, ...]] = [()] * len(ids)
        for i, names in zip(cast(np.ndarray, topics_read.rows).tolist(), topics_read.value):
            topics[i] = names
        # The user data, as messages of their own (where each member's lies in its subscription).
        user_data = fields["user_data"]
        data_at = joined.base + user_data.at + LENGTH_SIZE[NULLABLE_BYTES]
        data_length = user_data.value
        parts: list[TPColumns] = []  # every member's owned partitions, from where the protocol carries them
        in_user_data: list[TPColumns] = []  # those in sticky user data
        from_user_data = np.full(len(ids), UNKNOWN_GENERATION, dtype=np.int64)
        known_from_user_data = np.zeros(len(ids), dtype=bool)
        if protocol.user_data is UserData.STICKY:
            chosen = np.flatnonzero(ok & (data_length > 0))
            inner = joined._replace(base=data_at[chosen], limit=data_at[chosen] + data_length[chosen])
            # V1 (KIP-341) when it reads; V0 when only the assignment does (no generation after it).
            sticky = read_fields(STICKY_USER_DATA_V1, inner, {"previous_assignment": _partitions_reader(cache)})
            previous = sticky.fields["previous_assignment"]
            v1, v0 = sticky.ok, previous.read & ~sticky.ok
            from_user_data[chosen[v1]] = sticky.fields["generation"].value[v1]
            known_from_user_data[chosen[v1]] = True
            columns = _owned_columns(previous, previous.read)
            in_user_data.append(columns._replace(entry_message=chosen[columns.entry_message]))
            for j in np.flatnonzero(~(v1 | v0)).tolist():
                # Read alone: user data that does not parse gets Java's fallback (nothing owned,
                # generation unknown); the rest (one whose neighbour held bad text) reads whole.
                i, user = int(chosen[j]), decode_sticky_user_data(inner.message(j))
                if user.partitions:
                    in_user_data.append(_entries_of(i, user.partitions))
                known_from_user_data[i] = user.generation is not None
                from_user_data[i] = UNKNOWN_GENERATION if user.generation is None else user.generation
        elif protocol.user_data is UserData.GENERATION:  # INT32 generation; shorter reads as unknown
            chosen = np.flatnonzero(ok & (data_length >= 0))
            inner = joined._replace(base=data_at[chosen], limit=data_at[chosen] + data_length[chosen])
            cooperative = read_fields(COOPERATIVE_USER_DATA, inner)
            known_from_user_data[chosen] = True
            from_user_data[chosen] = np.where(cooperative.ok, cooperative.fields["generation"].value,
                                              UNKNOWN_GENERATION)
        if protocol.owned_in is Carrier.USER_DATA:
            parts.extend(in_user_data)
        else:
            parts.append(_owned_columns(fields["owned_partitions"], ok))
        from_data = np.where(known_from_user_data, from_user_data, UNKNOWN_GENERATION)
        generation = protocol.generation(fields["generation_id"].value, from_data).tolist()
        members = Member.decoded_many(ids, topics, generation, racks)
        for i in np.flatnonzero(~ok).tolist():
            # Irregular bytes: the reference reader, which raises the precise error.
            member = _named(ids[i], member_from_metadata, ids[i], joined.message(i), protocol)
            parts.append(_entries_of(i, member.owned))
            members[i] = Member.decoded(ids[i], member.topics, member.generation, member.rack)
        return Roster(members, _claims_from_entries(parts))


def _partitions_reader(cache: DecodeCache) -> ArrayReader:
    """`read_fields`' reader of ``[Topic STRING, Partitions [INT32]]`` arrays: `read_tp_columns`."""
    def read(joined: Messages, rows: np.ndarray, at: np.ndarray) -> tuple[TPColumns, np.ndarray]:
        columns = read_tp_columns(joined.take(rows), at, cache)
        return columns, np.where(columns.ok, columns.end - at, -1)
    return read


def _owned_columns(field: FieldColumns, ok: np.ndarray) -> TPColumns:
    """A partitions field's columns (`_partitions_reader`) with the message index of each
    entry, for the messages where `ok` only (a message irregular anywhere is read again whole)."""
    rows = cast(np.ndarray, field.rows)
    columns = cast(TPColumns, field.value).only(ok[rows])
    return columns._replace(entry_message=rows[columns.entry_message])


def _racks(joined: Messages, rack: FieldColumns, ok: np.ndarray, cache: DecodeCache) -> list[str | None]:
    """Each member's rack (v3+, NULLABLE_STRING); a rack that is not UTF-8 makes `ok` False."""
    racks: list[str | None] = [None] * len(ok)
    raw = joined.data
    start = joined.base + rack.at + LENGTH_SIZE[NULLABLE_STRING]
    for i in np.flatnonzero(ok & (rack.value >= 0)).tolist():
        text = cache.text(bytes(raw[int(start[i]) : int(start[i] + rack.value[i])]))
        if text is None:
            ok[i] = False
        racks[i] = text
    return racks


def _topic_lists_reader(cache: DecodeCache) -> ArrayReader:
    """`read_fields`' reader of the subscription's topic list (`_topic_lists`)."""
    def read(joined: Messages, rows: np.ndarray, at: np.ndarray) -> tuple[list[tuple[str, ...]], np.ndarray]:
        return _topic_lists(joined.take(rows), at, cache)
    return read


def _topic_lists(joined: Messages, at: np.ndarray, cache: DecodeCache) -> tuple[list[tuple[str, ...]], np.ndarray]:
    """Each message's topic list (``[STRING]`` at offset `at`, at its count): the names, and its
    size in bytes (-1 when it does not read).

    Members send the same few lists (or, with random subscriptions, a list each, the same as
    at the last rebalance). Members are grouped by a hash of their list's count and first bytes
    (up to 64, never past the shortest list they could start: `topic_list_prefix`); each
    group's list is found by that hash in `cache`, or else read through one of its members,
    and every member is compared with its group's list, all those of one byte length at once.
    A member left over (a hash shared by two lists, or one too near the end of the buffer) is
    read alone.
    """
    count_at = joined.base + at
    ok = count_at + 4 <= joined.limit
    entries = np.where(ok, ints_at(joined.buffer, np.where(ok, count_at, 0), 4), -1)
    ok &= entries >= 0
    topics = np.empty(len(ok), dtype=object)
    topics[:] = _one(())
    size = np.full(len(ok), -1, dtype=np.int64)
    start = count_at + 4
    prefix = TOPIC_LIST_PREFIX
    bulk = np.flatnonzero(ok & (start + prefix <= len(joined.buffer)))
    if len(bulk):
        rows = rows_at(joined.buffer, start[bulk], prefix)
        first_name = rows[:, 0].astype(np.int64) * 256 + rows[:, 1]
        first_name = np.where(first_name >= 1 << 15, -1, first_name)  # an INT16 length
        bound = topic_list_prefix(entries[bulk], first_name)
        if bound.min() < prefix:
            rows *= np.arange(prefix) < bound[:, None]
        key = (row_hashes(rows.view(np.uint64)) ^ entries[bulk].astype(np.uint64)) * np.uint64(0x100000001B3)
        keys, first, group = np.unique(key, return_index=True, return_inverse=True)
        group = group.ravel()
        known = cache.topic_lists_by_hash
        found: list[tuple[bytes, tuple[str, ...]] | None] = list(map(known.get, keys.tolist()))
        for g in [g for g, f in enumerate(found) if f is None]:
            i = int(bulk[first[g]])
            found[g] = _topic_list(joined, i, int(at[i]), int(entries[i]), cache)
            new = found[g]
            if new is not None:
                cache.remember_by_hash(int(keys[g]), new)
        length = np.array([-1 if f is None else len(f[0]) for f in found], dtype=np.int64)
        count = np.array([-1 if f is None else len(f[1]) for f in found], dtype=np.int64)
        names = np.fromiter((None if f is None else f[1] for f in found), dtype=object, count=len(found))
        member_length = length[group]
        for width in np.unique(length[length >= 0]).tolist():
            lists = np.flatnonzero(length == width)  # the groups whose list has this many bytes
            row = np.zeros(len(found), dtype=np.int64)
            row[lists] = np.arange(len(lists))
            # (Every list of a known width was found: its entry is not None.)
            raw = b"".join(cast(tuple[bytes, tuple[str, ...]], found[g])[0] for g in lists.tolist())
            table = np.frombuffer(raw, dtype=np.uint8)
            table = table.reshape(len(lists), width)
            chosen = np.flatnonzero(member_length == width)
            members = bulk[chosen]
            same = (entries[members] == count[group[chosen]]) & (start[members] + width <= joined.limit[members])
            same[same] = equal_rows_at(joined.buffer, start[members[same]], table, row[group[chosen[same]]])
            size[members[same]] = width
            topics[members[same]] = names[group[chosen[same]]]
    for i in np.flatnonzero(ok & (size < 0)).tolist():
        alone = _topic_list(joined, i, int(at[i]), int(entries[i]), cache)
        if alone is not None:
            topics[i : i + 1], size[i] = _one(alone[1]), len(alone[0])
    return topics.tolist(), np.where(size >= 0, 4 + size, -1)


def _one(value: object) -> np.ndarray:
    """`value` as the one element of an object array (numpy would spread a tuple over many)."""
    one = np.empty(1, dtype=object)
    one[0] = value
    return one


def _topic_list(joined: Messages, i: int, at: int, entries: int, cache: DecodeCache
                ) -> tuple[bytes, tuple[str, ...]] | None:
    """Message i's topic list (its count at offset `at`) through `cache`, read (and
    remembered) first when it is new."""
    blob = joined.message(i)
    found = cache.known_topic_list(blob, at + 4, entries)
    if found is not None:
        return found
    reader = RunReader(blob, cache, at)
    try:
        reader.strings("topics")
    except ProtocolError:
        return None
    return cache.known_topic_list(blob, at + 4, entries)


def _entries_of(message: int, partitions: Sequence[TopicPartition]) -> TPColumns:
    """One message's decoded partitions as columns (one entry per partition)."""
    names = list(dict.fromkeys(tp[0] for tp in partitions))
    ids = {name: i for i, name in enumerate(names)}
    return TPColumns(np.ones(1, dtype=bool), np.zeros(1, dtype=np.int64),
                     np.full(len(partitions), message, dtype=np.int64),
                     np.array([ids[tp[0]] for tp in partitions], dtype=np.int64),
                     np.ones(len(partitions), dtype=np.int64),
                     np.array([tp[1] for tp in partitions], dtype=np.int64), names)


def _claims_from_entries(parts: list[TPColumns]) -> Claims:
    """One `Claims` from column pieces (entry_message holding member indices), ordered by
    member, each member's claims in the order read."""
    if not parts:
        return Claims.empty()
    names = list(dict.fromkeys(n for p in parts for n in p.names))
    ids = {n: i for i, n in enumerate(names)}

    def per_partition(p: TPColumns, column: np.ndarray) -> np.ndarray:
        # (one partition per entry, the usual case: the column as it is)
        one_each = len(p.partitions) == len(column) and bool((p.entry_count == 1).all())
        return column if one_each else np.repeat(column, p.entry_count)

    def topics(p: TPColumns) -> np.ndarray:
        if p.names == names[: len(p.names)]:  # (its names numbered as here: a single part, say)
            return p.entry_topic
        renumbered: np.ndarray = np.array([ids[n] for n in p.names] + [0], dtype=np.int64)[p.entry_topic]
        return renumbered

    def joined(columns: list[np.ndarray]) -> np.ndarray:
        return columns[0] if len(columns) == 1 else np.concatenate(columns)

    member = joined([per_partition(p, p.entry_message) for p in parts])
    topic = joined([per_partition(p, topics(p)) for p in parts])
    partitions = joined([p.partitions for p in parts])
    if len(member) and (member[1:] < member[:-1]).any():
        order = stable_order(member)
        member, topic, partitions = member[order], topic[order], partitions[order]
    return Claims(member, topic, partitions, names)


def encode_join_group(members: Sequence[Member], owned: Claims, generations: Sequence[int] | np.ndarray,
                      protocol: Protocol | str, cache: EncodeCache | None = None) -> Messages:
    """Each member's JoinGroup metadata (Subscription v3) as its client sends it for this
    protocol, from its topics, rack, generation and owned partitions (`owned`, member index in
    `members` order), laid end to end as `read_join_group` reads them:

    - ``"sticky"`` (eager: everything is revoked before joining): the owned partitions travel
      in V1 sticky user data with the generation; a member that never had an assignment
      (generation unknown, nothing owned) sends none.
    - ``"cooperative-sticky"``: owned partitions in the subscription (Java's order), the
      generation in the user data too.
    - Others: no user data, nothing owned.

    Every member's subscription is written into one numpy buffer: the fixed fields with one
    scatter each, each distinct topic list and rack with one scatter for all members sending it.
    """
    cache = EncodeCache() if cache is None else cache
    protocol = resolve(protocol)
    member, topic, partition = _owned_as_sent(owned, protocol)
    encoded = cache.name_table(owned.names, "owned_partitions.topic")
    generation = _int32s(generations)
    lists, list_of = cache.member_topic_lists.encode_all(list(map(attrgetter("topics"), members)))
    racks, rack_of = cache.member_racks.encode_all(list(map(attrgetter("rack"), members)))
    list_size = np.array([len(b) for b in lists], dtype=np.int64)[list_of]
    rack_size = np.array([len(b) for b in racks], dtype=np.int64)[rack_of]

    # Each message is framed around one partitions array (`frame_tp_columns`), the owned
    # partitions: in the sticky user data for "sticky", in the subscription for
    # "cooperative-sticky". `sizes` gives the user data's and the owned field's sizes from the
    # framed array's, and the field offsets follow from the schema.
    null = LENGTH_SIZE[NULLABLE_BYTES]  # null user data (-1): its length alone
    empty = 4  # an empty array: its count alone
    Sizes = Callable[[Any], tuple[Any, Any]]

    def subscription(sizes: Sizes, array: Any) -> tuple[dict[str, Any], Any]:
        """Each member's field offsets and message size when its framed array has this size."""
        user_data, owned_partitions = sizes(array)
        return field_offsets(SUBSCRIPTION, SUBSCRIPTION_VERSION, {"topics": list_size, "user_data": user_data,
                                                            "owned_partitions": owned_partitions, "rack_id": rack_size})

    def frame(sizes: Sizes, before: Any) -> tuple[Frames, dict[str, Any]]:
        frames = frame_tp_columns(member, topic, partition, encoded, len(members), before,
                                  lambda array: subscription(sizes, array)[1] - before - array)
        return frames, subscription(sizes, frames.array_end - frames.array_at)[0]

    if protocol.owned_sent_in is Carrier.USER_DATA:
        # A member that never had an assignment (generation unknown, nothing owned) sends null
        # user data; its framed array (empty) is then the subscription's owned partitions,
        # which lie where the user data's payload would.
        has_data = (generation >= 0) | (np.bincount(member, minlength=len(members)) > 0)

        def sticky_sizes(array: Any) -> tuple[Any, Any]:
            return null + has_data * _sticky_user_data(array)[1], np.where(has_data, empty, array)

        frames, offsets = frame(sticky_sizes, subscription(sticky_sizes, empty)[0]["user_data"] + null)
        array = frames.array_end - frames.array_at
        inner = _sticky_user_data(array)[0]
        user_data_at = frames.start + offsets["user_data"]
        frames.put_ints(user_data_at, np.where(has_data, sticky_sizes(array)[0] - null, -1), 4)
        frames.put_ints((frames.array_at + inner["generation"])[has_data], generation[has_data], 4)
        frames.put_ints((frames.start + offsets["owned_partitions"])[has_data], 0, 4)
    else:
        cooperative = protocol.user_data is UserData.GENERATION  # the generation in the user data too
        user_data = null + (field_offsets(COOPERATIVE_USER_DATA, None, {})[1] if cooperative else 0)

        def owned_sizes(array: Any) -> tuple[Any, Any]:
            return user_data, array

        frames, offsets = frame(owned_sizes, subscription(owned_sizes, empty)[0]["owned_partitions"])
        user_data_at = frames.start + offsets["user_data"]
        frames.put_ints(user_data_at, user_data - null if cooperative else -1, 4)
        if cooperative:
            inner = field_offsets(COOPERATIVE_USER_DATA, None, {})[0]
            frames.put_ints(user_data_at + null + inner["generation"], generation, 4)
    frames.put_ints(frames.start, SUBSCRIPTION_VERSION, 2)
    frames.put_bytes(frames.start + offsets["topics"], list_of, lists)
    frames.put_ints(frames.start + offsets["generation_id"], generation, 4)
    frames.put_bytes(frames.start + offsets["rack_id"], rack_of, racks)
    return frames.joined()


def join_group_as_read(members: Sequence[Member], owned: Claims, generations: Sequence[int] | np.ndarray,
                       protocol: Protocol | str, cache: DecodeCache | None = None) -> Roster:
    """``read_join_group(ids, encode_join_group(members, owned, generations, protocol), protocol)``
    without the bytes: the members as the leader decodes them (generations as `protocol`
    carries them, negative ones unknown) and their owned partitions in the order they travel
    (`_owned_as_sent`, grouped by topic as `frame_tp_columns` writes them). The what-if engine
    replays every rebalance through this; a property test holds it to the round trip.
    `cache`: the leader's, kept across rebalances (`DecodeCache.sent_topic_list`)."""
    protocol = resolve(protocol)
    cache = DecodeCache() if cache is None else cache
    # What the encoder would refuse is refused, in its order: names, generations, lists, racks.
    cache.check_sendable(owned.names, STRING, "owned_partitions.topic")
    member, topic, partition = _owned_as_sent(owned, protocol)
    grouped = grouped_by_topic(member, topic, len(owned.names))
    if grouped is not None:
        member, topic, partition = member[grouped], topic[grouped], partition[grouped]
    sent = _int32s(generations)
    # The Subscription's generation_id always; the user data's where the protocol has user data
    # (a "sticky" member without any sends none, and its generation is then unknown anyway).
    in_user_data = sent if protocol.user_data is not UserData.NONE else UNKNOWN_GENERATION
    generation = protocol.generation(sent, in_user_data).tolist()
    topic_lists = cache.sent_topic_lists_of(list(map(attrgetter("topics"), members)))
    racks = list(map(attrgetter("rack"), members))
    cache.check_sendable(set(racks), NULLABLE_STRING, "rack_id")
    decoded = Member.decoded_many(list(map(attrgetter("id"), members)), topic_lists, generation, racks)
    return Roster(decoded, Claims(member, topic, partition, owned.names))


def _owned_as_sent(owned: Claims, protocol: Protocol) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The owned partitions a member of `protocol` sends in its JoinGroup metadata, as columns
    in the order it writes them (member non-decreasing): in V1 sticky user data for "sticky"
    (`_in_sticky_order`), in the subscription in Java's order for "cooperative-sticky", none
    for eager protocols without user data (their members revoked everything before joining)."""
    if protocol.owned_sent_in is Carrier.SUBSCRIPTION:
        java_rank = np.empty(len(owned.names), dtype=np.int64)  # each topic's place in Java's order of names
        java_rank[java_order(owned.names)] = np.arange(len(owned.names))
        topic = owned.topic
        by_java = np.lexsort((owned.partition, java_rank[topic] if len(topic) else topic, owned.member))
        return owned.member[by_java], topic[by_java], owned.partition[by_java]
    if protocol.owned_sent_in is Carrier.USER_DATA:
        order = stable_order(owned.member)
        return _in_sticky_order(owned.member[order], owned.topic[order], owned.partition[order], owned.names)
    none = np.zeros(0, dtype=np.int64)
    return none, none, none


def _sticky_user_data(array: Any) -> tuple[dict[str, Any], Any]:
    """V1 sticky user data's field offsets and size when its partitions array has this size."""
    return field_offsets(STICKY_USER_DATA_V1, None, {"previous_assignment": array})


def _int32s(generations: Sequence[int] | np.ndarray) -> np.ndarray:
    """`generations` as an array, each checked to be an INT32 (the check runs over the types
    present, not per value: a leader sends thousands)."""
    error = ProtocolError("generation: every generation must be a 32-bit integer")
    if isinstance(generations, np.ndarray) and generations.dtype.kind in "iu":
        generation = generations  # checked in its own dtype, then cast
    else:
        generations = list(generations)
        if not all(issubclass(kind, int) for kind in set(map(type, generations))):
            raise error
        try:
            generation = np.fromiter(generations, dtype=np.int64, count=len(generations))
        except OverflowError:
            raise error from None
    if len(generation) and not (-(2**31) <= generation.min() and generation.max() < 2**31):
        raise error
    return generation.astype(np.int64, copy=False)


def _named(member_id: str, decode: Callable[..., Member], *args: object) -> Member:
    """Call ``decode(*args)``, naming the member in any ProtocolError."""
    try:
        return decode(*args)
    except ProtocolError as error:
        raise ProtocolError(f"member {member_id!r}: {error}") from None


def assignments_for(plan: Plan, protocol: Protocol | str, generation: int,
                    version: int = ASSIGNMENT_VERSION, *, as_java: bool = False,
                    user_data: bool = False) -> dict[str, bytes]:
    """SyncGroup assignment bytes per member: as a Java leader writes them, no user data, each
    member's partitions grouped by topic as they first appear in the plan (with `as_java`, in
    Java's order too, which is the plan's for Java's strategies).

    `user_data`: where the protocol can (`Protocol.assignment_user_data`: ``sticky``), each
    assignment also carries V1 sticky user data (the member's partitions and `generation`), for
    members that cannot learn their generation from their client (KIP-341). Off by default: it
    doubles the SyncGroup answer, which the coordinator stores in one record under
    ``message.max.bytes``, and Java and aiokafka members ignore it.
    """
    members, columns = _plan_columns(plan, "partitions")
    joined, _ = _assignments(*columns, len(members), _carries(protocol, as_java, user_data), generation, version)
    return dict(zip(members, joined.messages()))


def user_data_for(plan: Plan, protocol: Protocol | str, generation: int) -> dict[str, bytes]:
    """The user data each member sends at its next JoinGroup after `plan`, as the Java client
    writes it (`Protocol.user_data`): for ``sticky`` V1 sticky user data (the member's
    partitions, topics in Java's order, `sticky_topic_order`, and `generation`), all members' at
    once; for ``cooperative-sticky`` the generation; none for other protocols. Each is
    `encode_sticky_user_data` / `encode_cooperative_user_data` of that member (a property test
    holds them equal)."""
    protocol = resolve(protocol)
    if protocol.user_data is not UserData.STICKY:
        return _other_user_data(list(plan.assignment), protocol, generation)
    members, columns = _plan_columns(plan, "previous_assignment")
    return dict(zip(members, _sticky_user_data_of(*columns, len(members), generation).messages()))


def plan_bytes(plan: Plan, protocol: Protocol | str, generation: int, version: int = ASSIGNMENT_VERSION, *,
               as_java: bool = False, user_data: bool = False) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """`assignments_for` and `user_data_for` of one plan, reading it once: for ``sticky`` with
    `user_data` the user data is the copy each assignment carries."""
    protocol = resolve(protocol)
    members, columns = _plan_columns(plan, "partitions")
    joined, carried = _assignments(*columns, len(members), _carries(protocol, as_java, user_data), generation,
                                   version)
    assignments = dict(zip(members, joined.messages()))
    if protocol.user_data is not UserData.STICKY:
        return assignments, _other_user_data(members, protocol, generation)
    next_user_data = carried if carried is not None else _sticky_user_data_of(*columns, len(members), generation)
    return assignments, dict(zip(members, next_user_data.messages()))


def plan_bytes_of_claims(assigned: Claims, members: Sequence[str], protocol: Protocol | str, generation: int,
                         version: int = ASSIGNMENT_VERSION, cache: EncodeCache | None = None, *,
                         as_java: bool = False, user_data: bool = False) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """`plan_bytes` of a plan given as columns (`assigned`, member index into `members`, each
    member's partitions in the order given), as a leader that planned on arrays has it: no
    tuple per partition read. A property test holds it to `plan_bytes`."""
    protocol = resolve(protocol)
    joined, carried = _assignments_of_claims(assigned, len(members), _carries(protocol, as_java, user_data),
                                             generation, version, cache)
    assignments = dict(zip(members, joined.messages()))
    if protocol.user_data is not UserData.STICKY:
        return assignments, _other_user_data(list(members), protocol, generation)
    if carried is None:
        carried = _sticky_user_data_of_claims(assigned, len(members), generation, cache)
    return assignments, dict(zip(members, carried.messages()))


def _sticky_user_data_of_claims(assigned: Claims, members: int, generation: int, cache: EncodeCache | None
                                ) -> Messages:
    """`_sticky_user_data_of` a plan given as columns in any member order."""
    cache = EncodeCache() if cache is None else cache
    order = stable_order(assigned.member)
    encoded = list(cache.name_table(assigned.names, "previous_assignment.topic").encoded)
    return _sticky_user_data_of(assigned.member[order], assigned.topic[order], assigned.partition[order], encoded,
                                members, generation)


def _carries(protocol: Protocol | str, as_java: bool, user_data: bool) -> bool:
    """Whether assignments carry sticky user data: asked for, where the protocol can, and never
    from a Java leader."""
    return user_data and resolve(protocol).assignment_user_data and not as_java


def _plan_columns(plan: Plan, field: str) -> tuple[list[str], tuple[np.ndarray, np.ndarray, np.ndarray, list[bytes]]]:
    """The plan's members and its partitions as columns (`tp_columns_of`), every value checked."""
    members = list(plan.assignment)
    with gc_paused():  # a large plan's pairs are a million references; nothing cyclic is made
        return members, tp_columns_of([plan.assignment[m] for m in members], field)


def _other_user_data(members: list[str], protocol: Protocol, generation: int) -> dict[str, bytes]:
    """`user_data_for` a protocol without sticky user data: the generation, or nothing."""
    if protocol.user_data is UserData.GENERATION:
        return dict.fromkeys(members, encode_cooperative_user_data(generation))
    return {}


def _sticky_user_data_of(member: np.ndarray, topic: np.ndarray, partition: np.ndarray, encoded: list[bytes],
                         members: int, generation: int) -> Messages:
    """Every member's V1 sticky user data from the columns of its partitions (member
    non-decreasing): the partitions in Java's order (`_in_sticky_order`), then `generation`."""
    encode_cooperative_user_data(generation)  # checks it fits an INT32
    member, topic, partition = _in_sticky_order(member, topic, partition, [e.decode() for e in encoded])
    before = _sticky_user_data(4)[0]["previous_assignment"]
    frames = frame_tp_columns(member, topic, partition, encoded, members, before,
                              lambda array: _sticky_user_data(array)[1] - before - array)
    inner = _sticky_user_data(frames.array_end - frames.array_at)[0]
    frames.put_ints(frames.start + inner["generation"], generation, 4)
    return frames.joined()


def _sticky_order(member: np.ndarray, topic: np.ndarray, names: list[str]) -> np.ndarray | None:
    """The permutation that puts columns (member non-decreasing) in the order sticky user data
    lists them: per member, topics in `sticky_topic_order` of their first appearance, each
    topic's partitions as given; None when that is the order they are in already.

    All members at once: Java's ``computeIfAbsent`` HashMap puts a member's k-th new topic in
    bucket ``spread(hash) & (size - 1)``, newest first within a bucket, the table growing at the
    first call (one per partition) after the entry past three quarters. A member with eight
    topics in one bucket of a table under 64 (which makes Java grow early: ``computeIfAbsent``
    treeifies a bucket at its eighth key, and a small table grows instead), or in one of 64
    buckets in a larger table (where the bucket may have become a red-black tree), is ordered by
    `sticky_topic_order` itself."""
    if not len(member) or len(names) <= 1:  # (one topic: each member's in its one bucket)
        return None
    width = len(names)
    pair = member * width + topic
    cells, first = np.unique(pair, return_index=True)  # (member, topic) cells, sorted
    cell_member = cells // width
    topics_of = np.bincount(cell_member)[cell_member]  # how many topics the cell's member has
    if (topics_of <= 1).all():
        return None  # one topic per member
    size = filled(len(cells), 16)
    while (grow := topics_of - 1 > size * 3 // 4).any():
        size[grow] *= 2
    # A call after the last new topic's first partition checks once more (`hashmap_order`).
    starts = run_starts(cell_member).nonzero()[0]  # each member's first cell
    last_new = np.maximum.reduceat(first, starts)
    last_row = member.searchsorted(cell_member[starts], side="right") - 1
    called_after = (last_new < last_row).repeat(appended(starts[1:], len(cells)) - starts)
    size[called_after & (topics_of > size * 3 // 4)] *= 2
    spread_hashes = np.array([spread(h) for h in string_hashes(names)] or [0], dtype=np.int64)
    bucket = spread_hashes[cells % width] & (size - 1)
    ranked = _ranks_within(cell_member, np.lexsort((-first, bucket, cell_member)))
    by_first = _ranks_within(cell_member, np.lexsort((first, cell_member)))
    if topics_of.max() > 7:  # (eight topics in one bucket take eight topics)
        # (a table under 64: the bucket itself; a larger one's buckets split those of 64, and
        # eight keys in one of 64 may have made a tree there)
        crowded_cells, crowding = np.unique((cell_member << 32) | (bucket & 63), return_counts=True)
        crowded = np.unique(crowded_cells[(crowding > 7)] >> 32).tolist()
    else:
        crowded = []
    for m in crowded:
        mine = np.flatnonzero(cell_member == m)
        seen = mine[np.argsort(first[mine])]
        listed = [names[t] for t in (cells[seen] % width).tolist()]
        after = bool(called_after[seen[0]])
        position = {t: i for i, t in enumerate(sticky_topic_order(listed, after))}
        ranked[seen] = [position[t] for t in listed]
    if (ranked == by_first).all():
        return None
    # Each cell's place in the answer: its member's first place plus its rank; rows keep their
    # order within a cell (a stable sort on one key, not three).
    place = cell_member.searchsorted(cell_member, side="left") + ranked
    found: np.ndarray = place[cells.searchsorted(pair)].argsort(kind="stable")
    return found


def _ranks_within(group: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Each element's position within its group (`group` sorted) when `order` lists them."""
    ordered = group[order]
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.arange(len(order)) - ordered.searchsorted(ordered, side="left")
    return ranks


def _in_sticky_order(member: np.ndarray, topic: np.ndarray, partition: np.ndarray, names: list[str]
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The columns in the order sticky user data lists them (`_sticky_order`)."""
    java = _sticky_order(member, topic, names)
    if java is None:
        return member, topic, partition
    return member[java], topic[java], partition[java]


def encode_assignments(assigned: Claims, members: int, protocol: Protocol | str, generation: int,
                       version: int = ASSIGNMENT_VERSION, cache: EncodeCache | None = None, *,
                       as_java: bool = False, user_data: bool = False) -> Messages:
    """`assignments_for` a plan given as columns (`assigned`, member index < `members`; each
    member's partitions in the order given), without a tuple per partition: the assignments
    laid end to end in member order, as `read_assignments` reads them."""
    return _assignments_of_claims(assigned, members, _carries(protocol, as_java, user_data), generation, version,
                                  cache)[0]


def assignments_as_read(assigned: Claims, protocol: Protocol | str, *, as_java: bool = False,
                        user_data: bool = False) -> Claims:
    """``read_assignments(encode_assignments(assigned, members, protocol, ...))`` without the
    bytes: each member's partitions in the order its assignment lists them (in sticky user
    data's order where the assignment carries it, then grouped by topic as `frame_tp_columns`
    writes them). A property test holds it to the round trip."""
    order = stable_order(assigned.member)
    member, topic, partition = assigned.member[order], assigned.topic[order], assigned.partition[order]
    if _carries(protocol, as_java, user_data):
        member, topic, partition = _in_sticky_order(member, topic, partition, assigned.names)
    grouped = grouped_by_topic(member, topic, len(assigned.names))
    if grouped is not None:
        member, topic, partition = member[grouped], topic[grouped], partition[grouped]
    return Claims(member, topic, partition, assigned.names)


def _assignments_of_claims(assigned: Claims, members: int, carry_user_data: bool, generation: int, version: int,
                           cache: EncodeCache | None) -> tuple[Messages, Messages | None]:
    """`_assignments` of columns in any member order."""
    cache = EncodeCache() if cache is None else cache
    order = stable_order(assigned.member)
    encoded = cache.name_table(assigned.names, "partitions.topic")
    return _assignments(assigned.member[order], assigned.topic[order], assigned.partition[order], encoded,
                        members, carry_user_data, generation, version)


def _assignments(member: np.ndarray, topic: np.ndarray, partition: np.ndarray, encoded: list[bytes] | NameTable,
                 members: int, carry_user_data: bool, generation: int, version: int
                 ) -> tuple[Messages, Messages | None]:
    """Every member's assignment in one buffer, from the columns of their partitions (member
    non-decreasing): version, the array, then the user data: with `carry_user_data`, V1 sticky
    user data (the same array again, then the generation), else null. Also, with it, where each
    one's user data lies in that buffer (as messages of their own)."""
    version = check_version(ASSIGNMENT, version)
    sticky = carry_user_data
    if sticky:
        encode_cooperative_user_data(generation)  # checks it fits an INT32
        # The partitions in sticky user data order (Java's), for the assignment too: each
        # array is written once, then copied byte for byte into its user data.
        names = [e.decode() for e in (encoded.encoded if isinstance(encoded, NameTable) else encoded)]
        member, topic, partition = _in_sticky_order(member, topic, partition, names)
    null = LENGTH_SIZE[NULLABLE_BYTES]  # null user data (-1): its length alone

    def assignment(array: Any) -> tuple[dict[str, Any], Any]:
        """Each assignment's field offsets and size when its partitions array has this size."""
        user_data = null + (_sticky_user_data(array)[1] if sticky else 0)
        return field_offsets(ASSIGNMENT, version, {"assigned_partitions": array, "user_data": user_data})

    before = assignment(4)[0]["assigned_partitions"]
    frames = frame_tp_columns(member, topic, partition, encoded, members, before,
                              lambda array: assignment(array)[1] - before - array)
    array = frames.array_end - frames.array_at
    offsets, size = assignment(array)
    frames.put_ints(frames.start, version, 2)
    user_data_at = frames.start + offsets["user_data"]
    if not sticky:
        frames.put_ints(user_data_at, -1, 4)
        return frames.joined(), None
    frames.put_ints(user_data_at, size - offsets["user_data"] - null, 4)
    inner = _sticky_user_data(array)[0]
    frames.copy(frames.array_at, user_data_at + null + inner["previous_assignment"], array)
    frames.put_ints(user_data_at + null + inner["generation"], generation, 4)
    joined = frames.joined()
    return joined, joined._replace(base=user_data_at + null, limit=frames.end)
