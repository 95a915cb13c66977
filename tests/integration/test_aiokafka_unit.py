"""The aiokafka adapters without a broker: caller contracts, fallbacks, per-instance state."""

from __future__ import annotations

import inspect
import itertools

import pytest
from aiokafka.consumer.group_coordinator import GroupCoordinator
from aiokafka.coordinator.protocol import ConsumerProtocol, ConsumerProtocolMemberAssignment
from aiokafka.producer.producer import AIOKafkaProducer

from assignor import Group, Member, Plan, TopicPartition
from assignor.integrations.aiokafka import KafkaPartitioner, StickyAssignor
from assignor.partitioners import partition_for_key
from assignor.protocol import (
    decode_assignment,
    decode_sticky_user_data,
    decode_subscription,
    encode_sticky_user_data,
)
from tests.broker import free_port
from tests.conftest import check


class Cluster:
    def __init__(self, topics: dict[str, int]) -> None:
        self.topics = topics

    def partitions_for_topic(self, topic):
        return set(range(self.topics[topic])) if topic in self.topics else None


def test_the_aiokafka_callers_we_read_still_look_the_same():
    # The assignor reads the generation and raw metadata from these calls (module docstring).
    assert "generation" in inspect.signature(GroupCoordinator._on_join_complete).parameters
    assert "response" in inspect.signature(GroupCoordinator._perform_assignment).parameters
    assert "topic" in inspect.signature(AIOKafkaProducer._partition).parameters


def decoded(assignor: StickyAssignor, topics):
    """What aiokafka hands a leader: its own v0 decoding of our metadata bytes."""
    return ConsumerProtocol.METADATA.decode(assignor.metadata(topics))


def test_assign_outside_aiokafka_falls_back_to_decoded_metadata_and_stays_sticky():
    assignors = {name: StickyAssignor() for name in ("a", "b", "c")}
    cluster = Cluster({"t": 6, "u": 3})
    first = assignors["a"].assign(cluster, {m: decoded(s, ["t", "u"]) for m, s in assignors.items()})
    owned = {}
    for member, data in first.items():
        assignment = ConsumerProtocolMemberAssignment.decode(data)
        assignors[member].on_assignment(assignment)
        owned[member] = {TopicPartition(t, p) for t, p in assignment.partitions()}
    # No aiokafka join to read the generation from, and the assignments carry no user data
    # (as a Java leader's): the generation stays unknown, and the claims count all the same.
    assert all(s.generation == -1 for s in assignors.values())
    assert all(ConsumerProtocolMemberAssignment.decode(data).user_data in (b"", None) for data in first.values())
    group = Group({"t": 6, "u": 3}, [Member(m, ["t", "u"]) for m in assignors])
    check(group, Plan("sticky", {m: sorted(tps) for m, tps in owned.items()}))

    assignors["d"] = StickyAssignor()
    second = assignors["b"].assign(cluster, {m: decoded(s, ["t", "u"]) for m, s in assignors.items()})
    after = {m: set(decode_assignment(data).partitions) for m, data in second.items()}
    assert sorted(map(len, after.values())) == [2, 2, 2, 3]
    assert sum(len(owned[m] - after[m]) for m in owned) == 2  # the fewest moves for balance
    assert decode_assignment(second["d"]).user_data is None


def test_java_sticky_option_plans_as_javas_assignor():
    """A group mixing these members with Java members plans the same way whoever leads."""
    import pytest

    from assignor import assign

    assignors = {name: StickyAssignor(strategy="java-sticky") for name in ("a", "b", "c")}
    cluster = Cluster({"t": 5, "u": 4})
    topics = {"a": ["t", "u"], "b": ["t"], "c": ["u"]}
    out = assignors["a"].assign(cluster, {m: decoded(s, topics[m]) for m, s in assignors.items()})
    plan = assign("java-sticky", Group({"t": 5, "u": 4}, [Member(m, topics[m]) for m in assignors]))
    assert {m: sorted(decode_assignment(data).partitions) for m, data in out.items()} == \
        {m: sorted(tps) for m, tps in plan.assignment.items()}
    with pytest.raises(ValueError, match="strategy"):
        StickyAssignor(strategy="range")


