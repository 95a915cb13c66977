"""The columnar paths of the broker's assignors (`uniform_columns`, `range_columns`) against the
plain model they stand in for (`kip848._plan`, itself held to Kafka's recordings): the same
members, topics and partitions in the same order, on every group hypothesis draws, through
rebalance after rebalance."""

from __future__ import annotations

from collections.abc import Callable
from unittest.mock import patch

import numpy as np
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from assignor import Claims, Group, Member, TopicPartition, assign, assign_columns
from assignor.java_hash import spread
from assignor.strategies.kip848 import (
    RANGE_NAME,
    UNIFORM_NAME,
    _plan,
    range_columns,
    uniform_columns,
    uniform_heterogeneous_columns,
)
from assignor.strategies.kip848.coordinator import spread_topic_hashes
from assignor.topic_ids import TopicId
from tests.budget import examples

COUNTS = st.sampled_from([0, 1, 2, 3, 7, 10, 16, 17, 33, 40, 100, 130, 300])


@st.composite
def groups(draw: st.DrawFn, homogeneous: bool = True) -> Group:
    """Members with claims of every shape a coordinator holds: none, some, all; in claim order
    or shuffled; a member's claims spread over topics or in strides of 16 (crowded bins)."""
    topics = {f"t{i}": draw(COUNTS) for i in range(draw(st.integers(1, 6)))}
    names = draw(st.permutations([*topics, "ghost"] if draw(st.booleans()) else list(topics)))  # a name not there
    ids = draw(st.lists(st.text("abcm0123456789-", min_size=1, max_size=6), min_size=1, max_size=12, unique=True))
    every = [TopicPartition(t, p) for t, n in topics.items() for p in range(n)]
    held = draw(st.permutations(every))
    share = draw(st.sampled_from([0.0, 0.3, 0.8, 1.0]))
    owned: dict[str, list[TopicPartition]] = {m: [] for m in ids}
    for i, tp in enumerate(held[:int(len(held) * share)]):
        if draw(st.booleans()) and tp.partition % 16 == 0:
            owned[ids[0]].append(tp)  # strides of 16 into one member: bins of small tables crowd
        else:
            owned[ids[i % len(ids)]].append(tp)
    if draw(st.booleans()):
        owned = {m: sorted(tps) for m, tps in owned.items()}
    subscriptions = {m: list(names) if homogeneous else draw(st.lists(st.sampled_from([*names, "ghost"]),
                                                                       unique=True)) for m in ids}
    return Group(topics, [Member(m, subscriptions[m], owned[m] if homogeneous else ()) for m in ids])


def _events(group: Group, plan: dict[str, list[TopicPartition]], drop: int, joiners: int, step: int = 0) -> Group:
    members = [Member(m.id, m.topics, plan[m.id]) for m in group.members][drop:]
    members += [Member(f"joiner-{step}-{i}", group.members[0].topics) for i in range(joiners)]
    return Group(group.topics, members) if members else group


@examples(300, suppress_health_check=[HealthCheck.too_slow])
@given(groups(), st.integers(0, 2), st.integers(0, 3))
def test_uniform_columns_plan_as_the_model_does(group, drop, joiners):
    """Where the columnar path answers, its plan is the model's, order included; `assign` always
    is. Then the same after members leave and join, claims from the plan before."""
    _held_to_the_model(uniform_columns.assign, uniform_columns.columns, group, drop, joiners)


def _held_to_the_model(path: Callable[[Group], dict[str, list[TopicPartition]] | None],
                       path_columns: Callable[[Group, Claims | None], Claims | None], group: Group, drop: int,
                       joiners: int) -> None:
    for step in range(2):
        expected = _plan(UNIFORM_NAME, group).assignment
        found = path(group)
        assert found is None or found == expected
        assert assign(UNIFORM_NAME, group).assignment == expected
        _columns_held_to(expected, UNIFORM_NAME, path_columns, group)
        group = _events(group, expected, drop, joiners, step)


