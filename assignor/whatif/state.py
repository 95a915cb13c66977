"""One strategy's view of the live group during a what-if run: what each member owns, at which
generation, numbered so that lists of members become arrays."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from assignor._arrays import appended, filled, run_starts, stable_order
from assignor.errors import WhatIfError
from assignor.leader import LeaderCache
from assignor.model import INT32_MAX, Claims, Member, claim_columns
from assignor.strategies.kip848.member_map import MemberMap
from assignor.strategies.strategy import Leader
from assignor.whatif.figures import Counting
from assignor.whatif.timing import DEFAULT_TIMING, Timing


@dataclass
class _State:
    """One strategy's view of the live group: what each member owns (`Claims`, member index into
    `ids`), at which generation, and the codec caches a long-lived leader and members keep."""

    ids: list[str]
    numbers: np.ndarray  # of `ids`, by `numbering`
    owned: Claims
    generation: np.ndarray  # of each of `ids`
    group_generation: int
    numbering: _Numbering
    cache: LeaderCache
    leader: Leader | None = None  # the leader of a strategy that keeps one (Java's), for the whole run
    # The consumer group's member map, in the coordinator's order (None before the first
    # consumer-protocol step: `assignor.whatif.consumer`)
    member_map: MemberMap | None = None
    #: How long restarted members are away and Kafka's settings (`assignor.whatif.timing`).
    timing: Timing = DEFAULT_TIMING
    #: Seconds from the last consumer-protocol target's computation until every member had it,
    #: when the next event comes (None: no target computed yet, the group at rest).
    settled: float | None = None
    #: Where the steps' figures are counted together (`Counting`); None: each step's at once.
    counting: Counting | None = None


    def forget(self, member_id: str) -> None:
        """`member_id` left and a new consumer is back (under that id, or another), before the
        leave rebalanced: what it held stays a departed member's (free for the step, counted as
        reassigned when another takes it), and the id gets a new number (the old one stays
        taken), so a member rejoining under it claims nothing."""
        if member_id not in self.ids:
            return
        i = self.ids.index(member_id)
        self.ids = [*self.ids[:i], departed(member_id), *self.ids[i + 1 :]]
        self.numbering.forget(member_id)


def departed(member_id: str) -> str:
    """The name what a member held goes under once it has left (no member id can be it)."""
    return f"\0departed {member_id}"


class _Numbering(dict[str, int]):
    """A number per member id, given in order of first sight: member lists become arrays of
    numbers, and moving values from one list's order to another's is a numpy gather."""

    def __missing__(self, member_id: str) -> int:
        number = self[member_id] = len(self)
        return number

    def forget(self, member_id: str) -> None:
        """`member_id` gets a new number at its next sight; its old one stays taken (by a key no
        id can be), so numbers stay below ``len(self)``."""
        if member_id in self:
            number = self.pop(member_id)
            self[f"\0forgotten {number}"] = number

    def of(self, ids: list[str]) -> np.ndarray:
        return np.fromiter(map(self.__getitem__, ids), dtype=np.int64, count=len(ids))

    def positions(self, numbers: np.ndarray, among: np.ndarray) -> np.ndarray:
        """Each member of `numbers` as an index in `among` (also numbers; -1: not there), then
        a last -1."""
        where = filled(len(self) + 1, -1)
        where[among] = np.arange(len(among))
        found: np.ndarray = where[appended(numbers, len(self))]
        return found


def _claims_of(members: Sequence[Member], topics: Mapping[str, int]) -> Claims:
    """The members' owned partitions as `Claims`, topics named in order of first appearance;
    each must be one a client can send. From `COLUMNS_FROM` claims, read in C (`claim_columns`)
    where every claim is a `TopicPartition` of one of `topics` (a group read from JSON or a
    snapshot: a million claims in tens of milliseconds), else by `_claims_plainly`, which names
    what is wrong and which a property test holds this to."""
    owned: list[Sequence[object]] = [m.owned for m in members]
    if not _in_columns(sum(map(len, owned))):
        return _claims_plainly(members)
    index = {name: i for i, name in enumerate(topics)}
    read = claim_columns(owned, index)
    if read is None:
        return _claims_plainly(members)
    topic, partition = read
    if len(topic) and (topic.min() < 0 or partition.min() < 0 or partition.max() > INT32_MAX):
        return _claims_plainly(members)  # (another topic's claim, or one no client can send)
    member = np.repeat(np.arange(len(owned), dtype=np.int64), [len(o) for o in owned])
    by_topic = stable_order(topic)
    starts = run_starts(topic[by_topic])
    held, first = topic[by_topic][starts], by_topic[starts]  # (each topic's first row: the sort is stable)
    in_order = held[np.argsort(first, kind="stable")]
    renumbered = np.zeros(len(index), dtype=np.int64)
    renumbered[in_order] = np.arange(len(in_order))
    names = list(index)
    return Claims(member, renumbered[topic], partition.copy(), [names[t] for t in in_order.tolist()])


def _claims_plainly(members: Sequence[Member]) -> Claims:
    """`_claims_of` claim by claim: the reference, and what names a claim no client can send."""
    for m in members:
        for tp in m.owned:
            ok = isinstance(tp, tuple | list) and len(tp) == 2 and isinstance(tp[0], str)
            if not ok or not isinstance(tp[1], int) or isinstance(tp[1], bool) or not 0 <= tp[1] <= INT32_MAX:
                raise WhatIfError(f"member {m.id!r}: owned partition {tp!r} is not a (topic, partition) a client "
                                  "can send")
    return Claims.of_lists([m.owned for m in members])


#: Claims from which a what-if step reads them in columns (`_holding`, `_claims_of`, and a
#: consumer-protocol step's counts): below, numpy's cost per call outweighs what it saves (the
#: fleet of small groups `make bench` replays, for one; `tests/consumer/test_whatif.py` holds
#: whole what-ifs alike either way).
COLUMNS_FROM = 2048


def _in_columns(rows: int) -> bool:
    """Whether a step reads `rows` claims in columns (`COLUMNS_FROM`)."""
    return rows >= COLUMNS_FROM


def _holding(ids: list[str], claims: Claims) -> Mapping[str, Sequence[tuple[str, int]]]:
    """What each member holds (every one of `ids`, in order), as ``(topic, partition)`` pairs in
    the claims' order: `claims`' member indices index `ids`. From `COLUMNS_FROM` claims, as
    `TopicPartition`s made in C (`Claims.member_lists`: a million in a few tens of milliseconds,
    where `_holding_plainly`, the reference, takes a second)."""
    if not _in_columns(len(claims.member)):
        return _holding_plainly(ids, claims)
    return dict(zip(ids, claims.member_lists(len(ids)), strict=True))


def _holding_plainly(ids: list[str], claims: Claims) -> dict[str, list[tuple[str, int]]]:
    """`_holding` row by row."""
    held: dict[str, list[tuple[str, int]]] = {member_id: [] for member_id in ids}
    names = claims.names
    for m, t, p in zip(claims.member.tolist(), claims.topic.tolist(), claims.partition.tolist()):
        held[ids[m]].append((names[t], p))
    return held


def _assignment_of(state: _State) -> dict[str, list[list[str | int]]]:
    """What each member owns now, as ``[topic, partition]`` lists."""
    held = _holding(state.ids, state.owned)
    return {member_id: [[topic, p] for topic, p in pairs] for member_id, pairs in held.items()}


def _reindex(claims: Claims, position: np.ndarray) -> Claims:
    """`claims` with each member index i replaced by ``position[i]``; claims of members with
    position -1 (not there) are dropped."""
    new_index = position[claims.member]
    kept = new_index >= 0
    return Claims(new_index[kept], claims.topic[kept], claims.partition[kept], claims.names)
