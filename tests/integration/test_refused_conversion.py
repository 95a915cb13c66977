"""A conversion Apache Kafka refuses, against the rehearsal's rule (`assignor.whatif.refusals`):
a classic group whose leader (ours, asked to: ``leader.sync(..., assignment_user_data=True)``)
writes user data into assignments is not converted when a consumer-protocol member joins
(KAFKA-18134, ``ConsumerGroup.fromClassicGroup``): the Java member's poll fails with
GROUP_ID_NOT_FOUND and the group stays classic, its members keeping their partitions; the same
group with a leader that writes none converts. The rehearsal says the one refused and the other
not."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Mapping
from typing import Any

import pytest

from assignor import Group, Member, TopicPartition, leader, whatif
from assignor.integrations.aiokafka import StickyAssignor
from bench.java_members import CONSUMER
from bench.ownership import Timeline
from bench.rebalance import AiokafkaMember, create_topic, settle

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

PARTITIONS = 6


class WritingUserData(StickyAssignor):
    """Our sticky assignor whose leader writes the generation into each assignment's user data."""

    def lead(self, generation: int, topics: Mapping[str, int], metadata: Mapping[str, bytes],
             instance_ids: Mapping[str, str] | None = None) -> leader.SyncResult:
        return leader.sync(self.protocol.name, generation, topics, metadata, cache=self.cache, strategy=self.strategy,
                           assignment_user_data=True, instance_ids=instance_ids)


@pytest.mark.parametrize("writes_user_data", [True, False], ids=["user-data", "none"])
async def test_kafka_refuses_to_convert_a_group_whose_assignments_carry_user_data(broker, java_members,
                                                                                 writes_user_data):
    from aiokafka import AIOKafkaConsumer

    topic = await create_topic(broker.bootstrap, PARTITIONS)
    group = f"refused-{uuid.uuid4().hex[:8]}"
    timeline = Timeline()
    kind = WritingUserData if writes_user_data else StickyAssignor
    classic = [AiokafkaMember(f"a{i}", broker.bootstrap, group, topic, timeline, AIOKafkaConsumer,
                              partition_assignment_strategy=(kind(),)) for i in range(2)]
    joining = java_members.member(f"{group}.java", broker.bootstrap, group, [topic],
                                  {**CONSUMER, "group.remote.assignor": "uniform"})
    try:
        for member in classic:
            await member.start()
        before = await settle(classic, PARTITIONS)
        await joining.start()
        await _joined(joining, classic, refused=writes_user_data)
        if writes_user_data:
            await asyncio.sleep(2)  # (a conversion, had there been one, would have moved partitions by now)
            assert {m.name: m.partitions() for m in classic} == before and not joining.partitions()
    finally:
        await joining.stop()
        for member in classic:
            await member.stop()
    rehearsed = Group({topic: PARTITIONS}, [Member(m.name, [topic], [TopicPartition(topic, p) for p in before[m.name]])
                                            for m in classic])
    refused = whatif.migrate(rehearsed, [], "kip848-uniform", ["sticky"],
                             conversion_rules=whatif.Conversion(assignment_user_data=writes_user_data))["refused"]
    assert (refused is not None and "KAFKA-18134" in refused["reason"]) if writes_user_data else refused is None


@pytest.mark.parametrize(("strategy", "user_data"), [("cooperative-sticky", True), (None, False)],
                         ids=["cooperative-sticky", "range"])
async def test_a_librdkafka_groups_assignments_carry_user_data_once_it_rebalanced(broker, java_members, strategy,
                                                                                  user_data):
    """librdkafka's leader sends each member its own subscription user data back in its
    assignment: on ``cooperative-sticky``, the sticky user data of a member assigned before, so
    once the group has rebalanced after a member's first assignment (here the members join one
    by one) the assignments carry user data and Kafka refuses to convert the group when a
    consumer-protocol member joins; on librdkafka's ``range`` the user data is empty and the
    group converts. The snapshot says which (``assignment_user_data``), and the rehearsal's
    rule on the snapshot refuses where Kafka does."""
    from assignor.cluster import read_snapshot, settings_of
    from bench.rebalance import LibrdkafkaMember

    topic = await create_topic(broker.bootstrap, PARTITIONS)
    group = f"refused-rdk-{uuid.uuid4().hex[:8]}"
    timeline = Timeline()
    classic: list[LibrdkafkaMember] = []
    joining = java_members.member(f"{group}.java", broker.bootstrap, group, [topic],
                                  {**CONSUMER, "group.remote.assignor": "uniform"})
    try:
        for i in range(2):  # (a librdkafka consumer joins as it is made: each made when it is to join)
            classic.append(await LibrdkafkaMember(f"{group}.r{i}", broker.bootstrap, group, topic, timeline,
                                                  strategy=strategy).start())
            await settle(classic, PARTITIONS)
        found = (await read_snapshot(settings_of(broker.bootstrap), [group]))["groups"][0]
        await joining.start()
        await _joined(joining, classic, refused=user_data)
    finally:
        await joining.stop()
        for member in classic:
            await member.stop()
    assert found["assignment_user_data"] is user_data
    rule = whatif.conversion_of({}, described=found).refusal("a consumer-protocol member joins", 2)
    assert (rule is not None and "KAFKA-18134" in rule["reason"]) if user_data else rule is None


async def _joined(joining: Any, classic: list[Any], refused: bool) -> None:
    """A consumer-protocol member that joined the classic group: refused (its poll fails with
    GROUP_ID_NOT_FOUND, within 30 s) or, the group converted, holding its share."""
    if refused:
        deadline = time.monotonic() + 30
        while not joining.errors and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert any("GroupIdNotFound" in error for error in joining.errors), joining.errors
    else:
        after = await settle([*classic, joining], PARTITIONS)
        assert len(after[joining.name]) == 2 and not joining.errors