def _owned_columns(group: Group, shuffle: bool) -> Claims:
    """The members' claims as `Claims`, rows in member order or dealt round the members (a
    member's own rows keep their order either way), names in another order than the group's."""
    rows = [(k, i, tp.topic, tp.partition) for i, m in enumerate(group.members) for k, tp in enumerate(m.owned)]
    if shuffle:  # dealt: every member's first claim, then every member's second, ...
        rows.sort(key=lambda row: (row[0], -row[1]))
    names = sorted({row[2] for row in rows}, reverse=True)
    index = {t: k for k, t in enumerate(names)}
    return Claims(np.array([r[1] for r in rows], dtype=np.int64), np.array([index[r[2]] for r in rows], dtype=np.int64),
                  np.array([r[3] for r in rows], dtype=np.int64), names)


def _as_lists(group: Group, claims: Claims) -> dict[str, list[TopicPartition]]:
    found: dict[str, list[TopicPartition]] = {m.id: [] for m in group.members}
    for m, t, p in zip(claims.member.tolist(), claims.topic.tolist(), claims.partition.tolist()):
        found[group.members[m].id].append(TopicPartition(claims.names[t], p))
    return found


def _columns_held_to(expected: dict[str, list[TopicPartition]], name: str,
                     path_columns: Callable[[Group, Claims | None], Claims | None], group: Group) -> None:
    """The plan as columns is `expected`, whether the claims come from the members or as
    columns (rows of different members interleaved), through the path and `assign_columns`."""
    bare = Group(group.topics, [Member(m.id, m.topics) for m in group.members], topic_ids=group.topic_ids)
    for owned in (None, _owned_columns(group, False), _owned_columns(group, True)):
        target = group if owned is None else bare
        found = path_columns(target, owned)
        assert found is None or _as_lists(group, found) == expected
        assert _as_lists(group, assign_columns(name, target, owned)) == expected


@st.composite
def mixed_groups(draw: st.DrawFn) -> Group:
    """Members subscribed to different topics (some the cluster lacks), holding partitions of
    any topic, subscribed or not."""
    topics = {f"t{i}": draw(COUNTS) for i in range(draw(st.integers(1, 6)))}
    names = [*topics, "ghost"]
    ids = draw(st.lists(st.text("abcm0123456789-", min_size=1, max_size=6), min_size=1, max_size=12, unique=True))
    every = [TopicPartition(t, p) for t, n in topics.items() for p in range(n)]
    held = draw(st.permutations(every))
    owned: dict[str, list[TopicPartition]] = {m: [] for m in ids}
    for tp in held[:int(len(held) * draw(st.sampled_from([0.0, 0.3, 0.8, 1.0])))]:
        owned[ids[draw(st.integers(0, len(ids) - 1))]].append(tp)
    return Group(topics, [Member(m, draw(st.lists(st.sampled_from(names), unique=True)), owned[m]) for m in ids])


@examples(300, suppress_health_check=[HealthCheck.too_slow])
@given(mixed_groups(), st.integers(0, 2), st.integers(0, 3))
def test_uniform_heterogeneous_columns_plan_as_the_model_does(group, drop, joiners):
    """The heterogeneous builder reading the group from columns plans as the model does, order
    included, through members leaving and joining with the plan before as their claims."""
    _held_to_the_model(uniform_heterogeneous_columns.assign, uniform_heterogeneous_columns.columns, group, drop,
                       joiners)


@examples(300, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(groups(), groups(homogeneous=False)))
def test_range_columns_plan_as_the_model_does(group):
    expected = _plan(RANGE_NAME, group).assignment
    found = range_columns.assign(group)
    assert found is None or found == expected
    assert assign(RANGE_NAME, group).assignment == expected
    _columns_held_to(expected, RANGE_NAME, range_columns.columns, group)


