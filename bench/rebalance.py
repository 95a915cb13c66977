"""Rolling restarts of real consumer groups on Apache Kafka (`bench.broker`), per client and
protocol: what each rebalance costs the partitions of the members that stay.

`python -m bench --only rebalance` runs, in one session, every client of `CLIENTS` through two
variants (`run`): ``restart`` (each member stopped and its replacement started at once) and
``settled`` (the replacement starts only after the group settled without it, so partitions move
from survivors to the newcomer: KIP-429's second round); then the online migrations of `UPGRADES`
(``upgrade``: as ``settled``, each replacement on the consumer protocol). A producer writes records at a steady
rate, round-robin over the partitions, so every partition always has records waiting; a pause
of a partition is a gap between two records consumed from it.

Figures per run (`Figures`): rebalances (rounds of assignment callbacks), partitions revoked from
members that stay, the longest gap of any partition, partition-seconds with no owner (from the
members' callbacks), partition-seconds of gaps over 1 s (a member that keeps its partitions but
stops polling pauses them just the same), records consumed twice, records lost, and the safety
check: intervals where two members owned one partition at once (`bench.ownership`).
"""

from __future__ import annotations

import asyncio
import logging
import re
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Sequence
from typing import Any, TypedDict

from bench.broker import CONSUMER_SETTINGS
from bench.java_members import CLASSIC, CONSUMER, COOPERATIVE_STICKY, JavaMembers
from bench.ownership import Timeline

log = logging.getLogger(__name__)

#: Auto-commit on, every second, for every client: what a record consumed twice can come from.
COMMIT = {"enable_auto_commit": True, "auto_commit_interval_ms": 1000}


class Figures(TypedDict):
    client: str
    variant: str
    rebalances: int
    revoked_from_survivors: int
    longest_gap_s: float
    unowned_partition_s: float
    paused_partition_s: float
    consumed_twice: int
    lost: int
    overlaps: int
    rehearsal: str


def partition_number(tp: Any) -> Any:
    """A partition's key in a run of one topic: its number."""
    return tp.partition


def topic_partition(tp: Any) -> Any:
    """A partition's key in a run of several topics: (topic, number)."""
    return (tp.topic, tp.partition)


class AiokafkaMember:
    """An aiokafka consumer (ours or aiokafka's own assignor) polling in a task. `topic`: one
    topic, or several; `key` names a partition in the timeline, the records and `partitions`
    (its number, or `topic_partition` where the run has several topics)."""

    def __init__(self, name: str, bootstrap: str, group: str, topic: str | list[str], timeline: Timeline,
                 make: Callable[..., Any], key: Callable[[Any], Any] = partition_number, **settings: Any) -> None:
        from aiokafka.abc import ConsumerRebalanceListener

        self.name, self.timeline, self.key = name, timeline, key
        self.records: list[tuple[float, Any, int]] = []
        self.revoked: list[set[Any]] = []
        self.lost: list[set[Any]] = []
        self.stopping = False
        member = self

        class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
            async def on_partitions_revoked(self, revoked: Any) -> None:
                member._release(set(map(key, revoked)))

            async def on_partitions_assigned(self, assigned: Any) -> None:
                member.timeline.take(member.name, set(map(key, assigned)))

            async def on_partitions_lost(self, lost: Any) -> None:
                member.lost.append(set(map(key, lost)))
                member._release(set(map(key, lost)))

        self.listener_object = Listener()
        self.consumer = make(bootstrap_servers=bootstrap, group_id=group, **{**CONSUMER_SETTINGS, **COMMIT,
                                                                             **settings})
        self.consumer.subscribe([topic] if isinstance(topic, str) else list(topic), listener=self.listener_object)
        self.task: asyncio.Task[None] | None = None

    def _release(self, partitions: set[Any]) -> None:
        if not self.stopping:
            self.revoked.append(partitions)
        self.timeline.release(self.name, partitions)

    async def start(self) -> AiokafkaMember:
        await self.consumer.start()
        self.task = asyncio.create_task(self._poll())
        return self

    async def _poll(self) -> None:
        while True:
            batches = await self.consumer.getmany(timeout_ms=100)
            now = time.monotonic()
            for tp, records in batches.items():
                self.records.extend((now, self.key(tp), r.offset) for r in records)

    async def stop(self, timeout: float = 30.0) -> None:
        """Stop polling and close the consumer; a close that has not ended in `timeout` seconds
        (an eager aiokafka consumer closing inside a rebalance once waited for good) is cut short:
        its coordinator's task is cancelled and its connections closed."""
        self.stopping = True
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
        try:
            await asyncio.wait_for(asyncio.shield(self.consumer.stop()), timeout)
        except TimeoutError:
            log.warning("%s: the consumer did not close within %.0f s; its connections are closed", self.name,
                        timeout)
            coordinator = getattr(self.consumer, "_coordinator", None)
            task = getattr(coordinator, "_coordination_task", None)
            if task is not None:
                task.cancel()
            await self.consumer._client.close()
        self.timeline.release(self.name, self.timeline.owned_by(self.name))

    def partitions(self) -> set[Any]:
        return set(map(self.key, self.consumer.assignment()))


