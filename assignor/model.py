"""The plain data the assignor works on: topic partitions, members, groups and plans.

Every type is immutable. Construction normalises sequences to tuples and rejects inputs that no
broker could have produced (see `InvalidGroupError`); it deliberately does *not* drop hostile
claims such as owned partitions of unknown topics, because the strategies must see them to
prove they survive them.
"""

from __future__ import annotations

import numbers
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import Any, NamedTuple, Protocol, TypeVar

import numpy as np

from assignor._arrays import gc_paused, stable_order
from assignor.errors import InvalidGroupError
from assignor.topic_ids import parse_topic_id, topic_ids_of

try:  # the object API's two ends in C (assignor/_topic_partitions.c); a build without a compiler lacks them
    import assignor._topic_partitions as _compiled
except ImportError:  # then the plain references below serve
    _compiled = None  # type: ignore[assignment]

__all__ = ["INSTANCE_ID_PATTERN", "UNKNOWN_GENERATION", "Claims", "Group", "Member", "Plan", "TopicPartition",
           "claim_columns", "member_identity_problem", "member_topic_partitions", "name_indices", "pairs_at",
           "plain_member_topic_partitions", "plain_name_indices", "plain_pairs_at", "plain_topic_partitions_at",
           "topic_partitions", "topic_partitions_at", "topic_partitions_of_pairs"]

_Made = TypeVar("_Made")

#: Generation of a member whose previous generation is not known (Java's DEFAULT_GENERATION).
UNKNOWN_GENERATION = -1

#: Kafka's INT32, what partition ids, partition counts and generations are on the wire: the one
#: place the bounds are written (the JSON readers, the what-if, the service and the fleet job check
#: against them).
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


class TopicPartition(NamedTuple):
    """One partition of one topic.

    Examples
    --------
    >>> TopicPartition("orders", 3)
    TopicPartition(topic='orders', partition=3)
    """

    topic: str
    partition: int


def topic_partitions(topics: Sequence[str], partitions: Sequence[int]) -> list[TopicPartition]:
    """Build TopicPartition objects in bulk (C-level construction, collector paused when many)."""
    if len(partitions) < 10_000:
        return list(map(tuple.__new__, repeat(TopicPartition), zip(topics, partitions)))
    with gc_paused():
        return list(map(tuple.__new__, repeat(TopicPartition), zip(topics, partitions)))


def topic_partitions_at(names: list[str], topic: np.ndarray, partition: np.ndarray) -> list[TopicPartition]:
    """``TopicPartition(names[topic[i]], partition[i])`` for every row of two integer columns:
    a plan's columns as the object API hands them out.

    Made in C where the package was built with a compiler (each object one allocation, left out
    of the cyclic collector's passes: at a million partitions about 30 ms instead of 160), else by
    `plain_topic_partitions_at`, which a property test holds this to.

    Raises
    ------
    IndexError
        When a topic index is not one of `names`' (negative ones included).

    Examples
    --------
    >>> topic_partitions_at(["a", "b"], np.array([1, 0]), np.array([3, 0]))
    [TopicPartition(topic='b', partition=3), TopicPartition(topic='a', partition=0)]
    """
    if _compiled is None:
        return plain_topic_partitions_at(names, topic, partition)
    return _made_at(TopicPartition, names, topic, partition)


def plain_topic_partitions_at(names: list[str], topic: np.ndarray, partition: np.ndarray) -> list[TopicPartition]:
    """`topic_partitions_at` in Python: the reference the compiled one is held to."""
    return topic_partitions(*_named_rows(names, topic, partition))


