"""One message at a time, as objects: the consumer protocol's messages and the assignors' user
data, read and written through the plain codec (`assignor.wire.codec`) over the tables of
`assignor.wire.schema`.

Encoding is exact: subscriptions sort topics and owned partitions as Java's
``ConsumerProtocol.serializeSubscription`` does; assignments and sticky user data write topics
in the order they first appear, partitions in the given order (Java writes sticky user data in
its HashMap order: give the partitions in that order to get its bytes). Decoding is tolerant the
way Java's is (newer versions are read with the fields we know, trailing bytes are ignored,
sticky user data falls back from V1 to V0) and safe on hostile bytes (`ProtocolError`).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import cast

from assignor.errors import ProtocolError
from assignor.model import UNKNOWN_GENERATION, Member, TopicPartition
from assignor.ordering import hashmap_order, java_key, java_sorted
from assignor.protocols import Carrier, Protocol, UserData, resolve
from assignor.wire import codec
from assignor.wire.schema import (
    ASSIGNMENT,
    COOPERATIVE_USER_DATA,
    STICKY_USER_DATA_V0,
    STICKY_USER_DATA_V1,
    SUBSCRIPTION,
)

__all__ = [
    "ASSIGNMENT_VERSION",
    "HIGHEST_VERSION",
    "SUBSCRIPTION_VERSION",
    "Assignment",
    "StickyUserData",
    "Subscription",
    "decode_assignment",
    "decode_cooperative_user_data",
    "decode_sticky_user_data",
    "decode_subscription",
    "encode_assignment",
    "encode_cooperative_user_data",
    "encode_sticky_user_data",
    "encode_subscription",
    "member_from_metadata",
    "sticky_topic_order",
]

#: The highest version of each message we write (Kafka's specs give each its own version
#: range; newer versions are read with the fields known here).
SUBSCRIPTION_VERSION = SUBSCRIPTION.highest_version
ASSIGNMENT_VERSION = ASSIGNMENT.highest_version
#: The Subscription's highest version, under its earlier name.
HIGHEST_VERSION = SUBSCRIPTION_VERSION


@dataclass(frozen=True, slots=True)
class Subscription:
    """A member's JoinGroup metadata. `version` is the version read (or to report)."""

    topics: Sequence[str]
    user_data: bytes | None = None
    owned_partitions: Sequence[TopicPartition] = ()
    generation_id: int = UNKNOWN_GENERATION
    rack_id: str | None = None
    version: int = SUBSCRIPTION_VERSION

    def __post_init__(self) -> None:
        # A string is a sequence of strings: Subscription("orders") would subscribe to the
        # topics o, r, d, e, r, s.
        _not_text(self.topics, "topics", "topic names")
        _not_text(self.owned_partitions, "owned_partitions", "(topic, partition) pairs")


@dataclass(frozen=True, slots=True)
class Assignment:
    """A member's SyncGroup assignment."""

    partitions: Sequence[TopicPartition]
    user_data: bytes | None = None
    version: int = ASSIGNMENT_VERSION

    def __post_init__(self) -> None:
        _not_text(self.partitions, "partitions", "(topic, partition) pairs")


def _not_text(value: object, name: str, what: str) -> None:
    if isinstance(value, str | bytes | bytearray):
        raise ProtocolError(f"{name}: expected a list of {what}, got {type(value).__name__} {value!r:.40}")


@dataclass(frozen=True, slots=True)
class StickyUserData:
    """What the sticky user data says: previous partitions and, from V1 on, their generation."""

    partitions: list[TopicPartition] = field(default_factory=list)
    generation: int | None = None


# -- partitions grouped by topic ---------------------------------------------------------------


def _grouped(partitions: Iterable[object], name: str) -> list[tuple[str, list[int]]]:
    """(topic, partition) pairs as ``[Topic, [INT32]]`` entries: topics in the order they
    first appear, partitions in the given order."""
    try:
        pairs = list(partitions)
    except TypeError:
        raise ProtocolError(f"{name}: expected a list of (topic, partition) pairs") from None
    entries: dict[str, list[int]] = {}
    for pair in pairs:
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise ProtocolError(f"{name}: expected (topic, partition) pairs")
        topic, partition = pair
        if not isinstance(topic, str):
            raise ProtocolError(f"{name}.topic: expected strings")
        if not isinstance(partition, numbers.Integral) or isinstance(partition, bool) \
                or not 0 <= int(partition) <= 0x7FFFFFFF:
            raise ProtocolError(f"{name}.partitions: partitions must be integers in [0, 2**31)")
        entries.setdefault(topic, []).append(int(partition))
    return list(entries.items())


