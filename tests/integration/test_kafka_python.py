"""Our assignors in kafka-python 3 consumers on Apache Kafka: cooperative rebalancing
with our plans, the generation and the rack, and one group mixing kafka-python, aiokafka and
librdkafka cooperative consumers."""

from __future__ import annotations

import asyncio

import pytest
from kafka.coordinator.assignors.abstract import RebalanceProtocol

from assignor.errors import AssignorError
from assignor.integrations.kafka_python import CooperativeStickyAssignor, StickyAssignor
from assignor.protocol import decode_subscription
from bench.rebalance import KafkaPythonMember, LibrdkafkaMember, create_topic, produce, settle, wind_down
from tests.integration.test_aiokafka_cooperative import Member, unique
from tests.ownership import Timeline
from tests.scenarios import a_static_member_comes_back

pytestmark = [pytest.mark.integration, pytest.mark.anyio]


def test_the_assignors_speak_kafka_pythons_protocols():
    assert CooperativeStickyAssignor().supported_protocols() == [RebalanceProtocol.EAGER,
                                                                 RebalanceProtocol.COOPERATIVE]
    assert StickyAssignor().supported_protocols() == [RebalanceProtocol.EAGER]
    assert CooperativeStickyAssignor(strategy="java-cooperative-sticky").strategy == "java-cooperative-sticky"
    with pytest.raises(AssignorError, match="plans the 'cooperative-sticky' protocol, not 'sticky'"):
        StickyAssignor(strategy="cooperative-sticky")


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


async def test_a_static_member_restarted_within_its_session_gets_its_partitions_back(broker):
    """KIP-345 with our cooperative-sticky assignor in kafka-python: a static member closes (no
    LeaveGroup) and a new consumer with its ``group_instance_id`` is back within the session:
    the coordinator hands it the same partitions, and nobody revokes anything."""
    topic = await create_topic(broker.bootstrap, 6)
    group = unique("kp-static")
    timeline = Timeline()
    await a_static_member_comes_back(lambda name: KafkaPythonMember(name, broker.bootstrap, group, topic, timeline,
                                                                    instance_id=f"instance-{name}"))


async def test_one_group_of_kafka_python_aiokafka_and_librdkafka_cooperative_consumers(broker):
    """Consumers of ours on both Python clients with a librdkafka ``cooperative-sticky``
    consumer: balanced, every record consumed, never two owners of a partition."""
    partitions = 6
    topic = await create_topic(broker.bootstrap, partitions)
    group = unique("three")
    timeline = Timeline()
    stop, sent = asyncio.Event(), []
    producing = asyncio.create_task(produce(broker.bootstrap, topic, partitions, stop, sent, 100.0))
    members = [await KafkaPythonMember("kafka-python", broker.bootstrap, group, topic, timeline).start()]
    try:
        await settle(members, partitions)
        members.append(await Member("aiokafka", broker.bootstrap, group, topic, timeline).start())
        await settle(members, partitions)
        members.append(await LibrdkafkaMember("librdkafka", broker.bootstrap, group, topic, timeline).start())
        settled = await settle(members, partitions)
        assert sorted(map(len, settled.values())) == [2, 2, 2]
    finally:
        await wind_down(stop, producing, members, members, sent, timeout=60)
    consumed = {(p, o) for m in members for _t, p, o in m.records}
    assert len(consumed) == len(sent)
    assert timeline.overlaps() == []
