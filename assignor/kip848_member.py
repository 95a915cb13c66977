"""A member of a consumer group under KIP-848's consumer protocol, without I/O: what its next
``ConsumerGroupHeartbeat`` says, what it makes of the answer, and which partitions it must
revoke and take to reach its target. A client adapter sends the requests and runs the
listener's callbacks (`assignor.integrations.aiokafka_consumer_protocol`).

It follows Kafka 4.3.1's Java consumer:

- ``ConsumerHeartbeatRequestManager.HeartbeatState.buildRequestData``: the group, the member id
  (made by the member, version 1), the epoch and the instance id always; the rebalance timeout,
  subscription, regex, server assignor and owned partitions when joining or changed since the
  last heartbeat, the rack when joining; every field again after an error
  (``resetHeartbeatState``);
- ``AbstractMembershipManager``: a target different from what it owns makes the member
  RECONCILING (``processAssignmentReceived``); it revokes what the target drops and then takes
  what it adds (``revokeAndAssign``), and the next heartbeat, sent at once (ACKNOWLEDGING,
  ``shouldHeartbeatNow``), carries what it owns; fenced (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID)
  its partitions are lost and it joins again with epoch 0 and the same member id
  (``transitionToFenced``); leaving it sends epoch -1, or -2 for a static member that will
  come back (``ConsumerMembershipManager.leaveGroupEpoch``);
- ``AbstractHeartbeatRequestManager.onErrorResponse``: which errors retry, which look for the
  coordinator again, which fence and which are fatal.

Partitions are ``(topic id, partition)``, topic ids as the wire reads them (base64 text).
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from assignor.wire.error_codes import error_name

__all__ = ["Answer", "Change", "Member", "MemberState"]

#: Epochs a heartbeat sends: join; leave; a static member leaves and will come back.
JOIN_EPOCH, LEAVE_EPOCH, STATIC_LEAVE_EPOCH = 0, -1, -2

#: Errors whose heartbeat is sent again after the backoff; or once the coordinator is found
#: again; or that fence the member (its partitions lost, it joins again).
RETRY = frozenset({14, 7})  # COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT
FIND_COORDINATOR = frozenset({15, 16})  # COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
FENCE = frozenset({110, 25})  # FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID
#: TOPIC_AUTHORIZATION_FAILED: told to the application, the member stays as it is (the ACLs
#: may come).
TOPIC_AUTHORIZATION_FAILED = 29

Partition = tuple[str, int]


class MemberState(StrEnum):
    """``MemberState``'s states that matter here."""

    UNSUBSCRIBED = "unsubscribed"
    JOINING = "joining"
    RECONCILING = "reconciling"
    ACKNOWLEDGING = "acknowledging"
    STABLE = "stable"
    LEAVING = "leaving"
    FATAL = "fatal"


@dataclass(frozen=True)
class Answer:
    """What a heartbeat's answer asks of the client: ``ok``, ``retry`` (after the backoff),
    ``find-coordinator``, ``fenced`` (lose `lost`, then heartbeat at once to join again),
    ``error`` (tell the application, carry on) or ``fatal`` (stop; `error` says why)."""

    kind: str
    error: str = ""
    lost: frozenset[Partition] = frozenset()


@dataclass(frozen=True)
class Change:
    """The step to the target: partitions to revoke (first) and to take; `unresolved` is how
    many target partitions wait for their topic's name."""

    revoke: frozenset[Partition]
    take: frozenset[Partition]
    unresolved: int = 0


