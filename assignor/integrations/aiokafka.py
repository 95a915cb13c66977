"""Drop-in pieces for aiokafka (extra ``[aiokafka]``): a sticky assignor, a partitioner
callable and a producer wrapper.

`StickyAssignor` is an *instance* with the protocol name ``"sticky"``::

    AIOKafkaConsumer("orders", group_id="g", partition_assignment_strategy=(StickyAssignor(),))

It writes JoinGroup metadata as the Java client does (ConsumerProtocolSubscription v3 with the
sticky user data V1: previous partitions and the real generation) and plans with the core's
globally balanced, minimally moving sticky strategy. It interoperates with aiokafka's own
``StickyPartitionAssignor`` in one group: same protocol name, same user data.

What aiokafka does not hand an assignor, and how this module learns it
-------------------------------------------------------------------------
aiokafka calls ``assign(cluster, members)`` and ``on_assignment(assignment)`` but never passes
the generation (its own sticky assignor has ``on_generation_assignment`` and nobody calls it,
so it always reports generation -1, which defeats KIP-341). The generation is in the JoinGroup
response that aiokafka's group coordinator is handling while it calls us, so we read it from
that caller: ``_on_join_complete(generation, ...)`` for `on_assignment`, the coordinator's
``generation`` (already set from the response) and the response's raw member metadata for
`assign`. The raw bytes matter: aiokafka decodes metadata with the v0 schema, which drops the
owned partitions, generation and rack of v1+ subscriptions (KIP-881 needs the rack).
That is how a member learns its generation: leaders (ours by default, and Java's) write no
user data into SyncGroup assignments, which keeps the coordinator's record of a generation as
small as Java's. When the caller is not the one expected (another aiokafka version), we fall
back: the generation in the sticky assignment's user data where a leader was asked to write it
(``leader.sync(..., assignment_user_data=True)``), else -1 (logged) for `on_assignment`, and for
`assign` the highest generation the members report plus one, and metadata re-encoded from
aiokafka's decoded view.
`tests/integration/test_aiokafka_unit.py` pins the caller names against the installed aiokafka.
"""

from __future__ import annotations

import base64
import json
import logging
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from types import FrameType
from typing import Any

from aiokafka.coordinator.assignors.abstract import AbstractPartitionAssignor

from assignor.member_side import MemberSide
from assignor.model import UNKNOWN_GENERATION
from assignor.partitioners.builtin import BuiltInPartitioner
from assignor.partitioners.keyless import StickyPartitioner
from assignor.partitioners.murmur import PartitionerError, partition_for_key
from assignor.protocol import (
    ProtocolError,
    Subscription,
    decode_sticky_user_data,
    encode_subscription,
    members_from_metadata,
)
from assignor.protocols import COOPERATIVE_STICKY, STICKY, Protocol

__all__ = ["CooperativeStickyAssignor", "KafkaPartitioner", "StickyAssignor", "StickyProducer"]


log = logging.getLogger(__name__)

#: Record-batch v2 header bytes: a record that opens a batch costs this much more (KIP-794).
BATCH_HEADER_BYTES = 61

# A record's headers as aiokafka takes them: (name, value) pairs.
Headers = Iterable[tuple[str, bytes | None]] | None


