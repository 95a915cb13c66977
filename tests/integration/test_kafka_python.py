"""Our assignors in kafka-python 3 consumers on a real broker (tansu): cooperative rebalancing
with our plans, the generation and the rack, and one group mixing kafka-python, aiokafka and
librdkafka cooperative consumers."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from kafka import KafkaConsumer
from kafka.consumer.subscription_state import ConsumerRebalanceListener
from kafka.coordinator.assignors.abstract import RebalanceProtocol

from assignor.integrations.kafka_python import CooperativeStickyAssignor, StickyAssignor, adopt_client_rack
from assignor.protocol import decode_subscription
from tests.integration.test_aiokafka_cooperative import (
    LibrdkafkaMember,
    Member,
    create_topic,
    drain,
    produce,
    settle,
    unique,
)
from tests.ownership import Timeline

pytestmark = [pytest.mark.integration, pytest.mark.anyio]


def test_the_assignors_speak_kafka_pythons_protocols():
    assert CooperativeStickyAssignor().supported_protocols() == [RebalanceProtocol.EAGER,
                                                                 RebalanceProtocol.COOPERATIVE]
    assert StickyAssignor().supported_protocols() == [RebalanceProtocol.EAGER]
    assert CooperativeStickyAssignor(strategy="java-cooperative-sticky").strategy == "java-cooperative-sticky"
    with pytest.raises(Exception, match="speaks 'sticky'"):
        StickyAssignor(strategy="cooperative-sticky")


class KafkaPythonMember:
    """A kafka-python 3 consumer with our cooperative assignor, polling in a thread."""

    def __init__(self, name: str, bootstrap: str, group: str, topic: str, timeline: Timeline,
                 rack: str = "") -> None:
        self.name, self.timeline = name, timeline
        self.records: list[tuple[float, int, int]] = []
        self.revoked: list[set[int]] = []
        self.owned: set[int] = set()
        self.assignor = CooperativeStickyAssignor()
        self.consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, client_rack=rack,
                                      partition_assignment_strategy=[self.assignor], auto_offset_reset="earliest",
                                      session_timeout_ms=6000, heartbeat_interval_ms=1000,
                                      enable_auto_commit=True, auto_commit_interval_ms=1000)
        adopt_client_rack(self.consumer)
        member = self

        class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
            def on_partitions_revoked(self, revoked):
                gone = {tp.partition for tp in revoked}
                member.revoked.append(gone)
                member.owned -= gone
                member.timeline.release(member.name, gone)

            def on_partitions_assigned(self, assigned):
                added = {tp.partition for tp in assigned}
                member.owned |= added
                member.timeline.take(member.name, added)

        self.consumer.subscribe([topic], listener=Listener())
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self.stopping.is_set():
            for tp, records in self.consumer.poll(timeout_ms=100).items():
                now = time.monotonic()
                self.records.extend((now, tp.partition, r.offset) for r in records)
        self.consumer.close()

    async def start(self) -> KafkaPythonMember:
        self.thread.start()
        return self

    async def stop(self) -> None:
        self.stopping.set()
        await asyncio.to_thread(self.thread.join, 30)
        self.timeline.release(self.name, self.timeline.owned_by(self.name))

    def partitions(self) -> set[int]:
        return set(self.owned)

    @property
    def listener(self) -> KafkaPythonMember:
        return self


async def test_kafka_python_consumers_rebalance_cooperatively_with_our_plans(broker):
    topic = await create_topic(broker.bootstrap, 6)
    group = unique("kp")
    timeline = Timeline()
    members = [await KafkaPythonMember(n, broker.bootstrap, group, topic, timeline, rack=f"rack-{n}").start()
               for n in ("a", "b")]
    try:
        before = await settle(members, 6)
        assert sorted(map(len, before.values())) == [3, 3]
        # The generation from on_assignment, the rack from client_rack, the owned partitions:
        # all in the next JoinGroup's metadata.
        sent = decode_subscription(members[0].assignor.metadata([topic]))
        assert sent.rack_id == "rack-a"
        assert sent.generation_id == members[0].assignor.generation >= 0
        assert {tp.partition for tp in sent.owned_partitions} == before["a"]
        for m in members:
            m.revoked.clear()
        members.append(await KafkaPythonMember("c", broker.bootstrap, group, topic, timeline).start())
        after = await settle(members, 6)
        assert sorted(map(len, after.values())) == [2, 2, 2]
        revoked = [p for m in members[:2] for round_ in m.revoked for p in round_]
        assert sorted(revoked) == sorted(after["c"])  # only what moves, and only to the joiner
    finally:
        for m in members:
            await m.stop()
    assert timeline.overlaps() == []


async def test_one_group_of_kafka_python_aiokafka_and_librdkafka_cooperative_consumers(broker):
    """Consumers of ours on both Python clients with a librdkafka ``cooperative-sticky``
    consumer: balanced, every record consumed, never two owners of a partition."""
    partitions = 6
    topic = await create_topic(broker.bootstrap, partitions)
    group = unique("three")
    timeline = Timeline()
    stop, sent = asyncio.Event(), []
    producing = asyncio.create_task(produce(broker.bootstrap, topic, stop, sent))
    members = [await KafkaPythonMember("kafka-python", broker.bootstrap, group, topic, timeline).start()]
    try:
        await settle(members, partitions)
        members.append(await Member("aiokafka", broker.bootstrap, group, topic, timeline).start())
        await settle(members, partitions)
        members.append(await LibrdkafkaMember("librdkafka", broker.bootstrap, group, topic, timeline).start())
        settled = await settle(members, partitions)
        assert sorted(map(len, settled.values())) == [2, 2, 2]
    finally:
        stop.set()
        await producing
        await drain(members, len(sent), timeout=60)
        for m in members:
            await m.stop()
    consumed = {(p, o) for m in members for _t, p, o in m.records}
    assert len(consumed) == len(sent)
    assert timeline.overlaps() == []
