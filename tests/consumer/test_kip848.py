"""The broker's assignors (KIP-848) against Kafka's recordings (tests/golden/kip848/): every
member's partitions, in Kafka's iteration order, on every recorded call; plus the rules the
recordings' README states, checked on groups of our own."""

from __future__ import annotations

from dataclasses import replace

import pytest

from assignor import Group, Member, TopicPartition, assign, assign_columns
from assignor.errors import InvalidGroupError, JavaAssignorFailure
from assignor.json_format import group_from_json, group_to_json
from assignor.strategies.kip848 import RANGE_NAME, UNIFORM_NAME, target_assignment
from assignor.strategies.kip848.coordinator import group_spec
from assignor.topic_ids import derived_topic_id, parse_topic_id
from assignor.validate import report
from tests.golden import kip848_calls, kip848_group

CALLS = kip848_calls()
NAMES = {"uniform": UNIFORM_NAME, "range": RANGE_NAME}


def _replay(call: dict) -> dict[str, dict[str, list[int]]]:
    given = call["input"]
    group = kip848_group(call)
    unit_test = given.get("memberMap") == "treemap"  # Kafka's unit tests: a TreeMap of members
    instance_ids = {m["id"]: m.get("instanceId") for m in given["members"]}
    return target_assignment(NAMES[given["assignor"]], group, instance_ids=instance_ids,
                             member_order=sorted(m["id"] for m in given["members"]) if unit_test else None,
                             linked=given.get("assignmentMap") == "test-ordered")


def test_every_recording_is_here():
    assert len(CALLS) == 416