def new_member_id() -> str:
    """A member id as Java's consumer makes one (``Uuid.randomUuid().toString()``: URL-safe
    base64 of 16 random bytes, no padding)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


@dataclass
class Member:
    """One member's side of the protocol (module docstring)."""

    group_id: str
    instance_id: str | None = None
    rack: str | None = None
    server_assignor: str | None = None
    rebalance_timeout_ms: int = 300_000
    member_id: str = field(default_factory=new_member_id)
    state: MemberState = MemberState.UNSUBSCRIBED
    epoch: int = JOIN_EPOCH
    heartbeat_interval_ms: int = 5_000
    topics: tuple[str, ...] = ()
    regex: str | None = None
    owned: frozenset[Partition] = frozenset()
    target: frozenset[Partition] = frozenset()
    _sent: dict[str, Any] = field(default_factory=dict)

    def subscribe(self, topics: Iterable[str], regex: str | None = None) -> None:
        """Topics (or a regex, RE2/J as the broker reads it) to read; the first joins."""
        self.topics, self.regex = tuple(sorted(set(topics))), regex
        if self.state == MemberState.UNSUBSCRIBED:
            self.state, self.epoch, self._sent = MemberState.JOINING, JOIN_EPOCH, {}

    def heartbeat_now(self) -> bool:
        """Whether the next heartbeat goes at once rather than at the interval."""
        return self.state in (MemberState.JOINING, MemberState.ACKNOWLEDGING, MemberState.LEAVING)

    def request(self) -> dict[str, Any]:
        """The next ``ConsumerGroupHeartbeat`` request's fields (null: unchanged since the last)."""
        joining = self.state == MemberState.JOINING
        values: dict[str, Any] = {"group_id": self.group_id, "member_id": self.member_id, "member_epoch": self.epoch,
                                  "instance_id": self.instance_id, "rack_id": self.rack if joining else None}
        changing = {"rebalance_timeout_ms": self.rebalance_timeout_ms, "subscribed_topic_names": list(self.topics),
                    "server_assignor": self.server_assignor, "topic_partitions": _by_topic(self.owned),
                    # ("" stops a regex subscription)
                    "subscribed_topic_regex": "" if self.regex is None and self._sent.get("subscribed_topic_regex")
                    else self.regex}
        for name, value in changing.items():
            send = value is not None and (joining or self._sent.get(name, _UNSENT) != value)
            values[name] = value if send else _UNCHANGED.get(name)
            if send:
                self._sent[name] = value
        if self.state == MemberState.ACKNOWLEDGING:
            self.state = MemberState.STABLE
        return values

    def answered(self, response: Mapping[str, Any]) -> Answer:
        """Take a heartbeat's answer: the member id, epoch, interval and a new target."""
        code = response["error_code"]
        if code != 0:
            self._sent = {}  # the next heartbeat says everything again
            why = error_name(code) + (f": {response['error_message']}" if response.get("error_message") else "")
            if self.state == MemberState.LEAVING:
                self.state = MemberState.UNSUBSCRIBED
                return Answer("ok", why)
            if code in RETRY:
                return Answer("retry", why)
            if code in FIND_COORDINATOR:
                return Answer("find-coordinator", why)
            if code in FENCE:
                return Answer("fenced", why, self.fence())
            if code == TOPIC_AUTHORIZATION_FAILED:
                return Answer("error", why)
            self.state = MemberState.FATAL
            return Answer("fatal", why, self._give_up())
        if self.state == MemberState.LEAVING:
            self.state = MemberState.UNSUBSCRIBED
            return Answer("ok")
        if response.get("member_id"):
            self.member_id = response["member_id"]
        self.epoch = response["member_epoch"]
        if response["heartbeat_interval_ms"] > 0:
            self.heartbeat_interval_ms = response["heartbeat_interval_ms"]
        assignment = response.get("assignment")
        if assignment is not None:
            (by_topic,) = assignment
            self.target = frozenset((topic_id, p) for topic_id, partitions in by_topic for p in partitions)
            if self.target != self.owned:
                self.state = MemberState.RECONCILING
            elif self.state in (MemberState.JOINING, MemberState.RECONCILING):
                self.state = MemberState.STABLE
        elif self.state == MemberState.JOINING and self.epoch > 0:
            self.state = MemberState.STABLE
        return Answer("ok")

    def change(self, known: Iterable[str]) -> Change | None:
        """What reconciling does now, with the topics whose names are `known` (a partition of
        another topic waits): None when nothing is to be done."""
        if self.state != MemberState.RECONCILING:
            return None
        names = set(known)
        reachable = frozenset(p for p in self.target if p[0] in names)
        revoke, take = self.owned - self.target, reachable - self.owned
        if not revoke and not take:
            if reachable == self.target:  # (only the epoch moved)
                self.state = MemberState.ACKNOWLEDGING
            return None
        return Change(revoke, take, len(self.target) - len(reachable))

    def reconciled(self, change: Change) -> None:
        """The client revoked and took `change`'s partitions: the next heartbeat (at once) says so."""
        if self.state != MemberState.RECONCILING:  # fenced or leaving meanwhile: nothing to acknowledge
            return
        self.owned = (self.owned - change.revoke) | change.take
        self.state = MemberState.ACKNOWLEDGING

    def released(self, partitions: Iterable[Partition]) -> None:
        """The client gave `partitions` up on its own (its subscription changed under them): no
        longer owned, which the next heartbeat says; those still in the target are taken again."""
        self.owned -= frozenset(partitions)
        if self.state in (MemberState.STABLE, MemberState.ACKNOWLEDGING, MemberState.RECONCILING):
            self.state = MemberState.RECONCILING if self.target != self.owned else MemberState.ACKNOWLEDGING

    def fence(self) -> frozenset[Partition]:
        """Fenced (or its session expired here): what it owned is lost; it joins again with epoch 0."""
        lost = self._give_up()
        if self.state not in (MemberState.UNSUBSCRIBED, MemberState.FATAL):
            self.state, self.epoch, self._sent = MemberState.JOINING, JOIN_EPOCH, {}
        return lost

    def leave(self) -> frozenset[Partition]:
        """Leave (on close or unsubscribe): the partitions to revoke before the leave heartbeat."""
        owned = self._give_up()
        if self.state in (MemberState.UNSUBSCRIBED, MemberState.FATAL):
            return frozenset()
        self.epoch = STATIC_LEAVE_EPOCH if self.instance_id is not None else LEAVE_EPOCH
        self.state = MemberState.LEAVING
        return owned

    def _give_up(self) -> frozenset[Partition]:
        owned, self.owned, self.target = self.owned, frozenset(), frozenset()
        return owned


_UNSENT = object()
#: What a field unchanged since the last heartbeat is sent as (null, but the timeout's -1).
_UNCHANGED = {"rebalance_timeout_ms": -1}


def _by_topic(partitions: frozenset[Partition]) -> list[tuple[str, list[int]]]:
    topics: dict[str, list[int]] = {}
    for topic_id, p in sorted(partitions):
        topics.setdefault(topic_id, []).append(p)
    return list(topics.items())
