"""Cooperative (KIP-429) rebalancing of aiokafka consumers on Apache Kafka: only what
moves is revoked, retained partitions keep being consumed, nothing is lost, no partition is
ever owned by two members at once; and the aiokafka internals the coordinator relies on."""

from __future__ import annotations

import asyncio
import inspect
import time
import uuid
from typing import Any

import aiokafka
import pytest
from aiokafka.consumer import consumer as consumer_module
from aiokafka.consumer.group_coordinator import GroupCoordinator
from aiokafka.consumer.subscription_state import Assignment, SubscriptionState, TopicPartitionState

from assignor.integrations.aiokafka import CooperativeStickyAssignor, StickyAssignor
from assignor.integrations.aiokafka_cooperative import (
    SUPPORTED_AIOKAFKA,
    CooperativeConsumer,
    CooperativeCoordinator,
    rebalances_cooperatively,
)
from assignor.protocol import decode_subscription
from bench.rebalance import AiokafkaMember, create_topic, produce, settle, wind_down
from tests.broker import CONSUMER_SETTINGS
from tests.ownership import Timeline

pytestmark = [pytest.mark.integration, pytest.mark.anyio]


def test_the_aiokafka_internals_the_coordinator_relies_on_are_still_there():
    """The module docstring lists them; a new aiokafka that changes one fails here first."""
    version = tuple(int(part) for part in aiokafka.__version__.split(".")[:2])
    assert SUPPORTED_AIOKAFKA[0] <= version <= SUPPORTED_AIOKAFKA[1]
    signatures = {"_on_join_prepare": ["self", "previous_assignment"],
                  "_on_join_complete": ["self", "generation", "member_id", "protocol", "member_assignment_bytes"],
                  "reset_generation": ["self"], "_do_rejoin_group": ["self", "subscription"],
                  "_maybe_do_last_autocommit": ["self", "assignment"],
                  "commit_offsets": ["self", "assignment", "offsets"],
                  "start_commit_offsets_refresh_task": ["self", "assignment"],
                  "_stop_commit_offsets_refresh_task": ["self"], "_lookup_assignor": ["self", "name"],
                  "request_rejoin": ["self"], "_do_heartbeat": ["self"], "close": ["self"],
                  "_maybe_leave_group": ["self"]}
    for name, parameters in signatures.items():
        assert list(inspect.signature(getattr(GroupCoordinator, name)).parameters) == parameters, name
    assert consumer_module.GroupCoordinator in (GroupCoordinator,) or callable(consumer_module.GroupCoordinator)
    assert "GroupCoordinator(" in inspect.getsource(consumer_module.AIOKafkaConsumer.start)
    assert "assignment" in inspect.signature(SubscriptionState.assign_from_subscribed).parameters
    assert "self._tp_state[tp] = TopicPartitionState(self)" in inspect.getsource(Assignment.__init__)
    assert "self._assignment = assignment" in inspect.getsource(TopicPartitionState.__init__)
    assert "await self._maybe_leave_group()" in inspect.getsource(GroupCoordinator.close)
    assert "self._session_timeout_ms = session_timeout_ms" in inspect.getsource(GroupCoordinator.__init__)
    assert "return True" in inspect.getsource(GroupCoordinator._do_heartbeat)


def test_the_protocol_is_cooperative_only_when_every_assignor_supports_it():
    assert rebalances_cooperatively([CooperativeStickyAssignor()])
    assert not rebalances_cooperatively([CooperativeStickyAssignor(), StickyAssignor()])  # KIP-429's first bounce
    assert not rebalances_cooperatively([aiokafka.coordinator.assignors.roundrobin.RoundRobinPartitionAssignor])
    assert not rebalances_cooperatively([])
    assert CooperativeStickyAssignor().supported_protocols() == ("eager", "cooperative")
    assert issubclass(CooperativeCoordinator, GroupCoordinator)


