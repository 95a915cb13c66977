"""How large a uniform group's SyncGroup answer can grow before the coordinator can no longer
store it: a generation's assignments go into one ``__consumer_offsets`` record, which the broker
limits (``message.max.bytes``, 1,048,588 bytes by default), so its assignments must fit in
about a megabyte. Per strategy, the most members (10 partitions each over 10 topics) whose
assignments, as the leader writes them, fit in 1 MiB; ours beside the bytes the Java client
writes for the same plan (Java's leader encodes no user data in an assignment) and beside ours
with the V1 sticky user data a member may ask for (``assignment_user_data=True``)."""

from __future__ import annotations

from assignor import Group, Member, assign
from assignor.wire.columnar import plan_bytes

LIMIT = 1 << 20
TOPICS = [f"orders-{i:03d}" for i in range(10)]
PER_MEMBER = 10


def group_of(members: int) -> Group:
    partitions = members * PER_MEMBER // len(TOPICS)
    return Group({t: partitions for t in TOPICS}, [Member(f"consumer-{i:05d}", TOPICS) for i in range(members)])


def assignment_bytes(strategy: str, members: int, *, as_java: bool = False, user_data: bool = False) -> int:
    """The sum of the SyncGroup assignments a leader writes for a fresh uniform group."""
    plan = assign(strategy, group_of(members))
    protocol = strategy.removeprefix("java-")
    assignments, _ = plan_bytes(plan, protocol, 1, as_java=as_java, user_data=user_data)
    return sum(map(len, assignments.values()))


def largest(strategy: str, **options: bool) -> tuple[int, int]:
    """The most members (a multiple of 10) whose assignments fit in `LIMIT`, and their bytes."""
    low, high = 10, 10
    while assignment_bytes(strategy, high, **options) <= LIMIT:
        low, high = high, high * 2
    while high - low > 10:
        middle = (low + high) // 20 * 10
        if assignment_bytes(strategy, middle, **options) <= LIMIT:
            low = middle
        else:
            high = middle
    return low, assignment_bytes(strategy, low, **options)


def rows() -> list[dict]:
    out = []
    for strategy, java in [("sticky", "java-sticky"), ("cooperative-sticky", "java-cooperative-sticky"),
                           ("range", "range"), ("roundrobin", "roundrobin")]:
        members, size = largest(strategy)
        java_members, java_size = largest(java, as_java=True)
        row = {"strategy": strategy, "members": members, "bytes": size, "java_members": java_members,
               "java_bytes": java_size}
        if strategy == "sticky":
            row["with_user_data"] = largest(strategy, user_data=True)[0]
        out.append(row)
    return out


def main() -> None:
    print("largest uniform group whose assignments fit in 1 MiB (10 topics, 10 partitions per member) | "
          "ours: members (bytes) | Java: members (bytes) | ours with V1 user data: members", flush=True)
    for row in rows():
        extra = f"{row['with_user_data']:,}" if "with_user_data" in row else "-"
        print(f"{row['strategy']} | {row['members']:,} ({row['bytes']:,}) | {row['java_members']:,} "
              f"({row['java_bytes']:,}) | {extra}", flush=True)
