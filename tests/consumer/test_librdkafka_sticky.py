"""`librdkafka-cooperative-sticky` against librdkafka's own expectations.

The table's scenarios and exact plans are librdkafka's unit tests of its sticky assignor
(``rdkafka_sticky_assignor.c``, after Java's ``AbstractStickyAssignorTest``), each member owning
what the run before gave it, in generation 1 (librdkafka's test members); as there, each
member's partitions are compared as a set. The tie it breaks its
own way was seen on live librdkafka groups (`tests/integration/test_snapshot.py` makes it happen
on Apache Kafka); the properties hold every plan to the oracle.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from assignor import Group, LibrdkafkaAssignorFailure, Member, TopicPartition, assign, validate, whatif
from assignor.strategies import librdkafka_sticky
from assignor.strategies.librdkafka_sticky import NAME, assign_sticky
from tests.budget import examples

TP = TopicPartition


def _plan(topics: dict[str, int], subscriptions: dict[str, list[str]],
          owned: dict[str, list[TopicPartition]] | None = None) -> dict[str, list[tuple[str, int]]]:
    """Each member's plan, sorted (librdkafka's tests find each partition in the member's list
    and count them)."""
    members = [Member(m, subscribed, (owned or {}).get(m, []), 1) for m, subscribed in subscriptions.items()]
    return {m: sorted(tuple(tp) for tp in tps) for m, tps in assign_sticky(Group(topics, members)).items()}


#: (librdkafka's test, topics, subscriptions, each member's plan)
FRESH = [
    ("testOneConsumerOneTopic", {"topic1": 3}, {"consumer1": ["topic1"]},
     {"consumer1": [("topic1", 0), ("topic1", 1), ("topic1", 2)]}),
    ("testOnlyAssignsPartitionsFromSubscribedTopics", {"topic1": 3, "topic2": 3}, {"consumer1": ["topic1"]},
     {"consumer1": [("topic1", 0), ("topic1", 1), ("topic1", 2)]}),
    ("testOneConsumerMultipleTopics", {"topic1": 1, "topic2": 2}, {"consumer1": ["topic1", "topic2"]},
     {"consumer1": [("topic1", 0), ("topic2", 0), ("topic2", 1)]}),
    ("testTwoConsumersOneTopicOnePartition", {"topic1": 1}, {"consumer1": ["topic1"], "consumer2": ["topic1"]},
     {"consumer1": [("topic1", 0)], "consumer2": []}),
    ("testTwoConsumersOneTopicTwoPartitions", {"topic1": 2}, {"consumer1": ["topic1"], "consumer2": ["topic1"]},
     {"consumer1": [("topic1", 0)], "consumer2": [("topic1", 1)]}),
    ("testMultipleConsumersMixedTopicSubscriptions", {"topic1": 3, "topic2": 2},
     {"consumer1": ["topic1"], "consumer2": ["topic1", "topic2"], "consumer3": ["topic1"]},
     {"consumer1": [("topic1", 0), ("topic1", 2)], "consumer2": [("topic2", 0), ("topic2", 1)],
      "consumer3": [("topic1", 1)]}),
    ("testTwoConsumersTwoTopicsSixPartitions", {"topic1": 3, "topic2": 3},
     {"consumer1": ["topic1", "topic2"], "consumer2": ["topic1", "topic2"]},
     {"consumer1": [("topic1", 0), ("topic1", 2), ("topic2", 1)],
      "consumer2": [("topic1", 1), ("topic2", 0), ("topic2", 2)]}),
    ("testPoorRoundRobinAssignmentScenario", {"topic1": 2, "topic2": 1, "topic3": 2, "topic4": 1, "topic5": 2},
     {"consumer1": ["topic1", "topic2", "topic3", "topic4", "topic5"], "consumer2": ["topic1", "topic3", "topic5"],
      "consumer3": ["topic1", "topic3", "topic5"], "consumer4": ["topic1", "topic2", "topic3", "topic4", "topic5"]},
     {"consumer1": [("topic2", 0), ("topic3", 0)], "consumer2": [("topic1", 0), ("topic3", 1)],
      "consumer3": [("topic1", 1), ("topic5", 0)], "consumer4": [("topic4", 0), ("topic5", 1)]}),
]


@pytest.mark.parametrize(("test", "topics", "subscriptions", "expected"), FRESH, ids=[f[0] for f in FRESH])
def test_librdkafkas_own_plans(test, topics, subscriptions, expected):
    assert _plan(topics, subscriptions) == expected


def _owning(plan: dict[str, list[tuple[str, int]]]) -> dict[str, list[TopicPartition]]:
    return {m: [TP(*tp) for tp in tps] for m, tps in plan.items()}


def test_add_then_remove_a_consumer():
    """``testAddRemoveConsumerOneTopic``: the newcomer takes partition 0 from the first member,
    and keeps it when that member leaves."""
    first = _plan({"topic1": 3}, {"consumer1": ["topic1"]})
    both = _plan({"topic1": 3}, {"consumer1": ["topic1"], "consumer2": ["topic1"]}, _owning(first))
    assert both == {"consumer1": [("topic1", 1), ("topic1", 2)], "consumer2": [("topic1", 0)]}
    alone = _plan({"topic1": 3}, {"consumer2": ["topic1"]}, _owning({"consumer2": both["consumer2"]}))
    assert alone == {"consumer2": [("topic1", 0), ("topic1", 1), ("topic1", 2)]}


def test_add_then_remove_a_topic():
    """``testAddRemoveTopicTwoConsumers``: topic2's partitions dealt from the last one back,
    the first to the member that had fewer."""
    subscriptions = {"consumer1": ["topic1", "topic2"], "consumer2": ["topic1", "topic2"]}
    first = _plan({"topic1": 3}, subscriptions)
    assert first == {"consumer1": [("topic1", 0), ("topic1", 2)], "consumer2": [("topic1", 1)]}
    added = _plan({"topic1": 3, "topic2": 3}, subscriptions, _owning(first))
    assert added == {"consumer1": [("topic1", 0), ("topic1", 2), ("topic2", 1)],
                     "consumer2": [("topic1", 1), ("topic2", 0), ("topic2", 2)]}
    removed = _plan({"topic2": 3}, subscriptions, _owning(added))
    assert removed == {"consumer1": [("topic2", 1)], "consumer2": [("topic2", 0), ("topic2", 2)]}


def test_a_leavers_partitions_go_the_other_way_round_from_javas():
    """Three members over 12 partitions, one leaves: librdkafka lists the leaver's partitions
    from the last one back, so the member with the greater id takes the first of them (as five
    live leaves of librdkafka members did), where Java's gives it to the lesser."""
    owned = {"a": [0, 3, 6, 9], "b": [1, 4, 7, 10]}  # (c held 2, 5, 8, 11)
    group = Group({"t": 12}, [Member(m, ["t"], [TP("t", p) for p in ps], 1) for m, ps in owned.items()])
    assert {m: sorted(tp.partition for tp in tps) for m, tps in assign_sticky(group).items()} == {
        "a": [0, 3, 5, 6, 9, 11], "b": [1, 2, 4, 7, 8, 10]}
    java = assign("java-cooperative-sticky", group).assignment
    assert {m: sorted(tp.partition for tp in tps) for m, tps in java.items()} == {
        "a": [0, 2, 3, 6, 8, 9], "b": [1, 4, 5, 7, 10, 11]}