def test_cooperative_metadata_carries_the_owned_partitions_and_generation():
    from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment

    assignor = CooperativeStickyAssignor(rack="r1")
    assignor.on_assignment(ConsumerProtocolMemberAssignment(0, [("t", [2, 0])], b""))
    assignor.generation = 7
    sent = decode_subscription(assignor.metadata(["t"]))
    assert sent.version == 3 and sent.generation_id == 7 and sent.rack_id == "r1"
    assert [(tp.topic, tp.partition) for tp in sent.owned_partitions] == [("t", 0), ("t", 2)]
    assignor.on_partitions_lost()
    sent = decode_subscription(assignor.metadata(["t"]))
    assert sent.owned_partitions == [] and sent.generation_id == -1


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def Member(name: str, bootstrap: str, group: str, topic: str, timeline: Timeline,  # noqa: N802 (a class's stand-in)
           **settings: object) -> AiokafkaMember:
    """Our cooperative consumer polling in its own task (`bench.rebalance.AiokafkaMember`)."""
    return AiokafkaMember(name, bootstrap, group, topic, timeline, CooperativeConsumer, **settings)


async def test_a_joiner_and_a_leaver_move_only_what_they_must(broker):
    partitions = 6
    topic = await create_topic(broker.bootstrap, partitions)
    group = unique("g")
    timeline = Timeline()
    stop, sent = asyncio.Event(), []
    producing = asyncio.create_task(produce(broker.bootstrap, topic, partitions, stop, sent, 100.0))
    members = [await Member(n, broker.bootstrap, group, topic, timeline).start() for n in ("a", "b", "c")]
    everyone = list(members)
    try:
        before = await settle(members, partitions)
        assert sorted(map(len, before.values())) == [2, 2, 2]
        assert all(m.consumer.rebalances_cooperatively for m in members)
        for m in members:
            m.revoked.clear()
        # A fourth member joins: one partition moves (the fewest for 2/2/1/1), revoked in a
        # first rebalance and handed over in a second; nothing else is revoked.
        joiner = await Member("d", broker.bootstrap, group, topic, timeline).start()
        members.append(joiner)
        everyone.append(joiner)
        after = await settle(members, partitions)
        assert sorted(map(len, after.values())) == [1, 1, 2, 2]
        revoked = [p for m in members[:3] for round_ in m.revoked for p in round_]
        assert sorted(revoked) == sorted(after["d"]) and len(revoked) == 1
        for m in members[:3]:
            assert after[m.name] <= before[m.name]  # survivors keep what they keep, gain nothing
        # The retained partitions were consumed while the group rebalanced: a survivor that kept
        # partitions consumed records of them between the joiner's start and its first assignment.
        assert not any(joiner.lost)
        # A member leaves: its partitions go to the others; nobody revokes anything.
        for m in members:
            m.revoked.clear()
        leaver = members.pop(0)
        await leaver.stop()
        final = await settle(members, partitions)
        assert not any(m.revoked for m in members)
        assert all(final[m.name] >= after[m.name] for m in members)
    finally:
        await wind_down(stop, producing, members, everyone, sent)
    consumed = [(p, o) for m in everyone for _t, p, o in m.records]
    assert len(set(consumed)) == len(sent), "every record consumed"
    duplicates = len(consumed) - len(set(consumed))
    assert duplicates == 0, f"{duplicates} records consumed twice"
    assert timeline.overlaps() == [], "a partition owned by two members at once"


@pytest.mark.parametrize("lost_hook", [True, False])
async def test_a_fenced_member_loses_its_partitions_without_committing(broker, lost_hook):
    """What aiokafka does when a heartbeat or commit answers UnknownMemberId or
    IllegalGeneration (``reset_generation``): under KIP-429 the member's partitions are lost,
    ``on_partitions_lost`` (or ``on_partitions_revoked`` without it) gets them, nothing is
    committed, and the member rejoins claiming nothing."""
    topic = await create_topic(broker.bootstrap, 4)
    group = unique("fenced")
    timeline = Timeline()
    members = [await Member(n, broker.bootstrap, group, topic, timeline).start() for n in ("a", "b")]
    if not lost_hook:
        members[0].listener_object.on_partitions_lost = None
    try:
        before = await settle(members, 4)
        members[0].revoked.clear()
        coordinator = members[0].consumer._coordinator
        committed: list[object] = []
        original = coordinator.commit_offsets

        async def spy(assignment, offsets):
            committed.append(offsets)
            return await original(assignment, offsets)

        coordinator.commit_offsets = spy
        coordinator.reset_generation()
        after = await settle(members, 4)
        gone = members[0].lost if lost_hook else members[0].revoked
        assert gone and gone[0] == before["a"]
        assert committed == [] or all(not offsets for offsets in committed)
        assert sorted(map(len, after.values())) == [2, 2]
    finally:
        for m in members:
            await m.stop()
    assert timeline.overlaps() == []


