"""librdkafka's rules for racks (KIP-881), which its ``range`` and ``cooperative-sticky`` share:
each partition's replica racks as it keeps them, and when it assigns by rack at all
(``rd_kafka_use_rack_aware_assignment``: per topic for ``range``, over every topic dealt for the
sticky assignor)."""

from __future__ import annotations

from collections.abc import Iterable

from assignor.model import Group

__all__ = ["replica_racks", "use_rack_aware_assignment"]


def replica_racks(group: Group, topic: str) -> list[list[str]]:
    """Each partition's replica racks, sorted and without repeats (as librdkafka's metadata
    keeps them, for its ``bsearch``); none where the group says none.

    Examples
    --------
    >>> replica_racks(Group({"t": 3}, [], {"t": [["b", "a", "b"], []]}), "t")
    [['a', 'b'], [], []]
    """
    listed = (group.partition_racks or {}).get(topic, ())
    return [sorted(set(listed[p])) if p < len(listed) else [] for p in range(group.topics[topic])]


def use_rack_aware_assignment(member_racks: Iterable[str | None], racks: Iterable[list[str]]) -> bool:
    """``rd_kafka_use_rack_aware_assignment``: a member with a rack (an empty one is none), a
    rack shared by members and replicas, and a partition whose replicas are not on every replica
    rack (`racks`: each partition's).

    Examples
    --------
    >>> use_rack_aware_assignment(["a", None], [["a"], ["b"]]), use_rack_aware_assignment(["a"], [["a"], ["a"]])
    (True, False)
    """
    wanted = {rack for rack in member_racks if rack}
    racks = list(racks)
    every = {rack for replicas in racks for rack in replicas}
    return bool(wanted & every) and any(len(replicas) != len(every) for replicas in racks)