class _ThreadMember:
    """A consumer of a blocking client polling in a thread (callbacks feed the timeline)."""

    def __init__(self, name: str, timeline: Timeline) -> None:
        self.name, self.timeline = name, timeline
        self.records: list[tuple[float, int, int]] = []
        self.revoked: list[set[int]] = []
        self.lost: list[set[int]] = []
        self.owned: set[int] = set()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)

    def _assigned(self, partitions: set[int]) -> None:
        self.owned |= partitions
        self.timeline.take(self.name, partitions)

    def _revoked(self, partitions: set[int]) -> None:
        if not self.stopping.is_set():
            self.revoked.append(partitions)
        self.owned -= partitions
        self.timeline.release(self.name, partitions)

    def _poll(self) -> None:
        raise NotImplementedError

    async def start(self) -> Any:
        self.thread.start()
        return self

    async def stop(self) -> None:
        self.stopping.set()
        await asyncio.to_thread(self.thread.join, 30)
        self.timeline.release(self.name, self.timeline.owned_by(self.name))

    def partitions(self) -> set[int]:
        return set(self.owned)


class LibrdkafkaMember(_ThreadMember):
    """A librdkafka consumer (confluent-kafka): under the classic protocol, `strategy`
    (``partition.assignment.strategy``: ``cooperative-sticky`` unless given; None leaves
    librdkafka's default, ``range,roundrobin``), or a consumer-protocol member (KIP-848) when
    `protocol` is ``consumer``, asking for the broker's `remote_assignor` when given
    (``group.remote.assignor``; without it the member names none, and a group of such members
    alone gets the broker's default, ``uniform``). Further client `settings` (``client.rack``,
    ``group.instance.id``, ...) are passed on as they are. Subscribed to `topic`, or to each of
    a list (what it holds is then read from the group, not from `partitions`, which has no
    topic)."""

    def __init__(self, name: str, bootstrap: str, group: str, topic: str | list[str], timeline: Timeline,
                 protocol: str = "classic", remote_assignor: str | None = None,
                 strategy: str | None = "cooperative-sticky", settings: dict[str, Any] | None = None) -> None:
        import confluent_kafka

        super().__init__(name, timeline)
        config: dict[str, Any] = {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                                  "enable.auto.commit": True, "auto.commit.interval.ms": 1000,
                                  "broker.address.family": "v4"}
        if protocol == "consumer":
            config["group.protocol"] = "consumer"
            if remote_assignor is not None:
                config["group.remote.assignor"] = remote_assignor
        else:
            config.update({"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000})
            if strategy is not None:
                config["partition.assignment.strategy"] = strategy
        self.consumer = confluent_kafka.Consumer({**config, **(settings or {})})
        self.consumer.subscribe(
            [topic] if isinstance(topic, str) else topic,
            on_assign=lambda _c, tps: self._assigned({tp.partition for tp in tps}),
            on_revoke=lambda _c, tps: self._revoked({tp.partition for tp in tps}),
            on_lost=lambda _c, tps: self._revoked({tp.partition for tp in tps}))

    def _poll(self) -> None:
        while not self.stopping.is_set():
            message = self.consumer.poll(0.1)
            if message is not None and message.error() is None:
                self.records.append((time.monotonic(), message.partition(), message.offset()))
        self.consumer.close()  # commits and leaves the group


class KafkaPythonMember(_ThreadMember):
    """A kafka-python 3 consumer with our cooperative-sticky assignor. The consumer is made,
    polled and closed by its own thread (kafka-python's consumer is not thread-safe: made by the
    test's event loop and polled by another thread, it shared its client across the two)."""

    def __init__(self, name: str, bootstrap: str, group: str, topic: str, timeline: Timeline,
                 rack: str = "", instance_id: str | None = None) -> None:
        from assignor.integrations.kafka_python import CooperativeStickyAssignor

        super().__init__(name, timeline)
        self.assignor = CooperativeStickyAssignor()
        self._settings = {"bootstrap_servers": bootstrap, "group_id": group, "client_rack": rack,
                          "group_instance_id": instance_id,
                          "partition_assignment_strategy": [self.assignor], "auto_offset_reset": "earliest",
                          "session_timeout_ms": 6000, "heartbeat_interval_ms": 1000, **COMMIT}
        self._topic = topic

    def _poll(self) -> None:
        from kafka import KafkaConsumer
        from kafka.consumer.subscription_state import ConsumerRebalanceListener

        from assignor.integrations.kafka_python import adopt_client_rack

        member = self

        class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
            def on_partitions_revoked(self, revoked: Any) -> None:
                member._revoked({tp.partition for tp in revoked})

            def on_partitions_assigned(self, assigned: Any) -> None:
                member._assigned({tp.partition for tp in assigned})

        consumer = KafkaConsumer(**self._settings)
        adopt_client_rack(consumer)
        consumer.subscribe([self._topic], listener=Listener())
        # The topic's partitions in the coordinator's metadata snapshot before the member joins.
        # kafka-python 3.0.12 (the newest here) strands a leader whose rejoin is for new metadata:
        # a leader that planned before its snapshot held the subscribed topic (the snapshot is
        # rebuilt on metadata updates only, so it is empty until the first after `subscribe`)
        # rejoins; `poll(timeout_ms=100)` gives up on the JoinGroup (held ~1 s for the other
        # members) and leaves it in flight; the leader's plan, made in that join, records the
        # snapshot it planned on, so `need_rejoin()` turns False and `join_group_async` returns
        # without consuming the finished join: the member stays REBALANCING, heartbeat off, until
        # its session ends, holding nothing. `topics()` fetches the metadata, which rebuilds it.
        deadline = time.monotonic() + 30
        while self._topic not in consumer.topics() and time.monotonic() < deadline:
            time.sleep(0.1)
        while not self.stopping.is_set():
            for tp, records in consumer.poll(timeout_ms=100).items():
                now = time.monotonic()
                self.records.extend((now, tp.partition, r.offset) for r in records)
        consumer.close()


def _aiokafka(make: Callable[[], Any], assignor: Callable[[], Any] | None) -> Callable[..., AiokafkaMember]:
    def member(name: str, bootstrap: str, group: str, topic: str, timeline: Timeline) -> AiokafkaMember:
        settings = {} if assignor is None else {"partition_assignment_strategy": (assignor(),)}
        return AiokafkaMember(name, bootstrap, group, topic, timeline, make(), **settings)
    return member


#: Java consumers' settings per client (auto-commit as `COMMIT`); Java's default assignors,
#: [RangeAssignor, CooperativeStickyAssignor], make an eager range consumer.
_JAVA = {
    "Java, default assignors (eager range)": CLASSIC,
    "Java cooperative-sticky": {**CLASSIC, "partition.assignment.strategy": COOPERATIVE_STICKY},
    "Java, consumer protocol (KIP-848 uniform)": {**CONSUMER, "group.remote.assignor": "uniform"},
}
_JAVA_COMMIT = {"enable.auto.commit": "true", "auto.commit.interval.ms": "1000"}


def _java(host: JavaMembers | None, settings: dict[str, str]) -> Callable[..., Any]:
    def member(name: str, bootstrap: str, group: str, topic: str, timeline: Timeline) -> Any:
        if host is None:
            raise ValueError("Java clients need a JavaMembers host (run(..., java=...))")
        return host.member(f"{group}.{name}", bootstrap, group, [topic], {**settings, **_JAVA_COMMIT}, timeline)
    return member


def _clients(java: JavaMembers | None = None) -> dict[str, Callable[..., Any]]:
    from aiokafka import AIOKafkaConsumer

    from assignor.integrations.aiokafka import CooperativeStickyAssignor, StickyAssignor
    from assignor.integrations.aiokafka_cooperative import CooperativeConsumer

    def librdkafka_consumer_protocol(name: str, bootstrap: str, group: str, topic: str,
                                     timeline: Timeline) -> LibrdkafkaMember:
        return LibrdkafkaMember(name, bootstrap, group, topic, timeline, protocol="consumer")

    def ours_consumer_protocol(name: str, bootstrap: str, group: str, topic: str,
                               timeline: Timeline) -> AiokafkaMember:
        return AiokafkaMember(name, bootstrap, group, topic, timeline, CooperativeConsumer, group_protocol="consumer",
                              group_remote_assignor="uniform")

    return {
        "aiokafka, default assignor (eager)": _aiokafka(lambda: AIOKafkaConsumer, None),
        "aiokafka + our sticky (eager)": _aiokafka(lambda: AIOKafkaConsumer, StickyAssignor),
        "aiokafka + our cooperative-sticky": _aiokafka(lambda: CooperativeConsumer, CooperativeStickyAssignor),
        "kafka-python 3 + our cooperative-sticky": KafkaPythonMember,
        "librdkafka cooperative-sticky": LibrdkafkaMember,
        **{client: _java(java, settings) for client, settings in _JAVA.items()},
        "librdkafka, consumer protocol (KIP-848 uniform)": librdkafka_consumer_protocol,
        "aiokafka + ours, consumer protocol (KIP-848 uniform)": ours_consumer_protocol,
    }


CLIENTS = ("aiokafka, default assignor (eager)", "aiokafka + our sticky (eager)", "aiokafka + our cooperative-sticky",
           "kafka-python 3 + our cooperative-sticky", "librdkafka cooperative-sticky",
           "Java, default assignors (eager range)", "Java cooperative-sticky",
           "Java, consumer protocol (KIP-848 uniform)", "librdkafka, consumer protocol (KIP-848 uniform)",
           "aiokafka + ours, consumer protocol (KIP-848 uniform)")

#: The online migrations measured (the ``upgrade`` variant): each client's cooperative classic
#: group restarted member by member on the consumer protocol.
UPGRADES = (("aiokafka + our cooperative-sticky", "aiokafka + ours, consumer protocol (KIP-848 uniform)"),
            ("Java cooperative-sticky", "Java, consumer protocol (KIP-848 uniform)"),
            ("librdkafka cooperative-sticky", "librdkafka, consumer protocol (KIP-848 uniform)"))


async def create_topic(bootstrap: str, partitions: int, prefix: str = "rebalance",
                       replicas: dict[int, list[int]] | None = None, name: str | None = None) -> str:
    """A new topic of `partitions` partitions (one replica, or each partition's `replicas` by
    broker id), named `name`, or else `prefix` and a random suffix."""
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    name = f"{prefix}-{uuid.uuid4().hex[:8]}" if name is None else name
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, partitions, 1) if replicas is None else
                                   NewTopic(name, -1, -1, replica_assignments=replicas)])
    finally:
        await admin.close()
    await _until_led(bootstrap, name, partitions)
    return name