def _flattened(entries: list[tuple[str, list[int]]], name: str) -> list[TopicPartition]:
    """``[Topic, [INT32]]`` entries as TopicPartitions; a negative partition is an error."""
    out = []
    for topic, partitions in entries:
        for partition in partitions:
            if partition < 0:
                raise ProtocolError(f"{name}.partitions: negative partition {partition}")
            out.append(TopicPartition(topic, partition))
    return out


# -- ConsumerProtocolSubscription --------------------------------------------------------------


def encode_subscription(subscription: Subscription, version: int = SUBSCRIPTION_VERSION) -> bytes:
    """Serialise as Java does: topics sorted, owned partitions sorted by topic then partition.

    Examples
    --------
    >>> encode_subscription(Subscription(topics=["t1", "t0"]), version=0).hex()
    '0000000000020002743000027431ffffffff'
    """
    topics = list(subscription.topics)
    if not all(isinstance(t, str) for t in topics):
        raise ProtocolError("topics: expected strings")
    owned = _grouped(subscription.owned_partitions, "owned_partitions")
    owned_sorted = [(t, sorted(ps)) for t, ps in sorted(owned, key=lambda entry: java_key(entry[0]))]
    return codec.encode(SUBSCRIPTION, {
        "topics": java_sorted(topics),
        "user_data": subscription.user_data,
        "owned_partitions": owned_sorted,
        "generation_id": subscription.generation_id,
        "rack_id": subscription.rack_id,
    }, version)


def decode_subscription(data: bytes) -> Subscription:
    """Read a subscription of any version >= 0 (fields beyond v3 and trailing bytes ignored).

    A negative generation reads as unknown (-1), as Java's ``Optional.empty()``.
    """
    version, values = codec.decode(SUBSCRIPTION, data)
    generation = cast(int, values["generation_id"])
    return Subscription(
        topics=values["topics"],  # type: ignore[arg-type]
        user_data=values["user_data"],  # type: ignore[arg-type]
        owned_partitions=_flattened(list(values["owned_partitions"]), "owned_partitions"),  # type: ignore[call-overload]
        generation_id=max(generation, UNKNOWN_GENERATION),
        rack_id=values["rack_id"],  # type: ignore[arg-type]
        version=cast(int, version),
    )


# -- ConsumerProtocolAssignment ----------------------------------------------------------------


def encode_assignment(assignment: Assignment, version: int = ASSIGNMENT_VERSION) -> bytes:
    """Serialise an assignment: topics in first-appearance order (as Java groups them).

    Examples
    --------
    >>> encode_assignment(Assignment([TopicPartition("t0", 0)]), version=0).hex()
    '000000000001000274300000000100000000ffffffff'
    """
    return codec.encode(ASSIGNMENT, {
        "assigned_partitions": _grouped(assignment.partitions, "assigned_partitions"),
        "user_data": assignment.user_data,
    }, version)


def decode_assignment(data: bytes) -> Assignment:
    """Read an assignment of any version >= 0 (trailing bytes ignored)."""
    version, values = codec.decode(ASSIGNMENT, data)
    partitions = _flattened(values["assigned_partitions"], "assigned_partitions")  # type: ignore[arg-type]
    return Assignment(partitions, values["user_data"], cast(int, version))  # type: ignore[arg-type]


# -- sticky and cooperative-sticky user data ---------------------------------------------------


def encode_sticky_user_data(partitions: Iterable[TopicPartition], generation: int | None = None) -> bytes:
    """Sticky user data: V1 with `generation`, V0 when it is None, byte for byte as Java's
    ``StickyAssignor`` writes it: topics in the order of the HashMap Java groups them in
    (`sticky_topic_order`), each topic's partitions in the order given.

    Examples
    --------
    >>> encode_sticky_user_data([TopicPartition("t0", 0)], generation=1).hex()
    '0000000100027430000000010000000000000001'
    """
    pairs = list(partitions) if not isinstance(partitions, list) else partitions
    entries = _grouped(pairs, "previous_assignment")
    if len(entries) > 1:
        position = {topic: i for i, (topic, _) in enumerate(entries)}
        last = entries[-1][0]
        called_after = next(i for i, pair in enumerate(pairs) if pair[0] == last) < len(pairs) - 1
        entries = [entries[position[topic]] for topic in sticky_topic_order(list(position), called_after)]
    if generation is None:
        return codec.encode(STICKY_USER_DATA_V0, {"previous_assignment": entries})
    return codec.encode(STICKY_USER_DATA_V1, {"previous_assignment": entries, "generation": generation})


