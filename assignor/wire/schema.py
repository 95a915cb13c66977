"""The consumer protocol's messages, described once, as data.

Read these tables beside Kafka's message specs (``clients/src/main/resources/common/message/
ConsumerProtocolSubscription.json`` and ``ConsumerProtocolAssignment.json``) and the user data
layouts of ``StickyAssignor`` / ``CooperativeStickyAssignor``. The plain codec
(`assignor.wire.codec`) walks them; nothing else spells out a layout field by field.

Kafka's classic (non-flexible) primitives, all big-endian:

========================  =================================================================
INT16, INT32              signed integers
STRING                    INT16 length, then that many UTF-8 bytes
NULLABLE_STRING           as STRING; length -1 is null
NULLABLE_BYTES            INT32 length, then the bytes; length -1 is null
Array(T)                  INT32 count, then each element (T a primitive or a tuple of fields)
========================  =================================================================

Requests and responses (`assignor.wire.admin`) add INT8, INT64, BOOL, BYTES (INT32 length, never
null), UUID (16 bytes) and nested structs (`Struct`), and from their flexible versions on
(KIP-482, `Message.flexible`) write every string, bytes and array in compact form (an unsigned
varint of length + 1, 0 for null) and end every struct with tagged fields (an unsigned varint
count, then each tag, size and bytes; we write none and skip those we read).

A versioned message starts with an INT16 version; a field is present from version ``since`` on
and reads as its ``default`` in older versions. A version newer than the newest field is read
with the fields known here (Kafka's forward compatibility). User data carries no version: the
sticky layouts are told apart by trying V1, then V0, on the same bytes (as Java does).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ASSIGNMENT",
    "BOOL",
    "BYTES",
    "INT8",
    "INT64",
    "UUID",
    "COOPERATIVE_USER_DATA",
    "INT16",
    "INT32",
    "NULLABLE_BYTES",
    "NULLABLE_STRING",
    "STICKY_USER_DATA_V0",
    "STICKY_USER_DATA_V1",
    "STRING",
    "SUBSCRIPTION",
    "TOPIC_PARTITIONS",
    "Array",
    "Field",
    "Message",
    "Struct",
]

INT8 = "INT8"
INT16 = "INT16"
INT32 = "INT32"
INT64 = "INT64"
BOOL = "BOOL"
UUID = "UUID"
STRING = "STRING"
NULLABLE_STRING = "NULLABLE_STRING"
BYTES = "BYTES"
NULLABLE_BYTES = "NULLABLE_BYTES"

#: The least bytes one value of each primitive takes: counts are checked against the bytes that
#: remain before anything is allocated (a hostile count of 2**31 - 1 fails at once). In a
#: flexible message a string, bytes or array takes at least one byte (its compact length).
MIN_SIZE = {INT8: 1, BOOL: 1, INT16: 2, INT32: 4, INT64: 8, UUID: 16, STRING: 2, NULLABLE_STRING: 2, BYTES: 4,
            NULLABLE_BYTES: 4}
_COMPACT = {STRING, NULLABLE_STRING, BYTES, NULLABLE_BYTES}


@dataclass(frozen=True)
class Array:
    """``[T]``: an INT32 count (compact in a flexible message), then the elements. `of` is a
    primitive or a tuple of fields; `nullable`: the count may say null (-1, or 0 compact)."""

    of: str | tuple[Field, ...]
    nullable: bool = False

    @property
    def min_element_size(self) -> int:
        return self.least(flexible=False)

    def least(self, *, flexible: bool) -> int:
        """The fewest bytes one element takes."""
        return _least(self.of, flexible)


@dataclass(frozen=True)
class Struct:
    """A nested struct (one value, not an array): its fields in order, then (flexible) its
    tagged fields. `nullable`: an INT8 comes first, -1 for null (None) and 1 for a struct, as
    Kafka's generated messages write a nullable struct."""

    fields: tuple[Field, ...]
    nullable: bool = False


def _least(kind: str | tuple[Field, ...] | Array | Struct, flexible: bool) -> int:
    if isinstance(kind, tuple):
        return sum(_least(f.type, flexible) for f in kind) + flexible  # (+ the tagged fields' count)
    if isinstance(kind, Struct):
        return 1 if kind.nullable else _least(kind.fields, flexible)
    if isinstance(kind, Array):
        return 1 if flexible else 4
    return 1 if flexible and kind in _COMPACT else MIN_SIZE[kind]


@dataclass(frozen=True)
class Field:
    """One field: its name, type, the version it appeared in and its value before that."""

    name: str
    type: str | Array | Struct
    since: int = 0
    default: object = None


@dataclass(frozen=True)
class Message:
    """A message layout. `versioned`: it starts with an INT16 version (the consumer protocol's
    embedded messages; a request's version is in its header). `flexible`: written in Kafka's
    flexible form (KIP-482) at every version it is used at here. `api_key`: a request's or
    response's API."""

    name: str
    fields: tuple[Field, ...]
    versioned: bool = True
    highest_version: int = 0  # the newest version written (Kafka's "validVersions")
    flexible: bool = False
    api_key: int | None = None

    def fields_at(self, version: int) -> tuple[Field, ...]:
        """The fields present in this version (all known ones for newer versions)."""
        return tuple(f for f in self.fields if f.since <= version)


#: ``[Topic STRING, Partitions [INT32]]``: partitions grouped by topic (assigned, owned, sticky).
TOPIC_PARTITIONS = Array((Field("topic", STRING), Field("partitions", Array(INT32))))

#: ConsumerProtocolSubscription: a member's JoinGroup metadata.
SUBSCRIPTION = Message("ConsumerProtocolSubscription", (
    Field("topics", Array(STRING)),
    Field("user_data", NULLABLE_BYTES),
    Field("owned_partitions", TOPIC_PARTITIONS, since=1, default=()),  # KIP-429
    Field("generation_id", INT32, since=2, default=-1),  # KIP-792
    Field("rack_id", NULLABLE_STRING, since=3, default=None),  # KIP-881
), highest_version=3)

#: ConsumerProtocolAssignment: a member's SyncGroup assignment (the same layout in v0-v3).
ASSIGNMENT = Message("ConsumerProtocolAssignment", (
    Field("assigned_partitions", TOPIC_PARTITIONS),
    Field("user_data", NULLABLE_BYTES),
), highest_version=3)

#: StickyAssignor user data V0 (KIP-54): the member's previous assignment.
STICKY_USER_DATA_V0 = Message("StickyAssignorUserData V0", (
    Field("previous_assignment", TOPIC_PARTITIONS),
), versioned=False)

#: StickyAssignor user data V1 (KIP-341): V0 and the generation of that assignment.
STICKY_USER_DATA_V1 = Message("StickyAssignorUserData V1", (
    *STICKY_USER_DATA_V0.fields,
    Field("generation", INT32),
), versioned=False)

#: CooperativeStickyAssignor user data (KIP-429): the generation of the owned partitions.
COOPERATIVE_USER_DATA = Message("CooperativeStickyAssignor user data", (
    Field("generation", INT32),
), versioned=False)
