"""The oracle's two ways of checking an assignment agree: the set-and-array check that confirms a
plan with nothing wrong, and the plain check that names each problem partition by partition."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from assignor import Group, Member, Plan, TopicPartition, validate
from assignor.strategies import assign

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


@settings(max_examples=400, deadline=None)
@given(cases())
def test_the_fast_check_and_the_plain_check_agree(case):
    group, plan = case
    subscribed = {m.id: set(m.topics) for m in group.members}
    errors: list[str] = []
    seen = validate._assignment_errors(group, plan, subscribed, errors)
    fast = validate._unassigned_if_valid(group, plan, subscribed)
    if errors:
        assert fast is None
        return
    must = validate._partitions_to_assign(group)
    if fast is not None:  # (None on a clean plan only where the plain check finds nothing either)
        assert fast == (len(must), len(seen), must - seen)
    report = validate.report(group, plan)
    assert report["partitions"] == len(must) and report["assigned"] == len(seen)
