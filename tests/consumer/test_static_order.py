"""Static members (KIP-345) under the client's ``range`` and ``roundrobin``: Java deals to them
first, by ``group.instance.id``, then to the dynamic members by member id
(``AbstractPartitionAssignor.MemberInfo.compareTo``), so a static member restarted under a new
member id keeps its place and its partitions. The cases are the scenarios of Kafka's
``RangeAssignorTest`` and ``RoundRobinAssignorTest`` with their expected plans, through every way
a group reaches these strategies: `assign`, `assign_columns`, the group JSON, a leader's sync with
the JoinGroup response's instance ids, and a what-if."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignor import Group, Member, assign, assign_columns, whatif
from assignor.errors import AssignorError
from assignor.json_format import group_from_json, group_to_json
from assignor.leader import sync
from assignor.ordering import java_order, static_first_order
from assignor.protocol import Subscription, decode_assignment, encode_subscription
from tests.budget import examples
from tests.conftest import check

BOTH = ("topic1", "topic2")

Pairs = dict[str, list[tuple[str, int]]]


def group_of(counts: tuple[int, int], members: list[tuple[str, str | None]]) -> Group:
    return Group(dict(zip(BOTH, counts)), [Member(m, BOTH, group_instance_id=i) for m, i in members])


def pairs(plan) -> Pairs:
    return {m: sorted((tp.topic, tp.partition) for tp in tps) for m, tps in plan.assignment.items()}


def by_columns(strategy: str, group: Group) -> Pairs:
    claims = assign_columns(strategy, group)
    ids = [m.id for m in group.members]
    found: Pairs = {m: [] for m in ids}
    for member, topic, partition in zip(claims.member.tolist(), claims.topic.tolist(), claims.partition.tolist()):
        found[ids[member]].append((claims.names[topic], partition))
    return {m: sorted(v) for m, v in found.items()}


def by_leader(strategy: str, group: Group) -> Pairs:
    metadata = {m.id: encode_subscription(Subscription(list(m.topics))) for m in group.members}
    instances = {m.id: m.group_instance_id for m in group.members if m.group_instance_id is not None}
    synced = sync(strategy, 3, group.topics, metadata, instance_ids=instances)
    return {m: sorted(tuple(tp) for tp in decode_assignment(data).partitions)
            for m, data in synced.assignments.items()}


def t(*names: str) -> list[tuple[str, int]]:
    """t("1-0", "2-1") -> [("topic1", 0), ("topic2", 1)]."""
    return sorted((f"topic{name.split('-')[0]}", int(name.split("-")[1])) for name in names)


STATIC3 = [("consumer1", "instance1"), ("consumer2", "instance2"), ("consumer3", "instance3")]

#: (strategy, partitions of topic1 and topic2, members (id, instance id), Java's plan)
CASES = {
    # The member ids sort one way, the instance ids the other: the instance ids decide.
    "range-two-static": ("range", (3, 3), [("consumer-b", "instance1"), ("consumer-a", "instance2")],
                         {"consumer-b": t("1-0", "1-1", "2-0", "2-1"), "consumer-a": t("1-2", "2-2")}),
    # A static member comes before any dynamic one, whatever their member ids.
    "range-static-and-dynamic": ("range", (3, 3), [("consumer-b", "instance1"), ("consumer-a", None)],
                                 {"consumer-b": t("1-0", "1-1", "2-0", "2-1"), "consumer-a": t("1-2", "2-2")}),
    "range-three-static-one-dynamic": ("range", (5, 4), [*STATIC3, ("consumer4", None)], {
        "consumer1": t("1-0", "1-1", "2-0"), "consumer2": t("1-2", "2-1"), "consumer3": t("1-3", "2-2"),
        "consumer4": t("1-4", "2-3")}),
    "roundrobin-two-static": ("roundrobin", (3, 3), [("consumer-b", "instance1"), ("consumer-a", "instance2")],
                              {"consumer-b": t("1-0", "1-2", "2-1"), "consumer-a": t("1-1", "2-0", "2-2")}),
    "roundrobin-static-and-dynamic": ("roundrobin", (3, 3), [("consumer-b", "instance1"), ("consumer-a", None)],
                                      {"consumer-b": t("1-0", "1-2", "2-1"), "consumer-a": t("1-1", "2-0", "2-2")}),
    "roundrobin-three-static-one-dynamic": ("roundrobin", (3, 3), [*STATIC3, ("consumer4", None)], {
        "consumer1": t("1-0", "2-1"), "consumer2": t("1-1", "2-2"), "consumer3": t("1-2"), "consumer4": t("2-0")}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_static_members_are_dealt_to_first_as_java_deals(case):
    strategy, counts, members, expected = CASES[case]
    group = group_of(counts, members)
    check(group, assign(strategy, group))
    assert pairs(assign(strategy, group)) == expected
    assert pairs(assign(strategy, group_from_json(group_to_json(group)))) == expected
    assert by_columns(strategy, group) == expected
    assert by_leader(strategy, group) == expected
    # Where the instance ids order members otherwise than their ids, dropping them gives
    # another plan: the rule is what made these.
    ids = [m for m, _ in members]
    if static_first_order(ids, [i for _, i in members]) != java_order(ids):
        dynamic = Group(group.topics, [replace(m, group_instance_id=None) for m in group.members])
        assert pairs(assign(strategy, dynamic)) != expected


@pytest.mark.parametrize("strategy", ["range", "roundrobin"])
def test_a_dynamic_member_replaced_moves_no_static_members_partitions(strategy):
    """Java's ``...AssignmentPersistent``: the dynamic member leaves, another joins under a new
    id; every static member keeps exactly what it had."""
    counts = (5, 4) if strategy == "range" else (3, 3)
    before = pairs(assign(strategy, group_of(counts, [*STATIC3, ("consumer4", None)])))
    after = pairs(assign(strategy, group_of(counts, [*STATIC3, ("consumer5", None)])))
    assert after == {**{m: v for m, v in before.items() if m != "consumer4"}, "consumer5": before["consumer4"]}


@pytest.mark.parametrize("strategy", ["range", "roundrobin"])
def test_static_members_keep_their_partitions_under_new_member_ids(strategy):
    """Java's ``...AssignmentPersistentAfterMemberIdChanges``: the instances come back under
    other member ids (here in the opposite id order); each instance holds what it held."""
    def by_instance(members):
        plan = pairs(assign(strategy, group_of((5, 5), members)))
        return {i: plan[m] for m, i in members}

    first = by_instance(STATIC3)
    assert first == ({"instance1": t("1-0", "1-1", "2-0", "2-1"), "instance2": t("1-2", "1-3", "2-2", "2-3"),
                      "instance3": t("1-4", "2-4")} if strategy == "range" else
                     {"instance1": t("1-0", "1-3", "2-1", "2-4"), "instance2": t("1-1", "1-4", "2-2"),
                      "instance3": t("1-2", "2-0", "2-3")})
    assert by_instance([("consumer1", "instance1"), ("consumer5", "instance2"), ("consumer4", "instance3")]) == first
    assert by_instance([("z", "instance1"), ("y", "instance2"), ("x", "instance3")]) == first


@st.composite
def static_groups(draw) -> Group:
    topics = {f"t{i}": draw(st.integers(0, 7)) for i in range(draw(st.integers(1, 4)))}
    ids = draw(st.lists(st.text("abcxyz", min_size=1, max_size=3), min_size=1, max_size=8, unique=True))
    instances = draw(st.lists(st.sampled_from("pqrstuvw"), min_size=len(ids), max_size=len(ids), unique=True))
    members = [Member(m, draw(st.lists(st.sampled_from(sorted(topics)), max_size=4, unique=True)),
                      group_instance_id=i if draw(st.booleans()) else None)
               for m, i in zip(ids, instances)]
    return Group(topics, members)


@pytest.mark.parametrize("strategy", ["range", "roundrobin"])
@given(group=static_groups())
@examples(200)
def test_a_static_group_plans_as_the_dynamic_group_whose_ids_sort_in_javas_member_order(strategy, group):
    """The reference: rename every member so that plain member-id order is Java's
    ``MemberInfo`` order (static first by instance id) and drop the instance ids; the plans are
    the same, member for member. Through the dense path, the columns and the leader alike."""
    order = static_first_order([m.id for m in group.members], [m.group_instance_id for m in group.members])
    name = {group.members[i].id: f"{place:03d}" for place, i in enumerate(order)}
    renamed = Group(group.topics, [Member(name[m.id], m.topics) for m in group.members])
    expected = {m.id: pairs(assign(strategy, renamed))[name[m.id]] for m in group.members}
    assert pairs(assign(strategy, group)) == expected
    assert by_columns(strategy, group) == expected
    assert by_leader(strategy, group) == expected


def test_a_classic_what_if_deals_to_static_members_first():
    """A dynamic member joining a static range group: the what-if's plan is `assign`'s, and the
    static members, dealt to first, keep their partitions."""
    group = group_of((4, 4), [("b", "instance1"), ("c", "instance2")])
    result = whatif.run(group, [whatif.parse_event("member_join:a:topic1,topic2")], strategies=["range"],
                        include_plans=True)
    joined = Group(group.topics, [*group.members, Member("a", BOTH)])
    step = result["strategies"]["range"]["steps"][-1]
    assert {m: sorted(map(tuple, v)) for m, v in step["assignment"].items()} == pairs(assign("range", joined))
    assert pairs(assign("range", joined))["a"] == t("1-3", "2-3")


@pytest.mark.parametrize(("instances", "message"), [
    ({"stranger": "i"}, "'stranger' is not a member of this JoinGroup"),
    ({"a": "i", "b": "i"}, "share group_instance_id 'i'"),
    ({"a": "no spaces"}, "group_instance_id must be 1-249"),
])
def test_a_leader_refuses_instance_ids_kafka_could_not_have_sent(instances, message):
    metadata = {m: encode_subscription(Subscription(["t"])) for m in ("a", "b")}
    with pytest.raises(AssignorError, match=message):
        sync("range", 1, {"t": 2}, metadata, instance_ids=instances)
