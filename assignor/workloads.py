"""Groups at the Java client's benchmark scales, and the next rebalance of a group.

`java_large` builds the Java client's large test inputs exactly as recorded with the vendored
golden data (``tests/golden/README.md``): names zero-padded to the width of the count,
splitmix64 for the random subscriptions. The tests and the benchmark (``bench/``) share these
generators, so a benchmark row and a test describe the same group.
"""

from __future__ import annotations

from collections.abc import Iterator

from assignor import AssignorError, Group, Member, Plan

SEED = 20241025
_MASK = 2**64 - 1


def splitmix64(seed: int) -> Iterator[int]:
    state = seed & _MASK
    while True:
        state = (state + 0x9E3779B97F4A7C15) & _MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        yield z ^ (z >> 31)


def _name(prefix: str, i: int, n: int) -> str:
    return prefix + str(i).zfill(len(str(n)))


def java_subscriptions(kind: str, topics: int, members: int) -> tuple[list[str], dict[str, list[str]]]:
    """Topic names and member -> subscription for the kinds uniform, nonequal_kafka, random50."""
    names = [_name("t", j, topics) for j in range(topics)]
    ids = [_name("c", i, members) for i in range(members)]
    if kind == "uniform":
        return names, {m: names for m in ids}
    if kind == "nonequal_kafka":
        return names, {m: (names if i < members - 1 else names[:1]) for i, m in enumerate(ids)}
    if kind == "random50":
        rng = splitmix64(SEED)
        subscriptions = {}
        for i, m in enumerate(ids):
            chosen = [names[j] for j in range(topics) if next(rng) >> 63 == 1]
            subscriptions[m] = chosen or [names[i % topics]]
        return names, subscriptions
    raise AssignorError(f"unknown kind {kind!r}")


def java_large(kind: str, topics: int, partitions: int, members: int) -> Group:
    """The fresh step: nobody owns anything, generation -1."""
    names, subscriptions = java_subscriptions(kind, topics, members)
    return Group(
        topics={t: partitions for t in names},
        members=[Member(m, topics=subs) for m, subs in subscriptions.items()],
    )


def next_step(group: Group, plan: Plan, step: str, generation: int = 1) -> Group:
    """The second step of a large case, carrying `plan` as the members' owned partitions.

    leave10: members whose index ends in 9 leave. kafka2: nobody leaves, the first member
    carries nothing (Kafka's own large test).
    """
    members = []
    for i, member in enumerate(group.members):
        if step == "leave10" and i % 10 == 9:
            continue
        owned = [] if step == "kafka2" and i == 0 else plan.assignment[member.id]
        members.append(Member(member.id, member.topics, owned=owned, generation=generation, rack=member.rack))
    return Group(topics=group.topics, members=members, partition_racks=group.partition_racks)


def carry(group: Group, plan: Plan, generation: int) -> Group:
    """The same group one rebalance later: every member owns what `plan` gave it."""
    return Group(
        topics=group.topics,
        members=[Member(m.id, m.topics, owned=plan.assignment.get(m.id, []), generation=generation, rack=m.rack)
                 for m in group.members],
        partition_racks=group.partition_racks,
    )
