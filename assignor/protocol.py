"""The consumer protocol on the wire, as the Java client writes and reads it.

Messages (Kafka's classic encoding: big-endian, STRING = INT16 length + UTF-8, arrays = INT32
count; every message here starts with an INT16 version):

ConsumerProtocolSubscription
    v0  Topics [STRING]; UserData NULLABLE_BYTES
    v1  + OwnedPartitions [Topic STRING, Partitions [INT32]]   (KIP-429)
    v2  + GenerationId INT32, default -1                        (KIP-792)
    v3  + RackId NULLABLE_STRING, default null                  (KIP-881)
ConsumerProtocolAssignment (same layout in v0-v3)
    AssignedPartitions [Topic STRING, Partitions [INT32]]; UserData NULLABLE_BYTES
Sticky user data (``"sticky"``, no version prefix; KIP-54, KIP-341)
    V0  [Topic STRING, Partitions [INT32]];  V1 = V0 + Generation INT32
Cooperative-sticky user data: Generation INT32.

Encoding is exact: subscriptions sort topics and owned partitions as Java's
``ConsumerProtocol.serializeSubscription`` does; assignments and sticky user data write topics
in the order they first appear, partitions in the given order. Decoding is tolerant the way
Java's is (newer versions are read with the fields we know, trailing bytes are ignored, sticky
user data falls back from V1 to V0) and safe on hostile bytes: anything that does not decode
raises `ProtocolError` naming the field and offset, after checking every length against the
bytes that remain.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import NamedTuple

import numpy as np

from assignor._arrays import stable_order
from assignor._layout import Claims, gc_paused, java_key, java_order, topic_partitions
from assignor._wire import (
    DecodeCache,
    Joined,
    ProtocolError,
    Reader,
    TPColumns,
    Writer,
    encode_topic_partition_arrays,
    TOPIC_LIST_PREFIX,
    equal_rows_at,
    NameTable,
    frame_tp_columns,
    ints_at,
    read_tp_columns,
    row_hashes,
    rows_at,
    topic_list_prefix,
    tp_columns_of,
)
from assignor.model import UNKNOWN_GENERATION, Member, Plan, TopicPartition

__all__ = [
    "HIGHEST_VERSION",
    "Assignment",
    "EncodeCache",
    "ProtocolError",
    "Roster",
    "StickyUserData",
    "Subscription",
    "assignments_for",
    "assignments_from_owners",
    "assignments_from_owners_joined",
    "decode_assignment",
    "decode_assignments",
    "decode_cooperative_user_data",
    "decode_sticky_user_data",
    "decode_subscription",
    "encode_assignment",
    "encode_cooperative_user_data",
    "encode_join_group",
    "encode_join_group_joined",
    "encode_sticky_user_data",
    "encode_sticky_user_data_many",
    "encode_subscription",
    "encode_subscriptions",
    "member_from_metadata",
    "members_from_metadata",
    "members_with_claims",
    "read_assignments",
    "read_assignments_joined",
    "read_join_group",
    "read_join_group_joined",
]

#: Highest ConsumerProtocol version this module writes; newer ones are read with v3's fields.
HIGHEST_VERSION = 3


@dataclass(frozen=True, slots=True)
class Subscription:
    """A member's JoinGroup metadata. `version` is the version read (or to report)."""

    topics: Sequence[str]
    user_data: bytes | None = None
    owned_partitions: Sequence[TopicPartition] = ()
    generation_id: int = UNKNOWN_GENERATION
    rack_id: str | None = None
    version: int = HIGHEST_VERSION


@dataclass(frozen=True, slots=True)
class Assignment:
    """A member's SyncGroup assignment."""

    partitions: Sequence[TopicPartition]
    user_data: bytes | None = None
    version: int = HIGHEST_VERSION


@dataclass(frozen=True, slots=True)
class StickyUserData:
    """What the sticky user data says: previous partitions and, from V1 on, their generation."""

    partitions: list[TopicPartition] = field(default_factory=list)
    generation: int | None = None


# -- shared pieces -------------------------------------------------------------------------


def _version(version: int) -> int:
    if not isinstance(version, int) or isinstance(version, bool) or not 0 <= version <= HIGHEST_VERSION:
        raise ProtocolError(f"version: must be 0..{HIGHEST_VERSION}, got {version!r}")
    return version


def _topic_partitions_bytes(partitions: Iterable[TopicPartition], field_name: str) -> bytes:
    """One ``[Topic, [INT32]]`` array, topics in first-appearance order."""
    try:
        pairs = list(partitions)
    except TypeError:
        raise ProtocolError(f"{field_name}: expected a list of (topic, partition) pairs") from None
    return encode_topic_partition_arrays([pairs], field_name)[0]


def _read_topic_partitions(reader: Reader, field_name: str) -> list[TopicPartition]:
    return _partitions(*reader.topic_partitions(field_name))


def _partitions(names: list[str], counts, partitions: np.ndarray) -> list[TopicPartition]:
    if not len(partitions):
        return []
    if len(partitions) == len(names):  # one partition per topic: nothing to repeat
        return topic_partitions(names, partitions.tolist())
    per_partition = np.repeat(np.array(names, dtype=object), counts).tolist()
    return topic_partitions(per_partition, partitions.tolist())


