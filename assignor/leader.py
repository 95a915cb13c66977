"""What a group leader does between JoinGroup and SyncGroup, from raw bytes to raw bytes.

The embedded aiokafka assignor and the service's ``/v1/groups/{id}/sync`` both run this: decode
every member's JoinGroup metadata for the group's protocol, plan with the strategy of the same
name (or a Java-faithful strategy of that protocol), and encode each member's SyncGroup
assignment.

Examples
--------
>>> from assignor.protocol import Subscription, encode_subscription, decode_assignment
>>> metadata = {m: encode_subscription(Subscription(["t"])) for m in ("a", "b")}
>>> result = sync("sticky", 5, {"t": 4}, metadata)
>>> [[tp.partition for tp in decode_assignment(result.assignments[m]).partitions] for m in "ab"]
[[0, 2], [1, 3]]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np

from assignor import validate
from assignor.errors import AssignorError
from assignor.json_format import pack_group, pack_plan, plan_to_json
from assignor.model import Group, Member, Plan, member_identity_problem
from assignor.protocols import PROTOCOLS, protocol_named
from assignor.solver.dense import Layout, PlanMemo
from assignor.strategies import REGISTRY, strategy_for
from assignor.strategies.strategy import Leader, Planned, Strategy
from assignor.wire.buffers import Messages
from assignor.wire.cache import DecodeCache, EncodeCache
from assignor.wire.columnar import Roster, encode_assignments, read_join_group

__all__ = ["LeaderCache", "SyncResult", "plan_roster", "rebalance", "sync"]


@dataclass
class LeaderCache:
    """What a group leader keeps from one rebalance to the next, to spare repeating work: the
    names and topic lists its members send (`decode`), the bytes it writes (`encode`) and what
    planning the same group again can reuse (`plans`). A kept cache never changes an answer.

    Its owner creates it and passes it in: a what-if run, an aiokafka assignor instance, a
    service process. Two bounds and one rule: once a rebalance is done (`settle`), a cache
    holding more than `max_entries` entries in all, or more than `max_bytes` by the estimate its
    parts keep as entries come in (names and member ids are what a request sends, of any
    length), starts again, empty.

    Examples
    --------
    >>> cache = LeaderCache(max_entries=10)
    >>> cache.entries()
    0
    """

    max_entries: int = 1 << 18
    max_bytes: int = 64 << 20
    decode: DecodeCache = field(default_factory=DecodeCache)
    encode: EncodeCache = field(default_factory=EncodeCache)
    plans: PlanMemo = field(default_factory=PlanMemo)
    #: The leaders of the strategies that keep one (Java's: their memory, the highest generation
    #: seen, lasts as long as the cache, as a Java leader's assignor instance does).
    leaders: dict[str, Leader] = field(default_factory=dict)

    def leader(self, strategy: Strategy) -> Leader | None:
        """The leader this cache keeps for `strategy` (None for a strategy that keeps none)."""
        if strategy.new_leader is None:
            return None
        found = self.leaders.get(strategy.name)
        if found is None:
            found = self.leaders[strategy.name] = strategy.new_leader()
        return found

    def entries(self) -> int:
        """How many entries the three parts hold together."""
        return self.decode.entries() + self.encode.entries() + self.plans.entries()

    def nbytes(self) -> int:
        """What the three parts hold, in bytes, as they estimate it."""
        return self.decode.nbytes() + self.encode.nbytes() + self.plans.nbytes()

    def settle(self) -> None:
        """Apply the bounds: the owner calls this once a rebalance is done."""
        if self.entries() > self.max_entries or self.nbytes() > self.max_bytes:
            self.decode, self.encode, self.plans = DecodeCache(), EncodeCache(), PlanMemo()


@dataclass(frozen=True, eq=False)
class SyncResult:
    """One rebalance as the leader planned it: each member's SyncGroup bytes (`messages`, or as
    a dict, `assignments`), and the group and plan behind them.

    `group` (what the members said, as the core sees it) and `plan` are made on first use: with
    every member's owned partitions and every assigned partition a Python tuple, they cost a
    leader that only sends the bytes more than the planning did. What a leader keeps instead,
    it can keep packed (`packed_json`).
    """

    strategy: Strategy
    #: The group as planned: its members' own ``owned`` are empty (their claims are `roster`'s).
    planned: Group
    #: Every member as decoded, with its claims as columns (member index in ``planned.members`` order).
    roster: Roster
    #: The plan on arrays (the layout, each flat partition's owner, the plan as columns).
    result: Planned
    #: Every member's SyncGroup assignment, laid end to end in layout member order.
    messages: Messages

    @property
    def protocol(self) -> str:
        return self.strategy.protocol.name

    @property
    def layout(self) -> Layout:
        return self.result.layout

    @property
    def owner(self) -> np.ndarray:
        return self.result.owner

    @cached_property
    def assignments(self) -> dict[str, bytes]:
        """Member id -> ConsumerProtocolAssignment bytes."""
        return dict(zip([m.id for m in self.layout.members], self.messages.messages()))

    @cached_property
    def group(self) -> Group:
        return Group.assembled(self.planned.topics, self.roster.owning(), self.planned.partition_racks)

    @cached_property
    def plan(self) -> Plan:
        return self.result.plan(self.strategy.name)

    def report(self) -> validate.ExactReport:
        """The oracle's report of this plan (`validate.report`), from the dense arrays when
        they can give it (`validate.report_of_layout`)."""
        found = validate.report_of_layout(self.planned, self.layout, self.owner, self.strategy, self.roster.claims)
        if found is None:  # (dropped claims are named from the members' own claims)
            found = validate.report_of_layout(self.group, self.layout, self.owner, self.strategy)
        if found is not None:
            return found
        return validate.report(self.group, self.plan, spec=self.layout.spec())

    def packed_json(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The group and the plan as JSON to keep, packed from the columns and arrays
        (`json_format.pack_group`, `pack_plan`: a list of numbers in place of a pair per
        partition); `json_format.unpack_group` / `unpack_plan` give `group_to_json` and
        `plan_to_json`'s forms back. A plan in an order of the strategy's own (Java's) is kept in
        `plan_to_json`'s form, which keeps that order."""
        layout = self.layout
        plan = pack_plan(layout.topics, layout.counts, [m.id for m in layout.members], self.owner) \
            if not self.strategy.java else plan_to_json(self.plan)
        return pack_group(self.planned, self.roster.claims), plan


