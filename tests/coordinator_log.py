"""What Kafka's group coordinator decided, read from the test broker's log
(``GroupMetadataManager`` at DEBUG, `bench.broker`): for each target assignment it computed for a
consumer-protocol group, the target map as it iterated it and each member's subscription then.

The lines read (Kafka 4.3, ``GroupMetadataManager``):

- ``hasMemberSubscriptionChanged``: ``[GroupId G] Member M updated its subscribed topics to:
  [a, b].`` (DEBUG; a joining member's first subscription too), the set in its iteration order;
- ``maybeUpdateTargetAssignment``: ``[GroupId G] Computed a new target assignment for epoch N
  with 'uniform' assignor in 0ms: {M=MemberAssignment(partitions={topicId=[0, 1]}), ...}.``:
  the map in the order it iterates members, topics and partitions (``range`` hands out
  ``RangeSet(from=0 (inclusive), to=2 (exclusive))``).

Both are logged by the one coordinator thread that owns the group's offsets partition, in the
order it handled them: the subscriptions in force at a target are the last logged before it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SUBSCRIBED = re.compile(r"\[GroupId (?P<group>\S+)\] Member (?P<member>\S+) updated its subscribed topics to: "
                         r"\[(?P<topics>[^\]]*)\]\.")
_TARGET = re.compile(r"\[GroupId (?P<group>\S+)\] Computed a new target assignment for epoch (?P<epoch>\d+) "
                     r"with '(?P<assignor>[^']+)' assignor in \d+ms: \{(?P<map>.*)\}\.")
_MEMBER = re.compile(r"(?P<member>[^\s=,]+)=MemberAssignment\(partitions=\{(?P<topics>.*?)\}\)(?:, |$)")
# A partition set prints as a Java set, ``[0, 1]``, or (range's) ``RangeSet(from=0 (inclusive), to=2 (exclusive))``.
_TOPIC = re.compile(r"(?P<topic>[A-Za-z0-9_-]{22})=(?:\[(?P<partitions>[\d, ]*)\]"
                    r"|RangeSet\(from=(?P<start>\d+) \(inclusive\), to=(?P<end>\d+) \(exclusive\)\))")

#: member -> topic id -> partitions, each level in the coordinator's iteration order
TargetMap = dict[str, dict[str, list[int]]]


@dataclass(frozen=True)
class Target:
    """One target assignment the coordinator computed, with what it was computed from."""

    group: str
    epoch: int
    assignor: str
    target: TargetMap
    subscriptions: dict[str, list[str]]  # member -> topic names, in the subscription set's order
    previous: TargetMap  # the group's target before this one (empty for its first)


def _target_map(text: str) -> TargetMap:
    found: TargetMap = {}
    for member in _MEMBER.finditer(text):
        found[member["member"]] = {
            topic["topic"]: (list(range(int(topic["start"]), int(topic["end"]))) if topic["start"] is not None
                             else [int(p) for p in topic["partitions"].split(",") if p.strip()])
            for topic in _TOPIC.finditer(member["topics"])}
    return found


def targets(log: str, group: str) -> list[Target]:
    """Every target the coordinator computed for `group`, in order."""
    subscriptions: dict[str, list[str]] = {}
    previous: TargetMap = {}
    found = []
    for line in log.splitlines():
        if f"[GroupId {group}]" not in line:
            continue
        subscribed = _SUBSCRIBED.search(line)
        if subscribed is not None and subscribed["group"] == group:
            topics = subscribed["topics"]
            subscriptions[subscribed["member"]] = [t.strip() for t in topics.split(",")] if topics.strip() else []
            continue
        computed = _TARGET.search(line)
        if computed is not None and computed["group"] == group:
            target = _target_map(computed["map"])
            found.append(Target(group, int(computed["epoch"]), computed["assignor"], target,
                                {m: list(subscriptions.get(m, [])) for m in target}, previous))
            previous = target
    return found