# -- ConsumerProtocolSubscription ------------------------------------------------------------


def encode_subscription(subscription: Subscription, version: int = HIGHEST_VERSION) -> bytes:
    """Serialise as Java does: topics sorted, owned partitions sorted by topic then partition.

    Examples
    --------
    >>> encode_subscription(Subscription(topics=["t1", "t0"]), version=0).hex()
    '0000000000020002743000027431ffffffff'
    """
    return encode_subscriptions([subscription], version)[0]


def encode_subscriptions(subscriptions: Sequence[Subscription], version: int = HIGHEST_VERSION,
                         cache: EncodeCache | None = None) -> list[bytes]:
    """`encode_subscription` for many members at once (a group's worth), sharing the work
    members repeat: the bytes of identical topic lists, and one layout for all owned arrays."""
    version = _version(version)
    cache = EncodeCache() if cache is None else cache
    owned_arrays: list[bytes] = [b""] * len(subscriptions)
    if version >= 1:
        keys: dict[str, bytes] = {}
        owned_arrays = encode_topic_partition_arrays(
            [_sorted_owned(s.owned_partitions, keys) for s in subscriptions], "owned_partitions")
    return [_subscription_bytes(version, cache.topic_list(s.topics), s.user_data, owned, s.generation_id, s.rack_id,
                                cache) for s, owned in zip(subscriptions, owned_arrays)]


class EncodeCache:
    """What the members of one group repeat when they encode: their topic lists (Java-sorted
    and encoded once per distinct list). May be kept across rebalances."""

    MAX_NAME_TABLES = 64

    def __init__(self) -> None:
        self.topic_lists: dict[tuple, bytes] = {}
        self.names: dict[str, tuple[bytes, bytes]] = {}  # topic -> (Java sort key, STRING bytes)
        self.racks: dict[str | None, bytes] = {}  # rack -> NULLABLE_STRING bytes
        self.by_object: dict[int, tuple[tuple, bytes]] = {}
        self.name_tables: dict[tuple, NameTable] = {}
        # Each member's topic list and rack, found by the identity of its topics tuple and rack.
        self.member_topic_lists = _Interned(self.topic_list)
        self.member_racks = _Interned(self.rack)

    def name(self, topic: str, field_name: str = "topics") -> bytes:
        """A topic name's UTF-8 bytes (as in a STRING, without the length)."""
        found = self.names.get(topic)
        if found is None:
            one = Writer()
            one.string(topic, field_name)
            found = self.names[topic] = (_java_topic_key(topic), one.bytes())
        return found[1][2:]

    def name_table(self, topics: Sequence[str], field_name: str) -> NameTable:
        """The `NameTable` of these topics, kept for the next call with the same names (a
        leader encodes the same topics every rebalance)."""
        key = (field_name, *topics)
        table = self.name_tables.get(key)
        if table is None:
            if len(self.name_tables) >= self.MAX_NAME_TABLES:  # topics that keep changing
                self.name_tables.clear()
            table = self.name_tables[key] = NameTable.of([self.name(t, field_name) for t in topics])
        return table

    def rack(self, rack: str | None) -> bytes:
        """NULLABLE_STRING of a rack id."""
        found = self.racks.get(rack)
        if found is None:
            writer = Writer()
            writer.nullable_string(rack, "rack_id")
            found = self.racks[rack] = writer.bytes()
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
            found = self.topic_lists[key] = len(ordered).to_bytes(4, "big") + b"".join(names[t][1] for t in ordered)
        if isinstance(topics, tuple):
            self.by_object[id(topics)] = (topics, found)
        return found


def _subscription_bytes(version: int, topic_list: bytes, user_data: bytes | None, owned: bytes, generation: int,
                        rack: str | None, cache: EncodeCache) -> bytes:
    """One Subscription of this version from its encoded topic list and owned array."""
    if user_data is None:
        data = b"\xff\xff\xff\xff"
    elif isinstance(user_data, bytes):
        data = _INT32.pack(len(user_data)) + user_data
    else:
        writer = Writer()
        writer.nullable_bytes(user_data, "user_data")  # other bytes-likes, or the precise error
        data = writer.bytes()
    parts = [_INT16.pack(version), topic_list, data]
    if version >= 1:
        parts.append(owned)
    if version >= 2:
        try:
            parts.append(_INT32.pack(generation))
        except struct.error:
            raise ProtocolError(f"generation_id: {generation!r} does not fit the field") from None
    if version >= 3:
        parts.append(cache.rack(rack))
    return b"".join(parts)


_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


def _sorted_owned(owned: Iterable, keys: dict[str, bytes]) -> list:
    """Owned partitions in Java's order (topic as Java compares strings, then partition)."""

    def key(tp):
        topic = tp[0]
        found = keys.get(topic) if isinstance(topic, str) else None
        if found is None:
            found = keys[topic] = _java_topic_key(topic)
        return found, tp[1]

    try:
        return sorted(owned, key=key)
    except (TypeError, IndexError, ValueError):
        raise ProtocolError("owned_partitions: expected (topic, partition) pairs") from None


def _java_topic_key(topic: object) -> bytes:
    if not isinstance(topic, str):
        raise ProtocolError(f"topic: expected a string, got {type(topic).__name__}")
    return java_key(topic)