def test_six_topics_are_dealt_in_the_brokers_metadata_order(monkeypatch):
    """Regression: five librdkafka members subscribed alike to six topics, recorded on Apache
    Kafka 4.3.1 (librdkafka 2.x), after a member holding ``b-2`` and ``c-0`` to ``c-2`` left. The
    leader dealt those in the order its Metadata response listed the topics, the broker's
    (``c, d, a, f, b, e``: Scala's set order beyond four topics), the last one back; the strategy
    took the topics by name and dealt each of the four to another member."""
    def names(held: str) -> list[TopicPartition]:
        return [TP(f"six-alike-{t}", int(p)) for t, p in (pair.split("-") for pair in held.split())]

    held = {"m4": "e-1 b-1 a-0", "m3": "a-1 b-0 e-0", "m2": "a-2 d-0 d-1 d-2", "m0": "e-2 f-0 f-1 f-2"}
    topics = {f"six-alike-{t}": 3 for t in "abcdef"}
    group = Group(topics, [Member(m, sorted(topics), names(ps), 9) for m, ps in held.items()])
    settled = {"m4": "a-0 b-1 e-1 c-2", "m3": "a-1 b-0 e-0 b-2", "m2": "a-2 d-0 d-1 d-2 c-0",
               "m0": "e-2 f-0 f-1 f-2 c-1"}

    def planned() -> dict[str, set[TopicPartition]]:
        return {m: set(tps) for m, tps in assign(NAME, group).assignment.items()}

    assert librdkafka_sticky.eligible_topics(group) == [f"six-alike-{t}" for t in "cdafbe"]
    assert planned() == {m: set(names(ps)) for m, ps in settled.items()}
    monkeypatch.setattr(librdkafka_sticky, "eligible_topics", lambda group: sorted(group.topics))
    assert planned() != {m: set(names(ps)) for m, ps in settled.items()}


