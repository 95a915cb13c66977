"""The JSON form of groups and plans, shared by the CLI and the HTTP service.

Group::

    {"topics": {"t0": 2},
     "members": [{"id": "c0", "topics": ["t0"], "owned": [["t0", 0]], "generation": 3, "rack": null}]}

``owned``, ``generation`` (default -1) and ``rack`` are optional; an optional top-level
``"partition_racks": {"t0": [["r1", "r2"], ["r2", "r3"]]}`` gives each partition's replica
racks (KIP-881). Shape errors raise
`InvalidGroupError` naming the field; claims of partitions that do not exist are *not* errors
(the strategies drop them, as a leader must).
"""

from __future__ import annotations

from itertools import groupby
from operator import itemgetter
from typing import Any

from assignor._arrays import gc_paused
from assignor.errors import InvalidGroupError
from assignor.model import UNKNOWN_GENERATION, Group, Member, Plan, TopicPartition

__all__ = ["group_from_json", "group_to_json", "plan_to_json"]

_MEMBER_KEYS = {"id", "topics", "owned", "generation", "rack"}


def group_from_json(data: Any) -> Group:
    """Build a Group from its JSON form, with errors that name the offending field."""
    if not isinstance(data, dict):
        raise InvalidGroupError("group: expected an object with 'topics' and 'members'")
    unknown = set(data) - {"topics", "members", "partition_racks"}
    if unknown:
        raise InvalidGroupError(f"group: unknown field(s) {sorted(unknown)}")
    topics = data.get("topics")
    if not isinstance(topics, dict):
        raise InvalidGroupError("topics: expected an object of topic name -> partition count")
    members = data.get("members", [])
    if not isinstance(members, list):
        raise InvalidGroupError("members: expected a list")
    return Group(topics=topics, members=[_member(i, m) for i, m in enumerate(members)],
                 partition_racks=data.get("partition_racks"))


def _member(index: int, data: Any) -> Member:
    where = f"members[{index}]"
    if not isinstance(data, dict):
        raise InvalidGroupError(f"{where}: expected an object")
    unknown = set(data) - _MEMBER_KEYS
    if unknown:
        raise InvalidGroupError(f"{where}: unknown field(s) {sorted(unknown)}")
    if "id" not in data:
        raise InvalidGroupError(f"{where}.id: required")
    topics = data.get("topics", [])
    if not isinstance(topics, list):
        raise InvalidGroupError(f"{where}.topics: expected a list of topic names")
    claims = partitions_from_json(data.get("owned") or [], f"{where}.owned")
    generation = data.get("generation")
    try:
        return Member(
            data["id"],
            topics=topics,
            owned=claims,
            generation=UNKNOWN_GENERATION if generation is None else generation,
            rack=data.get("rack"),
        )
    except InvalidGroupError as error:
        raise InvalidGroupError(f"{where}: {error}") from None


def partitions_from_json(value: Any, where: str) -> list[TopicPartition]:
    """``[[topic, partition], ...]`` as TopicPartitions; any other shape is an error naming
    `where` and the entry (a hostile but well-formed claim, such as a negative partition, is
    the strategies' to drop, not an error here).

    Raises
    ------
    InvalidGroupError
        When `value` is not a list of [string, integer] pairs.
    """
    if not isinstance(value, list):
        raise InvalidGroupError(f"{where}: expected a list of [topic, partition] pairs")
    partitions = []
    for j, pair in enumerate(value):
        if not (isinstance(pair, list | tuple) and len(pair) == 2 and isinstance(pair[0], str)
                and isinstance(pair[1], int) and not isinstance(pair[1], bool)):
            raise InvalidGroupError(f"{where}[{j}]: expected [topic, partition], got {pair!r}")
        partitions.append(TopicPartition(pair[0], pair[1]))
    return partitions


def group_to_json(group: Group) -> dict[str, Any]:
    racks = {} if group.partition_racks is None else {
        "partition_racks": {t: [list(r) for r in rows] for t, rows in group.partition_racks.items()}}
    with gc_paused():  # a large group's claims become a million small lists (see `plan_to_json`)
        return {
            **racks,
            "topics": dict(group.topics),
            "members": [
                {"id": m.id, "topics": list(m.topics), "owned": list(map(list, m.owned)),
                 "generation": m.generation, "rack": m.rack}
                for m in group.members
            ],
        }


def plan_to_columns_json(plan: Plan) -> dict[str, Any]:
    """The compact form of a plan: per member, each topic's partitions in the plan's order.

    Examples
    --------
    >>> plan_to_columns_json(Plan("sticky", {"a": [TopicPartition("t", 1), TopicPartition("u", 0),
    ...                                            TopicPartition("t", 0)]}))
    {'assignment': {'a': {'t': [1, 0], 'u': [0]}}}
    """
    out: dict[str, dict[str, list[int]]] = {}
    with gc_paused():
        for member, tps in plan.assignment.items():
            by_topic: dict[str, list[int]] = {}
            # Runs of one topic at a time (plans list a member's partitions topic by topic).
            for topic, run in groupby(tps, itemgetter(0)):
                by_topic.setdefault(topic, []).extend(map(itemgetter(1), run))
            out[member] = by_topic
    return {"assignment": out}


def plan_to_json(plan: Plan) -> dict[str, Any]:
    # list() of each TopicPartition runs in C, and no collection runs while a plan of a million
    # partitions becomes a million small lists (nothing cyclic is made).
    with gc_paused():
        return {"assignment": {m: list(map(list, tps)) for m, tps in plan.assignment.items()}}