def pairs_at(names: list[str], topic: np.ndarray, partition: np.ndarray) -> list[tuple[str, int]]:
    """``(names[topic[i]], partition[i])`` for every row, as plain tuples: the group JSON's
    ``[topic, partition]`` pairs where a snapshot of a live group holds them
    (`assignor.cluster.snapshot`; `json` and orjson write a tuple as an array, as they would
    the list `json.loads` gives back).

    Made in C as `topic_partitions_at` makes its objects, never tracked by the cyclic collector
    (CPython untracks a tuple of a str and an int on its first pass over it): the snapshot of a
    classic group of a million partitions takes 1.3-1.4x less time than with `plain_pairs_at`
    (`bench/fastpaths.py`), the reference a property test holds this to.

    Raises
    ------
    IndexError
        When a topic index is not one of `names`' (negative ones included).

    Examples
    --------
    >>> pairs_at(["a", "b"], np.array([1, 0]), np.array([3, 0]))
    [('b', 3), ('a', 0)]
    """
    if _compiled is None:
        return plain_pairs_at(names, topic, partition)
    return _made_at(tuple, names, topic, partition)


def plain_pairs_at(names: list[str], topic: np.ndarray, partition: np.ndarray) -> list[tuple[str, int]]:
    """`pairs_at` in Python: the reference the compiled one is held to."""
    return list(zip(*_named_rows(names, topic, partition)))


def _made_at(kind: type[Any], names: list[str], topic: np.ndarray, partition: np.ndarray) -> list[Any]:
    """``kind((names[topic[i]], partition[i]))`` for every row, in C (`_compiled.make`)."""
    return _compiled.make(kind, names if type(names) is list else list(names),
                          np.ascontiguousarray(topic, dtype=np.int64), np.ascontiguousarray(partition, dtype=np.int64))


def _named_rows(names: list[str], topic: np.ndarray, partition: np.ndarray) -> tuple[list[str], list[int]]:
    """Each row's topic name and partition, as lists.

    Raises
    ------
    IndexError
        When a topic index is not one of `names`' (negative ones included).
    """
    if len(topic) and not (0 <= int(topic.min()) and int(topic.max()) < len(names)):
        raise IndexError(f"a topic index is not in names ({len(names)} of them)")
    return list(map(names.__getitem__, topic.tolist())), partition.tolist()


def member_topic_partitions(names: list[str], offsets: np.ndarray, owner: np.ndarray, members: int,
                            previous: Sequence[Sequence[object]] | None = None) -> list[list[TopicPartition]]:
    """Each member's partitions of a plan on flat partitions, as objects: member i's list holds
    ``TopicPartition(names[t], p)`` for every flat partition ``offsets[t] + p`` whose `owner` is
    i, in flat order (`offsets`: ascending from 0 to ``len(owner)``, one more than `names`; an
    owner below 0: no member).

    `previous` (each member's owned partitions, as `Member.owned`): a partition a member had is
    handed back as its own object where that is exactly a `TopicPartition` of a str and an int
    (after a rebalance most partitions stay; the values are the same either way).

    In C where the package was built with a compiler: one pass, each object one allocation, left
    out of the cyclic collector's passes (at a million partitions about 35 ms against 160 for
    the numpy sort and Python objects of `plain_member_topic_partitions`, which a property test
    holds this to).

    Raises
    ------
    IndexError
        When an owner is not below `members`.
    ValueError
        When `offsets` is not as above.

    Examples
    --------
    >>> member_topic_partitions(["a", "b"], np.array([0, 2, 3]), np.array([1, 0, 1]), 2)
    [[TopicPartition(topic='a', partition=1)], [TopicPartition(topic='a', partition=0), \
TopicPartition(topic='b', partition=0)]]
    """
    if _compiled is None:
        return plain_member_topic_partitions(names, offsets, owner, members)
    runs = (np.ascontiguousarray(offsets, dtype=np.int64), np.ascontiguousarray(owner, dtype=np.int64), members)
    names = names if type(names) is list else list(names)
    if previous is None:
        return _compiled.member_runs(TopicPartition, names, *runs)
    index = {name: i for i, name in enumerate(names)}
    return _compiled.member_runs(TopicPartition, names, *runs, list(previous), index)


