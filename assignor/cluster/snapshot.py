"""A snapshot of live consumer groups: the group JSON this project reads (`assignor.json_format`),
read from a running cluster, read-only (`assignor.cluster.client`).

Classic groups (DescribeGroups): the members in the order the coordinator lists them, each
member's subscription, rack and (for the generation) its JoinGroup metadata decoded with our own
decoders at whatever version it was written (`assignor.protocol.member_from_metadata`, the
group's protocol deciding where owned partitions and the generation are carried), its current
assignment from its SyncGroup bytes (what it will claim at its next JoinGroup: ``owned``), its
static instance id; per group ``protocol: "classic"``, the ``assignor`` in use (the
protocol the group chose) and ``assignment_user_data``: whether some member's assignment carries
user data, which Kafka will not carry into the consumer protocol (it refuses to convert such a
group online: KAFKA-18134, ``ConsumerGroup.fromClassicGroup``). DescribeGroups does not give
the generation: each member's is the highest its metadata reports, plus one (the generation its
assignment came with, once every member joined the last rebalance). A group that is
rebalancing, or is not a consumer group, is skipped and said so: its members' metadata would be
a mix of two generations.

Consumer-protocol groups (ConsumerGroupDescribe, KIP-848): the members in the coordinator's
order (its member map's: what its assignors read, `assignor.strategies.kip848.member_map`),
subscribed topic names and regex (``topic_regex``; resolved against the cluster's topics into
``topics``), the current assignment (``owned``) and the ``target``, each member's epoch (also
its ``generation``), its ``member_type`` (``classic`` for a member that still joins by
JoinGroup, in a group mid-upgrade), rack and instance id; per group ``protocol: "consumer"``, the
server ``assignor``, ``group_epoch`` and ``assignment_epoch``.

Topics (Metadata): partition counts, topic ids, and each partition's replica racks where the
brokers have racks (KIP-881).

Summaries (`read_summaries`): each group's protocol, assignor, state and member count from the
same requests, its members not decoded and no Metadata asked for.

Each ``[topic, partition]`` of ``owned`` and ``target`` is held as a plain tuple, which `json` and
orjson write as the group JSON's two-element array, made in C and never tracked by the cyclic
collector: a classic group's at once from its decoded columns (`model.pairs_at`), a
consumer-protocol group's from its decoded assignments (`_assigned`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from enum import StrEnum
from itertools import repeat
from typing import Any, NamedTuple

import numpy as np

from assignor._arrays import gc_paused
from assignor.cluster.client import RETRY_SECONDS, Cluster
from assignor.cluster.connection import RETRIABLE
from assignor.cluster.settings import ClientSettings
from assignor.errors import AssignorError, ClusterError, ProtocolError, UnknownProtocolError
from assignor.model import UNKNOWN_GENERATION
from assignor.protocol import (
    Assignment,
    DecodeCache,
    Messages,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    read_assignments_and_user_data,
    read_join_group,
)
from assignor.topic_regex import matches
from assignor.wire.error_codes import error_name
from assignor.wire.rows import Rows

try:  # a consumer-protocol group's pairs made in C (`_assigned`); a build without a compiler makes them below
    import assignor._topic_partitions as _in_c
except ImportError:
    _in_c = None  # type: ignore[assignment]

__all__ = ["REBALANCING", "SkipKind", "Skipped", "classic_group", "consumer_group", "read_snapshot",
           "read_summaries", "snapshot", "summary_of", "topics_of"]

#: Groups described per request (each coordinator gets its groups in requests of this many, all
#: sent at once): one response per request stays small, and a progress bar moves.
BATCH = 100

#: Classic group states in which the members' metadata and assignments are not one generation's.
REBALANCING = ("PreparingRebalance", "CompletingRebalance")

Json = dict[str, Any]


def topics_of(metadata: Json) -> Json:
    """The group JSON's topic fields from a Metadata response: ``topics`` (partition counts),
    ``topic_ids`` and, when any broker has a rack, ``partition_racks`` (each partition's
    replicas' racks, in replica order, without repeats)."""
    rack_of = {node: rack for node, _host, _port, rack in metadata["brokers"] if rack is not None}
    counts: dict[str, int] = {}
    ids: dict[str, str] = {}
    racks: dict[str, list[list[str]]] = {}
    for code, name, topic_id, _internal, partitions, _operations in metadata["topics"]:
        if code != 0 or name is None:
            continue
        counts[name] = len(partitions)
        ids[name] = topic_id
        if rack_of:
            racks[name] = _replica_racks(partitions, rack_of)
    return {"topics": counts, "topic_ids": ids, **({"partition_racks": racks} if rack_of else {})}


def _replica_racks(partitions: Any, rack_of: dict[int, str]) -> list[list[str]]:
    """Each partition's replicas' racks, in replica order without repeats, partitions in index
    order. Partitions read in columns (`Rows`: one replica count) are grouped by replica set,
    each set's racks found once."""
    def racks(replicas: list[int]) -> list[str]:
        return list(dict.fromkeys(rack_of[r] for r in replicas if r in rack_of))

    if not isinstance(partitions, Rows):
        return [racks(replicas) for _code, _index, _leader, _epoch, replicas, _isr, _offline
                in sorted(partitions, key=lambda p: p[1])]
    order = np.argsort(partitions.column("partition_index"), kind="stable")
    sets, which = np.unique(partitions.column("replica_nodes")[order], axis=0, return_inverse=True)
    found = [racks(replicas) for replicas in sets.tolist()]
    return [found[i][:] for i in which.reshape(-1).tolist()]


class SkipKind(StrEnum):
    """Why a group is not in a snapshot, as the ``kind`` of its ``skipped`` entry."""

    MISSING = "missing"  # no such group
    UNAUTHORIZED = "unauthorized"  # not authorized to describe it
    UNAVAILABLE = "unavailable"  # its coordinator cannot answer for it now (loading, moving, down)
    REBALANCING = "rebalancing"
    NOT_CONSUMER = "not-consumer"  # not a consumer group
    UNREADABLE = "unreadable"  # its members' metadata or assignments do not decode


class Skipped(NamedTuple):
    """A group not in a snapshot: its `kind` and the `reason` in words."""

    kind: SkipKind
    reason: str

    def json(self, group_id: str) -> Json:
        return {"group_id": group_id, "kind": self.kind.value, "reason": self.reason}


_NO_SUCH_GROUP = Skipped(SkipKind.MISSING, "no such group")


def _classic_skipped(described: tuple[Any, ...]) -> Skipped | None:
    """Why a classic group's DescribeGroups entry is not read, or None."""
    code, _id, state, protocol_type, _protocol, members, _operations = described
    if code != 0:
        return _refused(code, None)
    if state == "Dead":
        return _NO_SUCH_GROUP
    if protocol_type not in ("consumer", "") or (protocol_type == "" and members):
        return Skipped(SkipKind.NOT_CONSUMER, f"not a consumer group (protocol type {protocol_type!r})")
    if state in REBALANCING:
        return Skipped(SkipKind.REBALANCING, f"rebalancing ({state}): its members' metadata is not one generation's; "
                                        "snapshot it again once it is Stable")
    return None


class Decoded(NamedTuple):
    """What `_decoded` makes of a classic group's members: each one's (topics, generation,
    rack, owned), the topics they hold (those of their ``owned``), those they subscribe to, and
    whether some member's assignment carries user data."""

    members: list[tuple[list[str], int, str | None, list[Any]]]
    held: list[str]
    subscribed: set[str]
    assignment_user_data: bool = False


def classic_group(described: tuple[Any, ...], topics: Json, decoded: Decoded | Skipped | None = None) -> Json | Skipped:
    """A classic group's JSON from its DescribeGroups entry, or why it is skipped. `decoded`:
    its members as `_decoded` read them already (`read_snapshot` reads them once, for the
    topics it asks Metadata about too)."""
    skipped = _classic_skipped(described)
    if skipped is not None:
        return skipped
    _code, group_id, _state, _protocol_type, protocol, members, _operations = described
    if decoded is None:
        decoded = _decoded_or_why(members, protocol)
    if isinstance(decoded, Skipped):
        return decoded
    rows = [{"id": member_id, "topics": topics_, "owned": owned, "generation": generation, "rack": rack,
             **({"group_instance_id": instance_id} if instance_id is not None else {}), "client_id": client_id}
            for (member_id, instance_id, client_id, _host, _metadata, _assignment), (topics_, generation, rack, owned)
            in zip(members, decoded.members, strict=True)]
    generation = max((row["generation"] for row in rows), default=UNKNOWN_GENERATION) + 1
    for row in rows:
        row["generation"] = generation
    return {"group_id": group_id, "protocol": "classic", "assignor": protocol or None,
            "assignment_user_data": decoded.assignment_user_data,
            **_only(topics, rows, decoded.held, decoded.subscribed), "members": rows}


def _decoded_or_why(members: list[tuple[Any, ...]], protocol: str) -> Decoded | Skipped:
    try:
        with gc_paused():  # (a large group's million pairs: none in a cycle)
            return _decoded(members, protocol)
    except AssignorError as error:
        return Skipped(SkipKind.UNREADABLE, str(error))


def _decoded(members: list[tuple[Any, ...]], protocol: str) -> Decoded:
    """Each member's (topics, generation, rack) from its JoinGroup metadata and its current
    assignment as ``[(topic, partition), ...]``: the whole group's at once, in columns
    (`protocol.read_join_group`, `protocol.read_assignments`: a million partitions in a fraction
    of a second), or member by member under a protocol no assignor of ours speaks (its
    subscription alone).

    Raises
    ------
    AssignorError
        Naming the member whose metadata or assignment does not decode.
    """
    ids = [m[0] for m in members]
    cache = DecodeCache()  # (the topic names the metadata gave, found again in the assignments)
    try:
        roster = read_join_group(ids, Messages.of([m[4] for m in members]), protocol, cache)
        fields = [(list(m.topics), m.generation, m.rack) for m in roster.members]
        # (members subscribed alike share one tuple of topics: each distinct one taken once)
        subscribed = set().union(*{id(m.topics): m.topics for m in roster.members}.values())
    except UnknownProtocolError:
        fields = []
        for member_id, *_, metadata, _assignment in members:
            try:
                subscription = decode_subscription(metadata)
            except ProtocolError as error:
                raise AssignorError(f"a member's metadata does not decode (member {member_id!r}: {error})") from None
            fields.append((list(subscription.topics), subscription.generation_id, subscription.rack_id))
        subscribed = set().union(*(f[0] for f in fields))
    except ProtocolError as error:
        raise AssignorError(f"a member's metadata does not decode ({error})") from None
    try:
        # (a member that has not synced yet holds nothing: an empty assignment)
        claims, user_data = read_assignments_and_user_data(Messages.of([m[5] or _NOTHING for m in members]), cache)
    except ProtocolError:
        for member_id, *_, assignment in members:  # which one, named
            try:
                decode_assignment(assignment or _NOTHING)
            except ProtocolError as error:
                raise AssignorError(f"a member's assignment does not decode (member {member_id!r}: {error})") from None
        raise
    held = np.flatnonzero(np.bincount(claims.topic, minlength=len(claims.names))).tolist()
    return Decoded([(*f, pairs) for f, pairs in zip(fields, claims.member_pairs(len(members)), strict=True)],
                   [claims.names[t] for t in held], subscribed, bool((user_data > 0).any()))


#: The SyncGroup assignment of a member that holds nothing.
_NOTHING = encode_assignment(Assignment([]))


def consumer_group(described: tuple[Any, ...], topics: Json) -> Json | Skipped:
    """A consumer-protocol group's JSON from its ConsumerGroupDescribe entry, or why it is
    skipped."""
    skipped = _consumer_skipped(described)
    if skipped is not None:
        return skipped
    _code, _message, group_id, _state, group_epoch, assignment_epoch, assignor, members, _operations = described
    rows = []
    with gc_paused():  # (a large group's million pairs, its rows' dicts and lists: none in a cycle)
        try:
            assigned, held = _assignments(members)
        except _NotAPartition as error:
            return Skipped(SkipKind.UNREADABLE, str(error))
        for member, (owned, targeted) in zip(members, assigned, strict=True):
            member_id, instance_id, rack, epoch, client_id, _host, names, regex, _current, _target, kind = member
            subscribed = list(names)
            if regex:
                # (in name order: the broker keeps what a regex takes as a set)
                subscribed += sorted(t for t in topics["topics"] if t not in subscribed and matches(regex, t))
            rows.append({"id": member_id, "topics": subscribed, "owned": owned, "target": targeted,
                         "generation": epoch, "member_epoch": epoch, **_MEMBER_TYPES.get(kind, {}), "rack": rack,
                         **({"group_instance_id": instance_id} if instance_id is not None else {}),
                         **({"topic_regex": regex} if regex else {}), "client_id": client_id})
    return {"group_id": group_id, "protocol": "consumer", "assignor": assignor or None, "group_epoch": group_epoch,
            "assignment_epoch": assignment_epoch, **_only(topics, rows, held), "members": rows}


def _consumer_skipped(described: tuple[Any, ...]) -> Skipped | None:
    """Why a consumer-protocol group's ConsumerGroupDescribe entry is not read, or None."""
    code, message, _id, state, *_rest = described
    if code != 0:
        return _refused(code, message)
    if state == "Dead":  # (`ConsumerGroup.ConsumerGroupState`'s name: a group being deleted)
        return _NO_SUCH_GROUP
    return None


#: ConsumerGroupDescribe's MemberType (v1+; -1 unknown), as the snapshot writes it: a member that
#: joined by JoinGroup, in a group converted mid-upgrade, is ``classic``
#: (`ConsumerGroupMember.asConsumerGroupDescribeMember`).
_MEMBER_TYPES = {0: {"member_type": "classic"}, 1: {"member_type": "consumer"}}


class _NotAPartition(Exception):
    """A negative partition in a ConsumerGroupDescribe assignment (the wire's INT32 allows it;
    no partition has it), naming the member, the partition, its topic and the field."""


Pairs = list[tuple[str, int]]


def _assignments(members: list[tuple[Any, ...]]) -> tuple[list[tuple[Pairs, Pairs]], set[str]]:
    """Each ConsumerGroupDescribe member's (assignment, target) as ``[(topic, partition), ...]``
    (`_assigned`), and the topics with any partition there. A member whose target is its
    assignment (a group that has settled) gets a copy of its assignment's list: the tuples are
    shared, half a large group's made.

    Raises
    ------
    _NotAPartition
        For the first negative partition, member by member, its assignment before its target.
    """
    held: set[str] = set()
    out = []
    for member in members:
        current, target = member[8], member[9]
        try:
            owned = _assigned(current, held, "assignment")
            out.append((owned, owned[:] if target == current else _assigned(target, held, "target")))
        except _NotAPartition as error:
            raise _NotAPartition(f"member {member[0]!r}: {error}") from None
    return out, held


def _assigned(assignment: tuple[Any, ...], held: set[str], field: str) -> Pairs:
    """An assignment's ``[(topic, partition), ...]``, each topic's partitions in order (the
    coordinator lists them from a set); the topics with any partition added to `held`.

    Made in C where the package was built with it (``entry_pairs`` in
    assignor/_topic_partitions.c): each pair one allocation, never tracked by the cyclic
    collector, whose first pass over a million tracked pairs took 0.13 s of a 0.38 s snapshot
    (`bench/fastpaths.py`); else as `zip` makes its tuples (`_assigned_plainly`).

    Raises
    ------
    _NotAPartition
        Naming the partition, its topic and the `field`, for a negative one (a classic group's
        assignment with one does not decode either: `decode_assignment`).
    """
    (by_topic,) = assignment
    if _in_c is not None:
        made = _in_c.entry_pairs(tuple, by_topic, held)
        if made is not None:
            return made
    return _assigned_plainly(by_topic, held, field)


def _assigned_plainly(by_topic: list[tuple[str, str, list[int]]], held: set[str], field: str) -> Pairs:
    """`_assigned` in Python: the reference the C one (``entry_pairs``) is held to, and the reader
    of what it leaves (a negative partition, which this names)."""
    pairs: Pairs = []
    append, add = pairs.append, held.add
    for _topic_id, name, partitions in by_topic:
        if len(partitions) == 1:  # (nothing to sort, no iterator: 5x quicker where members hold many such)
            least = partitions[0]
            append((name, least))
        elif partitions:
            ordered = sorted(partitions)
            least = ordered[0]
            pairs += zip(repeat(name), ordered)
        else:
            continue
        if least < 0:
            raise _NotAPartition(f"its {field} holds partition {least} of topic {name!r}, which no topic has")
        add(name)
    return pairs


def _only(topics: Json, members: list[Json], held: set[str] | list[str], subscribed: set[str] | None = None
          ) -> Json:
    """The topic fields of the topics `members` read (`subscribed` when known: those of their
    ``topics``), or hold or are to get (`held`: the topics of their ``owned`` and ``target``)."""
    read = set(held).union(*(m["topics"] for m in members)) if subscribed is None else subscribed.union(held)
    kept = [t for t in topics["topics"] if t in read]
    return {key: {t: topics[key][t] for t in kept} for key in ("topics", "topic_ids", "partition_racks")
            if key in topics}


def _refused(code: int, message: str | None) -> Skipped:
    """A coordinator's error for a group: GROUP_ID_NOT_FOUND, GROUP_AUTHORIZATION_FAILED, or one
    it cannot answer now (COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR, ...)."""
    if code == 69:
        return _NO_SUCH_GROUP
    if code == 30:
        return Skipped(SkipKind.UNAUTHORIZED, "not authorized to describe it (GROUP_AUTHORIZATION_FAILED)")
    return Skipped(SkipKind.UNAVAILABLE, error_name(code) + (f": {message}" if message else ""))


async def read_snapshot(settings: ClientSettings, groups: list[str] | None,
                        progress: Callable[[int, int], None] | None = None) -> Json:
    """``{"groups": [...], "skipped": [{"group_id", "kind", "reason"}]}`` (`Skipped`) for `groups` (None: every
    group of the cluster), in the order asked (by group id for all). `progress(done, total)`
    after each request's groups are described (`BATCH` at a time, per coordinator).

    Raises
    ------
    ClusterError
        The cluster cannot be reached or read (naming it, and the broker).
    """
    async with Cluster(settings) as cluster:
        order, entries, skipped = await _described(cluster, groups, progress)
        # Each classic group's members decoded once: for the topics Metadata is asked about, and the JSON.
        decoded = {entry[1]: _decoded_or_why(entry[5], entry[4]) for kind, entry in entries
                   if kind == "classic" and _classic_skipped(entry) is None}
        topics = topics_of(await cluster.metadata(_subscribed(entries, decoded)))
    built: dict[str, Json | Skipped] = {}
    for kind, entry in entries:
        built[_group_id(kind, entry)] = classic_group(entry, topics, decoded.get(entry[1])) \
            if kind == "classic" else consumer_group(entry, topics)
    return _in_order(order, built, skipped)


async def read_summaries(settings: ClientSettings, groups: list[str] | None,
                         progress: Callable[[int, int], None] | None = None) -> Json:
    """`read_snapshot`'s groups as summaries (`summary_of`): each group's protocol, assignor,
    state and member count, its members not decoded and no Metadata asked for, so a cluster's
    groups are listed for the price of describing them (a page listing them to pick one)."""
    async with Cluster(settings) as cluster:
        order, entries, skipped = await _described(cluster, groups, progress)
    return _in_order(order, {_group_id(kind, entry): summary_of(kind, entry) for kind, entry in entries}, skipped)


def summary_of(kind: str, described: tuple[Any, ...]) -> Json | Skipped:
    """A group's ``group_id``, ``protocol`` (``classic`` or ``consumer``, as `kind` says),
    ``assignor``, ``state`` (the coordinator's word) and ``member_count``, from its
    DescribeGroups or ConsumerGroupDescribe entry (what ``kafka-consumer-groups.sh --describe
    --state`` prints); or why it is not listed, as a snapshot would say. A rebalancing group is
    listed, its state saying so: nothing of its members is read. (Its ``assignor`` is null: the
    coordinator names the protocol of a Stable group only, `GroupMetadataManager.describeGroups`.)"""
    if kind == "classic":
        skipped = _classic_skipped(described)
        if skipped is not None and skipped.kind is not SkipKind.REBALANCING:
            return skipped
        _code, group_id, state, _protocol_type, protocol, members, _operations = described
        return {"group_id": group_id, "protocol": "classic", "assignor": protocol or None, "state": state,
                "member_count": len(members)}
    skipped = _consumer_skipped(described)
    if skipped is not None:
        return skipped
    _code, _message, group_id, state, _group_epoch, _assignment_epoch, assignor, members, _operations = described
    return {"group_id": group_id, "protocol": "consumer", "assignor": assignor or None, "state": state,
            "member_count": len(members)}


def _in_order(order: list[str], built: dict[str, Json | Skipped], skipped: list[Json]) -> Json:
    """``{"groups", "skipped"}``: the groups `built` in `order`, those skipped after `skipped`."""
    out: list[Json] = []
    for group in order:
        result = built.get(group)
        if isinstance(result, Skipped):
            skipped.append(result.json(group))
        elif result is not None:
            out.append(result)
    return {"groups": out, "skipped": skipped}


async def _described(cluster: Cluster, groups: list[str] | None, progress: Callable[[int, int], None] | None
                     ) -> tuple[list[str], list[tuple[str, Any]], list[Json]]:
    """`groups` (None: every group of the cluster) found and described, each by its
    coordinator: the order to answer them in (as asked, or by group id), each one's
    (``"classic"`` or ``"consumer"``, described group), and those skipped before they were
    described (no coordinator, or one that cannot be reached, missing, another type of group)."""
    await cluster.metadata([])  # the brokers
    skipped: list[Json] = []
    where: dict[str, tuple[str, int]] = {}  # group -> (its type, coordinator)
    if groups is None:
        listed = await cluster.list_groups()
        for group, (protocol_type, _state, kind, node) in sorted(listed.items()):
            other = _other_kind(kind, protocol_type)
            if other is None:
                where[group] = (kind, node)
            else:
                skipped.append(other.json(group))
        order = sorted(where)
    else:
        order = list(dict.fromkeys(groups))
        found = await cluster.coordinators(order)
        nodes = {node for node in found.values() if isinstance(node, int)}
        down = await cluster.unreachable(nodes)  # (a group of a broker that is down: the others are read)
        listed = await cluster.list_groups(nodes - set(down))
        for group in order:
            coordinator = found[group]
            if isinstance(coordinator, tuple):
                code, text = coordinator
                refused = _refused(code, None)
                skipped.append(Skipped(refused.kind, f"no coordinator ({text})").json(group))
            elif coordinator in down:
                skipped.append(_coordinator_failed(coordinator, "cannot be reached", down[coordinator]).json(group))
            elif group not in listed:
                skipped.append(_NO_SUCH_GROUP.json(group))
            elif (other := _other_kind(listed[group][2], listed[group][0])) is not None:
                # (a share or streams group: DescribeGroups would call it Dead, as if missing)
                skipped.append(other.json(group))
            else:
                where[group] = (listed[group][2], coordinator)
    by_node: dict[int, tuple[list[str], list[str]]] = {}
    for group, (kind, node) in where.items():
        by_node.setdefault(node, ([], []))[kind == "consumer"].append(group)
    done = 0

    async def described(node: int, classic: list[str], consumer: list[str]) -> list[tuple[str, Any]]:
        nonlocal done
        try:
            answer = await cluster.describe(node, classic, consumer)
        except ClusterError as error:  # (its groups said unavailable; the other coordinators' are read)
            why = _coordinator_failed(node, "did not describe it", cluster.reason(error))
            skipped.extend(why.json(group) for group in (*classic, *consumer))
            answer = []
        done += len(classic) + len(consumer)
        if progress is not None:
            progress(done, len(where))
        return answer

    entries = [e for part in await cluster.together([described(*batch) for batch in _batches(by_node)])
               for e in part]
    return order, await _described_again(cluster, entries), skipped


def _group_id(kind: str, entry: Any) -> str:
    """The group id of a described group: DescribeGroups' (``classic``) or ConsumerGroupDescribe's."""
    return str(entry[1] if kind == "classic" else entry[2])


def _batches(by_node: dict[int, tuple[list[str], list[str]]]) -> list[tuple[int, list[str], list[str]]]:
    """Each coordinator's classic and consumer groups, `BATCH` of each kind a request."""
    return [(node, classic[i : i + BATCH], consumer[i : i + BATCH]) for node, (classic, consumer) in by_node.items()
            for i in range(0, max(len(classic), len(consumer)), BATCH)]


async def _described_again(cluster: Cluster, entries: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """`entries` with the groups whose coordinator could not answer yet (loading its groups,
    or moved: `connection.RETRIABLE`, as a broker that just started answers) found and described
    again, until each answers or ``default.api.timeout.ms`` is near; then each one's last answer
    (said as unavailable, naming the error), as Kafka's admin client retries them."""
    while cluster.may_retry():
        again = {_group_id(kind, entry): kind for kind, entry in entries if entry[0] in RETRIABLE}
        if not again:
            break
        await asyncio.sleep(RETRY_SECONDS)
        found = await cluster.coordinators(sorted(again))
        down = await cluster.unreachable(node for node in found.values() if isinstance(node, int))
        by_node: dict[int, tuple[list[str], list[str]]] = {}
        for group, kind in again.items():
            node = found[group]
            if isinstance(node, int) and node not in down:  # (a broker down: the last answer stands)
                by_node.setdefault(node, ([], []))[kind == "consumer"].append(group)
        fresh = {_group_id(kind, entry): (kind, entry) for part in await cluster.together(
            [_describe_or_none(cluster, *batch) for batch in _batches(by_node)]) for kind, entry in part}
        entries = [fresh.get(_group_id(kind, entry), (kind, entry)) for kind, entry in entries]
    return entries


async def _describe_or_none(cluster: Cluster, node: int, classic: list[str], consumer: list[str]
                            ) -> list[tuple[str, Any]]:
    """`Cluster.describe`, or nothing where the coordinator does not answer (asked again: the
    groups' last answers stand)."""
    try:
        return await cluster.describe(node, classic, consumer)
    except ClusterError:
        return []


def _coordinator_failed(node: int, what: str, why: str) -> Skipped:
    """A group whose coordinator, broker `node`, failed it: `what` it did (``cannot be
    reached``: no connection; ``did not describe it``: the connection broke, or no answer came
    within ``request.timeout.ms``), and `why` in the client's words."""
    return Skipped(SkipKind.UNAVAILABLE, f"its coordinator, broker {node}, {what} ({why})")


def _other_kind(kind: str, protocol_type: str) -> Skipped | None:
    """Why a group ListGroups lists is not read, from its type and protocol type, or None: a
    group of another type (``share``, KIP-932; ``streams``, KIP-1071) or a classic group of
    another protocol (a Connect worker's ``connect``). An empty classic group has none."""
    if kind == "consumer" or (kind == "classic" and protocol_type in ("consumer", "")):
        return None
    return Skipped(SkipKind.NOT_CONSUMER, f"not a consumer group ({kind}, protocol type {protocol_type!r})")


def _subscribed(entries: list[tuple[str, Any]], decoded: dict[str, Decoded | Skipped]) -> set[str] | None:
    """The topics the described groups' members subscribe to (None: every topic, for a regex);
    a classic group's as `decoded` (a group skipped, or whose members do not decode, has none)."""
    topics: set[str] = set()
    for kind, entry in entries:
        if kind == "consumer":
            for member in entry[7]:
                names, regex = member[6], member[7]
                if regex:
                    return None
                topics.update(names)
    for members in decoded.values():
        if not isinstance(members, Skipped):
            topics.update(members.subscribed)
    return topics


def snapshot(settings: ClientSettings, groups: list[str] | None,
             progress: Callable[[int, int], None] | None = None, *, summary: bool = False) -> Json:
    """`read_snapshot` (with `summary`, `read_summaries`), for callers without an event loop
    (the CLI)."""
    return asyncio.run((read_summaries if summary else read_snapshot)(settings, groups, progress))
