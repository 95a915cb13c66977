"""Our aiokafka consumer on KIP-848's consumer protocol (`CooperativeConsumer(...,
group_protocol="consumer")`) on Apache Kafka 4.3.1: in groups with Java's and librdkafka's
consumer-protocol members through joins, leaves and a rolling restart, fenced, frozen past its
session, static, and migrating a classic group online. Safety from every member's callbacks
(`tests.ownership.Timeline`), nothing lost from the records, and every target the broker
computed is `kip848-uniform`'s or `kip848-range`'s for the same group."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from assignor.errors import AssignorError
from assignor.integrations.aiokafka_cooperative import CooperativeConsumer
from bench.java_members import CONSUMER
from bench.rebalance import AiokafkaMember, create_topic, produce, settle, wind_down
from bench.rebalance import LibrdkafkaMember as ThreadedLibrdkafkaMember
from tests.integration.test_kip848_broker import Cluster, check_targets
from tests.ownership import Timeline

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

COMMIT = {"enable.auto.commit": "true", "auto.commit.interval.ms": "1000"}


def ours(name: str, bootstrap: str, group: str, topic: str, timeline: Timeline, assignor: str = "uniform",
         **settings: object) -> AiokafkaMember:
    return AiokafkaMember(name, bootstrap, group, topic, timeline, CooperativeConsumer, group_protocol="consumer",
                          group_remote_assignor=assignor, enable_auto_commit=True, auto_commit_interval_ms=1000,
                          **settings)


def test_the_consumer_protocol_settings_are_checked():
    with pytest.raises(AssignorError, match="group_protocol: 'kip848' is not one of classic, consumer"):
        CooperativeConsumer("t", group_id="g", group_protocol="kip848")
    with pytest.raises(AssignorError, match="group_remote_assignor: the broker assigns only under"):
        CooperativeConsumer("t", group_id="g", group_remote_assignor="uniform")


@pytest.mark.parametrize("assignor", ["uniform", "range"])
async def test_ours_with_java_and_librdkafka_members_through_joins_leaves_and_restarts(broker, java_members,
                                                                                     assignor):
    """A consumer-protocol group of ours, Java's and librdkafka's members: each joins, then each
    is restarted in turn. After every step the group is complete and balanced, no record is lost,
    no partition is owned by two members at once, and every target the broker computed is what
    ``kip848-{assignor}`` plans for the group it had."""
    partitions = 8
    topic = await create_topic(broker.bootstrap, partitions)
    cluster = Cluster(broker.bootstrap)
    cluster.adopt({topic: partitions})
    group_id = f"cp-{uuid.uuid4().hex[:8]}"
    start = broker.log_size()
    timeline = Timeline()

    def make(kind: str, name: str):
        if kind == "java":
            settings = {**CONSUMER, "group.remote.assignor": assignor, **COMMIT}
            return java_members.member(f"{group_id}.{name}", broker.bootstrap, group_id, [topic], settings, timeline)
        if kind == "librdkafka":
            return ThreadedLibrdkafkaMember(name, broker.bootstrap, group_id, topic, timeline, protocol="consumer")
        return ours(name, broker.bootstrap, group_id, topic, timeline, assignor)

    kinds = ["ours", "java", "ours", "librdkafka"]
    stop, sent = asyncio.Event(), []
    producing = asyncio.create_task(produce(broker.bootstrap, topic, partitions, stop, sent, 100.0))
    members = [await make(kinds[0], "m0").start()]
    everyone = list(members)
    try:
        await settle(members, partitions)
        member = members[0].consumer._coordinator.member  # (ours, on the consumer protocol)
        assert member.epoch > 0 and member.owned and member.server_assignor == assignor
        for i, kind in enumerate(kinds[1:], 1):
            members.append(await make(kind, f"m{i}").start())
            everyone.append(members[-1])
            await settle(members, partitions)
        for i, kind in enumerate(kinds):
            await members[i].stop()
            members[i] = await make(kind, f"m{i}-new").start()
            everyone.append(members[i])
            settled = await settle(members, partitions)
            assert sorted(map(len, settled.values())) == [2] * 4, settled
        leaver = members.pop(0)  # one of ours leaves: its partitions go to the others
        await leaver.stop()
        await settle(members, partitions)
    finally:
        await wind_down(stop, producing, members, everyone, sent, timeout=60)
    consumed = {(p, o) for m in everyone for _t, p, o in m.records}
    assert len(consumed) == len(sent), f"{len(sent) - len(consumed)} records never consumed"
    assert timeline.overlaps() == [], "a partition owned by two members at once"
    found = check_targets(broker.log_text(start), group_id, cluster, assignor)
    assert len(found) >= 10, [t.epoch for t in found]