@pytest.mark.parametrize(("name", "call"), [c for c in CALLS if "error" not in c[1]["output"]
                                            and not any("rawTopicIds" in m for m in c[1]["input"]["members"])],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_recorded_plans_exactly(name, call):
    """Member by member, topic by topic, partition by partition, in Kafka's order."""
    expected = call["output"]
    got = _replay(call)
    assert list(got) == expected["memberOrder"]
    for member in expected["memberOrder"]:
        assert list(got[member].items()) == list(expected["assignment"][member].items()), member
    given = {m["id"]: m["assigned"] for m in call["input"]["members"]}
    changed = [m for m in expected["memberOrder"] if _content(got[m]) != _content(given[m])]
    assert sorted(changed) == sorted(expected["changed"])
    if "memberMap" not in call["input"]:
        assert group_spec(kip848_group(call)).homogeneous == (expected["subscriptionType"] == "HOMOGENEOUS")


def _content(assignment: dict[str, list[int]]) -> dict[str, set[int]]:
    return {t: set(ps) for t, ps in assignment.items() if ps}


@pytest.mark.parametrize(("name", "call"), [c for c in CALLS if "memberMap" not in c[1]["input"]],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_public_strategy_plans_validate(name, call):
    """Through `assign`, every recorded plan is a valid plan for the oracle, equal to the replay."""
    strategy = NAMES[call["input"]["assignor"]]
    group = kip848_group(call)
    plan = assign(strategy, group)
    assert report(group, plan)["valid"]
    expected = call["output"]["assignment"]
    assert {m: [(tp.topic, tp.partition) for tp in tps] for m, tps in plan.assignment.items()} == {
        m: [(t, p) for t, ps in expected[m].items() for p in ps] for m in expected}


def test_unknown_raw_topic_id_fails_as_kafka_does():
    """Kafka's ``testOneMemberSubscribedToNonexistentTopic``: a subscribed id the metadata lacks."""
    from assignor.strategies.kip848 import uniform
    call = next(c for _, c in CALLS if "error" in c["output"])
    spec = group_spec(kip848_group(call), member_order=["A"])
    spec.subscriptions["A"] = [parse_topic_id(t) for t in call["input"]["members"][0]["rawTopicIds"]]
    with pytest.raises(JavaAssignorFailure) as failure:
        uniform.assign(spec)
    assert str(failure.value) == call["output"]["error"]


def test_topic_ids_are_derived_as_recorded():
    for _, call in CALLS:
        if "memberMap" in call["input"]:
            continue
        for name, text in call["input"]["topicIds"].items():
            assert str(derived_topic_id(name)) == text


def test_topic_ids_must_be_uuids():
    for bad in ("short", "NHvsffp9Ed3fxWJQh+gJsQ", 7, "NHvsffp9Ed3fxWJQh-gJs="):
        with pytest.raises(InvalidGroupError, match="topic_ids"):
            Group({"t": 1}, [], topic_ids={"t": bad})


def test_two_topics_sharing_an_id_are_refused_naming_both():
    """Given twice, or given as another topic's derived id: the broker's assignors key everything
    by id, and planned a whole topic away (or raised IndexError) before this was refused."""
    same = "AAAAAAAAAAAAAAAAAAAAAA"
    for topics, ids in (({"x": 3, "y": 3}, {"x": same, "y": same}),
                        ({"x": 3, "y": 3}, {"x": str(derived_topic_id("y"))}),
                        ({"x": 3}, {"x": same, "elsewhere": same})):
        with pytest.raises(InvalidGroupError, match=r"topics '\w+' and '\w+' share the topic id"):
            Group(topics, [Member("a", list(topics))], topic_ids=ids)
    with pytest.raises(InvalidGroupError, match="'x' and 'y' share"):
        group_from_json({"topics": {"x": 1, "y": 1}, "members": [], "topic_ids": {"x": same, "y": same}})


def test_topic_ids_decide_ties():
    """The same group under other topic ids: the heterogeneous builder sorts equal topics by id."""
    members = [Member("a", ["x", "y"]), Member("b", ["x"]), Member("c", ["y"])]
    plans = set()
    for ids in ({"x": "AAAAAAAAAAAAAAAAAAAAAA", "y": "AAAAAAAAAAAAAAAAAAAAAQ"},
                {"x": "AAAAAAAAAAAAAAAAAAAAAQ", "y": "AAAAAAAAAAAAAAAAAAAAAA"}):
        plan = assign(UNIFORM_NAME, Group({"x": 3, "y": 3}, members, topic_ids=ids))
        plans.add(tuple((m, tuple(tps)) for m, tps in sorted(plan.assignment.items())))
    assert len(plans) == 2


def test_hostile_claims_are_dropped_not_doubled():
    """A partition two members claim, one past the topic's end, one of an unknown topic: the
    coordinator never holds such targets; the later claimant's duplicate is left out."""
    owned = [TopicPartition("t", 0), TopicPartition("t", 9), TopicPartition("gone", 0)]
    group = Group({"t": 4}, [Member("a", ["t"], owned), Member("b", ["t"], [TopicPartition("t", 0)])])
    for strategy in (UNIFORM_NAME, RANGE_NAME):
        plan = assign(strategy, group)
        assert report(group, plan)["valid"], strategy
        assert sorted(tp.partition for tps in plan.assignment.values() for tp in tps) == [0, 1, 2, 3]


def test_subscription_type_counts_topics_the_cluster_lacks():
    """HOMOGENEOUS only when every subscribed *name*, existing or not, has every member."""
    members = [Member("a", ["t", "ghost"]), Member("b", ["t"])]
    assert not group_spec(Group({"t": 4}, members)).homogeneous
    assert group_spec(Group({"t": 4}, [Member("a", ["t", "ghost"]), Member("b", ["ghost", "t"])])).homogeneous


def test_empty_groups_and_subscriptions():
    assert assign(UNIFORM_NAME, Group({"t": 3})).assignment == {}
    assert assign(RANGE_NAME, Group({"t": 3}, [Member("a")])).assignment == {"a": []}
    assert assign(UNIFORM_NAME, Group({"t": 3}, [Member("a")])).assignment == {"a": []}


def test_hashmap_model_agrees_with_the_java_hashmap_oracle():
    """`JavaHashMap` (puts) iterates as `tests/java_hashmap.py`'s step-by-step model of
    ``java.util.HashMap`` does, through resizes, for member ids of every count up to 200."""
    from assignor.java_hash import JavaHashMap
    from assignor.ordering import string_hash
    from tests.java_hashmap import JavaHashMap as Oracle

    for n in range(0, 200, 7):
        keys = [f"consumer-{i}-{i * 7919 % 1000}" for i in range(n)]
        model: JavaHashMap[str, None] = JavaHashMap(string_hash)
        oracle = Oracle()
        for key in keys:
            model.put(key)
            oracle.put(key)
        assert list(model) == oracle.keys(), n


def test_hashmap_model_iterates_tree_bins_and_early_growth_as_the_jvm_did():
    """Orders OpenJDK 17 printed (``tests/integration/test_java_hash.py`` checks many more on the
    JVM itself): ``new HashSet<>(list)`` of thirty partitions 64 apart, one bin of a 64-bucket
    table made a red-black tree, its root moved first and the rest linked after their parents;
    the same 32 apart; and ``computeIfAbsent`` of partitions 16 apart, which grows a table of 16
    at a bin's eighth key, where ``put`` waits for the ninth."""
    from assignor.java_hash import JavaHashMap, integer_hash

    assert list(JavaHashMap.copy_of([5 + 64 * k for k in range(30)], integer_hash))[:6] == [453, 197, 5, 69, 133, 261]
    assert list(JavaHashMap.copy_of([5 + 32 * k for k in range(30)], integer_hash)) == [
        197, 5, 69, 133, 261, 325, 389, 453, 517, 581, 645, 709, 773, 837, 901,
        229, 37, 101, 165, 293, 357, 421, 485, 549, 613, 677, 741, 805, 869, 933]
    for n, jvm in ((7, [96, 80, 64, 48, 32, 16, 0]), (8, [96, 64, 32, 0, 112, 80, 48, 16]),
                   (9, [128, 96, 64, 32, 0, 112, 80, 48, 16])):
        table: JavaHashMap[int, bool] = JavaHashMap(integer_hash)
        for k in range(n):
            table.compute_if_absent(16 * k, lambda: True)
        assert list(table) == jvm, n


STATIC = [(name, call) for name, call in CALLS if any(m.get("instanceId") for m in call["input"]["members"])]


@pytest.mark.parametrize(("name", "call"), STATIC, ids=[name for name, _ in STATIC])
def test_static_members_sort_first_under_range_through_the_public_api(name, call):
    """Kafka's ``RangeAssignorTest.testMixedStaticMembership``, through `assign`, `assign_columns`
    and the group JSON: members carry their ``group_instance_id`` (KIP-345), and the broker's
    range orders static members by it, before the dynamic ones by member id. Without it, the
    members are ordered by member id alone (another plan)."""
    instance = {m["id"]: m.get("instanceId") for m in call["input"]["members"]}
    plain = kip848_group(call)
    group = Group(plain.topics, [replace(m, group_instance_id=instance[m.id]) for m in plain.members],
                  topic_ids=plain.topic_ids)
    expected = {m: sorted((t, p) for t, ps in a.items() for p in ps) for m, a in call["output"]["assignment"].items()}

    def pairs(plan) -> dict[str, list[tuple[str, int]]]:
        return {m: sorted((tp.topic, tp.partition) for tp in tps) for m, tps in plan.assignment.items()}

    assert pairs(assign(RANGE_NAME, group)) == expected
    assert pairs(assign(RANGE_NAME, group_from_json(group_to_json(group)))) == expected
    claims = assign_columns(RANGE_NAME, group)
    ids = [m.id for m in group.members]
    by_columns: dict[str, list[tuple[str, int]]] = {m: [] for m in ids}
    for member, topic, partition in zip(claims.member.tolist(), claims.topic.tolist(), claims.partition.tolist()):
        by_columns[ids[member]].append((claims.names[topic], partition))
    assert {m: sorted(v) for m, v in by_columns.items()} == expected
    assert pairs(assign(RANGE_NAME, plain)) != expected


@pytest.mark.parametrize(("instance_id", "message"), [
    ("", "group_instance_id must be 1-249"), ("has space", "group_instance_id"), ("x" * 250, "group_instance_id"),
    (7, "group_instance_id")])
def test_a_group_instance_id_kafka_refuses_is_refused(instance_id, message):
    with pytest.raises(InvalidGroupError, match=message):
        Member("m", ["t"], group_instance_id=instance_id)


def test_two_members_never_share_a_static_instance():
    with pytest.raises(InvalidGroupError, match="share group_instance_id 'i-1'"):
        Group({"t": 2}, [Member("a", ["t"], group_instance_id="i-1"), Member("b", ["t"], group_instance_id="i-1")])
    with pytest.raises(InvalidGroupError, match=r"members\[1\].*group_instance_id"):
        group_from_json({"topics": {"t": 1}, "members": [{"id": "a"}, {"id": "b", "group_instance_id": "no way"}]})


def test_the_group_json_carries_a_static_members_instance_id_and_nothing_for_a_dynamic_one():
    group = Group({"t": 2}, [Member("a", ["t"], group_instance_id="i-1"), Member("b", ["t"])])
    written = group_to_json(group)
    assert written["members"][0]["group_instance_id"] == "i-1" and "group_instance_id" not in written["members"][1]
    assert group_from_json(written) == group