def commit_offsets(bootstrap: str, groups: list[str], topic: str, timeout: float = 60.0) -> None:
    """Offset 0 of `topic`'s partition 0 committed for each of `groups` (librdkafka's admin
    client): each group made with no member, as Kafka's tools make one. A commit refused for a
    while (COORDINATOR_LOAD_IN_PROGRESS, while a new broker loads ``__consumer_offsets``) comes
    back as a partition's error in a result that succeeded, so it is sent again until it takes."""
    from confluent_kafka import ConsumerGroupTopicPartitions
    from confluent_kafka import TopicPartition as Offset
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap, "broker.address.family": "v4"})
    deadline = time.monotonic() + timeout
    pending = list(groups)
    while pending:
        futures = [admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group, [Offset(topic, 0, 0)])])
                   for group in pending]
        refused = [group for batch in futures for group, future in batch.items()
                   if any(tp.error is not None for tp in future.result(timeout).topic_partitions)]
        if refused and time.monotonic() > deadline:
            raise AssertionError(f"offsets not committed within {timeout} s for {len(refused)} group(s), e.g. "
                                 f"{refused[0]!r}")
        if refused:
            time.sleep(0.2)
        pending = refused


async def _until_led(bootstrap: str, topic: str, partitions: int, timeout: float = 30.0) -> None:
    """Until the broker's metadata has every partition of `topic` with a leader. CreateTopics
    answers before the partitions are led; consumers that join meanwhile see the topic's metadata
    change under their first rebalance and rejoin for it. (A kafka-python 3.0.12 leader that
    rejoined at once, for this or for KIP-429's second round, stopped heartbeating for good after
    the next SyncGroup in four clean-clone runs: its poll waits on a coroutine that its IO thread,
    still polling, never finishes. Waiting here removed the metadata rejoins, not that.)"""
    from assignor.cluster.client import Cluster
    from assignor.cluster.settings import settings_of

    deadline = time.monotonic() + timeout
    async with Cluster(settings_of(bootstrap)) as cluster:
        while True:
            answer = await cluster.metadata([topic])
            led = sum(leader >= 0 for code, name, _id, _internal, rows, _operations in answer["topics"]
                      if code == 0 and name == topic for _code, _index, leader, *_replicas in rows)
            if led == partitions:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"topic {topic}: {led} of {partitions} partitions led after {timeout} s")
            await asyncio.sleep(0.05)


