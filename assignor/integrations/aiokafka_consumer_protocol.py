"""aiokafka consumers on KIP-848's consumer protocol (extra ``[aiokafka]``): our
`CooperativeConsumer` with ``group_protocol="consumer"`` (Kafka's setting name)::

    consumer = CooperativeConsumer("orders", group_id="g", bootstrap_servers=...,
                                   group_protocol="consumer", group_remote_assignor="uniform")

The broker assigns (its ``uniform`` or ``range`` assignor, ``group_remote_assignor``; None: the
broker's default); the member heartbeats with ``ConsumerGroupHeartbeat`` at the interval the
broker sets, and reconciles each new target as Java's consumer does
(`assignor.kip848_member`): the partitions the target drops stop returning records, their
consumed offsets are committed (auto-commit), ``on_partitions_revoked`` gets them; then the
added ones are taken, ``on_partitions_assigned`` gets only those, and the next heartbeat, sent at
once, says what it owns. Fenced (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID), or with no heartbeat
answered for ``session_timeout_ms`` on its own clock, its partitions are lost
(``on_partitions_lost``, else ``on_partitions_revoked``; nothing committed, nothing more
returned from them) and it joins again. Closing, it revokes what it owns through the listener
and leaves (epoch -1; -2 for a static member, ``group_instance_id``, which keeps its partitions
for its session). Offsets are committed with the member epoch (OffsetCommit v9,
`assignor.wire.membership`).

What no longer applies under the consumer protocol: ``partition_assignment_strategy`` (the broker
assigns), ``heartbeat_interval_ms`` (the broker's ``group.consumer.heartbeat.interval.ms``) and
the broker-side session (``group.consumer.session.timeout.ms``; ``session_timeout_ms`` is only
this member's own bound for giving up its partitions when it hears nothing).
``max_poll_interval_ms`` is the rebalance timeout sent, as Java sends ``max.poll.interval.ms``.

The heartbeats, metadata with topic ids and commits go over a connection of our own to the group
coordinator (`assignor.cluster.connection`) with the consumer's security settings (PLAINTEXT,
SSL with its ``ssl_context``, SASL PLAIN and SCRAM); aiokafka fetches and fetches committed
offsets as always (an OffsetFetch without a member id is accepted from anyone).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import aiokafka.errors as Errors
from aiokafka.structs import TopicPartition

from assignor.cluster.connection import Connection
from assignor.cluster.settings import ClientSettings
from assignor.errors import ClusterError
from assignor.integrations.aiokafka_member import MemberCoordinator
from assignor.kip848_member import FIND_COORDINATOR, Member, MemberState
from assignor.wire.admin import METADATA, metadata_request
from assignor.wire.error_codes import error_name
from assignor.wire.membership import CONSUMER_GROUP_HEARTBEAT, OFFSET_COMMIT

__all__ = ["ConsumerProtocolCoordinator", "StaleMemberEpochError"]

log = logging.getLogger(__name__)

class StaleMemberEpochError(Errors.KafkaError):  # type: ignore[misc]
    """A commit sent with an epoch the coordinator has moved past (STALE_MEMBER_EPOCH): retried
    with the epoch the next heartbeat brings, as Java's consumer retries its auto-commit."""

    errno = 113
    retriable = True