def test_metadata_is_subscription_v3_with_sticky_user_data_v1():
    assignor = StickyAssignor(rack="rack-1")
    first = decode_subscription(assignor.metadata(["b", "a"]))
    assert (list(first.topics), first.user_data, first.generation_id, first.rack_id, first.version) == \
        (["a", "b"], None, -1, "rack-1", 3)
    assignment = ConsumerProtocolMemberAssignment(0, [("a", [1, 0])], encode_sticky_user_data([], 9))
    assignor.on_assignment(assignment)
    later = decode_subscription(assignor.metadata(["a"]))
    sticky = decode_sticky_user_data(later.user_data, strict=True)
    assert (later.generation_id, sticky.generation, sticky.partitions) == \
        (9, 9, [TopicPartition("a", 1), TopicPartition("a", 0)])


def test_state_lives_on_each_instance():
    one, two = StickyAssignor(), StickyAssignor()
    one.on_assignment(ConsumerProtocolMemberAssignment(0, [("t", [0])], encode_sticky_user_data([], 4)))
    assert (one.generation, two.generation, two.owned) == (4, -1, None)


def test_remote_mode_falls_back_when_the_service_is_down(caplog):
    down = f"http://127.0.0.1:{free_port()}"  # nothing listens here
    assignor = StickyAssignor(service_url=down, timeout=0.5, group_id="g")
    plan = assignor.assign(Cluster({"t": 4}), {"a": decoded(assignor, ["t"]), "b": decoded(StickyAssignor(), ["t"])})
    assert sorted(len(decode_assignment(data).partitions) for data in plan.values()) == [2, 2]
    assert (assignor.fallbacks, assignor.remote_plans) == (1, 0)
    assert "planning locally" in caplog.text


def test_partitioner_keyed_is_java_exact_over_sorted_partitions():
    partitioner = KafkaPartitioner(seed=1)
    for i in range(100):
        key = b"k%d" % i
        assert partitioner(key, [4, 2, 0, 3, 1], [1, 2]) == partition_for_key(key, 5)


def test_partitioner_keyless_sticks_then_moves_without_a_producer_to_read():
    partitioner = KafkaPartitioner(seed=5, fallback_records=10)
    picks = [partitioner(None, [0, 1, 2, 3], [0, 1, 2, 3]) for _ in range(30)]
    assert len(set(picks[:9])) == 1
    runs = sum(1 for a, b in itertools.pairwise(picks) if a != b)
    assert runs == 3  # KIP-480: each switch goes to a *different* partition


def test_sending_through_a_producer_not_started_fails_at_once():
    """The README's snippet left out ``await producer.start()``, and ``StickyProducer.send``
    then waited for ever for metadata nothing fetches; it now says what is missing."""
    import asyncio

    import pytest

    from assignor.errors import PartitionerError
    from assignor.integrations.aiokafka import StickyProducer

    async def send() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=f"127.0.0.1:{free_port()}")
        try:
            with pytest.raises(PartitionerError, match=r"not started: await producer.start\(\)"):
                await asyncio.wait_for(StickyProducer(producer).send("orders", b"value"), 5)
        finally:
            await producer.stop()

    asyncio.run(send())


@pytest.mark.anyio
async def test_a_running_consumer_protocol_member_subscribing_anew_has_an_assignment_for_the_fetcher():
    """aiokafka's fetcher, woken by the assignment our member installed last and run only after
    the application subscribed anew, reads the new subscription's assignment and asserts it is
    there and active. Under the consumer protocol the new subscription starts with an empty one
    (the member takes what its next target gives); the classic consumer keeps aiokafka's way."""
    from aiokafka.structs import TopicPartition as AioTopicPartition

    from assignor.integrations.aiokafka_cooperative import CooperativeConsumer

    for protocol, expected in (("consumer", set()), ("classic", None)):
        consumer = CooperativeConsumer("a", bootstrap_servers="127.0.0.1:9", group_id="g", group_protocol=protocol)
        state = consumer._subscription
        state.assign_from_subscribed({AioTopicPartition("a", 0)})  # what the member installed last
        consumer.subscribe(["a", "b"])
        assignment = state.subscription.assignment
        if expected is None:
            assert assignment is None
        else:
            assert assignment is not None and assignment.active and set(assignment.tps) == expected
        consumer.subscribe(["b"])  # a subscription that had no partitions yet: the same, once more
        assert (state.subscription.assignment is None) == (expected is None)