async def produce(bootstrap: str, topic: str, partitions: int, stop: asyncio.Event, sent: list[int],
                  rate: float) -> None:
    """Records 0, 1, 2, ... at `rate` per second, record i to partition i % partitions."""
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    await producer.start()
    try:
        i, started = 0, time.monotonic()
        while not stop.is_set():
            await producer.send(topic, b"%d" % i, partition=i % partitions)
            sent.append(i)
            i += 1
            await asyncio.sleep(max(0.0, started + i / rate - time.monotonic()))
        await producer.flush()
    finally:
        await producer.stop()


async def settle(members: list[Any], partitions: int | list[Any], timeout: float = 60.0,
                 balanced: bool = True) -> dict[str, set[Any]]:
    """Until the members own every partition once (`partitions`: 0 .. n - 1, or the partitions'
    keys), balanced unless told otherwise (members of different subscriptions need not be), and
    have held still 1.5 s."""
    expected = list(range(partitions)) if isinstance(partitions, int) else sorted(partitions)
    deadline = time.monotonic() + timeout
    previous, since = None, time.monotonic()
    while time.monotonic() < deadline:
        await asyncio.sleep(0.25)
        now = {m.name: m.partitions() for m in members}
        flat = sorted(p for owned in now.values() for p in owned)
        sizes = [len(owned) for owned in now.values()]
        if now != previous:
            previous, since = now, time.monotonic()
        elif (flat == expected and time.monotonic() - since >= 1.5
              and (not balanced or max(sizes) - min(sizes) <= 1)):
            return now
    raise AssertionError(f"the group did not settle within {timeout} s: {previous}{_stacks(members)}")


