"""The requests a consumer-protocol member sends (KIP-848) beside what aiokafka sends for it,
described as data like `assignor.wire.admin`'s: ``ConsumerGroupHeartbeat`` (API 68, flexible in
every version) and ``OffsetCommit`` at version 9, the first a consumer-protocol member may commit
with (Kafka 4.3.1's ``ConsumerGroup.validateOffsetCommit`` refuses a lower version from one with
UNSUPPORTED_VERSION; it takes the member epoch in ``generation_id_or_member_epoch``). An
OffsetFetch without a member id is accepted from anyone (``validateOffsetFetch``), so aiokafka's
own serves.

Read these tables beside Kafka's message specs (4.3.1, ``ConsumerGroupHeartbeatRequest.json`` and
the others named); the tests hold them to the bytes Java's generated ``*Data`` classes write.
"""

from __future__ import annotations

from assignor.wire.admin import table
from assignor.wire.schema import INT16, INT32, INT64, NULLABLE_STRING, STRING, UUID, Array, Field, Struct

__all__ = ["CONSUMER_GROUP_HEARTBEAT", "OFFSET_COMMIT"]

#: (topic id, partitions): a member's owned partitions in a heartbeat, its assignment in the answer.
_TOPIC_PARTITIONS = (Field("topic_id", UUID), Field("partitions", Array(INT32)))

#: ConsumerGroupHeartbeat v0-1 (KIP-848): v1 adds the regex subscription and has the member make
#: its own member id. Every field but the group, member id and epoch may be null: "unchanged
#: since the last heartbeat" (a full heartbeat, the first or after an error, sends them all).
CONSUMER_GROUP_HEARTBEAT = table(68, "ConsumerGroupHeartbeat", 1, True, (
    Field("group_id", STRING),
    Field("member_id", STRING),
    Field("member_epoch", INT32),
    Field("instance_id", NULLABLE_STRING),
    Field("rack_id", NULLABLE_STRING),
    Field("rebalance_timeout_ms", INT32, default=-1),
    Field("subscribed_topic_names", Array(STRING, nullable=True)),
    Field("subscribed_topic_regex", NULLABLE_STRING, since=1),
    Field("server_assignor", NULLABLE_STRING),
    Field("topic_partitions", Array(_TOPIC_PARTITIONS, nullable=True)),
), (
    Field("throttle_time_ms", INT32),
    Field("error_code", INT16),
    Field("error_message", NULLABLE_STRING),
    Field("member_id", NULLABLE_STRING),
    Field("member_epoch", INT32),
    Field("heartbeat_interval_ms", INT32),
    Field("assignment", Struct((Field("topic_partitions", Array(_TOPIC_PARTITIONS)),), nullable=True)),
), lowest=0)

#: OffsetCommit v9 (flexible since v8): offsets by topic name, with the member epoch.
OFFSET_COMMIT = table(8, "OffsetCommit", 9, True, (
    Field("group_id", STRING),
    Field("generation_id_or_member_epoch", INT32),
    Field("member_id", STRING),
    Field("group_instance_id", NULLABLE_STRING),
    Field("topics", Array((
        Field("name", STRING),
        Field("partitions", Array((Field("partition_index", INT32), Field("committed_offset", INT64),
                                   Field("committed_leader_epoch", INT32), Field("committed_metadata",
                                                                                 NULLABLE_STRING)))),
    ))),
), (
    Field("throttle_time_ms", INT32),
    Field("topics", Array((
        Field("name", STRING),
        Field("partitions", Array((Field("partition_index", INT32), Field("error_code", INT16)))),
    ))),
))