def _caller_locals(function_name: str, max_depth: int = 6) -> dict[str, Any] | None:
    """The local variables of the nearest caller named `function_name`, or None."""
    frame: FrameType | None = sys._getframe(2)
    for _ in range(max_depth):
        if frame is None:
            return None
        if frame.f_code.co_name == function_name:
            return frame.f_locals
        frame = frame.f_back
    return None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class StickyAssignor(MemberSide, AbstractPartitionAssignor):  # type: ignore[misc]  # aiokafka ships no types
    """The sticky (KIP-54/KIP-341) assignor for aiokafka, one instance per consumer (eager: an
    aiokafka consumer revokes everything before each rebalance; see `CooperativeStickyAssignor`
    for the incremental protocol).

    Parameters
    ----------
    rack:
        The consumer's ``client.rack`` (KIP-881), sent in Subscription v3.
    service_url, token:
        Remote mode: the leader asks ``{service_url}/v1/groups/{group_id}/sync`` for the plan
        (with ``Authorization: Bearer token``) so the service's registry sees every generation.
        When the service is down, slow (over `timeout` seconds) or answers with an error, the
        leader plans locally; `fallbacks` counts those and each is logged.
    group_id:
        Only needed in remote mode when the group id cannot be read from aiokafka.
    strategy:
        How this member plans when it leads: ``"sticky"`` (ours: globally balanced, fewest
        moves) or ``"java-sticky"`` (KIP-54 exactly as Java's ``StickyAssignor`` runs it), so
        that a group mixing these members with Java members plans the same way whoever leads.
        The protocol on the wire is ``sticky`` either way.
    """

    name = STICKY.name
    protocol: Protocol = STICKY

    def __init__(self, *, rack: str | None = None, service_url: str | None = None, token: str | None = None,
                 timeout: float = 3.0, group_id: str | None = None, strategy: str | None = None) -> None:
        MemberSide.__init__(self, self.protocol, strategy, rack)
        self.service_url = service_url.rstrip("/") if service_url else None
        self.token = token
        self.timeout = timeout
        self.group_id = group_id
        self.remote_plans = 0
        self.fallbacks = 0

    def supported_protocols(self) -> tuple[str, ...]:
        """The rebalance protocols this assignor supports (KIP-429)."""
        return self.rebalance_protocols

    def on_partitions_lost(self) -> None:
        """The consumer lost its partitions: the next JoinGroup claims nothing (`MemberSide.lost`)."""
        self.lost()

    # -- the three calls aiokafka makes ----------------------------------------------------

    def assign(self, cluster: Any, members: Mapping[str, Any]) -> dict[str, bytes]:
        """Plan the group (leader only); returns SyncGroup assignment bytes per member."""
        caller = _caller_locals("_perform_assignment") or {}
        coordinator, response = caller.get("self"), caller.get("response")
        raw = _raw_metadata(response, members)
        instance_ids = _instance_ids(response, raw)
        subscribed = {topic for md in members.values() for topic in md.subscription}
        topics = {}
        for topic in sorted(subscribed):
            partitions = cluster.partitions_for_topic(topic)
            if partitions:  # no metadata yet: skipped, as Java's assignors do
                topics[topic] = len(partitions)
        generation = _int(getattr(coordinator, "generation", None))
        if generation is None or generation < 0:
            reported = (m.generation for m in members_from_metadata(raw, self.name))
            generation = max(reported, default=UNKNOWN_GENERATION) + 1
        group_id = getattr(coordinator, "group_id", None) or self.group_id
        if self.service_url:
            remote = self._remote_plan(group_id, generation, topics, raw, instance_ids)
            if remote is not None:
                return remote
        return self.lead(generation, topics, raw, instance_ids).assignments

    def on_assignment(self, assignment: Any) -> None:
        """Remember our partitions and the generation for the next JoinGroup (KIP-341)."""
        caller = _caller_locals("_on_join_complete") or {}
        generation = _int(caller.get("generation"))
        if generation is None:
            # A leader asked to (assignment_user_data) writes it into the assignment's user data.
            try:
                generation = decode_sticky_user_data(assignment.user_data or None, strict=True).generation
            except ProtocolError:
                generation = None
        if generation is None:
            log.warning("sticky assignor: generation unknown for this assignment; reporting %d", UNKNOWN_GENERATION)
            generation = UNKNOWN_GENERATION
        self.assigned(assignment.partitions(), generation)

    # -- remote mode -------------------------------------------------------------------------

    def _remote_plan(self, group_id: str | None, generation: int, topics: dict[str, int],
                     raw: Mapping[str, bytes], instance_ids: Mapping[str, str]) -> dict[str, bytes] | None:
        if not group_id:
            self._fallback("the group id is unknown (pass group_id=)")
            return None
        body = json.dumps({
            "protocol": self.name,
            "strategy": self.strategy,
            "generation": generation,
            "topics": {topic: {"partitions": count} for topic, count in topics.items()},
            "members": [{"member_id": m, "metadata_b64": base64.b64encode(data).decode(),
                         **({"group_instance_id": instance_ids[m]} if m in instance_ids else {})}
                        for m, data in raw.items()],
        }).encode()
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        url = f"{self.service_url}/v1/groups/{urllib.parse.quote(group_id, safe='')}/sync"
        try:
            # Blocking on purpose: aiokafka calls assign() synchronously, and the timeout keeps
            # the leader well inside the rebalance timeout.
            with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=self.timeout) as reply:
                answer = json.load(reply)
            assignments = {m: base64.b64decode(answer["assignments"][m], validate=True) for m in raw}
        except (OSError, ValueError, KeyError, TypeError) as error:  # URLError and timeouts are OSErrors
            self._fallback(f"{type(error).__name__}: {error}")
            return None
        self.remote_plans += 1
        return assignments

    def _fallback(self, reason: str) -> None:
        self.fallbacks += 1
        log.warning("sticky assignor: planning locally, the assignment service failed: %s", reason)