class ConsumerProtocolCoordinator(MemberCoordinator):
    """aiokafka's coordinator replaced by a consumer-protocol member (module docstring)."""

    def __init__(self, *args: Any, remote_assignor: str | None = None, **kwargs: Any) -> None:
        self._connection: Connection | None = None
        self._opening = asyncio.Lock()
        self._names: dict[str, str] = {}  # topic id -> name
        self._seen: Any = None  # the subscription the member last heartbeat for
        super().__init__(*args, **kwargs)
        self.member = Member(self.group_id, instance_id=self._group_instance_id,
                             rack=getattr(self._client, "_client_rack", None) or None, server_assignor=remote_assignor,
                             rebalance_timeout_ms=int(self._max_poll_interval * 1000))

    # -- the member's loop -------------------------------------------------------------------

    async def _coordination_routine(self) -> None:
        try:
            await self._heartbeats()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("Unexpected error in the consumer-protocol member of group %s", self.group_id)
            error = Errors.KafkaError(f"Unexpected error during coordination {exc!r}")
            self._subscription.abort_waiters(error)
            raise error from exc
        finally:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    async def _heartbeats(self) -> None:
        member = self.member
        backoff = self._retry_backoff_ms / 1000
        while not self._closing.done():
            subscription = self._subscription.subscription
            if subscription is None:
                await asyncio.wait([asyncio.ensure_future(self._subscription.wait_for_subscription()), self._closing],
                                   return_when=asyncio.FIRST_COMPLETED)
                continue
            if subscription is not self._seen:
                await self._subscription_changed()
                self._seen = subscription
            member.subscribe(subscription.topics)
            if await self.lose_if_expired():
                continue
            try:
                await self.ensure_coordinator_known()
                connection = await self._coordinator_connection()
                answer = member.answered(await connection.send(CONSUMER_GROUP_HEARTBEAT, member.request()))
            except (ClusterError, Errors.KafkaError) as error:
                log.warning("Heartbeat of group %s failed (%s): looking for the coordinator again", self.group_id,
                            error)
                self._drop_connection()
                await asyncio.sleep(backoff)
                continue
            if answer.kind != "fatal":
                self._alive_at = time.monotonic()
            if answer.kind == "fenced":
                log.info("Member %s of group %s fenced (%s): partitions lost, joining again", member.member_id,
                         self.group_id, answer.error)
                await self._lose()
                continue
            if answer.kind == "fatal":
                await self._lose()
                await self._push_error_to_user(Errors.KafkaError(f"group {self.group_id}: {answer.error}"))
                return
            if answer.kind == "find-coordinator":
                self._drop_connection()
                continue
            if answer.kind == "retry":
                await asyncio.sleep(backoff)
                continue
            if answer.kind == "error":
                log.error("Heartbeat of group %s: %s", self.group_id, answer.error)
            await self._reconcile()
            assignment = self._subscription.subscription.assignment if self._subscription.subscription else None
            wait = member.heartbeat_interval_ms / 1000
            if assignment is not None and assignment.active:
                try:
                    autocommit = await self._maybe_do_autocommit(assignment)
                except Errors.KafkaError as error:  # (not retriable: the application hears of it, as from aiokafka)
                    await self._push_error_to_user(error)
                    continue
                if autocommit is not None:
                    wait = min(wait, autocommit)
            if member.heartbeat_now():
                continue
            await asyncio.wait([self._closing, subscription.unsubscribe_future], timeout=wait,
                               return_when=asyncio.FIRST_COMPLETED)

    async def _coordinator_connection(self) -> Connection:
        async with self._opening:  # (heartbeats and an application's commit may both ask first)
            if self._connection is None:
                await self.ensure_coordinator_known()
                broker = self._client.cluster.broker_metadata(self.coordinator_id)
                if broker is None:
                    raise Errors.GroupCoordinatorNotAvailableError(self.group_id)
                self._connection = await Connection.open(broker.host, broker.port, _settings(self._client))
            return self._connection

    def _drop_connection(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        self.coordinator_dead()

    # -- reconciling ------------------------------------------------------------------------

    async def _reconcile(self) -> None:
        """Revoke, then take, what the target changes (the topics' names read first)."""
        member = self.member
        if member.state != MemberState.RECONCILING:
            return
        subscription = self._subscription.subscription
        if {topic_id for topic_id, _p in member.target} - set(self._names):
            try:
                await self._learn_names()
            except (ClusterError, Errors.KafkaError) as error:  # (the next heartbeat's turn tries again)
                log.warning("Reading the topics of group %s's target failed: %s", self.group_id, error)
                self._drop_connection()
        # A partition of a topic not (or no longer) subscribed here waits, as one whose name is
        # not known yet (Java's ``findResolvableAssignmentAndTriggerMetadataUpdate``).
        change = member.change(topic_id for topic_id, name in self._names.items() if name in subscription.topics)
        if change is None:
            return
        current = subscription.assignment
        revoked = {self._tp(p) for p in change.revoke}
        if revoked and current is not None and current.active:
            await self._revoke(current, revoked)
        if self._subscription.subscription is not subscription:
            return  # (the application subscribed anew meanwhile: the loop starts again from that)
        added = {self._tp(p) for p in change.take}
        self._install(set(self._owned() - revoked) | added)
        await self._stop_commit_offsets_refresh_task()
        self.start_commit_offsets_refresh_task(self._subscription.subscription.assignment)
        log.info("Added partitions %s, revoked %s, for group %s (epoch %s)", added, revoked, self.group_id,
                 member.epoch)
        member.reconciled(change)
        await self._call(getattr(self._subscription.listener, "on_partitions_assigned", None), added,
                         "on_partitions_assigned")

    async def _subscription_changed(self) -> None:
        """aiokafka dropped the assignment with the subscription it replaced (its fetcher stopped
        at once): what was consumed of it is committed, the listener hears it revoked, and the
        member no longer owns it (the next heartbeat says so; what the new target keeps is taken
        again)."""
        previous = getattr(self._seen, "assignment", None)
        if previous is None or not previous.tps:
            return
        gone = set(previous.tps)
        if self._enable_auto_commit:
            try:
                await self.commit_offsets(previous, previous.all_consumed_offsets())
            except Errors.KafkaError as error:
                log.warning("The commit of group %s before its subscription changed failed: %s", self.group_id, error)
        log.info("Revoking partitions %s of group %s: its subscription changed", gone, self.group_id)
        await self._call(getattr(self._subscription.listener, "on_partitions_revoked", None), gone,
                         "on_partitions_revoked")
        ids = {name: topic_id for topic_id, name in self._names.items()}
        self.member.released((ids[tp.topic], tp.partition) for tp in gone if tp.topic in ids)

    async def _learn_names(self) -> None:
        """The names of the subscribed topics' ids (Metadata v12; aiokafka's metadata has none)."""
        connection = await self._coordinator_connection()
        answer = await connection.send(METADATA, metadata_request(self._subscription.subscription.topics))
        for code, name, topic_id, *_rest in answer["topics"]:
            if code == 0 and name is not None:
                self._names[topic_id] = name

    def _tp(self, partition: tuple[str, int]) -> TopicPartition:
        return TopicPartition(self._names[partition[0]], partition[1])

    # -- the session kept here, leaving, committing -----------------------------------------------

    def session_expired(self) -> bool:
        return (self._alive_at is not None and self.member.state not in (MemberState.UNSUBSCRIBED, MemberState.FATAL)
                and time.monotonic() - self._alive_at > self._session_timeout_ms / 1000)

    def _expire(self) -> None:
        self.member.fence()

    async def _maybe_leave_group(self) -> None:
        """Java's close: what was consumed is committed (auto-commit), what the member owns is
        revoked through the listener, then one heartbeat with epoch -1 (-2 for a static member)
        leaves."""
        member = self.member
        if member.state in (MemberState.UNSUBSCRIBED, MemberState.FATAL):
            return
        owned = self._owned()
        if owned and not self._lost:
            try:
                await self._maybe_do_last_autocommit(self._subscription.subscription.assignment)
            except Errors.KafkaError as error:
                log.error("The last commit of group %s failed: %s", self.group_id, error)
        if owned:
            await self._call(getattr(self._subscription.listener, "on_partitions_revoked", None), set(owned),
                             "on_partitions_revoked")
        member.leave()
        try:
            connection = await self._coordinator_connection()
            member.answered(await connection.send(CONSUMER_GROUP_HEARTBEAT, member.request()))
        except (ClusterError, Errors.KafkaError) as error:
            log.error("Leaving group %s failed: %s", self.group_id, error)
        finally:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    async def _do_commit_offsets(self, assignment: Any, offsets: dict[Any, Any]) -> None:
        """OffsetCommit v9 with the member epoch (a consumer-protocol member may not commit with
        a lower version)."""
        if not offsets:
            return
        by_topic: dict[str, list[tuple[int, int, int, str]]] = {}
        for tp, offset in sorted(offsets.items()):
            by_topic.setdefault(tp.topic, []).append((tp.partition, offset.offset, -1, offset.metadata))
        member = self.member
        try:
            connection = await self._coordinator_connection()
            answer = await connection.send(OFFSET_COMMIT, {
                "group_id": self.group_id, "generation_id_or_member_epoch": member.epoch,
                "member_id": member.member_id, "group_instance_id": member.instance_id,
                "topics": list(by_topic.items())})
        except ClusterError as error:
            self._drop_connection()
            raise Errors.KafkaConnectionError(str(error)) from None
        for _topic, partitions in answer["topics"]:
            for _partition, code in partitions:
                if code == 0:
                    continue
                if code == StaleMemberEpochError.errno:
                    raise StaleMemberEpochError(f"group {self.group_id}: {error_name(code)}")
                if code in FIND_COORDINATOR:
                    self._drop_connection()
                raise Errors.for_code(code)(f"group {self.group_id}: {error_name(code)}")


def _settings(client: Any) -> ClientSettings:
    """Our connection settings from an aiokafka client's."""
    protocol = client._security_protocol
    sasl = None
    if protocol in ("SASL_PLAINTEXT", "SASL_SSL"):
        if client._sasl_mechanism not in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
            raise ClusterError(f"the consumer protocol's connection authenticates with PLAIN or SCRAM, not "
                               f"{client._sasl_mechanism}")
        sasl = (client._sasl_mechanism, client._sasl_plain_username, client._sasl_plain_password)
    return ClientSettings(((client.hosts[0][0], client.hosts[0][1]),), client_id=client._client_id,
                          request_timeout_ms=client._request_timeout_ms,
                          tls=client._ssl_context if protocol in ("SSL", "SASL_SSL") else None, sasl=sasl)
