"""What a group leader does between JoinGroup and SyncGroup, from raw bytes to raw bytes.

The embedded aiokafka assignor and the service's ``/v1/groups/{id}/sync`` both run this: decode
every member's JoinGroup metadata for the group's protocol, plan with the strategy of the same
name, and encode each member's SyncGroup assignment.

Examples
--------
>>> from assignor.protocol import Subscription, encode_subscription, decode_assignment
>>> metadata = {m: encode_subscription(Subscription(["t"])) for m in ("a", "b")}
>>> result = sync("sticky", 5, {"t": 4}, metadata)
>>> [[tp.partition for tp in decode_assignment(result.assignments[m]).partitions] for m in "ab"]
[[0, 2], [1, 3]]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from assignor.model import Group, Plan
from assignor.protocol import assignments_for, members_from_metadata
from assignor.strategies import assign

__all__ = ["SyncResult", "sync"]


@dataclass(frozen=True)
class SyncResult:
    group: Group  # what the members said, as the core sees it
    plan: Plan
    assignments: dict[str, bytes]  # member id -> ConsumerProtocolAssignment bytes


def sync(protocol: str, generation: int, topics: Mapping[str, int], metadata: Mapping[str, bytes],
         partition_racks: Mapping[str, Sequence[Sequence[str]]] | None = None) -> SyncResult:
    """Plan one rebalance for `protocol` ("sticky", "cooperative-sticky", "range", "roundrobin").

    `topics` are the partition counts the leader knows; subscribed topics missing from it get
    no partitions (Java skips topics without metadata). `generation` is the one the broker
    handed out with this JoinGroup response; sticky assignments carry it (KIP-341).

    Raises
    ------
    ProtocolError
        A member's metadata does not decode (the message names the member).
    AssignorError
        Unknown protocol or an invalid group (bad partition counts or racks).
    """
    members = members_from_metadata(metadata, protocol)
    group = Group(topics=topics, members=members, partition_racks=partition_racks)
    plan = assign(protocol, group)
    return SyncResult(group, plan, assignments_for(plan, protocol, generation))
