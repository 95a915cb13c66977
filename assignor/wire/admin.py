"""The read-only requests a snapshot of live groups sends (`assignor.snapshot`), and their
responses, described as data at the one version each is sent at.

Read these tables beside Kafka's message specs (``clients/src/main/resources/common/message/``,
4.3.1: ``ApiVersionsRequest.json`` and the others named below); a field absent at the version
used here is not listed. Every version used is served by Apache Kafka 3.7 and later (KIP-896
removed none of them from 4.0); ``ConsumerGroupDescribe`` (KIP-848) is flexible in all its
versions. The plain codec (`assignor.wire.codec`) reads and writes them; the tests hold them to
bytes Java's generated ``*Data`` classes write.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from assignor.wire.schema import (
    BOOL,
    BYTES,
    INT8,
    INT16,
    INT32,
    INT64,
    NULLABLE_STRING,
    STRING,
    UUID,
    Array,
    Field,
    Message,
    Struct,
)

__all__ = ["API_VERSIONS", "CONSUMER_GROUP_DESCRIBE", "DESCRIBE_GROUPS", "FIND_COORDINATOR", "LIST_GROUPS",
           "METADATA", "NO_TOPIC_ID", "SASL_AUTHENTICATE", "SASL_HANDSHAKE", "Api", "metadata_request",
           "table"]


class Api(NamedTuple):
    """One API as sent here: its request and response layouts, the version sent when the broker
    serves it, and the lowest the layouts also describe (a field newer than it has its
    ``since``)."""

    key: int
    name: str
    version: int
    lowest: int
    request: Message
    response: Message


def table(key: int, name: str, version: int, flexible: bool, request: tuple[Field, ...],
          response: tuple[Field, ...], lowest: int | None = None) -> Api:
    """An `Api` whose request and response have these fields (sent at `version`)."""
    def message(kind: str, fields: tuple[Field, ...]) -> Message:
        return Message(f"{name}{kind}", fields, versioned=False, highest_version=version, flexible=flexible,
                       api_key=key)
    return Api(key, name, version, version if lowest is None else lowest, message("Request", request),
               message("Response", response))


#: ApiVersions v0 (not flexible, so any broker answers it): which versions of each API it serves.
#: Its response header is v0 at every version (``ApiVersionsResponse``'s special case).
API_VERSIONS = table(18, "ApiVersions", 0, False, (), (
    Field("error_code", INT16),
    Field("api_keys", Array((Field("api_key", INT16), Field("min_version", INT16), Field("max_version", INT16)))),
))

#: Metadata v12: brokers (with racks), and each topic's id and partitions with their replicas.
#: ``topics`` null asks for every topic.
METADATA = table(3, "Metadata", 12, True, (
    Field("topics", Array((Field("topic_id", UUID), Field("name", NULLABLE_STRING)), nullable=True)),
    Field("allow_auto_topic_creation", BOOL),
    Field("include_topic_authorized_operations", BOOL),
), (
    Field("throttle_time_ms", INT32),
    Field("brokers", Array((Field("node_id", INT32), Field("host", STRING), Field("port", INT32),
                            Field("rack", NULLABLE_STRING)))),
    Field("cluster_id", NULLABLE_STRING),
    Field("controller_id", INT32),
    Field("topics", Array((
        Field("error_code", INT16),
        Field("name", NULLABLE_STRING),
        Field("topic_id", UUID),
        Field("is_internal", BOOL),
        Field("partitions", Array((Field("error_code", INT16), Field("partition_index", INT32),
                                   Field("leader_id", INT32), Field("leader_epoch", INT32),
                                   Field("replica_nodes", Array(INT32)), Field("isr_nodes", Array(INT32)),
                                   Field("offline_replicas", Array(INT32))))),
        Field("topic_authorized_operations", INT32),
    ))),
))

#: The null topic id Metadata takes beside a topic's name (``Uuid.ZERO_UUID``).
NO_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA"


def metadata_request(topics: Iterable[str] | None) -> dict[str, Any]:
    """A Metadata request's values for `topics` by name (None: every topic) that creates no
    topic and asks no authorized operations."""
    wanted = None if topics is None else [(NO_TOPIC_ID, name) for name in sorted(set(topics))]
    return {"topics": wanted, "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}


#: FindCoordinator v4: the coordinators of several groups in one request (KIP-699; key type 0).
FIND_COORDINATOR = table(10, "FindCoordinator", 4, True, (
    Field("key_type", INT8),
    Field("coordinator_keys", Array(STRING)),
), (
    Field("throttle_time_ms", INT32),
    Field("coordinators", Array((Field("key", STRING), Field("node_id", INT32), Field("host", STRING),
                                 Field("port", INT32), Field("error_code", INT16),
                                 Field("error_message", NULLABLE_STRING)))),
))

#: ListGroups v5: every group a broker coordinates, with its protocol type, state and type
#: (``classic`` or ``consumer``, KIP-848).
LIST_GROUPS = table(16, "ListGroups", 5, True, (
    Field("states_filter", Array(STRING)),
    Field("types_filter", Array(STRING)),
), (
    Field("throttle_time_ms", INT32),
    Field("error_code", INT16),
    Field("groups", Array((Field("group_id", STRING), Field("protocol_type", STRING), Field("group_state", STRING),
                           Field("group_type", STRING)))),
))

#: DescribeGroups v5: a classic group's members with their JoinGroup metadata and SyncGroup
#: assignment as sent (the consumer protocol's own bytes), and the protocol chosen.
DESCRIBE_GROUPS = table(15, "DescribeGroups", 5, True, (
    Field("groups", Array(STRING)),
    Field("include_authorized_operations", BOOL),
), (
    Field("throttle_time_ms", INT32),
    Field("groups", Array((
        Field("error_code", INT16),
        Field("group_id", STRING),
        Field("group_state", STRING),
        Field("protocol_type", STRING),
        Field("protocol_data", STRING),
        Field("members", Array((Field("member_id", STRING), Field("group_instance_id", NULLABLE_STRING),
                                Field("client_id", STRING), Field("client_host", STRING),
                                Field("member_metadata", BYTES), Field("member_assignment", BYTES)))),
        Field("authorized_operations", INT32),
    ))),
))

#: ``TopicPartitions`` of ConsumerGroupDescribe: an assignment by topic id and name.
_ASSIGNMENT = Struct((Field("topic_partitions", Array((Field("topic_id", UUID), Field("topic_name", STRING),
                                                        Field("partitions", Array(INT32))))),))

#: ConsumerGroupDescribe v1 (KIP-848, API 69): a consumer group's epochs and assignor, and each
#: member's subscription, epoch, current assignment and target, in the coordinator's member order.
CONSUMER_GROUP_DESCRIBE = table(69, "ConsumerGroupDescribe", 1, True, (
    Field("group_ids", Array(STRING)),
    Field("include_authorized_operations", BOOL),
), (
    Field("throttle_time_ms", INT32),
    Field("groups", Array((
        Field("error_code", INT16),
        Field("error_message", NULLABLE_STRING),
        Field("group_id", STRING),
        Field("group_state", STRING),
        Field("group_epoch", INT32),
        Field("assignment_epoch", INT32),
        Field("assignor_name", STRING),
        Field("members", Array((
            Field("member_id", STRING),
            Field("instance_id", NULLABLE_STRING),
            Field("rack_id", NULLABLE_STRING),
            Field("member_epoch", INT32),
            Field("client_id", STRING),
            Field("client_host", STRING),
            Field("subscribed_topic_names", Array(STRING)),
            Field("subscribed_topic_regex", NULLABLE_STRING),
            Field("assignment", _ASSIGNMENT),
            Field("target_assignment", _ASSIGNMENT),
            Field("member_type", INT8, since=1, default=-1),
        ))),
        Field("authorized_operations", INT32),
    ))),
), lowest=0)

#: SaslHandshake v1 (KIP-152): the mechanism the client authenticates with, before any other
#: request but ApiVersions; then SaslAuthenticate carries its exchange.
SASL_HANDSHAKE = table(17, "SaslHandshake", 1, False, (
    Field("mechanism", STRING),
), (
    Field("error_code", INT16),
    Field("mechanisms", Array(STRING)),
))

#: SaslAuthenticate v2: one step of the mechanism's exchange (PLAIN: one; SCRAM: two).
SASL_AUTHENTICATE = table(36, "SaslAuthenticate", 2, True, (
    Field("auth_bytes", BYTES),
), (
    Field("error_code", INT16),
    Field("error_message", NULLABLE_STRING),
    Field("auth_bytes", BYTES),
    Field("session_lifetime_ms", INT64),
))