def _stacks(members: list[Any]) -> str:
    """Where each member's polling thread is, and every client heartbeat or IO thread (a client
    that stopped heartbeating shows why): for the message of a group that did not settle."""
    frames = sys._current_frames()
    threads = [(f"{m.name}'s poll", m.thread) for m in members if isinstance(getattr(m, "thread", None),
                                                                             threading.Thread)]
    threads += [(t.name, t) for t in threading.enumerate()
                if "heartbeat" in t.name.lower() or t.name.startswith("kafka-io")]  # kafka-python 3's IO threads
    out = []
    for label, thread in threads:
        frame = frames.get(thread.ident or -1)
        if frame is not None:
            out.append(f"\n-- {label} ({thread.name}):\n" + "".join(traceback.format_stack(frame)[-12:]))
    return "".join(out)


async def wind_down(stop: asyncio.Event, producing: asyncio.Task[None], members: list[Any], everyone: list[Any],
                    sent: list[int], timeout: float = 30.0) -> None:
    """End a run: stop the producer, wait until `everyone` (members running or stopped)
    consumed the `sent` records as distinct records (or `timeout`), then stop the `members`
    still running."""
    stop.set()
    await producing
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len({(p, o) for m in everyone for _t, p, o in m.records}) >= len(sent):
            break
        await asyncio.sleep(0.25)
    for m in members:
        await m.stop()