def plain_member_topic_partitions(names: list[str], offsets: np.ndarray, owner: np.ndarray,
                                  members: int) -> list[list[TopicPartition]]:
    """`member_topic_partitions` in Python and numpy: the reference the compiled one is held to
    (it makes every object: which objects come back is not part of the answer)."""
    if len(offsets) != len(names) + 1 or offsets[0] != 0 or offsets[-1] != len(owner) or (np.diff(offsets) < 0).any():
        raise ValueError("offsets must ascend from 0 to len(owner), one more than names")
    if len(owner) and int(owner.max()) >= members:
        raise IndexError(f"owner {int(owner.max())} is not one of {members} members")
    flats = np.flatnonzero(owner >= 0)
    by_member = flats[stable_order(owner[flats])]
    ends = np.searchsorted(owner[by_member], np.arange(members + 1)).tolist()
    topic = np.repeat(np.arange(len(names)), np.diff(offsets))[by_member]
    made = plain_topic_partitions_at(names, topic, by_member - offsets[topic])
    return [made[start:end] for start, end in zip(ends, ends[1:])]


def name_indices(sequences: Sequence[Sequence[object]], index: Mapping[Any, int]) -> np.ndarray:
    """``index.get(name, -1)`` for every name of every one of `sequences`, in order, as one int64
    column: members' subscriptions as topic numbers. In C where the package was built with a
    compiler (a dict look-up each: half a million names in 5 ms against 14 for `map` over
    `chain` in `np.fromiter`, what `plain_name_indices` does and a property test holds this to).

    Raises
    ------
    TypeError
        When a name cannot be hashed.

    Examples
    --------
    >>> name_indices([("a", "b"), (), ("c",)], {"a": 0, "c": 1}).tolist()
    [0, -1, 1]
    """
    if _compiled is None or type(index) is not dict:
        return plain_name_indices(sequences, index)
    return np.frombuffer(_compiled.indices(sequences if type(sequences) is list else list(sequences), index),
                         dtype=np.int64)


def plain_name_indices(sequences: Sequence[Sequence[object]], index: Mapping[Any, int]) -> np.ndarray:
    """`name_indices` in Python: the reference the compiled one is held to."""
    names = list(chain.from_iterable(sequences))
    return np.fromiter(map(index.get, names, repeat(-1)), dtype=np.int64, count=len(names))


def claim_columns(owned: list[Sequence[object]], index: dict[str, int]) -> tuple[np.ndarray, np.ndarray] | None:
    """The members' claims (`owned`: each member's sequence of them, member by member) as two
    int64 columns, read in C: each claim's topic by `index` (-1 for a name it lacks) and its
    partition. None when any claim is not exactly a `TopicPartition` of a str and an int that
    fits in 64 bits, or the package has no compiled part: the caller then reads them its own way
    (`assignor.solver.dense`'s, which a property test holds this to)."""
    if _compiled is None:
        return None
    read = _compiled.read(TopicPartition, owned if isinstance(owned, list) else list(owned), index)
    if read is None:
        return None
    return np.frombuffer(read[0], dtype=np.int64), np.frombuffer(read[1], dtype=np.int64)


def topic_partitions_of_pairs(value: list[Any]) -> list[TopicPartition] | None:
    """The JSON form of partitions (``[[topic, partition], ...]``, as `json.loads` gives it) as
    `TopicPartition`s, read in C: each one of the entry's own two objects, in order. None when
    any entry is not exactly a list or tuple of a str and an int in [0, `INT32_MAX`], or the
    package has no compiled part: the caller then reads the value its own way
    (`json_format.partitions_from_json`'s, which names what is wrong and which a property test
    holds this to). A group of a million claims: 0.06 s here, about 0.5 s in Python.

    >>> topic_partitions_of_pairs([["a", 1], ("b", 0)]) in (None, [TopicPartition("a", 1), TopicPartition("b", 0)])
    True
    >>> topic_partitions_of_pairs([["a", 1], ["b", True]]) is None  # a bool is not a partition
    True
    """
    if _compiled is None or type(value) is not list:
        return None
    return _compiled.pairs(TopicPartition, value)


