"""The oracle's two ways of checking an assignment agree: the set-and-array check that confirms a
plan with nothing wrong, and the plain check that names each problem partition by partition."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignor import Group, Member, Plan, TopicPartition, validate
from assignor.group_spec import of_objects
from assignor.json_format import group_to_json, plan_to_json, unpack_group, unpack_plan
from assignor.solver import dense
from assignor.strategies import assign, strategy_named
from tests.budget import examples

TOPICS = ["a", "b", "c"]


@st.composite
def cases(draw):
    counts = {t: draw(st.integers(0, 4)) for t in TOPICS if draw(st.booleans())}
    members = [Member(f"m{i}", draw(st.lists(st.sampled_from([*TOPICS, "x"]), max_size=3)))
               for i in range(draw(st.integers(1, 4)))]
    group = Group(topics=counts, members=members)
    plan = assign(draw(st.sampled_from(["sticky", "range", "roundrobin"])), group)
    assignment = {m: list(tps) for m, tps in plan.assignment.items()}
    # Break it, or not: a partition moved, doubled, dropped, made up, or of an odd type.
    for _ in range(draw(st.integers(0, 2))):
        member = draw(st.sampled_from(sorted(assignment)))
        entry = draw(st.one_of(
            st.builds(TopicPartition, st.sampled_from([*TOPICS, "x"]), st.integers(-1, 5)),
            st.tuples(st.sampled_from(TOPICS), st.integers(0, 3)),
            st.builds(TopicPartition, st.sampled_from(TOPICS), st.sampled_from([True, 1.0, 2**70]))))
        if draw(st.booleans()) and assignment[member]:
            assignment[member].pop(draw(st.integers(0, len(assignment[member]) - 1)))
        else:
            assignment[member].append(entry)
    if draw(st.booleans()):
        assignment["stranger"] = []
    return group, Plan(plan.strategy, assignment)


@examples(400)
@given(cases())
def test_the_fast_check_and_the_plain_check_agree(case):
    group, plan = case
    spec = of_objects(group)
    subscribed = validate._subscriptions(spec)
    errors: list[str] = []
    seen = validate._assignment_errors(spec, plan, subscribed, errors)
    fast = validate._unassigned_if_valid(spec, plan, subscribed)
    if errors:
        assert fast is None
        return
    must = validate._partitions_to_assign(spec, subscribed)
    if fast is not None:  # (None on a clean plan only where the plain check finds nothing either)
        assert fast == (len(must), len(seen), must - seen)
    report = validate.report(group, plan)
    assert report["partitions"] == len(must) and report["assigned"] == len(seen)


@st.composite
def claimed_groups(draw):
    """Groups whose members claim partitions (stale, foreign, conflicting, repeated) at
    generations that may tie, as a leader decodes them."""
    counts = {t: draw(st.integers(0, 4)) for t in TOPICS if draw(st.booleans())}
    claim = st.builds(TopicPartition, st.sampled_from([*TOPICS, "x"]), st.integers(-1, 5))
    members = [Member(f"m{i}", draw(st.lists(st.sampled_from([*TOPICS, "x"]), max_size=3, unique=True)),
                      owned=draw(st.lists(claim, max_size=5)), generation=draw(st.integers(-1, 2)),
                      rack=draw(st.sampled_from([None, "r0", "r1"])))
               for i in range(draw(st.integers(0, 5)))]
    return Group(topics=counts, members=members)


@examples(300)
@given(claimed_groups())
def test_the_objects_and_the_columns_are_one_group_spec(group):
    """`GroupSpec` (KIP-848's read-only view of a group) says the same of a group whether it
    reads the objects (`of_objects`) or the columns a leader plans on (`Layout.spec`)."""
    objects, columns = of_objects(group), dense.build(group).spec()
    assert sorted(objects.member_ids()) == sorted(columns.member_ids())
    assert objects.topic_names() == columns.topic_names() == set(group.topics)
    assert objects.subscription_type() == columns.subscription_type()
    for member in group.members:
        assert objects.member_subscription(member.id) == columns.member_subscription(member.id)
        assert objects.member_rack(member.id) == columns.member_rack(member.id) == member.rack
    for topic in [*TOPICS, "x"]:
        assert objects.partition_count(topic) == columns.partition_count(topic) == group.topics.get(topic, 0)


@examples(300)
@given(cases())
def test_the_oracle_reads_objects_and_columns_alike(case):
    """The oracle's report of a plan, broken or not, is the same through either `GroupSpec`:
    one code path checks a group however it is held."""
    group, plan = case
    assert validate.report(group, plan) == validate.report(group, plan, spec=dense.build(group).spec())


@examples(500)
@given(claimed_groups(), st.sampled_from(["sticky", "cooperative-sticky", "range", "roundrobin"]))
def test_the_report_of_a_dense_plan_is_the_oracles(group, strategy):
    """`report_of_layout` (a leader's plan measured on its arrays) says what `report` says
    wherever it answers; where it cannot be sure it answers None."""
    planned = strategy_named(strategy).planned(group)
    layout, owner = planned.layout, planned.owner
    fast = validate.report_of_layout(group, layout, owner, strategy)
    plain = validate.report(group, Plan(strategy, layout.assignment(owner)))
    if fast is not None:
        assert fast == plain, (group, strategy)


@examples(200)
@given(claimed_groups(), st.sampled_from(["sticky", "cooperative-sticky", "range", "roundrobin"]))
def test_a_leaders_report_is_the_oracles(group, protocol_name):
    """A leader's sync measures its plan from its arrays (`SyncResult.report`): the oracle's
    report of the group as the leader decoded it."""
    from assignor import protocol
    from assignor.leader import sync

    metadata = {}
    for m in group.members:
        owned = [tp for tp in m.owned if tp.partition >= 0]
        generation = max(m.generation, 0)
        if protocol_name == "sticky":
            subscription = protocol.Subscription(m.topics, protocol.encode_sticky_user_data(owned, generation))
        else:
            subscription = protocol.Subscription(m.topics, protocol.encode_cooperative_user_data(generation), owned,
                                                 generation)
        metadata[m.id] = protocol.encode_subscription(subscription)
    result = sync(protocol_name, 3, group.topics, metadata)
    assert result.report() == validate.report(result.group, result.plan)
    # What a leader keeps of the generation, packed, reads back as the documented forms.
    state, plan = result.packed_json()
    assert "packed" in state and "packed" in plan
    assert json.loads(json.dumps(unpack_group(state))) == group_to_json(result.group)
    assert unpack_plan(json.loads(json.dumps(plan))) == plan_to_json(result.plan)


def test_a_generation_with_racks_is_kept_packed_and_read_back_whole():
    from assignor import protocol
    from assignor.leader import sync

    mine = protocol.encode_sticky_user_data([TopicPartition("t0", 1), TopicPartition("gone", 0)], 1)
    metadata = {"a": protocol.encode_subscription(protocol.Subscription(["t0"], mine, rack_id="r1")),
                "b": protocol.encode_subscription(protocol.Subscription(["t0"], rack_id="r2"))}
    result = sync("sticky", 2, {"t0": 2}, metadata, partition_racks={"t0": [["r1"], ["r2"]]})
    state, plan = result.packed_json()
    assert "packed" in state and state["partition_racks"] == {"t0": [["r1"], ["r2"]]}
    assert (unpack_group(state), unpack_plan(plan)) == (group_to_json(result.group), plan_to_json(result.plan))
    assert result.report() == validate.report(result.group, result.plan)


def test_a_java_leaders_generation_is_kept_in_the_documented_forms():
    """A Java-faithful plan keeps Java's order: the group is packed, the plan kept in
    `plan_to_json`'s form (which keeps that order), and unpacking gives both back."""
    from assignor import protocol
    from assignor.leader import sync

    metadata = {m: protocol.encode_subscription(protocol.Subscription(["t0", "t1"])) for m in ("a", "b")}
    result = sync("sticky", 1, {"t0": 3, "t1": 2}, metadata, strategy="java-sticky")
    state, plan = result.packed_json()
    assert plan == plan_to_json(result.plan) and unpack_plan(plan) == plan
    assert unpack_group(state) == group_to_json(result.group)
    assert result.report() == validate.report(result.group, result.plan)


def _columns(group: Group):
    """The members' claims as a leader decodes them: columns over the topics named."""
    import numpy as np

    from assignor.model import Claims

    names = sorted({tp.topic for m in group.members for tp in m.owned})
    rows = [(i, names.index(tp.topic), tp.partition) for i, m in enumerate(group.members) for tp in m.owned]
    member, topic, partition = (np.array(c, dtype=np.int64) for c in zip(*rows)) if rows else ([],) * 3
    return Claims(np.asarray(member, dtype=np.int64), np.asarray(topic, dtype=np.int64),
                  np.asarray(partition, dtype=np.int64), names)


TP = TopicPartition
ORDINARY = {
    "one topic, fresh": Group({"t": 5}, [Member("a", ["t"]), Member("b", ["t"])]),
    "one topic, one member owning": Group({"t": 3}, [Member("a", ["t"], [TP("t", 0), TP("t", 1)], 1)]),
    "a member joins owners of the first topic": Group({"a": 4, "b": 2}, [
        Member("m0", ["a", "b"], [TP("a", 0), TP("a", 1), TP("a", 2), TP("b", 0)], 3),
        Member("m1", ["a", "b"], [TP("a", 3), TP("b", 1)], 3), Member("m2", ["a", "b"])]),
    "a claim twice in one member": Group({"t": 4}, [Member("a", ["t"], [TP("t", 0), TP("t", 0), TP("t", 1)], 2),
                                                     Member("b", ["t"], [TP("t", 2), TP("t", 3)], 2)]),
    "partition 0 of two topics in one member": Group({"a": 2, "b": 2}, [
        Member("m", ["a", "b"], [TP("a", 0), TP("b", 0)], 1), Member("n", ["a", "b"], [TP("a", 1), TP("b", 1)], 1)]),
    "loads 1 and 4, balanced by subscriptions": Group({"x": 1, "y": 4}, [
        Member("a", ["x"], [TP("x", 0)], 1), Member("b", ["y"], [TP("y", 0), TP("y", 1)], 1),
        Member("c", ["y"], [TP("y", 2), TP("y", 3)], 1)]),
}


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
@pytest.mark.parametrize("name", sorted(ORDINARY))
def test_the_fast_report_answers_for_ordinary_plans(name, strategy):
    """The leader's fast report must answer (not fall back) for plain groups without racks, and
    say what the oracle says, from the objects' claims and from the claims as columns: a fast
    path that quietly gives up is a slow path, one that answers wrongly a wrong oracle."""
    group = ORDINARY[name]
    planned = strategy_named(strategy).planned(group)
    layout, owner = planned.layout, planned.owner
    plain = validate.report(group, Plan(strategy, layout.assignment(owner)))
    assert validate.report_of_layout(group, layout, owner, strategy) == plain
    assert validate.report_of_layout(group, layout, owner, strategy, _columns(group)) == plain