class CooperativeStickyAssignor(StickyAssignor):
    """The cooperative-sticky (KIP-429) assignor for aiokafka, one instance per consumer.

    Metadata is Subscription v3 with the partitions the member owns now, its generation and
    rack, and the generation again as user data (Java's ``CooperativeStickyAssignor``). As a
    leader it plans with our ``cooperative-sticky`` strategy (or ``java-cooperative-sticky``):
    a partition that moves is withheld until its owner has revoked it, so the group needs a
    second rebalance for it. aiokafka's own coordinator is eager (it revokes everything before
    joining); the incremental rebalance needs `assignor.integrations.aiokafka_cooperative`'s
    consumer. Joining through an eager coordinator (aiokafka's own, or ours with an eager-only
    assignor offered beside this one), it claims nothing, as Java's consumer does under the eager
    protocol: the member has revoked everything, and a leader must not withhold partitions that
    nobody will hand over.
    """

    name = COOPERATIVE_STICKY.name
    protocol = COOPERATIVE_STICKY

    def metadata(self, topics: Iterable[str], *, eager: bool = False) -> bytes:
        """JoinGroup metadata (`MemberSide.metadata`), claiming nothing when aiokafka's eager
        coordinator joins (it revoked everything first)."""
        joining = _caller_locals("perform_group_join") or {}
        coordinator = getattr(joining.get("self"), "_coordinator", None)
        eager = eager or (coordinator is not None and not getattr(coordinator, "cooperative", False))
        return MemberSide.metadata(self, topics, eager=eager)


def _raw_metadata(response: Any, members: Mapping[str, Any]) -> dict[str, bytes]:
    """Member id -> the JoinGroup metadata bytes as sent, in aiokafka's member order."""
    raw: dict[str, bytes] = {}
    for entry in getattr(response, "members", None) or ():
        member_id, data = entry[0], entry[-1]  # JoinGroup v5 rows carry a group instance id too
        if member_id in members and isinstance(data, bytes | bytearray):
            raw[member_id] = bytes(data)
    if len(raw) == len(members):
        return {m: raw[m] for m in members}
    # Not called from aiokafka's coordinator: rebuild from its decoded (v0) view.
    return {m: encode_subscription(Subscription(list(md.subscription), md.user_data or None, version=0), 0)
            for m, md in members.items()}


