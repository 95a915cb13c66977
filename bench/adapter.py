"""Leader time inside aiokafka: our StickyAssignor vs aiokafka's StickyPartitionAssignor.

Both get the same input, the way aiokafka hands it to a leader: each member's metadata decoded
with aiokafka's v0 schema (the sticky user data V1 is the same for both). Ours includes
re-encoding that view, decoding the user data, planning and encoding the SyncGroup bytes.
"""

from __future__ import annotations

import time


def _members(group):
    from aiokafka.coordinator.protocol import ConsumerProtocol

    from assignor.protocol import Subscription, encode_sticky_user_data, encode_subscription

    out = {}
    for member in group.members:
        user_data = encode_sticky_user_data(member.owned, member.generation) if member.owned else None
        out[member.id] = ConsumerProtocol.METADATA.decode(encode_subscription(Subscription(list(member.topics),
                                                                                          user_data)))
    return out


def run(kind: str = "random50", step: str = "leave10", limit: float = 120.0) -> dict:
    import multiprocessing

    from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

    from assignor import assign
    from assignor.integrations.aiokafka import StickyAssignor
    from assignor.workloads import java_large, next_step
    from bench.peer import _Cluster

    full = java_large(kind, 100, 100, 100)
    group = full if step == "fresh" else next_step(full, assign("sticky", full), step)
    members, cluster = _members(group), _Cluster(dict(group.topics))
    start = time.perf_counter()
    StickyAssignor().assign(cluster, members)
    ours = time.perf_counter() - start

    def peer(queue):
        begin = time.perf_counter()
        StickyPartitionAssignor.assign(cluster, members)
        queue.put(time.perf_counter() - begin)

    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    process = context.Process(target=peer, args=(queue,))
    process.start()
    try:
        theirs = queue.get(timeout=limit)
    except Exception:  # noqa: BLE001 - queue.Empty: out of time
        theirs = None
    process.kill()
    process.join()
    return {"case": f"{kind} {step}", "partitions": sum(group.topics.values()), "members": len(group.members),
            "ours": ours, "peer": theirs}
