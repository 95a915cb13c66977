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

A versioned message starts with an INT16 version; a field is present from version ``since`` on
and reads as its ``default`` in older versions. A version newer than the newest field is read
with the fields known here (Kafka's forward compatibility). User data carries no version: the
sticky layouts are told apart by trying V1, then V0, on the same bytes (as Java does).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ASSIGNMENT",
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
]

INT16 = "INT16"
INT32 = "INT32"
STRING = "STRING"
NULLABLE_STRING = "NULLABLE_STRING"
NULLABLE_BYTES = "NULLABLE_BYTES"

#: The least bytes one value of each primitive takes: counts are checked against the bytes that
#: remain before anything is allocated (a hostile count of 2**31 - 1 fails at once).
MIN_SIZE = {INT16: 2, INT32: 4, STRING: 2, NULLABLE_STRING: 2, NULLABLE_BYTES: 4}


@dataclass(frozen=True)
class Array:
    """``[T]``: an INT32 count, then the elements. `of` is a primitive or a tuple of fields."""

    of: str | tuple[Field, ...]

    @property
    def min_element_size(self) -> int:
        if isinstance(self.of, str):
            return MIN_SIZE[self.of]
        return sum(4 if isinstance(f.type, Array) else MIN_SIZE[f.type] for f in self.of)


@dataclass(frozen=True)
class Field:
    """One field: its name, type, the version it appeared in and its value before that."""

    name: str
    type: str | Array
    since: int = 0
    default: object = None


@dataclass(frozen=True)
class Message:
    """A message layout. `versioned`: it starts with an INT16 version."""

    name: str
    fields: tuple[Field, ...]
    versioned: bool = True
    highest_version: int = 0  # the newest version written (Kafka's "validVersions")

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