class Claims(NamedTuple):
    """Many members' partitions as columns (what a leader decodes from JoinGroup, or a member
    from SyncGroup): per partition the member's index, the topic as an index into `names`, and
    the partition. Members are numbered by the caller (their order in the message list).

    Examples
    --------
    >>> Claims.empty().names
    []
    """

    member: np.ndarray
    topic: np.ndarray
    partition: np.ndarray
    names: list[str]

    @classmethod
    def empty(cls) -> Claims:
        none = np.zeros(0, dtype=np.int64)
        return cls(none, none, none, [])

    @classmethod
    def of_lists(cls, owned: Sequence[Iterable[tuple[str, int]]]) -> Claims:
        """Members' partitions as columns (member i: ``owned[i]``, pairs of topic and partition
        in the order given), member by member, topics named in order of first appearance.

        >>> Claims.of_lists([[("b", 1)], [("a", 0), ("b", 2)]]).names
        ['b', 'a']
        """
        names: dict[str, int] = {}
        member, topic, partition = [], [], []
        for i, pairs in enumerate(owned):
            for name, number in pairs:
                member.append(i)
                topic.append(names.setdefault(name, len(names)))
                partition.append(number)
        return cls(np.array(member, dtype=np.int64), np.array(topic, dtype=np.int64),
                   np.array(partition, dtype=np.int64), list(names))

    def per_member(self, members: int) -> list[tuple[TopicPartition, ...]]:
        """Each of `members` members' rows as `TopicPartition`s, in the rows' order: every object
        made at once, member by member (`topic_partitions_at`), then each member's run of them.

        >>> Claims.of_lists([[("b", 1)], [("a", 0), ("b", 2)]]).per_member(3)
        [(TopicPartition(topic='b', partition=1),), (TopicPartition(topic='a', partition=0), \
TopicPartition(topic='b', partition=2)), ()]
        """
        return list(map(tuple, self.member_lists(members)))

    def member_lists(self, members: int) -> list[list[TopicPartition]]:
        """`per_member` as lists (a plan's assignment: each list made once, as a slice)."""
        return self._member_runs(topic_partitions_at, members)

    def member_pairs(self, members: int) -> list[list[tuple[str, int]]]:
        """`member_lists` as plain ``(topic, partition)`` tuples (`pairs_at`): a snapshot's pairs,
        which orjson writes as it would not a `TopicPartition`.

        >>> Claims.of_lists([[("b", 1)], [("a", 0), ("b", 2)]]).member_pairs(3)
        [[('b', 1)], [('a', 0), ('b', 2)], []]
        """
        return self._member_runs(pairs_at, members)

    def _member_runs(self, make: Callable[[list[str], np.ndarray, np.ndarray], list[_Made]],
                     members: int) -> list[list[_Made]]:
        """Every row's object made at once by `make`, member by member, then each of `members`
        members' run of them."""
        member, topic, partition = self.member, self.topic, self.partition
        if len(member) > 1 and (member[1:] < member[:-1]).any():
            by_member = stable_order(member)
            member, topic, partition = member[by_member], topic[by_member], partition[by_member]
        made = make(self.names, topic, partition)
        bounds = member.searchsorted(np.arange(members + 1)).tolist()
        return [made[start:end] for start, end in zip(bounds, bounds[1:])]


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class Member:
    """A group member as the leader sees it in JoinGroup.

    Parameters
    ----------
    id : str
        The member id (the coordinator's, e.g. ``consumer-1-5a3...``).
    topics : sequence of str
        The subscription. Topics the group does not know are ignored by the strategies.
    owned : sequence of TopicPartition
        What the member held before this rebalance (from user data or Subscription v1+).
        May contain hostile claims; strategies drop those.
    generation : int
        Generation of the `owned` claims, ``-1`` when unknown (KIP-341).
    rack : str or None
        Subscription v3 rack id (KIP-881).
    group_instance_id : str or None
        A static member's ``group.instance.id`` (KIP-345), None for a dynamic member. Java's
        ``range`` and ``roundrobin`` and the broker's ``range`` (KIP-848) order static members by
        it, before the others (`ordering.static_first_order`).
    topic_regex : str or None
        A regex subscription (KIP-848's consumer protocol, RE2/J syntax), which the broker
        resolves into topics: `topics` hold what it took so far; a topic created later joins
        them where the regex takes it (`assignor.topic_regex`, `events`).
    """

    id: str
    topics: Sequence[str] = ()
    owned: Sequence[TopicPartition] = ()
    generation: int = UNKNOWN_GENERATION
    rack: str | None = None
    group_instance_id: str | None = None
    topic_regex: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str):
            raise InvalidGroupError(f"member id must be a string, got {self.id!r}")
        if isinstance(self.topics, str) or not isinstance(self.topics, Sequence | set | frozenset):
            raise InvalidGroupError(f"member {self.id!r}: topics must be a list of strings")
        topics = tuple(self.topics)
        if not all(map(isinstance, topics, repeat(str))):
            raise InvalidGroupError(f"member {self.id!r}: every topic must be a string")
        owned = self.owned if isinstance(self.owned, tuple) else tuple(self.owned)
        # Generations are INT32 on the wire (JoinGroup, sticky user data V1).
        if not _is_int(self.generation) or not INT32_MIN <= self.generation <= INT32_MAX:
            raise InvalidGroupError(f"member {self.id!r}: generation must be a 32-bit integer, got {self.generation!r}")
        if self.rack is not None and not isinstance(self.rack, str):
            raise InvalidGroupError(f"member {self.id!r}: rack must be a string or None")
        if self.group_instance_id is not None:
            _check_instance_id(self.id, self.group_instance_id)
        if self.topic_regex is not None and not isinstance(self.topic_regex, str):
            raise InvalidGroupError(f"member {self.id!r}: topic_regex must be a string or None")
        object.__setattr__(self, "topics", topics)
        object.__setattr__(self, "owned", owned)

    @classmethod
    def decoded(cls, id: str, topics: Sequence[str], generation: int, rack: str | None,
                owned: tuple[TopicPartition, ...] = (), group_instance_id: str | None = None) -> Member:
        """A member from values a decoder has already checked (no checks here: a leader builds
        thousands per rebalance, and the checks cost four times the build). The instance id is
        not in the JoinGroup metadata (the coordinator's field): it comes from a member already
        checked."""
        member = object.__new__(cls)
        set_id, set_topics, set_owned, set_generation, set_rack, set_instance, set_regex = _MEMBER_SLOTS
        set_id(member, id)
        set_topics(member, topics)
        set_owned(member, owned)
        set_generation(member, generation)
        set_rack(member, rack)
        set_instance(member, group_instance_id)
        set_regex(member, None)  # (JoinGroup metadata has no regex: a classic member resolves its own)
        return member

    @classmethod
    def decoded_many(cls, ids: Sequence[str], topics: Sequence[tuple[str, ...]], generations: Sequence[int],
                     racks: Sequence[str | None]) -> list[Member]:
        """`decoded` for many members at once, owning nothing: each slot is filled for all
        members by one `map` (a third less than one `decoded` call per member), or for a few
        members (a what-if step of most groups) member by member, where the seven maps cost more
        (3 members: 1.3 against 3.2 us)."""
        members = list(map(object.__new__, repeat(cls, len(ids))))
        set_id, set_topics, set_owned, set_generation, set_rack, set_instance, set_regex = _MEMBER_SLOTS
        if len(members) <= _FEW_MEMBERS:
            for member, member_id, subscribed, generation, rack in zip(members, ids, topics, generations, racks,
                                                                        strict=True):
                set_id(member, member_id)
                set_topics(member, subscribed)
                set_owned(member, ())
                set_generation(member, generation)
                set_rack(member, rack)
                set_instance(member, None)
                set_regex(member, None)
            return members
        for setter, values in ((set_id, ids), (set_topics, topics), (set_owned, repeat((), len(ids))),
                               (set_generation, generations), (set_rack, racks),
                               (set_instance, repeat(None, len(ids))), (set_regex, repeat(None, len(ids)))):
            deque(map(setter, members, values), maxlen=0)
        return members