async def run(bootstrap: str, client: str | Sequence[str], *, consumers: int = 6, partitions: int = 12,
              rate: float = 200.0, variant: str = "restart", java: JavaMembers | None = None,
              to: str | None = None) -> Figures:
    """One rolling restart of a group of `consumers` of `client` (module docstring); a sequence
    of clients mixes them in one group, member i of ``client[i % len(client)]``. The first member
    settles alone before the others start: it leads a classic group (the coordinator's first
    member) until it is restarted. ``variant="upgrade"``: as ``settled``, each replacement of
    the client `to` (an online migration, one member at a time)."""
    kinds = [client] if isinstance(client, str) else list(client)
    makers = _clients(java)
    slots = [makers[kinds[i % len(kinds)]] for i in range(consumers)]
    if (variant == "upgrade") != (to is not None):
        raise ValueError("the upgrade variant, and it alone, takes `to`: the client the members are restarted as")
    replacements = slots if to is None else [makers[to]] * consumers
    topic = await create_topic(bootstrap, partitions)
    group = f"g-{uuid.uuid4().hex[:8]}"
    timeline = Timeline()
    stop, sent = asyncio.Event(), []
    producing = asyncio.create_task(produce(bootstrap, topic, partitions, stop, sent, rate))
    members = [await slots[0]("m0", bootstrap, group, topic, timeline).start()]
    everyone = list(members)
    try:
        await settle(members, partitions)
        for i in range(1, consumers):
            members.append(await slots[i](f"m{i}", bootstrap, group, topic, timeline).start())
            everyone.append(members[-1])
        formed = await settle(members, partitions)
        predicted = "-" if to is None or not isinstance(client, str) else rehearsal(
            client, topic, [formed[m.name] for m in members])
        for m in members:
            m.revoked.clear()
        started = time.monotonic()
        try:
            for index in range(consumers):
                await members[index].stop()
                if variant in ("settled", "upgrade"):
                    await settle(members[:index] + members[index + 1:], partitions)
                members[index] = await replacements[index](f"m{index}-new", bootstrap, group, topic,
                                                           timeline).start()
                everyone.append(members[index])
                await settle(members, partitions)
        except AssertionError as error:  # (the table's row for a group that never settled says it too)
            error.rehearsal = predicted  # type: ignore[attr-defined]
            raise
        ended = time.monotonic()
    finally:
        await wind_down(stop, producing, members, everyone, sent)
    label = (client if isinstance(client, str) else " + ".join(kinds)) + (f" -> {to}" if to is not None else "")
    row = figures(label, variant, everyone, timeline, len(sent), started, ended, partitions)
    row["rehearsal"] = predicted
    return row


#: The classic strategy the rehearsal plans each upgraded client's group with, and whether its
#: leader writes user data into the assignments (librdkafka's cooperative-sticky does: Kafka
#: refuses to convert its group, `refused_conversion`).
REHEARSED_AS = {"aiokafka + our cooperative-sticky": ("cooperative-sticky", False),
                "Java cooperative-sticky": ("java-cooperative-sticky", False),
                "librdkafka cooperative-sticky": ("java-cooperative-sticky", True)}


def rehearsal(client: str, topic: str, owned: list[set[int]]) -> str:
    """What `assignor.whatif.migrate` says of the same upgrade, from the group the run formed
    (each member's partitions before the first restart): partitions revoked and moved, or the
    refusal."""
    from assignor import Group, Member, TopicPartition, whatif

    strategy, user_data = REHEARSED_AS[client]
    group = Group({topic: sum(map(len, owned))}, [
        Member(f"m{i}", [topic], [TopicPartition(topic, p) for p in sorted(mine)], generation=1)
        for i, mine in enumerate(owned)])
    migration = whatif.migrate(group, [], "kip848-uniform", [strategy],
                               conversion_rules=whatif.Conversion(assignment_user_data=user_data))
    if migration["refused"] is not None:
        return "refused: the assignments' user data (KAFKA-18134)"
    return f"revoked {migration['upgrade']['revoked']}, moved {migration['upgrade']['moved']}"