def sync(protocol: str, generation: int, topics: Mapping[str, int], metadata: Mapping[str, bytes],
         partition_racks: Mapping[str, Sequence[Sequence[str]]] | None = None,
         cache: LeaderCache | None = None, strategy: str | None = None, *,
         assignment_user_data: bool = False, instance_ids: Mapping[str, str] | None = None) -> SyncResult:
    """Plan one rebalance for `protocol` (a name of `assignor.protocols.PROTOCOLS`).

    `strategy`: the strategy that plans, by default the protocol's own; ``java-sticky`` /
    ``java-cooperative-sticky`` plan the ``sticky`` / ``cooperative-sticky`` protocols as a Java
    leader would, and the SyncGroup bytes are a Java leader's (Java's order, no user data).

    `topics` are the partition counts the leader knows; subscribed topics missing from it get
    no partitions (Java skips topics without metadata). `generation` is the one the broker
    handed out with this JoinGroup response. `cache`: the caller's `LeaderCache`, kept across
    rebalances (a fresh one when omitted).

    The assignments are what a Java leader sends: no user data, so a SyncGroup answer is no
    larger than Java's (the coordinator stores it in one record under ``message.max.bytes``).
    `assignment_user_data`: for ``sticky``, each assignment also carries V1 sticky user data
    with `generation`, for members that cannot learn their generation from their client
    (KIP-341; our aiokafka assignor reads it from aiokafka's join and needs none).

    `instance_ids`: the static members' ``group.instance.id`` by member id, as the JoinGroup
    response (v5+) lists them beside the metadata (KIP-345); ``range`` and ``roundrobin`` deal
    to static members first, by instance id, as Java's do (`ordering.static_first_order`).

    Raises
    ------
    ProtocolError
        A member's metadata does not decode (the message names the member).
    AssignorError
        Unknown protocol or an invalid group (bad partition counts or racks), a strategy of
        another protocol, or (`JavaAssignorFailure`) a group on which Java's assignor fails.
    """
    if isinstance(protocol, str) and protocol not in PROTOCOLS and protocol in REGISTRY:
        raise AssignorError(f"{protocol!r} is a strategy, not a protocol: its protocol is "
                            f"{REGISTRY[protocol].protocol.name!r}")
    wire = protocol_named(protocol)
    chosen = strategy_for(wire, strategy)
    # The topics and racks checked once (the members are decoded, valid by construction).
    definition = Group(topics=topics, members=(), partition_racks=partition_racks)
    return rebalance(chosen, generation, definition, list(metadata), Messages.of_members(metadata), cache,
                     assignment_user_data=assignment_user_data, instance_ids=instance_ids)