@examples(200, suppress_health_check=[HealthCheck.too_slow])
@given(groups(homogeneous=False))
def test_range_heterogeneous_table_and_sort_plan_alike(group):
    """The heterogeneous range rows from a members x topics table and from sorted pairs (which
    one runs depends on the group's density): each plans as the model does."""
    expected = _plan(RANGE_NAME, group).assignment
    for rows in (range_columns._dense_rows, range_columns._sorted_rows):
        with patch.object(range_columns, "_heterogeneous_rows", rows):
            found = range_columns.assign(group)
        assert found is None or found == expected


def test_members_receiving_long_sequences_are_replayed_one_at_a_time():
    """Six members each subscribed to 25 of 30 topics (a heterogeneous group: the builder reads
    it from columns), planned fresh: a member receives partitions in 23 to 25 runs of one topic,
    past the 17 a map's sequence of calls is written in as one number, so its map is replayed on
    the model alone, as the model plans, and no number past int64 is made on the way (no
    RuntimeWarning: pyproject's filters make one from our code an error)."""
    names = [f"t{i:02d}" for i in range(30)]
    group = Group({n: 8 for n in names},
                  [Member(f"m{i}", [n for j, n in enumerate(names) if j % 6 != i]) for i in range(6)])
    found = uniform_heterogeneous_columns.assign(group)
    assert found is not None and found == _plan(UNIFORM_NAME, group).assignment


@st.composite
def round_robin_groups(draw: st.DrawFn, homogeneous: bool = True) -> Group:
    """Groups as an online migration from a classic group hands them over: member i of n holds
    the partitions i, i + n, i + 2n, ... of a topic (a round-robin or cooperative-sticky
    classic assignment), n often a power of two, so that nine or more of a member's share a bin
    of a table of 64 or more: Java makes those bins trees, which iterate in another order
    (`tree_bin`)."""
    count = draw(st.sampled_from([8, 16, 16, 32, 64, 24]))
    per_member = draw(st.sampled_from([20, 25, 30, 40, 70, 100]))
    topics = {"big": count * per_member, **({"small": draw(st.integers(1, 40))} if draw(st.booleans()) else {})}
    order = draw(st.permutations(range(count)))
    members = []
    for rank, i in enumerate(order):
        owned = [TopicPartition("big", p) for p in range(i, topics["big"], count)]
        if draw(st.booleans()):
            owned = draw(st.permutations(owned))
        names = list(topics) if homogeneous or rank % 3 else ["big"]
        members.append(Member(f"m{i:03d}", names, owned))
    return Group(topics, members)


def _either_path(homogeneous: bool, group: Group, drop: int, joiners: int) -> None:
    """`_held_to_the_model` through the homogeneous columnar path, or the heterogeneous one."""
    path = uniform_columns if homogeneous else uniform_heterogeneous_columns
    _held_to_the_model(path.assign, path.columns, group, drop, joiners)


@examples(80, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.booleans().flatmap(lambda same: st.tuples(st.just(same), round_robin_groups(same))), st.integers(0, 2),
       st.integers(0, 3))
def test_columnar_paths_plan_round_robin_claims_as_the_model_does(case, drop, joiners):
    """Claims in strides (`round_robin_groups`) through leaves and joins, subscriptions alike or
    not: the columnar paths give way to the model or plan as it does, order included."""
    _either_path(*case, drop, joiners)


def test_partitions_handed_out_one_by_one_make_trees_too():
    """A fresh heterogeneous group (one member also reads a second topic) gets its partitions one
    at a time from the least loaded member: sixteen members of a topic of 640 each receive i,
    i + 16, ..., which Java's sets of 64 buckets hold in four tree bins of ten (`tree_bin`). The
    heterogeneous columnar path plans it as the model does, partitions in the trees' order."""
    group = Group({"a": 640, "b": 1}, [Member(f"m{i:03d}", ["a", "b"] if i == 0 else ["a"]) for i in range(16)])
    expected = _plan(UNIFORM_NAME, group).assignment
    assert [tp.partition for tp in expected["m005"]][:4] == [205, 13, 77, 141]  # the tree's root first
    found = uniform_heterogeneous_columns.assign(group)
    assert found is None or found == expected
    _columns_held_to(expected, UNIFORM_NAME, uniform_heterogeneous_columns.columns, group)