def decode_subscription(data: bytes) -> Subscription:
    """Read a subscription of any version >= 0 (fields beyond v3 and trailing bytes ignored).

    A negative generation reads as unknown (-1), as Java's ``Optional.empty()``.
    """
    return _read_subscription(Reader(data))


def _read_subscription(reader: Reader) -> Subscription:
    version = reader.int16("version")
    if version < 0:
        raise ProtocolError(f"version: unsupported subscription version {version}")
    topics = reader.strings("topics")
    user_data = reader.nullable_bytes("user_data")
    owned: list[TopicPartition] = []
    generation = UNKNOWN_GENERATION
    rack = None
    if version >= 1:
        owned = _read_topic_partitions(reader, "owned_partitions")
    if version >= 2:
        generation = max(reader.int32("generation_id"), UNKNOWN_GENERATION)
    if version >= 3:
        rack = reader.nullable_string("rack_id")
    return Subscription(topics, user_data, owned, generation, rack, version)


# -- ConsumerProtocolAssignment --------------------------------------------------------------


def encode_assignment(assignment: Assignment, version: int = HIGHEST_VERSION) -> bytes:
    """Serialise an assignment: topics in first-appearance order (as Java groups them).

    Examples
    --------
    >>> encode_assignment(Assignment([TopicPartition("t0", 0)]), version=0).hex()
    '000000000001000274300000000100000000ffffffff'
    """
    version = _version(version)
    writer = Writer()
    writer.int16(version, "version")
    writer.raw(_topic_partitions_bytes(assignment.partitions, "partitions"))
    writer.nullable_bytes(assignment.user_data, "user_data")
    return writer.bytes()


def decode_assignments(blobs: Sequence[bytes]) -> list[Assignment]:
    """`decode_assignment` for many members at once (their arrays read in lockstep).

    Raises
    ------
    ProtocolError
        For the first assignment that does not decode, as `decode_assignment` would.
    """
    blobs = list(blobs)
    claims, user_data, versions = _read_assignments(Joined.of(blobs), blobs.__getitem__)
    with gc_paused():
        owned = _claims_per_member(claims, len(blobs))
        return [Assignment(list(mine), data, version) for mine, data, version in zip(owned, user_data, versions)]


def read_assignments(blobs: Sequence[bytes]) -> Claims:
    """What each member is assigned (`Claims`, member index in `blobs` order), from SyncGroup
    assignment bytes, without a tuple per partition.

    Raises
    ------
    ProtocolError
        For the first assignment that does not decode, as `decode_assignment` would.
    """
    blobs = list(blobs)
    return _read_assignments(Joined.of(blobs), blobs.__getitem__, with_user_data=False)[0]


def read_assignments_joined(joined: Joined, cache: DecodeCache | None = None) -> Claims:
    """`read_assignments` of assignments laid end to end (`assignments_from_owners_joined`)."""
    return _read_assignments(joined, joined.message, with_user_data=False, cache=cache)[0]


def _read_assignments(joined: Joined, message, with_user_data: bool = True, cache: DecodeCache | None = None
                      ) -> tuple[Claims, list[bytes | None], list[int]]:
    """Claims, user data and version of each assignment (``message(i)``: assignment i as
    given, for the reference reader); the user data is only checked, not copied out, without
    `with_user_data`."""
    cache = DecodeCache() if cache is None else cache
    count = len(joined.base)
    with gc_paused():
        ok = joined.regular & (joined.limit - joined.base >= 2)
        version = np.where(ok, ints_at(joined.buffer, np.where(ok, joined.base, 0), 2), -1)
        ok &= version >= 0
        columns = read_tp_columns(joined, np.full(count, 2), cache)
        ok &= columns.ok
        # User data: NULLABLE_BYTES after the array.
        at = joined.base + columns.end
        ok &= at + 4 <= joined.limit
        length = np.where(ok, ints_at(joined.buffer, np.where(ok, at, 0), 4), -2)
        ok &= (length >= -1) & (at + 4 + np.maximum(length, 0) <= joined.limit)
        user_data: list[bytes | None] = [None] * count
        if with_user_data:
            for i in np.flatnonzero(ok & (length >= 0)).tolist():
                user_data[i] = bytes(joined.data[at[i] + 4 : at[i] + 4 + length[i]])
        versions = version.tolist()
        parts = [columns.only(ok)]
        for i in np.flatnonzero(~ok).tolist():  # irregular: the reference reader raises the precise error
            assignment = decode_assignment(message(i))
            user_data[i], versions[i] = assignment.user_data, assignment.version
            parts.append(_entries_of(i, assignment.partitions))
        return _claims_from_entries(parts), user_data, versions


def decode_assignment(data: bytes) -> Assignment:
    """Read an assignment of any version >= 0 (trailing bytes ignored)."""
    reader = Reader(data)
    version = reader.int16("version")
    if version < 0:
        raise ProtocolError(f"version: unsupported assignment version {version}")
    partitions = _read_topic_partitions(reader, "partitions")
    return Assignment(partitions, reader.nullable_bytes("user_data"), version)


# -- sticky and cooperative-sticky user data -------------------------------------------------


