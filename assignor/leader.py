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
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from assignor import validate
from assignor.errors import AssignorError
from assignor.json_format import group_to_json, pack_group, pack_plan, plan_to_json
from assignor.model import Claims, Group, Plan
from assignor.solver.dense import Layout, PlanMemo
from assignor.strategies import JAVA_STRATEGIES, check_strategy, plan_owners, protocol_of
from assignor.strategies.java_sticky import JavaStickyAssignor
from assignor.wire.buffers import Messages
from assignor.wire.cache import DecodeCache, EncodeCache
from assignor.wire.columnar import Roster, assignments_for, encode_assignments, read_join_group

__all__ = ["LeaderCache", "SyncResult", "sync"]


@dataclass
class LeaderCache:
    """What a group leader keeps from one rebalance to the next, to spare repeating work: the
    names and topic lists its members send (`decode`), the bytes it writes (`encode`) and what
    planning the same group again can reuse (`plans`). A kept cache never changes an answer.

    Its owner creates it and passes it in: a what-if run, an aiokafka assignor instance, a
    service process. One bound and one rule: once a rebalance is done (`settle`), a cache
    holding more than `max_entries` entries in all starts again, empty.

    Examples
    --------
    >>> cache = LeaderCache(max_entries=10)
    >>> cache.entries()
    0
    """

    max_entries: int = 1 << 18
    decode: DecodeCache = field(default_factory=DecodeCache)
    encode: EncodeCache = field(default_factory=EncodeCache)
    plans: PlanMemo = field(default_factory=PlanMemo)
    #: The Java leaders of the Java-faithful strategies: their memory (the highest generation
    #: seen) lasts as long as the cache, as a Java leader's assignor instance does.
    java: dict[str, JavaStickyAssignor] = field(default_factory=dict)

    def entries(self) -> int:
        """How many entries the three parts hold together."""
        return self.decode.entries() + self.encode.entries() + self.plans.entries()

    def settle(self) -> None:
        """Apply the bound: the owner calls this once a rebalance is done."""
        if self.entries() > self.max_entries:
            self.decode, self.encode, self.plans = DecodeCache(), EncodeCache(), PlanMemo()