@st.composite
def wide_groups(draw: st.DrawFn, homogeneous: bool = True) -> Group:
    """Members of 15 to 70 topics each (maps of 32 to 128 buckets), the topic ids often chosen so
    that many share the low four bits of their spread hashes: bins of eight or nine topics, where
    a small map grows early and a large one makes the bin a tree."""
    rng = draw(st.randoms(use_true_random=False))
    names = [f"t{i:02d}" for i in range(draw(st.integers(15, 70)))]
    crowd, low = draw(st.sampled_from([0.0, 0.5, 0.9])), rng.randrange(16)

    used: set[TopicId] = set()

    def topic_id() -> TopicId:
        while True:
            found = TopicId(rng.randrange(-(1 << 63), 1 << 63), rng.randrange(-(1 << 63), 1 << 63))
            if found not in used and found != TopicId(0, 0) and (
                    rng.random() >= crowd or spread(found.java_hash()) & 15 == low):
                used.add(found)
                return found

    topics = {name: rng.choice([1, 2, 3, 5]) for name in names}
    ids = draw(st.lists(st.text("abcm0123456789-", min_size=1, max_size=6), min_size=1, max_size=8, unique=True))
    every = [TopicPartition(t, p) for t, n in topics.items() for p in range(n)]
    owned: dict[str, list[TopicPartition]] = {m: [] for m in ids}
    for tp in rng.sample(every, int(len(every) * draw(st.sampled_from([0.0, 0.5, 1.0])))):
        owned[rng.choice(ids)].append(tp)
    subscriptions = {m: names if homogeneous else rng.sample(names, rng.randrange(15, len(names) + 1)) for m in ids}
    return Group(topics, [Member(m, subscriptions[m], owned[m]) for m in ids],
                 topic_ids={name: str(topic_id()) for name in names})