def encode_sticky_user_data(partitions: Iterable[TopicPartition], generation: int | None = None) -> bytes:
    """Sticky user data: V1 with `generation`, V0 when it is None.

    Examples
    --------
    >>> encode_sticky_user_data([TopicPartition("t0", 0)], generation=1).hex()
    '0000000100027430000000010000000000000001'
    """
    writer = Writer()
    writer.raw(_topic_partitions_bytes(partitions, "partitions"))
    if generation is not None:
        writer.int32(generation, "generation")
    return writer.bytes()


def encode_sticky_user_data_many(partitions: Sequence[Sequence[TopicPartition]],
                                 generations: Sequence[int | None]) -> list[bytes]:
    """`encode_sticky_user_data` for many members at once (one layout for all arrays)."""
    arrays = encode_topic_partition_arrays([list(p) for p in partitions], "partitions")
    return [array if g is None else array + encode_cooperative_user_data(g) for array, g in zip(arrays, generations)]


def decode_sticky_user_data(data: bytes | None, *, strict: bool = False) -> StickyUserData:
    """Read sticky user data as Java's StickyAssignor does: V1, else V0 on the same bytes.

    Null or empty data means nothing owned and no generation. Bytes that neither version reads
    give nothing owned and generation -1 (Java's fallback), or raise `ProtocolError` when
    `strict`. Trailing bytes are ignored, so V1 cut inside its generation reads as V0.
    """
    return _read_sticky_user_data(data, strict, DecodeCache())


def _read_sticky_user_data(data: bytes | None, strict: bool, cache: DecodeCache) -> StickyUserData:
    if data is None or len(data) == 0:
        return StickyUserData([], None)
    try:
        reader = Reader(data, cache)
        partitions = _read_topic_partitions(reader, "partitions")
    except ProtocolError:
        if strict:
            raise
        return StickyUserData([], UNKNOWN_GENERATION)
    if reader.remaining >= 4:
        return StickyUserData(partitions, reader.int32("generation"))
    return StickyUserData(partitions, None)


def encode_cooperative_user_data(generation: int) -> bytes:
    """Cooperative-sticky user data: the generation as INT32."""
    writer = Writer()
    writer.int32(generation, "generation")
    return writer.bytes()


def decode_cooperative_user_data(data: bytes | None) -> int | None:
    """The generation in cooperative-sticky user data: None when absent, -1 when unreadable."""
    if data is None:
        return None
    reader = Reader(data)
    return reader.int32("generation") if reader.remaining >= 4 else UNKNOWN_GENERATION


# -- the leader's view -----------------------------------------------------------------------


def member_from_metadata(member_id: str, metadata: bytes, protocol_name: str) -> Member:
    """Build the core Member from a JoinGroup member's metadata for this protocol.

    Owned partitions: from the sticky user data for the eager ``"sticky"`` protocol (eager
    members revoke everything before joining, so Subscription v1+ owned partitions are empty),
    from Subscription v1+ ``owned_partitions`` for every other protocol.

    Generation, one rule for every member and protocol: Subscription v2+ ``generation_id`` when
    it is known (>= 0), else the generation in the user data (sticky V1, cooperative INT32),
    else -1. Java takes it from the user data for "sticky" but from the subscription for
    "cooperative-sticky", so members of one group can be judged by different clocks.

    Raises
    ------
    ProtocolError
        When the subscription bytes do not decode (sticky user data falls back as Java's does).
    """
    return _member(member_id, metadata, protocol_name, DecodeCache())


def _member(member_id: str, metadata: bytes, protocol_name: str, cache: DecodeCache) -> Member:
    subscription = _read_subscription(Reader(metadata, cache))
    if protocol_name == "sticky":
        sticky = _read_sticky_user_data(subscription.user_data, False, cache)
        return _build_member(member_id, subscription, sticky.partitions, sticky.generation)
    from_user_data = None
    if protocol_name == "cooperative-sticky":
        from_user_data = decode_cooperative_user_data(subscription.user_data)
    return _build_member(member_id, subscription, subscription.owned_partitions, from_user_data)


def _build_member(member_id: str, subscription: Subscription, owned: Sequence[TopicPartition],
                  from_user_data: int | None) -> Member:
    """The generation rule: Subscription v2+ generation when known, else the user data's."""
    generation = subscription.generation_id
    if generation < 0:
        generation = UNKNOWN_GENERATION if from_user_data is None else max(from_user_data, UNKNOWN_GENERATION)
    return Member(member_id, topics=subscription.topics, owned=owned, generation=generation,
                  rack=subscription.rack_id)


def members_from_metadata(metadata: Mapping[str, bytes], protocol_name: str) -> list[Member]:
    """`member_from_metadata` for a whole JoinGroup response (member id -> metadata bytes).

    Raises
    ------
    ProtocolError
        Naming the member whose metadata does not decode.
    """
    return members_with_claims(read_join_group(metadata, protocol_name))


def members_with_claims(roster: Roster) -> list[Member]:
    """The roster's members, each with its owned partitions as TopicPartition tuples."""
    with gc_paused():  # a large group's owned partitions are a million small tuples
        owned = _claims_per_member(roster.claims, len(roster.members))
        return [Member.decoded(m.id, m.topics, m.generation, m.rack, mine) for m, mine in zip(roster.members, owned)]


class Roster(NamedTuple):
    """A JoinGroup response as the leader decodes it, in columns: the members (owning nothing
    here) and every member's owned partitions as `Claims` (member index in roster order)."""

    members: list[Member]
    claims: Claims


