"""The strategies' vectorised claim resolution equals the reference rules (assignor.solver.claims)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from assignor import Group, Member, TopicPartition
from assignor.ordering import java_order
from assignor.solver import claims, dense

TOPICS = ["a", "b", "c"]
CLAIM = st.one_of(
    st.builds(TopicPartition, st.sampled_from(TOPICS + ["x"]), st.integers(-2, 5)),
    st.tuples(st.sampled_from(TOPICS), st.integers(-1, 4)),
    st.lists(st.sampled_from(TOPICS), min_size=1, max_size=3),
    st.none(),
    st.tuples(st.sampled_from(TOPICS), st.booleans()),
    st.tuples(st.sampled_from(TOPICS), st.floats(0, 3)),
)


@st.composite
def groups(draw):
    counts = {t: draw(st.integers(0, 4)) for t in TOPICS if draw(st.booleans())}
    members = [
        Member(f"m{i}", draw(st.lists(st.sampled_from(TOPICS), max_size=3)),
               owned=draw(st.lists(CLAIM, max_size=6)), generation=draw(st.integers(-1, 2)))
        for i in range(draw(st.integers(0, 5)))
    ]
    return Group(topics=counts, members=members)


@settings(max_examples=500, deadline=None)
@given(groups())
def test_vectorised_resolution_equals_reference(group):
    layout = dense.build(group)
    topic, partition = layout.topic_of_flat(), layout.partition_of_flat()
    fast = {
        TopicPartition(layout.topics[topic[f]], int(partition[f])): layout.members[owner].id
        for f, owner in enumerate(layout.prev_owner.tolist()) if owner >= 0
    }
    assert fast == claims.resolve(group)


def test_bool_partition_mixed_with_real_claims_is_not_partition_zero():
    """Regression: with one well-formed claim beside it, ("c", False) went through numpy, which
    read False as 0, so a hostile bool claimed partition c-0. The reference rule rejects bools."""
    group = Group(topics={"c": 1}, members=[
        Member("m0", ["c"], owned=[TopicPartition("a", 0), ("c", False)], generation=0)])
    assert dense.build(group).prev_owner.tolist() == [-1]
    assert claims.resolve(group) == {}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.text(alphabet="ab\u00e9\U0001f600-", min_size=1, max_size=4), min_size=64, max_size=90,
                         unique=True), min_size=1, max_size=8))
def test_member_order_kept_between_plans_is_java_order(rosters):
    """Member ids ranked once and kept (ids come and go) sort exactly as Java sorts each
    roster afresh."""
    memo = dense.PlanMemo()
    for ids in rosters:
        assert dense._member_order(ids, memo) == java_order(ids)