def figures(client: str, variant: str, members: list[Any], timeline: Timeline, sent: int, started: float,
            ended: float, partitions: int) -> Figures:
    """A run's figures over [started, ended] (see the module docstring)."""
    consumed = [(t, p, o) for m in members for t, p, o in m.records]
    distinct = {(p, o) for _t, p, o in consumed}
    gaps: list[float] = []
    for p in range(partitions):
        times = sorted([started] + [t for t, q, _o in consumed if q == p and started <= t <= ended] + [ended])
        gaps += [b - a for a, b in zip(times, times[1:])]
    unowned = 0.0
    for p in range(partitions):
        spans = sorted((max(s, started), min(e, ended)) for q, s, e, _m in timeline.intervals() if q == p)
        covered, reach = 0.0, started
        for s, e in spans:
            if e > reach:
                covered += e - max(s, reach)
                reach = e
        unowned += (ended - started) - covered
    callbacks = sorted(s for _p, s, _e, _m in timeline.intervals() if started <= s <= ended)
    rounds = sum(1 for a, b in zip([float("-inf"), *callbacks], callbacks) if b - a > 0.5)
    return Figures(client=client, variant=variant, rebalances=rounds,
                   revoked_from_survivors=sum(len(r) for m in members for r in m.revoked),
                   longest_gap_s=round(max(gaps, default=0.0), 2), unowned_partition_s=round(unowned, 1),
                   paused_partition_s=round(sum(g for g in gaps if g > 1.0), 1),
                   consumed_twice=len(consumed) - len(distinct), lost=sent - len(distinct),
                   overlaps=len(timeline.overlaps()), rehearsal="-")


#: What Kafka's coordinator logs when it will not convert a classic group on a consumer-protocol
#: member's first heartbeat (``GroupMetadataManager``, from ``ConsumerGroup.fromClassicGroup``'s
#: refusal); the member then holds nothing while classic members hold the rest.
_REFUSED = re.compile(r"Cannot upgrade classic group \S+ to consumer group: (.+?)\.? \(org\.apache")


def refused_conversion(log: str) -> str | None:
    """The broker's reason for refusing to convert a group, from its log, as a row's words."""
    found = _REFUSED.search(log)
    return None if found is None else f"the broker refused to convert the group: {found.group(1)}"


HEADER = ("client", "variant", "rebalances", "revoked from survivors", "longest gap s", "unowned partition-s",
          "paused partition-s (gaps > 1 s)", "consumed twice", "lost", "two owners at once",
          "rehearsal (upgrades)")


def main(quick: bool = False) -> None:
    """Every client through both variants on one broker, as a table."""
    import tempfile
    from pathlib import Path

    from bench.broker import Broker

    print(" | ".join(HEADER), flush=True)
    with tempfile.TemporaryDirectory() as directory:
        broker = Broker(Path(directory) / "kafka")
        java = JavaMembers(Path(directory) / "java-members.log")
        try:
            size = {"consumers": 3, "partitions": 6} if quick else {}
            runs = [(client, variant, None) for variant in ("restart", "settled") for client in CLIENTS]
            for client, variant, to in runs + [(client, "upgrade", to) for client, to in UPGRADES]:
                start = broker.log_size()
                try:
                    row = asyncio.run(run(broker.bootstrap, client, variant=variant, java=java, to=to, **size))
                except AssertionError as error:  # (a group that never settles is a finding, not the end)
                    label = client + (f" -> {to}" if to is not None else "")
                    why = refused_conversion(broker.log_text(start)) or str(error).split(":", 1)[0].split("\n", 1)[0]
                    print(" | ".join([label, variant, why] + ["-"] * (len(HEADER) - 4)
                                     + [getattr(error, "rehearsal", "-")]), flush=True)
                    continue
                print(" | ".join(str(value) for value in row.values()), flush=True)
        finally:
            java.close()
            broker.stop()
