"""The strategies' vectorised claim resolution equals the reference rules (assignor.solver.claims)."""

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from assignor import Group, Member, TopicPartition
from assignor.ordering import java_order
from assignor.solver import claims, dense
from tests.budget import examples

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


@examples(500)
@given(groups())
def test_vectorised_resolution_equals_reference(group):
    layout = dense.build(group)
    topic, partition = layout.topic_of_flat(), layout.partition_of_flat()
    fast = {
        TopicPartition(layout.topics[topic[f]], int(partition[f])): layout.members[owner].id
        for f, owner in enumerate(layout.prev_owner.tolist()) if owner >= 0
    }
    assert fast == claims.resolve(group)


@examples(500)
@given(groups())
@example(Group({"a": 2}, [Member("m0", ["a"], [TopicPartition("a", 1)], 2),
                          Member("m1", ["a"], [TopicPartition("a", 1), ("a", 1)], 1),
                          Member("m2", ["a"], [TopicPartition("a", 1)], 0)]))
@example(Group({"a": 2}, [Member("m0", ["a"], [TopicPartition("a", 1)], 2),
                          Member("m1", ["a"], [TopicPartition("a", 1)], 1),
                          Member("m2", ["a"], [TopicPartition("a", 1)], 1)]))
@example(Group({"a": 1}, [Member("m0", ["a"], [TopicPartition("a", 0)], 2),  # top tied: no owner, none earlier
                          Member("m1", ["a"], [TopicPartition("a", 0)], 2),
                          Member("m2", ["a"], [TopicPartition("a", 0)], 1)]))
def test_vectorised_earlier_owners_equal_reference(group):
    """``Layout.earlier`` (KIP-341's most recent earlier owner, computed with the previous
    owners) is `claims.earlier_owners`: the second generation's claimant, when alone there."""
    layout = dense.build(group)
    topic, partition = layout.topic_of_flat(), layout.partition_of_flat()
    earlier = layout.earlier if layout.earlier is not None else np.full(layout.total, -1)
    fast = {
        TopicPartition(layout.topics[topic[f]], int(partition[f])): layout.members[e].id
        for f, e in enumerate(earlier.tolist()) if e >= 0
    }
    assert fast == claims.earlier_owners(group)


def test_bool_partition_mixed_with_real_claims_is_not_partition_zero():
    """Regression: with one well-formed claim beside it, ("c", False) went through numpy, which
    read False as 0, so a hostile bool claimed partition c-0. The reference rule rejects bools."""
    group = Group(topics={"c": 1}, members=[
        Member("m0", ["c"], owned=[TopicPartition("a", 0), ("c", False)], generation=0)])
    assert dense.build(group).prev_owner.tolist() == [-1]
    assert claims.resolve(group) == {}


@examples(60)
@given(st.lists(st.lists(st.text(alphabet="ab\u00e9\U0001f600-", min_size=1, max_size=4), min_size=64, max_size=90,
                         unique=True), min_size=1, max_size=8))
def test_member_order_kept_between_plans_is_java_order(rosters):
    """Member ids ranked once and kept (ids come and go) sort exactly as Java sorts each
    roster afresh."""
    memo = dense.PlanMemo()
    for ids in rosters:
        assert dense._member_order(ids, memo) == java_order(ids)


@examples(300)
@given(st.lists(groups(), min_size=1, max_size=5))
@example([Group({"a": 1, "b": 1}, [Member("m0", ["a"], owned=[TopicPartition("a", 0)])]),
          Group({"a": 1, "b": 1}, [Member("m0", ["b"], owned=[TopicPartition("a", 0)])])])  # other subscriptions
def test_claims_resolved_with_a_kept_memo_are_those_resolved_afresh(plans):
    """A memo kept between plans (what a leader keeps: the subscriptions' indices, keys and
    table) resolves claims as a build without one: each group planned twice in a row (the keys
    found again), then the next (other subscriptions, or other topics: the memo starts again)."""
    memo = dense.PlanMemo()
    for group in [g for g in plans for _ in range(2)]:
        kept, afresh = dense.build(group, memo=memo), dense.build(group)
        assert kept.prev_owner.tolist() == afresh.prev_owner.tolist()
        assert (None if kept.earlier is None else kept.earlier.tolist()) == \
            (None if afresh.earlier is None else afresh.earlier.tolist())


def _key(claim):
    """A claim as a hashable key that tells ("a", False) from ("a", 0) and TopicPartition from tuple."""
    if isinstance(claim, tuple | list):
        return tuple((type(x), x) for x in claim)
    return (type(claim), claim)


@examples(500)
@given(groups())
def test_every_claim_is_kept_or_dropped_with_a_reason(group):
    """`claims.dropped` is the complement of `claims.resolve`: each distinct claim of a member
    either gives it its partition or is dropped, once, for one of the documented reasons."""
    dropped = claims.dropped(group)
    assert all(d.reason in claims.DROP_REASONS for d in dropped)
    dropped_keys = [(d.member, _key(d.claim)) for d in dropped]
    assert len(dropped_keys) == len(set(dropped_keys))
    owner = claims.resolve(group)
    for member in group.members:
        mine = {_key(c): c for c in member.owned}
        for key, claim in mine.items():
            is_kept = claims.is_valid_claim(group, set(member.topics), claim) and \
                owner.get(TopicPartition(claim[0], int(claim[1]))) == member.id
            assert is_kept != ((member.id, key) in set(dropped_keys)), (member.id, claim)


def test_dropped_claims_name_each_reason():
    group = Group(topics={"a": 2, "b": 1}, members=[
        Member("m0", ["a"], owned=[("a", 0), ("a", 1), ("b", 0), ("x", 0), ("a", 9)], generation=3),
        Member("m1", ["a"], owned=[("a", 0)], generation=3),
        Member("m2", ["a"], owned=[("a", 1)], generation=5),
    ])
    reasons = {(d.member, tuple(d.claim)): d.reason for d in claims.dropped(group)}
    assert reasons == {
        ("m0", ("b", 0)): "not_subscribed", ("m0", ("x", 0)): "unknown_topic", ("m0", ("a", 9)): "no_such_partition",
        ("m0", ("a", 0)): "same_generation_conflict", ("m1", ("a", 0)): "same_generation_conflict",
        ("m0", ("a", 1)): "older_generation"}


@examples(300)
@given(st.integers(0, 6).flatmap(lambda known: st.tuples(
    st.just(known),
    st.lists(st.lists(st.sampled_from([f"t{i}" for i in range(known + 2)]), max_size=6).map(tuple),
             max_size=6, unique=True),
    st.lists(st.booleans(), min_size=6, max_size=6))))
def test_topic_indices_are_each_subscriptions_distinct_known_topics(case):
    """`dense._topic_indices` indexes all new subscriptions (distinct, as `build` passes them)
    at once; each answer is the plain definition: the indices of its topics the group has,
    sorted, once each; remembered answers are reused and new ones remembered."""
    known, subscriptions, remembered = case
    index = {f"t{i}": i for i in range(known)}

    def plain(topics):
        return sorted({index[t] for t in topics if t in index})

    memo = {id(s): (s, np.array(plain(s), dtype=np.int64)) for s, keep in zip(subscriptions, remembered) if keep}
    found = dense._topic_indices(subscriptions, index, memo)
    assert [f.tolist() for f in found] == [plain(s) for s in subscriptions]
    assert all(f.dtype == np.int64 for f in found)
    assert all(memo[id(s)][1] is f for s, f in zip(subscriptions, found))  # new answers remembered
