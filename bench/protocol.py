"""Leader wire work at Java scale: decode every member's JoinGroup metadata (subscription and
sticky user data) of a 2,000-member group owning 1,000,000 partitions, and encode the SyncGroup
assignments; ours vs aiokafka's own protocol structs on the same bytes, in the same process."""

from __future__ import annotations

import time
from collections import defaultdict


def best_of(function, repeat: int) -> tuple[float, object]:
    """The fastest of `repeat` calls of `function` (seconds), and its last result (each call
    timed once the previous result is gone: freeing a large one is not the call's time)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        result = None
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def run(repeat: int = 3) -> dict:
    from assignor import assign, protocol
    from assignor.workloads import java_large

    group = java_large("uniform", 500, 2000, 2000)
    plan = assign("sticky", group)
    # What aiokafka and Java members send for "sticky": Subscription v0 with V1 user data.
    metadata = {
        m.id: protocol.encode_subscription(
            protocol.Subscription(m.topics, protocol.encode_sticky_user_data(plan.assignment[m.id], 5)), version=0)
        for m in group.members
    }
    decode, members = best_of(lambda: protocol.members_from_metadata(metadata, "sticky"), repeat)
    owned = sum(len(m.owned) for m in members)
    encode, _ = best_of(lambda: protocol.assignments_for(plan, "sticky", 6, version=0), repeat)
    row = {"members": len(members), "owned": owned, "decode": decode, "encode": encode, "ours": decode + encode}
    try:
        peer_decode, peer_encode = _aiokafka(metadata, plan, repeat)
        row.update(peer_decode=peer_decode, peer_encode=peer_encode, peer=peer_decode + peer_encode)
    except ImportError:
        row.update(peer=None)
    return row


def _aiokafka(metadata: dict, plan, repeat: int) -> tuple[float, float]:
    from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyAssignorUserDataV1
    from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment, ConsumerProtocolMemberMetadata

    def decode():
        out = {}
        for member_id, data in metadata.items():
            subscription = ConsumerProtocolMemberMetadata.decode(data)
            user_data = StickyAssignorUserDataV1.decode(subscription.user_data)
            out[member_id] = [(t, p) for t, ps in user_data.previous_assignment for p in ps]
        return out

    def encode():
        out = {}
        for member_id, partitions in plan.assignment.items():
            by_topic = defaultdict(list)
            for tp in partitions:
                by_topic[tp.topic].append(tp.partition)
            out[member_id] = ConsumerProtocolMemberAssignment(0, sorted(by_topic.items()), b"").encode()
        return out

    return best_of(decode, repeat)[0], best_of(encode, repeat)[0]
