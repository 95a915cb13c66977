"""The consumer protocol on the wire, as the Java client writes and reads it.

This module gathers the public names of `assignor.wire` in one place:

- the object API, one message at a time (`assignor.wire.messages`, over the plain codec):
  `Subscription`, `Assignment`, `StickyUserData`, ``encode_``/``decode_`` of each, and
  `member_from_metadata`;
- the columnar API, a whole group at once (`assignor.wire.columnar`): `Messages`, `Roster`,
  `read_join_group`, `encode_join_group`, `encode_assignments` (with the next user data:
  `plan_bytes_of_claims`), `read_assignments` (and `read_assignment`: one, with its version
  and user data), and over plain objects `members_from_metadata`, `assignments_for` and
  `user_data_for` (both at once: `plan_bytes`);
- the caches a leader keeps across rebalances (`DecodeCache`, `EncodeCache`) and
  `ProtocolError`.

The layouts themselves are tables in `assignor.wire.schema`.

Examples
--------
>>> from assignor import TopicPartition
>>> data = encode_subscription(Subscription(["t0"], owned_partitions=[TopicPartition("t0", 1)]))
>>> decode_subscription(data).owned_partitions
[TopicPartition(topic='t0', partition=1)]
"""

from assignor.errors import ProtocolError
from assignor.wire.buffers import Messages
from assignor.wire.cache import DecodeCache, EncodeCache
from assignor.wire.columnar import (
    Roster,
    assignments_for,
    encode_assignments,
    encode_join_group,
    members_from_metadata,
    plan_bytes,
    plan_bytes_of_claims,
    read_assignment,
    read_assignments,
    read_assignments_and_user_data,
    read_join_group,
    user_data_for,
)
from assignor.wire.messages import (
    HIGHEST_VERSION,
    Assignment,
    StickyUserData,
    Subscription,
    decode_assignment,
    decode_cooperative_user_data,
    decode_sticky_user_data,
    decode_subscription,
    encode_assignment,
    encode_cooperative_user_data,
    encode_sticky_user_data,
    encode_subscription,
    member_from_metadata,
)

__all__ = [
    "HIGHEST_VERSION",
    "Assignment",
    "DecodeCache",
    "EncodeCache",
    "Messages",
    "ProtocolError",
    "Roster",
    "StickyUserData",
    "Subscription",
    "assignments_for",
    "decode_assignment",
    "decode_cooperative_user_data",
    "decode_sticky_user_data",
    "decode_subscription",
    "encode_assignment",
    "encode_assignments",
    "encode_cooperative_user_data",
    "encode_join_group",
    "encode_sticky_user_data",
    "encode_subscription",
    "member_from_metadata",
    "members_from_metadata",
    "plan_bytes",
    "plan_bytes_of_claims",
    "read_assignment",
    "read_assignments",
    "read_assignments_and_user_data",
    "read_join_group",
    "user_data_for",
]