@dataclass(frozen=True, eq=False)
class SyncResult:
    """One rebalance as the leader planned it: each member's SyncGroup bytes (`assignments`),
    and the group and plan behind them.

    `group` (what the members said, as the core sees it) and `plan` are made on first use: with
    every member's owned partitions and every assigned partition a Python tuple, they cost a
    leader that only sends the bytes more than the planning did. What a leader keeps instead,
    it can keep packed (`packed_json`).
    """

    assignments: dict[str, bytes]  # member id -> ConsumerProtocolAssignment bytes
    #: The group as planned; with `owned` given, its members' own ``owned`` are empty.
    planned: Group
    #: Every member's claims as columns (member index in ``planned.members`` order), as read.
    owned: Claims | None
    #: The plan as dense arrays (our strategies): the layout and each flat partition's owner.
    layout: Layout | None = None
    owner: np.ndarray | None = None
    protocol: str = ""
    #: The plan, when it was made as objects (the Java-faithful strategies).
    given_plan: Plan | None = None

    @cached_property
    def group(self) -> Group:
        if self.owned is None:
            return self.planned
        members = Roster(list(self.planned.members), self.owned).owning()
        return Group.assembled(self.planned.topics, members, self.planned.partition_racks)

    @cached_property
    def plan(self) -> Plan:
        if self.layout is not None and self.owner is not None:
            return Plan(self.protocol, self.layout.assignment(self.owner))
        if self.given_plan is None:
            raise ValueError("a SyncResult holds its plan, or the layout and owners it is made from")
        return self.given_plan

    def report(self) -> dict[str, Any]:
        """The oracle's report of this plan (`validate.report`), from the dense arrays when
        they can give it (`validate.report_of_layout`)."""
        if self.layout is not None and self.owner is not None:
            found = None
            if self.owned is not None:
                found = validate.report_of_layout(self.planned, self.layout, self.owner, self.protocol, self.owned)
            if found is None:  # (dropped claims are named from the members' own claims)
                found = validate.report_of_layout(self.group, self.layout, self.owner, self.protocol)
            if found is not None:
                return found
        return validate.report(self.group, self.plan)

    def packed_json(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The group and the plan as JSON to keep: packed from the columns and arrays when the
        plan has them (`json_format.pack_group`, `pack_plan`: a list of numbers in place of a
        pair per partition), else `group_to_json` and `plan_to_json`'s forms.
        `json_format.unpack_group` / `unpack_plan` give those forms back from either."""
        if self.owned is None or self.layout is None or self.owner is None:
            return group_to_json(self.group), plan_to_json(self.plan)
        layout = self.layout
        return (pack_group(self.planned, self.owned),
                pack_plan(layout.topics, layout.counts, [m.id for m in layout.members], self.owner))


def sync(protocol: str, generation: int, topics: Mapping[str, int], metadata: Mapping[str, bytes],
         partition_racks: Mapping[str, Sequence[Sequence[str]]] | None = None,
         cache: LeaderCache | None = None, strategy: str | None = None) -> SyncResult:
    """Plan one rebalance for `protocol` ("sticky", "cooperative-sticky", "range", "roundrobin").

    `strategy`: the strategy that plans, by default the protocol's own; ``java-sticky`` /
    ``java-cooperative-sticky`` plan the ``sticky`` / ``cooperative-sticky`` protocols as a Java
    leader would, and the SyncGroup bytes are a Java leader's (Java's order, no user data).

    `topics` are the partition counts the leader knows; subscribed topics missing from it get
    no partitions (Java skips topics without metadata). `generation` is the one the broker
    handed out with this JoinGroup response; sticky assignments carry it (KIP-341). `cache`: the
    caller's `LeaderCache`, kept across rebalances (a fresh one when omitted).

    Raises
    ------
    ProtocolError
        A member's metadata does not decode (the message names the member).
    AssignorError
        Unknown protocol or an invalid group (bad partition counts or racks), a strategy of
        another protocol, or (`JavaAssignorFailure`) a group on which Java's assignor fails.
    """
    check_strategy(protocol)
    if protocol in JAVA_STRATEGIES:
        raise AssignorError(f"{protocol!r} is a strategy, not a protocol: its protocol is "
                            f"{JAVA_STRATEGIES[protocol]!r}")
    strategy = protocol if strategy is None else strategy
    if protocol_of(strategy) != protocol:
        raise AssignorError(f"strategy {strategy!r} plans the {protocol_of(strategy)!r} protocol, not {protocol!r}")
    cache = LeaderCache() if cache is None else cache
    # Every member's metadata at once (the columnar path), planned on the claims as columns.
    roster = read_join_group(list(metadata), Messages.of_members(metadata), protocol, cache.decode)
    # The members as planned own nothing themselves: their claims stay in columns (`build`
    # reads those), and become tuples only if the caller asks for `SyncResult.group`.
    planned = Group(topics=topics, members=roster.members, partition_racks=partition_racks)
    if strategy in JAVA_STRATEGIES:
        group = Group.assembled(planned.topics, roster.owning(), planned.partition_racks)
        return _sync_as_java(protocol, strategy, generation, group, cache)
    layout, owner = plan_owners(protocol, planned, roster.claims, cache.plans)
    messages = encode_assignments(layout.owned_claims(owner), len(layout.members), protocol, generation,
                                  cache=cache.encode)
    cache.settle()
    return SyncResult(dict(zip([m.id for m in layout.members], messages.messages())), planned, roster.claims,
                      layout, owner, protocol)


def _sync_as_java(protocol: str, strategy: str, generation: int, group: Group, cache: LeaderCache) -> SyncResult:
    """`sync` with a Java-faithful strategy: the plan in Java's order, written as Java writes it."""
    leader = cache.java.get(strategy)
    if leader is None:
        leader = cache.java[strategy] = JavaStickyAssignor(cooperative=protocol == "cooperative-sticky")
    plan = leader.assign(group)
    cache.settle()
    return SyncResult(assignments_for(plan, protocol, generation, as_java=True), group, None, protocol=protocol,
                      given_plan=plan)