def read_join_group(metadata: Mapping[str, bytes], protocol_name: str, cache: DecodeCache | None = None) -> Roster:
    """`members_from_metadata` as columns, without a tuple per owned partition.

    The fixed fields of every member's subscription are read at once with numpy, topic lists
    through `DecodeCache` (members repeat them), owned-partition arrays and sticky user data of
    all members together (`read_tp_columns`). A member whose bytes are irregular anywhere is
    read again by `member_from_metadata`'s reader, which names the field and offset of what is
    wrong (or, for unreadable sticky user data, applies Java's fallback).
    """
    blobs = list(metadata.values())
    return _read_join_group(list(metadata), Joined.of(blobs), blobs.__getitem__, protocol_name, cache)


def read_join_group_joined(ids: Sequence[str], joined: Joined, protocol_name: str,
                           cache: DecodeCache | None = None) -> Roster:
    """`read_join_group` of members' metadata laid end to end (`encode_join_group_joined`):
    member ``ids[i]`` sent ``joined.message(i)``."""
    return _read_join_group(list(ids), joined, joined.message, protocol_name, cache)


def _read_join_group(ids: list[str], joined: Joined, message, protocol_name: str, cache: DecodeCache | None
                     ) -> Roster:
    """`read_join_group`; ``message(i)``: member i's metadata as given (for the reference reader)."""
    cache = DecodeCache() if cache is None else cache
    with gc_paused():
        heads = _Heads(joined, message, cache)
        parts: list[TPColumns] = []
        from_user_data = np.full(len(ids), UNKNOWN_GENERATION, dtype=np.int64)
        known_from_user_data = np.zeros(len(ids), dtype=bool)
        if protocol_name == "sticky":
            chosen = np.flatnonzero(heads.ok & (heads.data_length > 0))
            sticky = read_tp_columns(heads.joined.take(chosen), heads.data_start[chosen], cache,
                                     ends=heads.data_end[chosen])
            known_from_user_data[chosen] = True
            for j in np.flatnonzero(~sticky.ok).tolist():
                # Read alone: user data that does not parse gets Java's fallback (nothing owned,
                # generation unknown); the rest (one whose neighbour held bad text) reads whole.
                i = int(chosen[j])
                data = message(i)[heads.data_start[i] : heads.data_end[i]]
                user_data = _read_sticky_user_data(data, False, cache)
                if user_data.partitions:
                    parts.append(_entries_of(i, user_data.partitions))
                known_from_user_data[i] = user_data.generation is not None
                from_user_data[i] = UNKNOWN_GENERATION if user_data.generation is None else user_data.generation
            # V1 carries the generation after the array; V0 (fewer than 4 bytes left) does not.
            good = np.flatnonzero(sticky.ok)
            end = heads.base[chosen[good]] + sticky.end[good]
            v1 = heads.base[chosen[good]] + heads.data_end[chosen[good]] - end >= 4
            from_user_data[chosen[good[v1]]] = ints_at(heads.buffer, end[v1], 4)
            known_from_user_data[chosen[good[~v1]]] = False
            parts.append(sticky._replace(entry_message=chosen[sticky.entry_message]))
        else:
            parts.append(heads.owned._replace(entry_message=heads.v1[heads.owned.entry_message]))
            if protocol_name == "cooperative-sticky":  # INT32 generation; shorter reads as unknown
                known_from_user_data = heads.ok & (heads.data_length >= 0)
                four = np.flatnonzero(heads.ok & (heads.data_length >= 4))
                from_user_data[four] = ints_at(heads.buffer, heads.base[four] + heads.data_start[four], 4)
        # The generation rule of `_build_member`: the subscription's when known, else the user data's.
        generation = np.where(heads.generation >= 0, heads.generation,
                              np.where(known_from_user_data, np.maximum(from_user_data, UNKNOWN_GENERATION),
                                       UNKNOWN_GENERATION)).tolist()
        members = Member.decoded_many(ids, heads.topics, generation, heads.racks)
        for i in np.flatnonzero(~heads.ok).tolist():
            # Irregular bytes: the reference reader, which raises the precise error.
            member = _named(ids[i], _member, ids[i], message(i), protocol_name, cache)
            parts.append(_entries_of(i, member.owned))
            members[i] = Member.decoded(ids[i], member.topics, member.generation, member.rack)
        return Roster(members, _claims_from_entries(parts))