@examples(300, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
@given(st.booleans().flatmap(lambda same: st.tuples(st.just(same), wide_groups(same))), st.integers(0, 2),
       st.integers(0, 3))
def test_columnar_paths_plan_wide_maps_as_the_model_does(case, drop, joiners):
    """Members holding many topics (more than 24: maps of 64 buckets and up), their ids crowding
    some bins, subscriptions alike or not: the columnar paths give way to the model or plan as
    it does, order included."""
    _either_path(*case, drop, joiners)


def _uniform_group(members: int, topics: int, partitions: int) -> Group:
    names = [f"topic-{t:04d}" for t in range(topics)]
    return Group({n: partitions for n in names}, [Member(f"member-{i:05d}", names) for i in range(members)])


def test_clean_groups_take_the_columnar_paths():
    """A fresh group, the same after one member joins and after one leaves: the columnar paths
    answer (the bench's shapes), and agree with the model."""
    homogeneous = _uniform_group(300, 7, 50)
    mixed = Group(homogeneous.topics, [Member(m.id, [t for i, t in enumerate(m.topics) if i % 4 != n % 4])
                                       for n, m in enumerate(homogeneous.members)])
    for name, columns, group in ((UNIFORM_NAME, uniform_columns.assign, homogeneous),
                                 (UNIFORM_NAME, uniform_heterogeneous_columns.assign, mixed),
                                 (RANGE_NAME, range_columns.assign, homogeneous),
                                 (RANGE_NAME, range_columns.assign, mixed)):
        plan = columns(group)
        assert plan is not None and plan == _plan(name, group).assignment
        for after in (_events(group, plan, 0, 1), _events(group, plan, 1, 0)):
            assert columns(after) is not None and columns(after) == _plan(name, after).assignment


def test_groups_the_columnar_path_leaves_to_the_model():
    """Claims a coordinator could not hold, members listing different topics, a partition in a
    crowded bin: the columnar uniform path declines and the model plans (the same answer as
    ever through `assign`)."""
    topics = {"t": 200, "u": 4}
    declined = [
        Group(topics, [Member("a", ["t"], [TopicPartition("t", 200)]), Member("b", ["t"])]),  # past the count
        Group(topics, [Member("a", ["t"], [TopicPartition("t", 1)]), Member("b", ["t"], [TopicPartition("t", 1)])]),
        Group(topics, [Member("a", ["t"], [("t", 1)]), Member("b", ["t"])]),  # a plain tuple
        Group(topics, [Member("a", ["t", "u"]), Member("b", ["u", "t"])]),  # listed in another order
    ]
    for group in declined:
        assert uniform_columns.assign(group) is None
    assert assign(UNIFORM_NAME, declined[0]).assignment == _plan(UNIFORM_NAME, declined[0]).assignment


def test_topics_the_cluster_lacks_are_left_out():
    """Every member lists a topic the cluster lacks: the coordinator resolves the names it has
    (its TopicIds view), so the group is homogeneous on the rest and the columnar path plans it."""
    group = Group({"t": 200, "u": 4}, [Member("a", ["t", "nope"]), Member("b", ["t", "nope"])])
    found = uniform_columns.assign(group)
    assert found is not None and found == _plan(UNIFORM_NAME, group).assignment
    assert sorted(tp.partition for tps in found.values() for tp in tps) == list(range(200))


def test_sets_that_grow_early_are_replayed_on_the_model():
    """Nine partitions 16 apart in a set of 16 buckets: Java grows the table at the ninth
    (``treeifyBin`` on a small table), so the set iterates in another order than its size
    alone says. Held, given up and received that way, the columnar path asks the model for the
    set's size and plans as the model does."""
    strided = [TopicPartition("t", 16 * i) for i in range(9)]
    others = [TopicPartition("t", p) for p in range(129) if p % 16]
    groups = [
        Group({"t": 200}, [Member("a", ["t"], strided), Member("b", ["t"])]),  # held, then given up
        Group({"t": 129}, [Member("a", ["t"], strided)] + [  # held by a member that keeps them
            Member(f"m{i:02d}", ["t"], others[i::13]) for i in range(13)]),
        Group({"t": 145}, [Member("a", ["t"], [TopicPartition("t", p) for p in range(145) if p % 16]),
                           Member("b", ["t"])]),  # received by a member short of its quota
        # held by a member over its quota of 6 or 7: which it keeps follows the grown order
        Group({"t": 129}, [Member("a", ["t"], strided)] + [Member(f"m{i:02d}", ["t"]) for i in range(19)]),
    ]
    for group in groups:
        found = uniform_columns.assign(group)
        assert found is not None and found == _plan(UNIFORM_NAME, group).assignment
    # the kept set iterates by bin of 32, not of 16
    assert [tp.partition for tp in found_of(groups[1])["a"]] == [0, 32, 64, 96, 128, 16, 48, 80, 112]


def found_of(group: Group) -> dict[str, list[TopicPartition]]:
    found = uniform_columns.assign(group)
    assert found is not None
    return found


@given(st.lists(st.tuples(st.integers(-(2**63), 2**63 - 1), st.integers(-(2**63), 2**63 - 1)), max_size=40))
def test_topic_hashes_on_arrays_are_uuid_hash_codes(halves):
    """`spread_topic_hashes` on arrays: each id's ``Uuid.hashCode`` (`TopicId.java_hash`), spread."""
    ids = [TopicId(msb, lsb) for msb, lsb in halves]
    assert spread_topic_hashes(ids).tolist() == [spread(t.java_hash()) for t in ids]