def _static(members: list[Member], instance_ids: Mapping[str, str]) -> list[Member]:
    """`members` with their instance ids, each checked as `Member` checks it; an id for a member
    that did not join, or two members of one instance, is refused."""
    stray = set(instance_ids).difference(m.id for m in members)
    if stray:
        raise AssignorError(f"instance_ids: {min(stray)!r} is not a member of this JoinGroup")
    static = [replace(m, group_instance_id=instance_ids[m.id]) if m.id in instance_ids else m for m in members]
    problem = member_identity_problem(static)
    if problem is not None:
        raise AssignorError(f"instance_ids: {problem}")
    return static


def rebalance(strategy: Strategy, generation: int, definition: Group, ids: Sequence[str], joined: Messages,
              cache: LeaderCache | None = None, leader: Leader | None = None, *,
              assignment_user_data: bool = False, instance_ids: Mapping[str, str] | None = None) -> SyncResult:
    """The leader's whole job for one rebalance, from JoinGroup to SyncGroup, for every strategy:
    read every member's metadata (`joined`, laid end to end in the order of `ids`) as its
    protocol carries it, plan on the claims as columns, and write each member's assignment (as
    a Java leader does for Java's strategies). `definition`: the topics and racks (its members
    are not read). `leader`: the strategy's leader whose memory carries over (by default the
    one `cache` keeps for it). `assignment_user_data`, `instance_ids`: as `sync`."""
    cache = LeaderCache() if cache is None else cache
    roster = read_join_group(ids, joined, strategy.protocol, cache.decode)
    planned, roster, result = plan_roster(strategy, definition, roster, cache, leader, instance_ids=instance_ids)
    messages = encode_assignments(result.assigned, len(result.layout.members), strategy.protocol, generation,
                                  cache=cache.encode, as_java=strategy.java, user_data=assignment_user_data)
    cache.settle()
    return SyncResult(strategy, planned, roster, result, messages)


def plan_roster(strategy: Strategy, definition: Group, roster: Roster, cache: LeaderCache,
                leader: Leader | None = None, *, instance_ids: Mapping[str, str] | None = None
                ) -> tuple[Group, Roster, Planned]:
    """`rebalance` between the bytes: the leader's plan of the members it read (`roster`), as
    the group it planned (`SyncResult.planned`), the roster with the static members' instance
    ids, and the plan. The what-if engine plans each rebalance here from what the members
    would send (`columnar.join_group_as_read`)."""
    if instance_ids:
        roster = roster._replace(members=_static(roster.members, instance_ids))
    # The members as planned own nothing themselves: their claims stay in columns (`build`
    # reads those), and become tuples only if the caller asks for `SyncResult.group`.
    planned = Group.assembled(definition.topics, roster.members, definition.partition_racks)
    if leader is None:
        leader = cache.leader(strategy)
    return planned, roster, strategy.planned(planned, roster.claims, cache.plans, leader)