def sticky_topic_order(topics: list[str], called_after: bool = False) -> list[str]:
    """The order Java's sticky user data lists `topics` (distinct, in the order they first
    appear in the member's partitions): ``CollectionUtils.groupPartitionsByTopic`` fills a
    ``HashMap`` by ``computeIfAbsent``, once per partition, and the bytes follow its iteration
    order. `called_after`: a partition follows the first one of the last topic (each call may
    grow the table, see `assignor.ordering.hashmap_order`)."""
    if len(topics) < 2:
        return topics
    return hashmap_order(topics, computed=True, called_after=called_after)


def decode_sticky_user_data(data: bytes | None, *, strict: bool = False) -> StickyUserData:
    """Read sticky user data as Java's StickyAssignor does: V1, else V0 on the same bytes.

    Null or empty data means nothing owned and no generation. Bytes that neither version reads
    give nothing owned and generation -1 (Java's fallback), or raise `ProtocolError` when
    `strict`. Trailing bytes are ignored, so V1 cut inside its generation reads as V0.
    """
    if data is None or len(data) == 0:
        return StickyUserData([], None)
    try:
        return _read_sticky_user_data(data)
    except ProtocolError:
        if strict:
            raise
        return StickyUserData([], UNKNOWN_GENERATION)


def _read_sticky_user_data(data: bytes) -> StickyUserData:
    """V1, else V0 on the same bytes; `ProtocolError` when neither reads."""
    try:
        _, values = codec.decode(STICKY_USER_DATA_V1, data)
        generation = values["generation"]
    except ProtocolError:
        _, values = codec.decode(STICKY_USER_DATA_V0, data)
        generation = None
    partitions = _flattened(values["previous_assignment"], "previous_assignment")  # type: ignore[arg-type]
    return StickyUserData(partitions, generation)  # type: ignore[arg-type]


def encode_cooperative_user_data(generation: int) -> bytes:
    """Cooperative-sticky user data: the generation as INT32."""
    return codec.encode(COOPERATIVE_USER_DATA, {"generation": generation})


def decode_cooperative_user_data(data: bytes | None) -> int | None:
    """The generation in cooperative-sticky user data: None when absent, -1 when unreadable."""
    if data is None:
        return None
    try:
        _, values = codec.decode(COOPERATIVE_USER_DATA, data)
    except ProtocolError:
        if not isinstance(data, bytes | bytearray | memoryview):
            raise
        return UNKNOWN_GENERATION
    return cast(int, values["generation"])


# -- the leader's view of one member -----------------------------------------------------------


def member_from_metadata(member_id: str, metadata: bytes, protocol: Protocol | str) -> Member:
    """Build the core Member from a JoinGroup member's metadata for this protocol (an
    `assignor.protocols.Protocol`, or its name).

    Owned partitions come from where the protocol carries them (`Protocol.owned_in`): the sticky
    user data for the eager ``sticky`` protocol (eager members revoke everything before joining,
    so Subscription v1+ owned partitions are empty), Subscription v1+ ``owned_partitions``
    otherwise. The generation, as Java's assignors read it (`Protocol.generation_in`): for
    ``sticky`` the one in the sticky user data alone (V1; -1 for V0 or no user data), even where
    a Subscription v2+ ``generation_id`` says otherwise (``StickyAssignor.memberData``); for
    ``cooperative-sticky`` Subscription v2+ ``generation_id`` when it is known (>= 0), else the
    cooperative user data's (``CooperativeStickyAssignor.memberData``).

    Raises
    ------
    ProtocolError
        When the subscription bytes do not decode (sticky user data falls back as Java's does).
    """
    protocol = resolve(protocol)
    subscription = decode_subscription(metadata)
    owned: Sequence[TopicPartition] = subscription.owned_partitions
    from_user_data = None
    if protocol.user_data is UserData.STICKY:
        sticky = decode_sticky_user_data(subscription.user_data)
        from_user_data = sticky.generation
        if protocol.owned_in is Carrier.USER_DATA:
            owned = sticky.partitions
    elif protocol.user_data is UserData.GENERATION:
        from_user_data = decode_cooperative_user_data(subscription.user_data)
    generation = int(protocol.generation(subscription.generation_id,
                                         UNKNOWN_GENERATION if from_user_data is None else from_user_data))
    return Member(member_id, topics=subscription.topics, owned=owned, generation=generation,
                  rack=subscription.rack_id)