def _instance_ids(response: Any, members: Mapping[str, bytes]) -> dict[str, str]:
    """Member id -> ``group.instance.id`` of the static members, from the JoinGroup response's
    rows (v5+: member id, instance id, metadata); none from an older response."""
    found: dict[str, str] = {}
    for entry in getattr(response, "members", None) or ():
        if len(entry) == 3 and entry[0] in members and isinstance(entry[1], str):
            found[entry[0]] = entry[1]
    return found


class KafkaPartitioner:
    """The ``partitioner=`` callable for ``AIOKafkaProducer``.

    Keyed records: Java's formula, ``(murmur2(key) & 0x7fffffff) % n`` over *all* partitions in
    id order (aiokafka passes a set's order; we sort). Keyless records: KIP-480 sticky per topic,
    moving to another available partition when the sticky partition needs a new batch (its
    last batch in the producer's accumulator is full or gone).

    aiokafka passes only the key and the partition lists; the topic and the accumulator come
    from the producer's ``_partition`` call when available. Without them (another caller), the
    sticky choice is kept per partition list and moves every `fallback_records` keyless records.
    """

    def __init__(self, *, seed: int | None = None, fallback_records: int = 100) -> None:
        self._sticky = StickyPartitioner(seed=seed)
        self._fallback_records = fallback_records
        self._counts: dict[str, int] = {}

    def __call__(self, key: bytes | None, all_partitions: Iterable[int], available: Sequence[int] | None) -> int:
        partitions: list[int] = sorted(all_partitions)
        if not partitions:
            raise PartitionerError("the topic has no partitions in the producer's metadata")
        if key is not None:
            return partitions[partition_for_key(key, len(partitions))]
        caller = _caller_locals("_partition") or {}
        topic, producer = caller.get("topic"), caller.get("self")
        # Without the topic, the partition list stands for it (':' is never in a topic name).
        context = topic if isinstance(topic, str) else f"partitions:{','.join(map(str, partitions))}"
        # Partition ids of a topic are 0..n-1, so the sticky partitioner works on counts.
        count = partitions[-1] + 1
        current = self._sticky.partition(context, count, available)
        if isinstance(topic, str) and producer is not None:
            if _needs_new_batch(producer, topic, current):
                current = self._sticky.on_new_batch(context, count, current, available)
        else:
            seen = self._counts.get(context, 0) + 1
            self._counts[context] = seen
            if seen >= self._fallback_records:
                self._counts[context] = 0
                current = self._sticky.on_new_batch(context, count, current, available)
        return current


def _accumulator_batches(producer: Any, topic: str, partition: int) -> Any:
    from aiokafka.structs import TopicPartition as AioTopicPartition

    accumulator = getattr(producer, "_message_accumulator", None)
    batches = getattr(accumulator, "_batches", None)
    if not isinstance(batches, Mapping):
        return None
    return batches.get(AioTopicPartition(topic, partition))


def _needs_new_batch(producer: Any, topic: str, partition: int) -> bool:
    """KIP-480's trigger: the partition has no batch open for appends (drained, or full)."""
    batches = _accumulator_batches(producer, topic, partition)
    if batches is None:
        return False  # the first record of the run opens the first batch: stay
    return not batches or _batch_closed(batches[-1])


def _batch_closed(batch: Any) -> bool:
    closed = getattr(getattr(batch, "_builder", None), "closed", None)
    return bool(closed()) if callable(closed) else False


def _batch_bytes(batch: Any) -> int:
    size = getattr(getattr(batch, "_builder", None), "size", None)
    return int(size()) if callable(size) else 0