def test_the_cooperative_protocol_withholds_what_another_member_owns():
    """A newcomer is given partitions the others still own: under the cooperative protocol they
    are withheld for the next rebalance (``rd_kafka_cooperative_protocol_adjust_assignment``);
    once given up, the next plan hands them over."""
    owned = [TP("t", p) for p in range(4)]
    group = Group({"t": 4}, [Member("a", ["t"], owned, 1), Member("b", ["t"])])
    sticky = assign_sticky(group)
    assert sticky == {"a": [TP("t", 2), TP("t", 3)], "b": [TP("t", 0), TP("t", 1)]}
    first = assign(NAME, group).assignment
    assert first == {"a": [TP("t", 2), TP("t", 3)], "b": []}
    then = Group({"t": 4}, [Member("a", ["t"], first["a"], 2), Member("b", ["t"], [], 2)])
    assert {m: sorted(tps) for m, tps in assign(NAME, then).assignment.items()} == sticky


def test_a_partition_owned_and_given_to_nobody_stays_with_its_owner():
    """librdkafka hands an owned partition nobody is given back to its owner: one of a topic
    nobody subscribes to and the owner does, as it is; one that does not exist, or of a topic the
    owner left, would be a plan no member could hold, said so."""
    group = Group({"t": 2, "old": 1}, [Member("a", ["t", "old"], [TP("old", 0), TP("t", 0)], 1),
                                       Member("b", ["t"])])
    assert assign(NAME, group).assignment == {"a": [TP("t", 0), TP("old", 0)], "b": [TP("t", 1)]}
    for topics, why in (({"t": 2}, "which does not exist"),
                        ({"t": 2, "old": 1}, "of a topic it does not subscribe to")):
        left = Group(topics, [Member("a", ["t"], [TP("old", 0)], 1)])
        with pytest.raises(LibrdkafkaAssignorFailure, match=f"partition old-0 back, {why}"):
            assign(NAME, left)


def test_an_earlier_owner_that_left_the_topic_is_given_it_back_said_so():
    """``performReassignments`` moves a partition back to its earlier owner without asking
    whether that member still subscribes to its topic (here d, the earlier of two claimants that
    both left t1): a plan no member could hold, said so."""
    group = Group({"t0": 1, "t1": 3}, [
        Member("b", ["t1"], [], 2), Member("a", ["t0", "t1"], [], 0),
        Member("e", ["t0"], [TP("t1", 0), TP("t0", 0)], 3), Member("c", ["t0"], [], 0),
        Member("d", ["t0"], [TP("t1", 0), TP("t1", 2)], 1)])
    assert TP("t1", 0) in assign_sticky(group)["d"]
    with pytest.raises(LibrdkafkaAssignorFailure, match="member 'd' partition t1-0 of a topic it does not subscribe"):
        assign(NAME, group)


def test_two_claims_in_one_generation_are_nobodys():
    """``prepopulateCurrentAssignments``: a partition two members claim in the same generation
    is dealt again, as if unowned."""
    group = Group({"t": 2}, [Member("a", ["t"], [TP("t", 0), TP("t", 1)], 3), Member("b", ["t"], [TP("t", 0)], 3)])
    assert assign_sticky(group) == {"a": [TP("t", 1)], "b": [TP("t", 0)]}