def member_identity_problem(members: Iterable[_Identified]) -> str | None:
    """Why `members` cannot be one group's, or None: a member id twice, or two members of one
    static instance (the coordinator replaces the old member when the instance joins again,
    KIP-345: a group never holds two). One pass (a million members with a repeat at the end).
    `Group`, the service's schema (`api.models.PlanRequest`) and a leader given instance ids
    (`leader.sync`) ask it."""
    seen: set[str] = set()
    instances: dict[str, str] = {}
    for member in members:
        if member.id in seen:
            return f"duplicate member id {member.id!r}"
        seen.add(member.id)
        if member.group_instance_id is not None:
            other = instances.setdefault(member.group_instance_id, member.id)
            if other != member.id:
                return f"{other!r} and {member.id!r} share group_instance_id {member.group_instance_id!r}"
    return None


class _Identified(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def group_instance_id(self) -> str | None: ...


# The slots' own setters: they skip the frozen class's __setattr__ (a third of `decoded`'s cost).
#: Up to this many members, `Member.decoded_many` fills them one by one (measured crossover: 30-40).
_FEW_MEMBERS = 32

_MEMBER_SLOTS = tuple(getattr(Member, name).__set__
                      for name in ("id", "topics", "owned", "generation", "rack", "group_instance_id", "topic_regex"))

#: What Kafka accepts as a ``group.instance.id`` (``JoinGroupRequest.validateGroupInstanceId``,
#: as a topic name: at most 249 of ASCII letters, digits, ``.``, ``_`` and ``-``); the service's
#: schema says the same with it.
INSTANCE_ID_PATTERN = r"[a-zA-Z0-9._-]{1,249}"
_INSTANCE_ID = re.compile(INSTANCE_ID_PATTERN)


def _check_instance_id(member_id: str, instance_id: object) -> None:
    if not isinstance(instance_id, str) or _INSTANCE_ID.fullmatch(instance_id) is None:
        raise InvalidGroupError(f"member {member_id!r}: group_instance_id must be 1-249 of a-z, A-Z, 0-9, '.', "
                                f"'_' and '-' (Kafka's rule), got {instance_id!r}")


@dataclass(frozen=True, slots=True)
class Group:
    """A consumer group at the moment the leader assigns.

    Parameters
    ----------
    topics : mapping of str to int
        Partition count per topic, as in the leader's metadata. Counts must be >= 0.
    members : sequence of Member
        Member ids must be unique.
    partition_racks : mapping of str to list of list of str, or None
        Replica racks per topic, one list per partition in partition order (KIP-881). Missing
        topics or partitions have no rack information.
    topic_ids : mapping of str to str, or None
        Topic ids (``Uuid``, 22 base64url characters as Kafka prints them) by topic name. The
        broker's assignors (KIP-848) break ties by topic id; a topic without one gets the id
        `assignor.topic_ids.derived_topic_id` derives from its name. Classic strategies ignore them.

    Raises
    ------
    InvalidGroupError
        On a negative or non-integer partition count, duplicate member ids, a topic id that is
        not a ``Uuid``, or two topics sharing one id (given, or given as another's derived id).
    """

    topics: Mapping[str, int]
    members: Sequence[Member] = ()
    partition_racks: Mapping[str, Sequence[Sequence[str]]] | None = None
    topic_ids: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.topics, Mapping):
            raise InvalidGroupError("topics must map topic name to partition count")
        topics = dict(self.topics)
        for name, count in topics.items():
            if not isinstance(name, str):
                raise InvalidGroupError(f"topic names must be strings, got {name!r}")
            # Partition ids are INT32 on the wire, so a count never exceeds 2**31 - 1.
            if not _is_int(count) or not 0 <= count <= INT32_MAX:
                raise InvalidGroupError(
                    f"topic {name!r}: partition count must be an integer in [0, 2**31), got {count!r}")
        members = tuple(self.members)
        for member in members:
            if not isinstance(member, Member):
                raise InvalidGroupError(f"members must be Member objects, got {type(member).__name__}")
        problem = member_identity_problem(members)
        if problem:
            raise InvalidGroupError(problem)
        object.__setattr__(self, "topics", topics)
        object.__setattr__(self, "members", members)
        if self.partition_racks is not None:
            object.__setattr__(self, "partition_racks", _checked_racks(self.partition_racks))
        if self.topic_ids is not None:
            checked = _checked_topic_ids(self.topic_ids)
            topic_ids_of([*topics, *(t for t in checked if t not in topics)], checked)  # no id twice
            object.__setattr__(self, "topic_ids", checked)

    @classmethod
    def assembled(cls, topics: Mapping[str, int], members: Sequence[Member],
                  partition_racks: Mapping[str, Sequence[Sequence[str]]] | None,
                  topic_ids: Mapping[str, str] | None = None) -> Group:
        """A group from parts that are checked already (another group's topics and racks, members
        with distinct ids): no checks, as `Member.decoded`."""
        group = object.__new__(cls)
        object.__setattr__(group, "topics", topics)
        object.__setattr__(group, "members", tuple(members))
        object.__setattr__(group, "partition_racks", partition_racks)
        object.__setattr__(group, "topic_ids", topic_ids)
        return group

    def member(self, member_id: str) -> Member:
        """Return the member with this id (KeyError when absent)."""
        for member in self.members:
            if member.id == member_id:
                return member
        raise KeyError(member_id)