async def test_static_members_come_back_to_their_partitions(broker):
    """Static membership (KIP-345, ``group_instance_id``) with the cooperative consumer: a
    member restarted under its instance id within the session timeout gets its partitions back
    and the others revoke nothing."""
    topic = await create_topic(broker.bootstrap, 6)
    group = unique("static")
    timeline = Timeline()

    def make(name: str) -> Member:
        return Member(name, broker.bootstrap, group, topic, timeline, group_instance_id=f"{group}-{name}")

    members = list(await asyncio.gather(*(make(n).start() for n in ("a", "b", "c"))))
    try:
        before = await settle(members, 6)
        for m in members:
            m.revoked.clear()
        members[0].task.cancel()  # stop polling and leave no goodbye: a static member's restart
        await asyncio.gather(members[0].task, return_exceptions=True)
        await members[0].consumer._client.close()
        members[0] = await make("a").start()
        after = await settle(members, 6)
        assert after == before
        assert not any(m.revoked for m in members[1:])
    finally:
        for m in members:
            await m.stop()


class _Recorder:
    """A listener that keeps every callback with its partitions, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, set[int]]] = []

    async def on_partitions_revoked(self, revoked: Any) -> None:
        self.calls.append(("revoked", {tp.partition for tp in revoked}))

    async def on_partitions_assigned(self, assigned: Any) -> None:
        self.calls.append(("assigned", {tp.partition for tp in assigned}))

    async def on_partitions_lost(self, lost: Any) -> None:
        self.calls.append(("lost", {tp.partition for tp in lost}))


async def test_close_revokes_what_it_owns_through_the_listener(broker):
    """Java and librdkafka call the revoke callback on every close (Java's
    ``ConsumerCoordinator.onLeavePrepare``), where a listener commits with auto-commit off; ours
    called none. Now a closing member revokes all it owns, once, after which it leaves."""
    from aiokafka.abc import ConsumerRebalanceListener

    topic = await create_topic(broker.bootstrap, 4)
    group = unique("close")
    recorder = _Recorder()

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
        on_partitions_revoked = staticmethod(recorder.on_partitions_revoked)
        on_partitions_assigned = staticmethod(recorder.on_partitions_assigned)
        on_partitions_lost = staticmethod(recorder.on_partitions_lost)

    consumer = CooperativeConsumer(bootstrap_servers=broker.bootstrap, group_id=group, **CONSUMER_SETTINGS)
    consumer.subscribe([topic], listener=Listener())
    await consumer.start()
    try:
        deadline = time.monotonic() + 30
        while len(consumer.assignment()) < 4 and time.monotonic() < deadline:
            await consumer.getmany(timeout_ms=100)
        committed_before = await consumer.committed(next(iter(consumer.assignment())))
    finally:
        await asyncio.wait_for(consumer.stop(), 60)
    assert recorder.calls == [("assigned", {0, 1, 2, 3}), ("revoked", {0, 1, 2, 3})], recorder.calls
    assert committed_before is None


async def test_a_member_frozen_past_its_session_returns_no_record_of_a_reassigned_partition(broker, java_members):
    """Our consumer's event loop blocked for 9 s (a GC pause, a blocking call) past its 6 s session
    in a group with a Java and a librdkafka member: the broker gives its partitions to them. On
    waking it returned records of those partitions before its lost callback ran (416 duplicates in
    one run); now it finds its session expired itself, loses its partitions first and returns
    nothing of them, as librdkafka does, then rejoins."""
    from bench.java_members import CLASSIC, COOPERATIVE_STICKY
    from bench.rebalance import LibrdkafkaMember

    partitions = 6
    topic = await create_topic(broker.bootstrap, partitions)
    group = unique("frozen")
    timeline = Timeline()
    stop, sent = asyncio.Event(), []
    # Records keep coming while our loop is blocked: a producer of its own, on a thread.
    producing = asyncio.create_task(asyncio.to_thread(_produce_on_a_thread, broker.bootstrap, topic, partitions,
                                                      stop, sent, 400.0))
    ours = await Member("ours", broker.bootstrap, group, topic, timeline).start()
    members = [ours]
    await settle(members, partitions)  # ours leads
    members.append(await java_members.member(f"{group}.java", broker.bootstrap, group, [topic],
                                             {**CLASSIC, "partition.assignment.strategy": COOPERATIVE_STICKY},
                                             timeline).start())
    members.append(await LibrdkafkaMember("rdk", broker.bootstrap, group, topic, timeline).start())
    try:
        before = await settle(members, partitions)
        assert before["ours"]
        time.sleep(9)  # the whole event loop stops: no heartbeat, no poll  # noqa: ASYNC251
        woke = time.monotonic()
        await settle(members, partitions, timeout=60)
    finally:
        await wind_down(stop, producing, members, members, sent, timeout=60)
    others = [(p, start, end) for p, start, end, m in timeline.intervals() if m != "ours"]
    late = [(t, p) for t, p, _o in ours.records
            if t >= woke and any(q == p and start <= t <= end for q, start, end in others)]
    assert late == [], f"{len(late)} records returned after waking of partitions another member owned then"
    assert ours.lost and ours.lost[0] == before["ours"], ours.lost


def _produce_on_a_thread(bootstrap: str, topic: str, partitions: int, stop: asyncio.Event, sent: list[int],
                        rate: float = 100.0) -> None:
    """`bench.rebalance.produce`'s records (record i to partition i % partitions, values i) from
    a librdkafka producer on this thread, until `stop`."""
    import confluent_kafka

    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "broker.address.family": "v4"})
    started, i = time.monotonic(), 0
    while not stop.is_set():
        producer.produce(topic, value=b"%d" % i, partition=i % partitions)
        sent.append(i)
        i += 1
        producer.poll(0)
        time.sleep(max(0.0, started + i / rate - time.monotonic()))
    producer.flush(30)


async def test_under_aiokafkas_eager_coordinator_the_cooperative_assignor_claims_nothing(broker):
    """A plain AIOKafkaConsumer revokes everything before it joins: were our cooperative
    assignor to claim its old partitions, a leader would withhold moving ones that nobody hands
    over. Through an eager coordinator it claims none, and the group settles complete."""
    from aiokafka import AIOKafkaConsumer

    topic = await create_topic(broker.bootstrap, 4)
    group = unique("eager")
    consumers = [AIOKafkaConsumer(topic, bootstrap_servers=broker.bootstrap, group_id=group,
                                  partition_assignment_strategy=(CooperativeStickyAssignor(),), **CONSUMER_SETTINGS)
                 for _ in range(2)]
    try:
        await consumers[0].start()
        deadline = time.monotonic() + 30
        while len(consumers[0].assignment()) < 4 and time.monotonic() < deadline:
            await consumers[0].getmany(timeout_ms=100)
        await consumers[1].start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            await asyncio.gather(*(c.getmany(timeout_ms=100) for c in consumers))
            owned = [{tp.partition for tp in c.assignment()} for c in consumers]
            if sorted(map(len, owned)) == [2, 2] and set().union(*owned) == {0, 1, 2, 3}:
                break
        assert sorted(map(len, owned)) == [2, 2] and set().union(*owned) == {0, 1, 2, 3}, owned
    finally:
        await asyncio.gather(*(c.stop() for c in consumers), return_exceptions=True)