@st.composite
def _groups(draw: st.DrawFn) -> Group:
    topics = {f"t{i}": draw(st.integers(1, 6)) for i in range(draw(st.integers(1, 3)))}
    names = draw(st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), min_size=1, max_size=5, unique=True))
    every = [TP(t, p) for t, n in topics.items() for p in range(n)]
    members = []
    for name in names:
        subscribed = draw(st.lists(st.sampled_from(list(topics)), min_size=1, unique=True))
        owned = draw(st.lists(st.sampled_from(every), max_size=4, unique=True))
        members.append(Member(name, subscribed, owned, draw(st.integers(-1, 3))))
    return Group(topics, members)


@examples(150, suppress_health_check=[HealthCheck.too_slow])
@given(group=_groups())
def test_every_plan_is_valid_and_each_partition_dealt(group):
    """Before the cooperative protocol withholds anything, every partition a member subscribes
    to is dealt; the plan sent is valid for the oracle (each partition once, to a member that
    subscribes to its topic), or said to be none librdkafka could send."""
    try:
        plan = assign(NAME, group)
    except LibrdkafkaAssignorFailure:
        return  # (where librdkafka's leader stops: said so)
    dealt = {tp for tps in assign_sticky(group).values() for tp in tps}
    subscribed = {t for m in group.members for t in m.topics}
    assert dealt == {TP(t, p) for t, n in group.topics.items() if t in subscribed for p in range(n)}
    report = validate.report(group, plan)
    assert report["valid"], report["errors"]


@examples(100)
@given(topics=st.dictionaries(st.sampled_from(["x", "y", "z"]), st.integers(1, 9), min_size=1),
       members=st.integers(1, 6))
def test_alike_members_without_claims_are_balanced(topics, members):
    group = Group(topics, [Member(f"m{i}", list(topics)) for i in range(members)])
    sizes = [len(tps) for tps in assign_sticky(group).values()]
    assert max(sizes) - min(sizes) <= 1


def test_racks_decide_where_a_leavers_partitions_go():
    """Partitions 0 and 2 on rack-b, 1 and 3 on rack-a; a rack-a member leaves: librdkafka deals
    by rack (``rd_kafka_rack_info_new``, then ``maybeAssign`` on the member's rack first), each
    rack's partitions to its member, where without racks the leaver's go by load alone (as on
    two brokers, one per rack, in `tests/integration/test_snapshot.py`)."""
    racks = {"t": [["rack-b"], ["rack-a"], ["rack-b"], ["rack-a"]]}
    held = {"m0": ([1, 3], "rack-a"), "m1": ([2], "rack-b"), "m2": ([0], "rack-a")}

    def after_leave(partition_racks: dict | None) -> dict[str, list[int]]:
        group = Group({"t": 4}, [Member(m, ["t"], [TP("t", p) for p in ps], 5, rack) for m, (ps, rack) in held.items()],
                      partition_racks)
        run = whatif.run(group, [whatif.parse_event("member_leave:m0")], [NAME], include_plans=True)
        final = run["strategies"][NAME]["steps"][-1]["assignment"]
        return {m: sorted(p for _t, p in tps) for m, tps in final.items()}

    assert after_leave(racks) == {"m1": [0, 2], "m2": [1, 3]}
    assert after_leave(None) == {"m1": [2, 3], "m2": [0, 1]}


@st.composite
def _racked_groups(draw: st.DrawFn) -> Group:
    group = draw(_groups())
    racks = ["r0", "r1", ""]
    members = [Member(m.id, m.topics, m.owned, m.generation, draw(st.sampled_from([None, *racks])))
               for m in group.members]
    partition_racks = None if draw(st.booleans()) else {
        t: [draw(st.lists(st.sampled_from(racks[:2]), max_size=2, unique=True)) for _ in range(n)]
        for t, n in group.topics.items()}
    return Group(group.topics, members, partition_racks)


@examples(300, suppress_health_check=[HealthCheck.too_slow])
@given(group=_racked_groups())
def test_the_plan_is_the_literal_ones(group):
    """The strategy reads librdkafka's lists of potential members and partitions from each
    topic's subscribers and keeps its members sorted as loads change; the literal transcription
    (`tests/consumer/librdkafka_plain.py`, list for list) plans the same, list order included, and
    fails where it fails."""
    from tests.consumer import librdkafka_plain

    try:
        expected = librdkafka_plain.assign_sticky(group)
    except LibrdkafkaAssignorFailure as failure:
        with pytest.raises(LibrdkafkaAssignorFailure, match=re.escape(str(failure))):
            assign_sticky(group)
        return
    assert assign_sticky(group) == expected
