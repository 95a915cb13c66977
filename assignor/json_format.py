"""The JSON form of groups and plans, shared by the CLI and the HTTP service.

Group::

    {"topics": {"t0": 2},
     "members": [{"id": "c0", "topics": ["t0"], "owned": [["t0", 0]], "generation": 3, "rack": null}]}

``members`` is required (an empty list is a group with no members); ``owned``, ``generation``
(default -1), ``rack`` and ``group_instance_id`` (a static member's, KIP-345) are optional; an
optional top-level
``"partition_racks": {"t0": [["r1", "r2"], ["r2", "r3"]]}`` gives each partition's replica
racks (KIP-881), and ``"topic_ids": {"t0": "NHvsffp9Ed3fxWJQh-gJsQ"}`` topic ids. Shape errors raise
`InvalidGroupError` naming the field; claims of partitions that do not exist are *not* errors
(the strategies drop them, as a leader must).

A snapshot of a live group (`assignor.cluster.snapshot`) adds ``group_id``, ``protocol``
(``classic`` / ``consumer``), ``assignor``, ``group_epoch`` and ``assignment_epoch``, and per
member ``client_id``, ``member_epoch``, (consumer protocol) ``target`` and ``member_type``
(``consumer``, or ``classic`` for a member that joined by JoinGroup: a group mid-upgrade,
KIP-848) and, for a regex subscription, ``topic_regex`` (`Member.topic_regex`: its ``topics``
hold what the regex took when the snapshot was read; a what-if's new topic joins them where the
regex takes it). ``target`` is what the broker's assignor computes the next target from, so
where given it is what the member is planned from (its ``owned`` being the partitions it holds
now); the other fields describe, and plan nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from itertools import groupby
from operator import itemgetter
from typing import Any

import numpy as np

from assignor._arrays import gc_paused, run_starts, stable_order
from assignor.errors import InvalidGroupError
from assignor.model import (
    INT32_MAX,
    INT32_MIN,
    UNKNOWN_GENERATION,
    Claims,
    Group,
    Member,
    Plan,
    TopicPartition,
    topic_partitions_of_pairs,
)

__all__ = ["SNAPSHOT_FIELDS", "SNAPSHOT_MEMBER_FIELDS", "group_from_json", "group_to_json", "pack_group", "pack_plan",
           "pairs_json", "plan_json_of_claims", "plan_json_of_owners", "plan_to_columns_json", "plan_to_json",
           "readable_json", "strict_loads", "unpack_group", "unpack_plan"]

_MEMBER_KEYS = {"id", "topics", "owned", "generation", "rack", "group_instance_id", "target", "member_epoch",
                "member_type", "client_id", "topic_regex"}


def _is_int32(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and INT32_MIN <= value <= INT32_MAX


#: A snapshot's fields that describe and plan nothing (module docstring), about the group and
#: about each member, with what each must be (the service's documented `api.models.PlanRequest`
#: says the same: tests/api/test_api_schema.py holds the two to one verdict; the fleet job's rows
#: are read by the same, `pipeline.fleet`).
SNAPSHOT_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "group_id": (lambda v: isinstance(v, str), "a string"),
    "protocol": (lambda v: v in ("classic", "consumer"), '"classic" or "consumer"'),
    "assignor": (lambda v: v is None or isinstance(v, str), "a string or null"),
    "group_epoch": (_is_int32, "a 32-bit integer"),
    "assignment_epoch": (_is_int32, "a 32-bit integer"),
    "assignment_user_data": (lambda v: isinstance(v, bool), "true or false"),
}
SNAPSHOT_MEMBER_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "member_epoch": (_is_int32, "a 32-bit integer"),
    "member_type": (lambda v: v in ("classic", "consumer"), '"classic" or "consumer"'),
    "client_id": (lambda v: isinstance(v, str), "a string"),
}


def _check_described(data: dict[str, Any], fields: dict[str, tuple[Callable[[Any], bool], str]], where: str) -> None:
    for key, (valid, expected) in fields.items():
        if key in data and not valid(data[key]):
            raise InvalidGroupError(f"{where}{key}: expected {expected}, got {data[key]!r}"[:300])


def strict_loads(text: bytes) -> Any:
    """JSON as RFC 8259 has it, read the same by every entry point (the CLI, the service): UTF-8,
    no NaN or Infinity, no lone surrogate escape (text no UTF-8 can hold), no key twice in one
    object (RFC 8259 leaves its meaning to each parser, so a filter in front could check
    another request than the one read here), integers of at most 4,300 digits (Python's limit)
    and nesting Python's reader can follow.

    Raises
    ------
    ValueError
        Naming what is wrong (`json.JSONDecodeError`, `UnicodeDecodeError`, or a plain
        ValueError for the rest).
    """
    try:
        # decoded here: given bytes, `json.loads` would also take UTF-16 and UTF-32
        data = json.loads(text.decode("utf-8"), object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("nested deeper than the JSON reader follows") from None
    if b"\\ud" in text.lower():  # (rare: only then look for a lone surrogate)
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("a string is not UTF-8 (a lone surrogate escape)") from None
    return data


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                raise ValueError(f"the key {key!r} appears twice in one object")
            seen.add(key)
    return found


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def group_from_json(data: Any) -> Group:
    """Build a Group from its JSON form, with errors that name the offending field."""
    if not isinstance(data, dict):
        raise InvalidGroupError("group: expected an object with 'topics' and 'members'")
    unknown = set(data) - {"topics", "members", "partition_racks", "topic_ids", *SNAPSHOT_FIELDS}
    if unknown:
        raise InvalidGroupError(f"group: unknown field(s) {sorted(unknown)}")
    _check_described(data, SNAPSHOT_FIELDS, "")
    topics = data.get("topics")
    if not isinstance(topics, dict):
        raise InvalidGroupError("topics: expected an object of topic name -> partition count")
    if "members" not in data:  # (an empty list is a group with no members; a missing one is a mistake)
        raise InvalidGroupError("members: required")
    members = data["members"]
    if not isinstance(members, list):
        raise InvalidGroupError("members: expected a list")
    return Group(topics=topics, members=[_member(i, m) for i, m in enumerate(members)],
                 partition_racks=data.get("partition_racks"), topic_ids=data.get("topic_ids"))


def _member(index: int, data: Any) -> Member:
    where = f"members[{index}]"
    if not isinstance(data, dict):
        raise InvalidGroupError(f"{where}: expected an object")
    unknown = set(data) - _MEMBER_KEYS
    if unknown:
        raise InvalidGroupError(f"{where}: unknown field(s) {sorted(unknown)}")
    if "id" not in data:
        raise InvalidGroupError(f"{where}.id: required")
    _check_described(data, SNAPSHOT_MEMBER_FIELDS, f"{where}.")
    topics = data.get("topics", [])
    if not isinstance(topics, list):
        raise InvalidGroupError(f"{where}.topics: expected a list of topic names")
    claims = partitions_from_json(data.get("owned", []), f"{where}.owned")
    if "target" in data:  # (consumer protocol: the target is what the next one is computed from)
        claims = partitions_from_json(data["target"], f"{where}.target")
    generation = data.get("generation", UNKNOWN_GENERATION)
    if generation is None:  # the schema's integer, -1 for unknown: null is not a generation
        raise InvalidGroupError(f"{where}.generation: expected an integer ({UNKNOWN_GENERATION}: unknown), got null")
    try:
        return Member(data["id"], topics=topics, owned=claims, generation=generation, rack=data.get("rack"),
                      group_instance_id=data.get("group_instance_id"), topic_regex=data.get("topic_regex"))
    except InvalidGroupError as error:
        raise InvalidGroupError(f"{where}: {error}") from None


def partitions_from_json(value: Any, where: str) -> list[TopicPartition]:
    """``[[topic, partition], ...]`` as TopicPartitions; any other shape is an error naming
    `where` and the entry. A negative partition, or one past INT32, is an error too, as in every
    entry point that reads a group (the CLI, the service, the fleet job's rows): no consumer can
    send one (the wire's decoders refuse it). A hostile but well-formed claim, such as a partition the topic
    does not have, is the strategies' to drop, not an error here.

    Raises
    ------
    InvalidGroupError
        When `value` is not a list of [string, integer] pairs.
    """
    if not isinstance(value, list):
        raise InvalidGroupError(f"{where}: expected a list of [topic, partition] pairs")
    read = topic_partitions_of_pairs(value)  # in C, where every pair is plainly good
    if read is not None:
        return read
    return plain_partitions_from_json(value, where)


def plain_partitions_from_json(value: list[Any], where: str) -> list[TopicPartition]:
    """`partitions_from_json` of a list, pair by pair in Python: the reference the compiled
    reader (`model.topic_partitions_of_pairs`) is held to, and what names a bad pair."""
    partitions = []
    for j, pair in enumerate(value):
        if not (isinstance(pair, list | tuple) and len(pair) == 2 and isinstance(pair[0], str)
                and isinstance(pair[1], int) and not isinstance(pair[1], bool)):
            raise InvalidGroupError(f"{where}[{j}]: expected [topic, partition], got {pair!r}")
        if not 0 <= pair[1] <= INT32_MAX:  # an INT32 on the wire, never negative
            raise InvalidGroupError(f"{where}[{j}]: partition {pair[1]} of topic {pair[0]!r} is not in "
                                    f"[0, {INT32_MAX}]")
        partitions.append(TopicPartition(pair[0], pair[1]))
    return partitions


def group_to_json(group: Group) -> dict[str, Any]:
    racks = _racks_json(group)
    with gc_paused():  # a large group's claims become a million small lists (see `plan_to_json`)
        return {
            **racks,
            "topics": dict(group.topics),
            "members": [
                {"id": m.id, "topics": list(m.topics), "owned": list(map(list, m.owned)),
                 "generation": m.generation, "rack": m.rack, **_optional_member_json(m)}
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


# -- Packed forms: what a leader keeps of every generation (the service's registry) ----------------
#
# A group's claims and a plan are a pair per partition in the forms above: a million small lists
# to build and write for a large group, most of a leader's time once planning is fast. Packed,
# they are a few lists of numbers, from the columns the leader read and the arrays it planned on.
# `unpack_group` / `unpack_plan` give the forms above back (a property test holds them to
# `group_to_json` / `plan_to_json`), and pass those forms through unchanged.


def pack_group(group: Group, owned: Claims) -> dict[str, Any]:
    """`group_to_json(group)` packed: every member's claims given as columns, `owned` (member
    index in ``group.members`` order, ordered by member); the members' own ``owned`` are not
    read."""
    return {
        "packed": 1,
        **_racks_json(group),
        "topics": dict(group.topics),
        "members": [{"id": m.id, "topics": list(m.topics), "generation": m.generation, "rack": m.rack,
                     **_optional_member_json(m)} for m in group.members],
        "owned": {"names": list(owned.names), "member": owned.member.tolist(), "topic": owned.topic.tolist(),
                  "partition": owned.partition.tolist()},
    }


def unpack_group(value: dict[str, Any]) -> dict[str, Any]:
    """`group_to_json`'s form of a group kept by `pack_group` (any other value as it is)."""
    if "packed" not in value:
        return value
    owned, members = value["owned"], value["members"]
    names = owned["names"]
    claims: list[list[list[Any]]] = [[] for _ in members]
    for member, topic, partition in zip(owned["member"], owned["topic"], owned["partition"]):
        claims[member].append([names[topic], partition])
    out = {key: value[key] for key in ("partition_racks",) if key in value}
    out["topics"] = value["topics"]
    out["members"] = [{"id": m["id"], "topics": m["topics"], "owned": mine, "generation": m["generation"],
                       "rack": m["rack"], **{k: m[k] for k in ("group_instance_id", "topic_regex") if k in m}}
                      for m, mine in zip(members, claims)]
    return out


def pack_plan(topics: Sequence[str], counts: Iterable[int], members: Sequence[str],
              owner: np.ndarray) -> dict[str, Any]:
    """A plan as a leader planned it on arrays, packed: the topics in flat order with their
    partition counts, the members, and each flat partition's owner (index into `members`,
    negative when unassigned). `unpack_plan` gives ``plan_to_json`` of the plan whose members
    hold their partitions in flat order (`assignor.solver.dense.Layout.assignment`)."""
    return {"packed": 1, "topics": list(topics), "counts": [int(c) for c in counts], "members": list(members),
            "owner": owner.tolist()}


def unpack_plan(value: dict[str, Any]) -> dict[str, Any]:
    """`plan_to_json`'s form of a plan kept by `pack_plan` (any other value as it is)."""
    if "packed" not in value:
        return value
    return plan_json_of_owners(value["topics"], value["counts"], value["members"],
                               np.asarray(value["owner"], dtype=np.int64))


def plan_json_of_owners(topics: Sequence[str], counts: Iterable[int], members: Sequence[str], owner: np.ndarray,
                        columns: bool = False) -> dict[str, Any]:
    """`plan_to_json` (with `columns`, `plan_to_columns_json`) of the plan `pack_plan` describes,
    whose members hold their partitions in flat order, from its arrays: no TopicPartition made
    on the way."""
    counts = np.asarray(list(counts), dtype=np.int64)
    flats = np.flatnonzero(owner >= 0)
    by_member = flats[stable_order(owner[flats])]
    offsets = np.concatenate([[0], np.cumsum(counts)])
    topic = np.repeat(np.arange(len(counts)), counts)[by_member]
    return _plan_json(topics, members, owner[by_member], topic, (by_member - offsets[topic]).tolist(), columns)


def plan_json_of_claims(assigned: Claims, members: Sequence[str], columns: bool = False) -> dict[str, Any]:
    """`plan_to_json` (with `columns`, `plan_to_columns_json`) of a plan given as columns
    (`assigned`: member index into `members`, each member's partitions in the plan's order)."""
    order = stable_order(assigned.member)
    return _plan_json(assigned.names, members, assigned.member[order], assigned.topic[order],
                      assigned.partition[order].tolist(), columns)


def _plan_json(topics: Sequence[str], members: Sequence[str], holder: np.ndarray, topic: np.ndarray,
               partitions: list[int], columns: bool) -> dict[str, Any]:
    """The JSON forms of a plan from its columns, ordered by member (`holder`)."""
    bounds = np.searchsorted(holder, np.arange(len(members) + 1)).tolist()
    with gc_paused():  # a large plan's pairs are a million small lists; nothing cyclic is made
        if not columns:
            pairs = pairs_json(topics, topic, partitions)
            return {"assignment": {m: pairs[bounds[i] : bounds[i + 1]] for i, m in enumerate(members)}}
        out: dict[str, dict[str, list[int]]] = {m: {} for m in members}
        mine = list(out.values())
        starts = np.flatnonzero(run_starts(holder, topic))  # one run per member and topic (in flat order)
        ends = [*starts[1:].tolist(), len(partitions)]
        for start, end, member, t in zip(starts.tolist(), ends, holder[starts].tolist(), topic[starts].tolist()):
            by_topic = mine[member]
            name = topics[t]
            if name in by_topic:  # a topic met again further on in the member's list (Java's order)
                by_topic[name].extend(partitions[start:end])
            else:
                by_topic[name] = partitions[start:end]
        return {"assignment": out}


def pairs_json(names: Sequence[str], topic: np.ndarray, partitions: list[int]) -> list[list[Any]]:
    """``[[topic, partition], ...]`` (the JSON form of partitions) from columns: each one's
    topic as an index into `names`, and its partition; no TopicPartition made on the way."""
    named = np.array(list(names), dtype=object)[topic].tolist()
    return list(map(list, zip(named, partitions)))


def readable_json(value: Any, indent: int = 2) -> str:
    """`value` as JSON text for people: objects, and arrays of objects, indented, one item a
    line; any other array on one line (each member's ``[topic, partition]`` pairs, its topics).

    ``json.dumps(value, indent=2)`` writes each pair on four lines, in Python (the C encoder
    does not indent): the snapshot of a group of a million partitions is 70 MB so, written in
    1.5 s; here each one-line array is written by the C encoder, 24 MB in 0.2 s. An array is
    taken as one of objects by its first item.

    Examples
    --------
    >>> print(readable_json({"members": [{"id": "a", "owned": [["t", 0], ["t", 1]]}], "flags": []}))
    {
      "members": [
        {
          "id": "a",
          "owned": [["t", 0], ["t", 1]]
        }
      ],
      "flags": []
    }
    """
    out: list[str] = []
    _write_readable(value, 0, " " * indent, out)
    return "".join(out)


def _write_readable(value: Any, depth: int, step: str, out: list[str]) -> None:
    if isinstance(value, dict) and value:
        items: Iterable[tuple[str, Any]] = ((json.dumps(key if isinstance(key, str) else json.dumps(key)) + ": ",
                                             item) for key, item in value.items())
        opening, closing = "{", "}"
    elif isinstance(value, list | tuple) and value and isinstance(value[0], dict):
        items, opening, closing = (("", item) for item in value), "[", "]"
    else:
        out.append(json.dumps(value))
        return
    inner = "\n" + step * (depth + 1)
    out.append(opening)
    for i, (key, item) in enumerate(items):
        out.append(("," if i else "") + inner + key)
        _write_readable(item, depth + 1, step, out)
    out.append("\n" + step * depth + closing)


def _optional_member_json(member: Member) -> dict[str, str]:
    """A static member's ``group_instance_id`` and a regex member's ``topic_regex``; nothing for
    others (the form stays what it was for groups without them)."""
    return {**({} if member.group_instance_id is None else {"group_instance_id": member.group_instance_id}),
            **({} if member.topic_regex is None else {"topic_regex": member.topic_regex})}


def _racks_json(group: Group) -> dict[str, Any]:
    if group.partition_racks is None:
        return {}
    return {"partition_racks": {t: [list(r) for r in rows] for t, rows in group.partition_racks.items()}}