def _checked_topic_ids(topic_ids: object) -> dict[str, str]:
    if not isinstance(topic_ids, Mapping):
        raise InvalidGroupError("topic_ids must map topic name -> topic id")
    checked = {}
    for topic, text in topic_ids.items():
        if not isinstance(topic, str):
            raise InvalidGroupError(f"topic_ids: topic names must be strings, got {topic!r}")
        checked[topic] = str(parse_topic_id(text, topic))
    return checked


def _checked_racks(partition_racks: object) -> dict[str, tuple[tuple[str, ...], ...]]:
    if not isinstance(partition_racks, Mapping):
        raise InvalidGroupError("partition_racks must map topic -> list of replica racks per partition")
    checked = {}
    for topic, per_partition in partition_racks.items():
        if not isinstance(topic, str) or isinstance(per_partition, str) or not isinstance(per_partition, Sequence):
            raise InvalidGroupError(f"partition_racks[{topic!r}]: expected a list (one rack list per partition)")
        rows = []
        for partition, racks in enumerate(per_partition):
            if isinstance(racks, str) or not isinstance(racks, Sequence | set | frozenset) or not all(
                isinstance(r, str) for r in racks
            ):
                raise InvalidGroupError(f"partition_racks[{topic!r}][{partition}]: expected a list of rack names")
            rows.append(tuple(racks))
        checked[topic] = tuple(rows)
    return checked


@dataclass(frozen=True, slots=True)
class Plan:
    """The outcome of one assignment.

    Attributes
    ----------
    strategy : str
        Protocol name of the strategy that produced it.
    assignment : dict of str to list of TopicPartition
        One entry per member of the group (possibly empty), partitions sorted by topic then
        partition number; the Java-faithful strategies keep Java's order instead (the order a
        Java leader's SyncGroup lists them in).
    user_data : dict of str to bytes
        Assignment user data the leader sends back per member; empty for strategies that send
        none (the eager sticky protocol carries its state in the *subscription*, KIP-54).
    """

    strategy: str
    assignment: dict[str, list[TopicPartition]]
    user_data: dict[str, bytes] = field(default_factory=dict)