class StickyProducer:
    """``AIOKafkaProducer.send`` with KIP-794 partitioning for keyless records.

    Wraps a started or unstarted ``AIOKafkaProducer``. Keyless records go through
    `BuiltInPartitioner` with their real sizes (key + value + headers + record overhead, plus
    the 61-byte header for a record that opens a batch), and, with adaptive partitioning, the
    producer's backlog per partition as queue sizes. Keyed records are Java-exact and never
    count toward the switch. Explicit partitions pass through.

    What aiokafka lets this see: it keeps at most one open batch per partition and sends one
    request at a time per broker, so its backlog is at most one batch in the accumulator plus
    the batch in flight. Queue sizes are therefore 0, 1 or 2 batches, a coarser signal than
    Java's deque lengths: adaptive switching still steers away from a partition whose batch
    waits, but it cannot tell a slow broker from a very slow one.
    """

    def __init__(self, producer: Any, *, adaptive: bool = True, availability_timeout_ms: float = 0,
                 ignore_keys: bool = False, switch_rule: str = "deferred", seed: int | None = None) -> None:
        self.producer = producer
        batch_size = getattr(getattr(producer, "_message_accumulator", None), "_batch_size", 16384)
        self.partitioner = BuiltInPartitioner(batch_size, adaptive=adaptive, ignore_keys=ignore_keys,
                                              availability_timeout_ms=availability_timeout_ms,
                                              switch_rule=switch_rule, seed=seed)

    async def send(self, topic: str, value: bytes | None = None, key: bytes | None = None,
                   partition: int | None = None, timestamp_ms: int | None = None, headers: Headers = None) -> Any:
        """Like ``AIOKafkaProducer.send``; returns its delivery future.

        Raises
        ------
        PartitionerError
            When the producer was not started: aiokafka's own ``send`` would wait for metadata
            that never comes (nothing fetches it before ``start``)."""
        producer = self.producer
        sender = getattr(producer, "_sender", None)
        if sender is not None and getattr(sender, "_sender_task", True) is None:  # (aiokafka 0.11-0.14)
            raise PartitionerError("the producer is not started: await producer.start() before sending")
        if partition is None:
            partition = await self._choose(topic, key, value, headers)
        return await producer.send(topic, value=value, key=key, partition=partition,
                                   timestamp_ms=timestamp_ms, headers=headers)

    async def send_and_wait(self, topic: str, value: bytes | None = None, key: bytes | None = None,
                            partition: int | None = None, timestamp_ms: int | None = None,
                            headers: Headers = None) -> Any:
        return await (await self.send(topic, value, key, partition, timestamp_ms, headers))

    async def _choose(self, topic: str, key: bytes | None, value: bytes | None, headers: Headers) -> int:
        producer = self.producer
        partitions = await producer.partitions_for(topic)  # waits for metadata the first time
        if not partitions:
            raise PartitionerError(f"topic {topic!r} has no metadata")
        count = max(partitions) + 1
        available = sorted(producer.client.cluster.available_partitions_for_topic(topic) or ())
        if key is not None and not self.partitioner.ignore_keys:
            return self.partitioner.partition(topic, key, count, available or None)
        if self.partitioner.adaptive:
            self.partitioner.update_load(topic, {p: self._queued(topic, p) for p in sorted(partitions)})
        chosen = self.partitioner.partition(topic, key, count, available or None)
        batches = _accumulator_batches(producer, topic, chosen)
        opens_batch = not batches or _batch_closed(batches[-1])
        size = _record_size(key, value, headers) + (BATCH_HEADER_BYTES if opens_batch else 0)
        # The deferred rule (KAFKA-14156) waits while the batch this record joins has room left.
        in_batch = size if opens_batch else _batch_bytes(batches[-1]) + size
        self.partitioner.on_append(topic, chosen, size, open_batch=in_batch < self.partitioner.batch_size)
        return chosen

    def _queued(self, topic: str, partition: int) -> int:
        batches = _accumulator_batches(self.producer, topic, partition)
        return len(batches) if batches else 0


def _record_size(key: bytes | None, value: bytes | None, headers: Headers) -> int:
    """Bytes a record takes in a v2 batch, near enough for switching: varint-framed key, value
    and headers plus the fixed fields (attributes, deltas, lengths)."""
    size = 1 + 1 + 1 + len(key or b"") + 1 + len(value or b"") + 3
    for name, data in headers or ():
        size += 2 + len(name.encode()) + len(data or b"")
    return size