class _Heads:
    """Every member's subscription fields at once: version, topics, where the user data lies,
    owned partitions (v1+, as columns), generation (v2+, -1 when absent) and rack (v3+).
    ``ok`` is False for a member whose bytes are irregular anywhere."""

    def __init__(self, joined: Joined, message, cache: DecodeCache) -> None:
        n = len(joined.base)
        self.joined = joined
        self.base, limit, self.buffer = joined.base, joined.limit, joined.buffer
        buffer = self.buffer
        ok = joined.regular & (limit - self.base >= 6)
        at = np.where(ok, self.base, 0)
        version = np.where(ok, ints_at(buffer, at, 2), -1)
        entries = np.where(ok, ints_at(buffer, at + 2, 4), -1)
        ok &= (version >= 0) & (entries >= 0)
        self.topics, list_size = _topic_lists(joined, ok, entries, message, cache)
        ok &= list_size >= 0
        at = 6 + np.maximum(list_size, 0)
        ok &= self.base + at + 4 <= limit
        self.data_length = np.where(ok, ints_at(buffer, np.where(ok, self.base + at, 0), 4), -2)
        self.data_start = at + 4
        self.data_end = self.data_start + np.maximum(self.data_length, 0)
        ok &= (self.data_length >= -1) & (self.base + self.data_end <= limit)
        # Owned partitions (v1+), read for all such members at once.
        self.v1 = np.flatnonzero(ok & (version >= 1))
        owned = read_tp_columns(joined.take(self.v1), self.data_end[self.v1], cache)
        ok[self.v1[~owned.ok]] = False
        position = self.base + self.data_end
        position[self.v1] = self.base[self.v1] + owned.end
        # Generation (v2+): negative reads as unknown, as Java's Optional.empty().
        v2 = ok & (version >= 2)
        ok &= ~v2 | (position + 4 <= limit)
        v2 &= ok
        self.generation = np.full(n, UNKNOWN_GENERATION, dtype=np.int64)
        self.generation[v2] = np.maximum(ints_at(buffer, position[v2], 4), UNKNOWN_GENERATION)
        position = position + 4 * v2
        # Rack (v3+): NULLABLE_STRING.
        v3 = ok & (version >= 3)
        ok &= ~v3 | (position + 2 <= limit)
        v3 &= ok
        rack_length = np.full(n, -1, dtype=np.int64)
        rack_length[v3] = ints_at(buffer, position[v3], 2)
        ok &= ~v3 | ((rack_length >= -1) & (position + 2 + np.maximum(rack_length, 0) <= limit))
        self.racks: list[str | None] = [None] * n
        raw_buffer = buffer.data
        for i in np.flatnonzero(ok & (rack_length >= 0)).tolist():
            start = int(position[i]) + 2
            rack = cache.text(bytes(raw_buffer[start : start + int(rack_length[i])]))
            if rack is None:
                ok[i] = False
                continue
            self.racks[i] = rack
        self.ok = ok
        self.owned = owned.only(ok[self.v1])  # members irregular anywhere are read again, whole


def _topic_lists(joined: Joined, ok: np.ndarray, entries: np.ndarray, message, cache: DecodeCache
                 ) -> tuple[list[tuple[str, ...]], np.ndarray]:
    """Each member's topic list (past its count, which is `entries`): the names, and its size in
    bytes (-1 when it does not read).

    Members send the same few lists (or, with random subscriptions, a list each, the same as
    at the last rebalance). Members are grouped by a hash of their list's count and first bytes
    (up to 64, never past the shortest list they could start: `topic_list_prefix`); each
    group's list is found by that hash in `cache`, or else read through one of its members,
    and every member is compared with its group's list, all those of one byte length at once.
    A member left over (a hash shared by two lists, or one too near the end of the buffer) is
    read alone.
    """
    topics = np.empty(len(ok), dtype=object)
    topics[:] = _one(())
    size = np.full(len(ok), -1, dtype=np.int64)
    start = joined.base + 6
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
        found = list(map(known.get, keys.tolist()))
        for g in [g for g, f in enumerate(found) if f is None]:
            i = int(bulk[first[g]])
            found[g] = _topic_list(joined, i, int(entries[i]), message, cache)
            if found[g] is not None and len(known) < cache.MAX_TOPIC_LISTS:
                known[int(keys[g])] = found[g]
        length = np.array([-1 if f is None else len(f[0]) for f in found], dtype=np.int64)
        count = np.array([-1 if f is None else len(f[1]) for f in found], dtype=np.int64)
        names = np.fromiter((None if f is None else f[1] for f in found), dtype=object, count=len(found))
        member_length = length[group]
        for width in np.unique(length[length >= 0]).tolist():
            lists = np.flatnonzero(length == width)  # the groups whose list has this many bytes
            row = np.zeros(len(found), dtype=np.int64)
            row[lists] = np.arange(len(lists))
            table = np.frombuffer(b"".join(found[g][0] for g in lists.tolist()), dtype=np.uint8)
            table = table.reshape(len(lists), width)
            chosen = np.flatnonzero(member_length == width)
            members = bulk[chosen]
            same = (entries[members] == count[group[chosen]]) & (start[members] + width <= joined.limit[members])
            same[same] = equal_rows_at(joined.buffer, start[members[same]], table, row[group[chosen[same]]])
            size[members[same]] = width
            topics[members[same]] = names[group[chosen[same]]]
    for i in np.flatnonzero(ok & (size < 0)).tolist():
        found = _topic_list(joined, i, int(entries[i]), message, cache)
        if found is not None:
            topics[i : i + 1], size[i] = _one(found[1]), len(found[0])
    return topics.tolist(), size


def _one(value: object) -> np.ndarray:
    """`value` as the one element of an object array (numpy would spread a tuple over many)."""
    one = np.empty(1, dtype=object)
    one[0] = value
    return one


