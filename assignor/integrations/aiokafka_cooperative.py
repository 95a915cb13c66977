"""Incremental cooperative rebalancing (KIP-429) for aiokafka consumers (extra ``[aiokafka]``).

aiokafka's group coordinator is eager: before every rebalance it revokes every partition of the
member (``GroupCoordinator._on_join_prepare``) and stops returning records until the new
assignment arrives, so a rolling restart stops the whole group at every step however sticky the
plan. `CooperativeConsumer` is an ``AIOKafkaConsumer`` whose coordinator follows Java's
``ConsumerCoordinator`` under the cooperative protocol instead::

    consumer = CooperativeConsumer("orders", group_id="g", bootstrap_servers=...,
                                   partition_assignment_strategy=(CooperativeStickyAssignor(),))

- joining, a member keeps its partitions and keeps consuming them; its JoinGroup metadata
  (`CooperativeStickyAssignor`) carries them with its generation;
- after SyncGroup it revokes only what it no longer has: those partitions stop returning
  records at once, their consumed offsets are committed (with auto-commit on), then
  ``on_partitions_revoked`` gets exactly them; retained partitions keep their fetch positions;
- ``on_partitions_assigned`` gets only what was added (possibly nothing, as in Java);
- when something was revoked it rejoins at once: the second rebalance hands those partitions
  to their new owners (the leader withheld them, KIP-429);
- a member fenced by the coordinator, or whose generation went stale, loses its partitions
  without committing: ``on_partitions_lost`` when the listener has it, else
  ``on_partitions_revoked`` (Java's default), and rejoins claiming nothing;
- a member whose session ran out on its own clock (no heartbeat answered for longer than
  ``session_timeout_ms``, outside a join: its event loop was blocked) loses its partitions the
  same way before ``getmany``/``getone`` return anything, as librdkafka does: the broker has
  removed it and may have given them to others;
- closing, after the last auto-commit it revokes everything it owns through the listener (lost
  instead when it no longer belongs to a current generation), then leaves: Java's
  ``ConsumerCoordinator.onLeavePrepare``.

The consumer is cooperative only when every assignor it offers supports the cooperative
protocol (``supported_protocols()``, as Java decides). Offering ``sticky`` too
(``(CooperativeStickyAssignor(), StickyAssignor())``) keeps it eager, for KIP-429's upgrade by
two rolling bounces: first add ``cooperative-sticky`` beside the old assignor, then drop the old.
Static membership (``group_instance_id``) is aiokafka's own and works unchanged.

aiokafka internals this relies on (aiokafka 0.11 to 0.14; `SUPPORTED_AIOKAFKA` is checked on
import, and ``tests/integration/test_aiokafka_cooperative.py`` fails when they change):
``GroupCoordinator._on_join_prepare(previous_assignment)``, ``_on_join_complete(generation,
member_id, protocol, member_assignment_bytes)``, ``reset_generation()``, ``_do_rejoin_group``,
``_do_heartbeat()`` (true when the broker answered), ``close()`` calling ``_maybe_leave_group()``,
``_session_timeout_ms``,
``_maybe_do_last_autocommit``, ``commit_offsets``, ``start_commit_offsets_refresh_task`` /
``_stop_commit_offsets_refresh_task``, ``_lookup_assignor``, ``request_rejoin``; the name
``GroupCoordinator`` that ``AIOKafkaConsumer.start`` looks up in ``aiokafka.consumer.consumer``;
``SubscriptionState.assign_from_subscribed`` and the ``Assignment._tp_state`` /
``TopicPartitionState._assignment`` pair a retained partition's state moves with.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Iterable
from typing import Any, cast

import aiokafka.consumer.consumer as _consumer_module
from aiokafka import AIOKafkaConsumer
from aiokafka.consumer.group_coordinator import GroupCoordinator
from aiokafka.coordinator.protocol import ConsumerProtocol
from aiokafka.errors import KafkaError

from assignor.errors import AssignorError
from assignor.integrations.aiokafka import CooperativeStickyAssignor
from assignor.integrations.aiokafka_consumer_protocol import ConsumerProtocolCoordinator
from assignor.integrations.aiokafka_member import SUPPORTED_AIOKAFKA, MemberCoordinator
from assignor.member_side import COOPERATIVE

__all__ = ["SUPPORTED_AIOKAFKA", "CooperativeConsumer", "CooperativeCoordinator", "rebalances_cooperatively"]

log = logging.getLogger(__name__)

_NO_GENERATION = -1
_UNKNOWN_MEMBER = ""


def rebalances_cooperatively(assignors: Iterable[Any]) -> bool:
    """Whether a consumer offering `assignors` rebalances cooperatively: every one supports
    the cooperative protocol (Java's ``ConsumerCoordinator`` picks the protocol all support)."""
    offered = list(assignors)
    return bool(offered) and all(COOPERATIVE in _supported(a) for a in offered)


def _supported(assignor: Any) -> tuple[str, ...]:
    supported = getattr(assignor, "supported_protocols", None)
    return tuple(supported()) if callable(supported) else ()


class CooperativeCoordinator(MemberCoordinator):
    """aiokafka's group coordinator with KIP-429's incremental rebalance (module docstring);
    eager, exactly aiokafka's, when an assignor offered supports only the eager protocol."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.cooperative = rebalances_cooperatively(kwargs.get("assignors", ()))
        self._joining = False  # a join is under way (the broker holds the member then): `session_expired`
        self._closing_down = False  # `close` runs: the leave gives up every partition first
        super().__init__(*args, **kwargs)

    def session_expired(self) -> bool:
        """Whether the session has run out here, whatever the broker has said yet: no heartbeat
        answered for longer than ``session_timeout_ms`` and no join under way. The broker has
        then removed this member and may have given its partitions to others (librdkafka checks
        the same on its own clock; Java's ``AbstractCoordinator`` marks the session expired in its
        heartbeat thread)."""
        return (self.cooperative and self._alive_at is not None and not self._joining
                and time.monotonic() - self._alive_at > self._session_timeout_ms / 1000)

    def _expire(self) -> None:
        """The session ran out here: the coordinator no longer knows this member."""
        self.reset_generation()

    async def _do_heartbeat(self) -> bool:
        answered = bool(await super()._do_heartbeat())
        if answered and self.member_id != _UNKNOWN_MEMBER:
            self._alive_at = time.monotonic()
        return answered

    async def close(self) -> None:
        self._closing_down = True
        await super().close()

    async def _maybe_leave_group(self) -> None:
        if self.cooperative and self._closing_down:
            self._closing_down = False
            await self._give_up_on_close()
        await super()._maybe_leave_group()

    async def _give_up_on_close(self) -> None:
        """Java's ``ConsumerCoordinator.onLeavePrepare`` when the consumer closes: after the last
        auto-commit, every partition it owns is revoked (``on_partitions_revoked``, so a listener
        that commits there commits at shutdown too), or lost when it no longer belongs to a
        current generation; then it leaves."""
        owned = self._owned()
        if not owned:
            return
        listener = self._subscription.listener
        if self._lost or self.generation == _NO_GENERATION or self.member_id == _UNKNOWN_MEMBER:
            self._lost = False
            lost_hook = getattr(listener, "on_partitions_lost", None)
            hook, name = (lost_hook if callable(lost_hook) else getattr(listener, "on_partitions_revoked", None),
                          "on_partitions_lost")
        else:
            hook, name = getattr(listener, "on_partitions_revoked", None), "on_partitions_revoked"
        log.info("Giving up partitions %s of group %s on close (%s)", set(owned), self.group_id, name)
        await self._call(hook, set(owned), name)

    def reset_generation(self) -> None:
        """The coordinator does not know this member or its generation: what it owns is lost."""
        if self.cooperative and self._owned():
            self._lost = True
        super().reset_generation()

    async def _on_join_prepare(self, previous_assignment: Any) -> None:
        if not self.cooperative:
            await super()._on_join_prepare(previous_assignment)
            return
        # Unlike eager: no revocation and no pause; the member goes on consuming while it joins.
        self._group_subscription = None
        if self._lost or self.generation == _NO_GENERATION:
            await self._lose()
        elif previous_assignment is not None and previous_assignment.active:
            try:  # as Java's onJoinPrepare: commit what was consumed before the rebalance
                await self._maybe_do_last_autocommit(previous_assignment)
            except KafkaError as error:
                log.warning("offset commit before the rebalance of group %s failed: %s", self.group_id, error)

    async def _do_rejoin_group(self, subscription: Any) -> bool:
        if self.cooperative and self._lost:  # fenced between two join attempts
            await self._lose()
        self._joining = True  # the broker holds a joining member: its session does not run out
        try:
            return bool(await super()._do_rejoin_group(subscription))
        finally:
            self._joining = False
            if self.generation != _NO_GENERATION:
                self._alive_at = time.monotonic()

    async def _on_join_complete(self, generation: int, member_id: str, protocol: str,
                                member_assignment_bytes: bytes) -> None:
        if not self.cooperative:
            await super()._on_join_complete(generation, member_id, protocol, member_assignment_bytes)
            return
        assignor = self._lookup_assignor(protocol)
        if assignor is None:
            raise KafkaError(f"invalid assignment protocol: {protocol}")
        assignment = ConsumerProtocol.ASSIGNMENT.decode(member_assignment_bytes)
        assigned = set(assignment.partitions())
        current = self._subscription.subscription.assignment
        owned = set(self._owned())
        revoked, added = owned - assigned, assigned - owned
        if revoked:
            await self._revoke(current, revoked)
        if revoked or added or current is None or not current.active:
            self._install(assigned)
        # The assignor learns its partitions and generation for the next JoinGroup.
        assignor.on_assignment(assignment)
        await self._stop_commit_offsets_refresh_task()
        self.start_commit_offsets_refresh_task(self._subscription.subscription.assignment)
        log.info("Added partitions %s, revoked %s, for group %s (generation %s)", added, revoked, self.group_id,
                 generation)
        await self._call(getattr(self._subscription.listener, "on_partitions_assigned", None), added,
                         "on_partitions_assigned")
        if revoked:  # KIP-429's second round: the partitions given up go to their new owners
            self.request_rejoin()

#: Subscription states of the consumers that start with our coordinator (their own, by identity).
_COOPERATIVE_STATES: weakref.WeakSet[Any] = weakref.WeakSet()
#: ... and of those on the consumer protocol, with their remote assignor.
_CONSUMER_PROTOCOL_STATES: weakref.WeakKeyDictionary[Any, str | None] = weakref.WeakKeyDictionary()
_ORIGINAL = GroupCoordinator


def _coordinator(client: Any, subscription: Any, **kwargs: Any) -> Any:
    """What ``AIOKafkaConsumer.start`` builds: ours for a `CooperativeConsumer` (its
    consumer-protocol member under ``group_protocol="consumer"``), aiokafka's own for every
    other consumer."""
    if subscription in _CONSUMER_PROTOCOL_STATES:
        return ConsumerProtocolCoordinator(client, subscription, remote_assignor=_CONSUMER_PROTOCOL_STATES[
            subscription], **kwargs)
    kind = CooperativeCoordinator if subscription in _COOPERATIVE_STATES else _ORIGINAL
    return kind(client, subscription, **kwargs)


#: Kafka's ``group.protocol`` values.
GROUP_PROTOCOLS = ("classic", "consumer")


class CooperativeConsumer(AIOKafkaConsumer):  # type: ignore[misc]
    """``AIOKafkaConsumer`` with KIP-429's incremental rebalance (module docstring), or with
    ``group_protocol="consumer"`` a member of KIP-848's consumer protocol whose target the
    broker's ``group_remote_assignor`` computes (`assignor.integrations.aiokafka_consumer_protocol`).
    Takes aiokafka's arguments; ``partition_assignment_strategy`` defaults to our
    `CooperativeStickyAssignor`."""

    def __init__(self, *topics: str, group_protocol: str = "classic", group_remote_assignor: str | None = None,
                 **kwargs: Any) -> None:
        if group_protocol not in GROUP_PROTOCOLS:
            raise AssignorError(f"group_protocol: {group_protocol!r} is not one of {', '.join(GROUP_PROTOCOLS)}")
        if group_remote_assignor is not None and group_protocol != "consumer":
            raise AssignorError("group_remote_assignor: the broker assigns only under group_protocol='consumer'")
        if group_protocol == "consumer" and kwargs.get("group_id") is None:
            raise AssignorError("group_protocol='consumer': a consumer group needs a group_id")
        kwargs.setdefault("partition_assignment_strategy", (CooperativeStickyAssignor(),))
        super().__init__(*topics, **kwargs)
        self.group_protocol, self.group_remote_assignor = group_protocol, group_remote_assignor

    async def start(self) -> None:
        # aiokafka's start builds its coordinator from the module's name `GroupCoordinator`;
        # the factory hands ours to this consumer only (matched by its subscription state).
        _consumer_module.GroupCoordinator = _coordinator
        if self.group_protocol == "consumer":
            _CONSUMER_PROTOCOL_STATES[self._subscription] = self.group_remote_assignor
        else:
            _COOPERATIVE_STATES.add(self._subscription)
        await super().start()

    def subscribe(self, topics: Any = (), pattern: Any = None, listener: Any = None) -> None:
        """aiokafka's ``subscribe``. Under the consumer protocol, a running member's new
        subscription starts with nothing assigned (the member takes what its next target gives,
        `assignor.integrations.aiokafka_consumer_protocol`): aiokafka's fetcher, woken by the
        assignment of the subscription this one replaces but not yet run, would otherwise find
        a subscription without an assignment and stop on its assertion for good."""
        previous = self._subscription.subscription
        super().subscribe(topics=topics, pattern=pattern, listener=listener)
        current = self._subscription.subscription
        if (self.group_protocol == "consumer" and current is not None and current is not previous
                and getattr(previous, "assignment", None) is not None):
            self._subscription.assign_from_subscribed(set())

    @property
    def rebalances_cooperatively(self) -> bool:
        """Whether this consumer rebalances cooperatively (every assignor supports it)."""
        return rebalances_cooperatively(self._partition_assignment_strategy)

    async def _session_lost(self) -> bool:
        coordinator = self._coordinator
        return isinstance(coordinator, MemberCoordinator) and await coordinator.lose_if_expired()

    async def getmany(self, *partitions: Any, timeout_ms: int = 0, max_records: int | None = None) -> dict[Any, Any]:
        """aiokafka's ``getmany``, returning nothing once the session has expired here: the
        partitions are lost first (`CooperativeCoordinator.lose_if_expired`)."""
        await self._session_lost()
        records = await super().getmany(*partitions, timeout_ms=timeout_ms, max_records=max_records)
        if await self._session_lost():
            return {}
        return cast(dict[Any, Any], records)

    async def getone(self, *partitions: Any) -> Any:
        """aiokafka's ``getone``, never a record of a session that has expired here."""
        while True:
            await self._session_lost()
            record = await super().getone(*partitions)
            if not await self._session_lost():
                return record