def _topic_list(joined: Joined, i: int, entries: int, message, cache: DecodeCache
                ) -> tuple[bytes, tuple[str, ...]] | None:
    """Member i's topic list through `cache`, read (and remembered) first when it is new."""
    blob = message(i)
    found = cache.known_topic_list(blob, 6, entries)
    if found is not None:
        return found
    reader = Reader(blob, cache)
    reader.offset = 2
    try:
        reader.strings("topics")
    except ProtocolError:
        return None
    return cache.known_topic_list(blob, 6, entries)


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
    member = np.concatenate([np.repeat(p.entry_message, p.entry_count) for p in parts])
    topic = np.concatenate([np.repeat(np.array([ids[n] for n in p.names] + [0], dtype=np.int64)[p.entry_topic],
                                      p.entry_count) for p in parts])
    partitions = np.concatenate([p.partitions for p in parts])
    if len(member) and (member[1:] < member[:-1]).any():
        order = stable_order(member)
        member, topic, partitions = member[order], topic[order], partitions[order]
    return Claims(member, topic, partitions, names)


def _claims_per_member(claims: Claims, members: int) -> list[tuple[TopicPartition, ...]]:
    """Each member's claims as TopicPartition tuples (claims ordered by member)."""
    names = np.array(claims.names, dtype=object)[claims.topic].tolist() if len(claims.topic) else []
    tps = topic_partitions(names, claims.partition.tolist())
    bounds = np.searchsorted(claims.member, np.arange(members + 1)).tolist()
    return [tuple(tps[bounds[i] : bounds[i + 1]]) for i in range(members)]


def encode_join_group(members: Sequence[Member], owned: Claims, generations: Sequence[int], protocol_name: str,
                      cache: EncodeCache | None = None) -> list[bytes]:
    """Each member's JoinGroup metadata (Subscription v3) as its client sends it for this
    protocol, from its topics, rack, generation and owned partitions (`owned`, member index in
    `members` order):

    - ``"sticky"`` (eager: everything is revoked before joining): the owned partitions travel
      in V1 sticky user data with the generation; a member that never had an assignment
      (generation unknown, nothing owned) sends none.
    - ``"cooperative-sticky"``: owned partitions in the subscription (Java's order), the
      generation in the user data too.
    - Others: no user data, nothing owned.
    """
    return encode_join_group_joined(members, owned, generations, protocol_name, cache).messages()


def encode_join_group_joined(members: Sequence[Member], owned: Claims, generations: Sequence[int],
                             protocol_name: str, cache: EncodeCache | None = None) -> Joined:
    """`encode_join_group` laid end to end in one buffer, as `read_join_group_joined` reads it.

    Every member's subscription is written into one numpy buffer: the fixed fields with one
    scatter each, each distinct topic list and rack with one scatter for all members sending it.
    """
    cache = EncodeCache() if cache is None else cache
    order = stable_order(owned.member)
    member, topic, partition = owned.member[order], owned.topic[order], owned.partition[order]
    encoded = cache.name_table(owned.names, "owned_partitions.topic")
    generation = _int32s(generations)
    lists, list_of = cache.member_topic_lists.encode_all(list(map(attrgetter("topics"), members)))
    racks, rack_of = cache.member_racks.encode_all(list(map(attrgetter("rack"), members)))
    head = 2 + np.array([len(b) for b in lists], dtype=np.int64)[list_of]  # version, topics
    rack_size = np.array([len(b) for b in racks], dtype=np.int64)[rack_of]
    # The fields around the array (see the module docstring for the layout):
    #   sticky:             user data = [len, ARRAY, generation], owned [] | generation | rack
    #                       (or null user data, ARRAY = owned [], for a member with nothing to say)
    #   cooperative-sticky: user data = [4, generation] | ARRAY = owned | generation | rack
    #   others:             null user data | ARRAY = owned [] | generation | rack
    if protocol_name == "sticky":
        has_data = (generation >= 0) | (np.bincount(member, minlength=len(members)) > 0)
        frames = frame_tp_columns(member, topic, partition, encoded, len(members), head + 4,
                                  4 + 8 * has_data + rack_size)
        frames.put_ints(frames.array_at - 4, np.where(has_data, frames.array_end - frames.array_at + 4, -1), 4)
        with_data = frames.array_end[has_data]
        frames.put_ints(with_data, generation[has_data], 4)
        frames.put_ints(with_data + 4, 0, 4)
        generation_at = frames.array_end + 8 * has_data
    elif protocol_name == "cooperative-sticky":
        java_rank = np.argsort(np.argsort(np.array([java_key(n) for n in owned.names] or [b""], dtype=object)))
        by_java = np.lexsort((partition, java_rank[topic] if len(topic) else topic, member))
        frames = frame_tp_columns(member[by_java], topic[by_java], partition[by_java], encoded, len(members),
                                  head + 8, 4 + rack_size)
        frames.put_ints(frames.array_at - 8, 4, 4)
        frames.put_ints(frames.array_at - 4, generation, 4)
        generation_at = frames.array_end
    else:
        none = np.zeros(0, dtype=np.int64)
        frames = frame_tp_columns(none, none, none, [], len(members), head + 4, 4 + rack_size)
        frames.put_ints(frames.array_at - 4, -1, 4)
        generation_at = frames.array_end
    frames.put_ints(frames.start, HIGHEST_VERSION, 2)
    frames.put_bytes(frames.start + 2, list_of, lists)
    frames.put_ints(generation_at, generation, 4)
    frames.put_bytes(generation_at + 4, rack_of, racks)
    return frames.joined()


def _int32s(generations: Sequence[int]) -> np.ndarray:
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


class _Interned:
    """Encodings of values (members' topics tuples, racks) found by the values' identity.

    A member keeps its topics tuple and rack from one rebalance to the next, so once a group
    has been seen, encoding every member's is one search of their ids in a sorted table, with
    no per-member Python call. The table holds each value (so its id stays its own) and each
    distinct encoding once (``encode`` returns one cached object for equal values).
    """

    MAX_VALUES = 1 << 16  # past this many, the table starts again (ids are never stale)

    def __init__(self, encode) -> None:
        self.encode = encode
        self.ids = np.zeros(0, dtype=np.uint64)  # sorted
        self.slots = np.zeros(0, dtype=np.int64)  # encoding index of each id
        self.values: list = []
        self.encodings: list[bytes] = []
        self.slot_of_encoding: dict[int, int] = {}

    def encode_all(self, values: list) -> tuple[list[bytes], np.ndarray]:
        """The encodings this table knows and each value's index among them."""
        ids = np.fromiter(map(id, values), dtype=np.uint64, count=len(values))
        slot = self._find(ids)
        missing = np.flatnonzero(slot < 0)
        if len(missing):
            if len(self.values) + len(missing) > self.MAX_VALUES:
                self.__init__(self.encode)
                missing = np.arange(len(values))
            new_ids, first = np.unique(ids[missing], return_index=True)
            new = [values[i] for i in missing[first].tolist()]
            new_slots = []
            for encoding in map(self.encode, new):
                slot_of = self.slot_of_encoding.setdefault(id(encoding), len(self.encodings))
                if slot_of == len(self.encodings):
                    self.encodings.append(encoding)
                new_slots.append(slot_of)
            self.values.extend(new)
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


def _named(member_id: str, decode, *args):
    """Call ``decode(*args)``, naming the member in any ProtocolError."""
    try:
        return decode(*args)
    except ProtocolError as error:
        raise ProtocolError(f"member {member_id!r}: {error}") from None


def assignments_for(plan: Plan, protocol_name: str, generation: int,
                    version: int = HIGHEST_VERSION) -> dict[str, bytes]:
    """SyncGroup assignment bytes per member.

    For ``"sticky"`` each assignment carries V1 sticky user data (the member's partitions and
    `generation`): Java and aiokafka members ignore it, and a member that reads it learns the
    generation it must report at the next rebalance (KIP-341) without asking its client.
    """
    members = list(plan.assignment)
    with gc_paused():  # a large plan's pairs are a million references; nothing cyclic is made
        columns = tp_columns_of([plan.assignment[m] for m in members], "partitions")
    joined = _assignments(*columns, len(members), protocol_name, generation, version)
    return dict(zip(members, joined.messages()))


def assignments_from_owners(layout, owner: np.ndarray, protocol_name: str, generation: int,
                            version: int = HIGHEST_VERSION, cache: EncodeCache | None = None) -> dict[str, bytes]:
    """`assignments_for` the plan given as a layout and the owner of each flat partition
    (`assignor.strategies.plan_owners`), without a tuple per partition."""
    joined = assignments_from_owners_joined(layout, owner, protocol_name, generation, version, cache)
    return dict(zip([m.id for m in layout.members], joined.messages()))


def assignments_from_owners_joined(layout, owner: np.ndarray, protocol_name: str, generation: int,
                                   version: int = HIGHEST_VERSION, cache: EncodeCache | None = None) -> Joined:
    """`assignments_from_owners` laid end to end in one buffer, in ``layout.members`` order (as
    `read_assignments_joined` reads them)."""
    cache = EncodeCache() if cache is None else cache
    flats = np.flatnonzero(owner >= 0)
    flats = flats[stable_order(owner[flats])]  # by member, then topic and partition
    encoded = cache.name_table(layout.topics, "partitions.topic")
    return _assignments(owner[flats], layout.topic_of_flat()[flats], layout.partition_of_flat()[flats], encoded,
                        len(layout.members), protocol_name, generation, version)


def _assignments(member: np.ndarray, topic: np.ndarray, partition: np.ndarray, encoded: list[bytes] | NameTable,
                 members: int, protocol_name: str, generation: int, version: int) -> Joined:
    """Every member's assignment in one buffer, from the columns of their partitions (member
    non-decreasing): version, the array, then the user data: for "sticky", V1 sticky user data
    (the same array again, then the generation), else null."""
    version = _version(version)
    if protocol_name != "sticky":
        frames = frame_tp_columns(member, topic, partition, encoded, members, 2, 4)
        frames.put_ints(frames.start, version, 2)
        frames.put_ints(frames.array_end, -1, 4)
        return frames.joined()
    encode_cooperative_user_data(generation)  # checks it fits an INT32
    # Each array is written once, then copied byte for byte behind its user data's length.
    frames = frame_tp_columns(member, topic, partition, encoded, members, 2, lambda size: 4 + size + 4)
    array_size = frames.array_end - frames.array_at
    frames.put_ints(frames.start, version, 2)
    frames.put_ints(frames.array_end, array_size + 4, 4)
    copy_at = frames.array_end + 4
    frames.copy(frames.array_at, copy_at, array_size)
    frames.put_ints(copy_at + array_size, generation, 4)
    return frames.joined()
