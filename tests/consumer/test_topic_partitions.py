"""The object API's two ends, compiled (`assignor/_topic_partitions.c`) and plain: the compiled
functions give what their plain references give, value for value and type for type, refuse what
those refuse, leak nothing, and the library answers the same without them (and without the sticky
deal's, `assignor/solver/_deal.c`, held to its own reference in `test_sticky_properties.py`)."""

from __future__ import annotations

import gc
import pickle
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignor import (
    AssignorError,
    Claims,
    Group,
    InvalidGroupError,
    Member,
    TopicPartition,
    assign,
    assign_columns,
    json_format,
    model,
)
from assignor.strategies import REGISTRY, sticky
from assignor.workloads import java_large, next_step
from tests.budget import examples
from tests.consumer.test_hostile_groups import hostile_groups

NAMES = st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=5, unique=True)
PARTITIONS = st.one_of(st.integers(0, 300), st.integers(-(2**63), 2**63 - 1), st.sampled_from([65535, 65536, 2**31]))


class _Str(str):
    """A str that is not exactly a str: never handed back as a claimed object."""


def _exactly(made: list[TopicPartition]) -> list[tuple[type, type, type, object, object]]:
    """Each object with its own type and its fields' types: equal lists hold equal objects of the
    same types (``==`` alone would take a tuple for a TopicPartition, True for 1)."""
    return [(type(tp), type(tp[0]), type(tp[1]), tp[0], tp[1]) for tp in made]


def test_the_compiled_part_is_built():
    """The test environment builds the C part (`make test` has a compiler): without it every
    comparison below would hold the plain path to itself."""
    assert model._compiled is not None, "assignor._topic_partitions did not build: see pip's output"


@pytest.mark.parametrize(("made_by", "plain", "kind"), [
    (model.topic_partitions_at, model.plain_topic_partitions_at, TopicPartition),
    (model.pairs_at, model.plain_pairs_at, tuple),  # (a snapshot's pairs)
])
@examples(300)
@given(names=NAMES, data=st.data())
def test_objects_from_columns_are_the_plain_ones(made_by, plain, kind, names, data):
    """Each row's object, of exactly `kind`, as the plain reference makes it, and left out of the
    collector's passes."""
    rows = data.draw(st.lists(st.tuples(st.integers(0, len(names) - 1), PARTITIONS), max_size=40))
    topic = np.array([t for t, _ in rows], dtype=np.int64)
    partition = np.array([p for _, p in rows], dtype=np.int64)
    made = made_by(names, topic, partition)
    assert _exactly(made) == _exactly(plain(names, topic, partition))
    assert _exactly(made) == [(kind, str, int, names[t], p) for t, p in rows]
    assert not any(gc.is_tracked(pair) for pair in made)


@pytest.mark.parametrize("bad", [-1, 2])
def test_a_topic_index_out_of_names_is_refused_by_both(bad):
    topic, partition = np.array([0, bad], dtype=np.int64), np.array([0, 1], dtype=np.int64)
    for make in (model.topic_partitions_at, model.plain_topic_partitions_at, model.pairs_at, model.plain_pairs_at):
        with pytest.raises(IndexError):
            make(["a", "b"], topic, partition)


def _hostile_claim(names: list[str]) -> st.SearchStrategy[object]:
    """What a member's owned may hold: its own objects, and look-alikes never to hand back."""
    name = st.sampled_from([*names, "elsewhere"])
    return st.one_of(
        st.builds(TopicPartition, name, st.integers(-2, 8)),
        st.builds(TopicPartition, name, st.integers(-2, 8)),
        st.builds(lambda t, p: (t, p), name, st.integers(0, 8)),
        st.builds(lambda t, p: TopicPartition(_Str(t), p), name, st.integers(0, 8)),
        st.builds(lambda t, p: TopicPartition(t, bool(p % 2)), name, st.integers(0, 8)),
        st.builds(lambda t: TopicPartition(t, 2**70), name),
        st.builds(lambda t, p: tuple.__new__(TopicPartition, (t, p, p)), name, st.integers(0, 8)),
        st.integers(),
    )


@st.composite
def _flat_plans(draw):
    """A plan on flat partitions (topics of 0 to 6 partitions, each partition's owner or -1) and
    each member's previous holdings, hostile ones among them, in any order."""
    names = draw(NAMES)
    counts = draw(st.lists(st.integers(0, 6), min_size=len(names), max_size=len(names)))
    offsets = np.array([0, *np.cumsum(counts)], dtype=np.int64)
    members = draw(st.integers(0, 5))
    owner = np.array(draw(st.lists(st.integers(-1, members - 1), min_size=int(offsets[-1]),
                                   max_size=int(offsets[-1]))), dtype=np.int64)
    previous = [draw(st.sampled_from([tuple, list]))(draw(st.lists(_hostile_claim(names), max_size=8)))
                for _ in range(members)]
    return names, offsets, owner, members, previous


@examples(400)
@given(_flat_plans())
def test_each_members_objects_are_the_plain_ones(plan):
    """Whatever a member held before, its list holds the plain reference's values and types, in
    flat order; an object handed back is one it held, exactly a TopicPartition of a str and an
    int."""
    names, offsets, owner, members, previous = plan
    expected = _exactly(sum(model.plain_member_topic_partitions(names, offsets, owner, members), []))
    for given_previous in (None, previous):
        runs = model.member_topic_partitions(names, offsets, owner, members, given_previous)
        assert len(runs) == members
        assert _exactly(sum(runs, [])) == expected
        if given_previous is not None:
            for run, had in zip(runs, given_previous):
                held = {id(claim) for claim in had}
                for tp in run:
                    assert id(tp) not in held or (type(tp[0]) is str and type(tp[1]) is int)


def test_a_member_keeping_what_it_had_gets_its_own_objects_back():
    """The reuse is what makes a second rebalance cheap: every kept partition is the object its
    member claimed (checked by identity), a moved one a new object."""
    group = java_large("uniform", 20, 30, 10)
    group = next_step(group, assign("sticky", group), "leave10")
    plan = assign("sticky", group)
    owned = {m.id: {(tp.topic, tp.partition): tp for tp in m.owned} for m in group.members}
    kept = [tp is owned[m][(tp.topic, tp.partition)] for m, tps in plan.assignment.items() for tp in tps
            if (tp.topic, tp.partition) in owned[m]]
    assert kept and all(kept)


@pytest.mark.parametrize(("offsets", "owner", "members", "error"), [
    ([0, 2], [0, 2], 2, IndexError),  # an owner that is not a member
    ([0, 3], [0, 1], 2, ValueError),  # offsets that do not end at len(owner)
    ([1, 2], [0, 1], 2, ValueError),  # offsets that do not start at 0
    ([0, 2, 1], [0], 2, ValueError),  # offsets that descend (one more than names: two names)
])
def test_a_malformed_flat_plan_is_refused_by_both(offsets, owner, members, error):
    names = ["a", "b"][: len(offsets) - 1]
    for runs in (model.member_topic_partitions, model.plain_member_topic_partitions):
        with pytest.raises(error):
            runs(names, np.array(offsets, dtype=np.int64), np.array(owner, dtype=np.int64), members)


@examples(300)
@given(names=NAMES, data=st.data())
def test_claims_read_as_columns_are_what_they_hold(names, data):
    """`claim_columns` reads exact TopicPartitions of a str and an int64 (None for anything else,
    which the caller reads its own way)."""
    owned = data.draw(st.lists(st.lists(_hostile_claim(names), max_size=6).map(tuple), max_size=4))
    index = {name: i for i, name in enumerate(names)}
    read = model.claim_columns(owned, index)
    claims = [claim for member in owned for claim in member]
    readable = all(type(c) is TopicPartition and len(c) == 2 and type(c[0]) is str and type(c[1]) is int
                   and -(2**63) <= c[1] < 2**63 for c in claims)
    if not readable:
        assert read is None
        return
    assert read is not None
    assert read[0].tolist() == [index.get(c[0], -1) for c in claims]
    assert read[1].tolist() == [c[1] for c in claims]


@examples(300)
@given(names=NAMES, data=st.data())
def test_names_as_indices_are_the_plain_ones(names, data):
    index = {name: i for i, name in enumerate(names)}
    name = st.one_of(st.sampled_from([*names, "elsewhere"]), st.integers(0, 3), st.builds(_Str, st.sampled_from(names)))
    sequences = data.draw(st.lists(st.lists(name, max_size=6).map(data.draw(st.sampled_from([tuple, list]))),
                                   max_size=5))
    assert model.name_indices(sequences, index).tolist() == model.plain_name_indices(sequences, index).tolist()


def test_a_name_that_changes_its_list_while_hashed_changes_nothing_read():
    """The C loops read tuples of what they are given, never the caller's lists: a name whose
    own __hash__ empties its list (or a finalizer run by the collector mid-loop) cannot pull the
    items from under them."""
    victim: list[object] = []

    class _Clearing(str):
        def __hash__(self) -> int:
            victim.clear()
            return str.__hash__(self)

    for indices in (model.name_indices, model.plain_name_indices):
        victim[:] = ["a", _Clearing("b"), "c", "d"]
        assert indices([victim], {"a": 0, "b": 1, "c": 2}).tolist() == [0, 1, 2, -1]


def test_an_unhashable_name_is_refused_by_both():
    for indices in (model.name_indices, model.plain_name_indices):
        with pytest.raises(TypeError):
            indices([("a",), (["a"],)], {"a": 0})


class _Int(int):
    """An int that is not exactly an int."""


class _Pair(list):
    """A pair that is not exactly a list."""


def _json_entry(names: list[str]) -> st.SearchStrategy[object]:
    """What a group JSON's ``owned`` may hold: pairs as `json.loads` makes them, the same as
    tuples, and what a caller in Python (or a hostile file) may put there instead."""
    name = st.sampled_from(names)
    number = st.one_of(st.integers(0, 300), st.sampled_from([0, 2**31 - 1]))
    return st.one_of(
        st.builds(lambda t, p: [t, p], name, number),
        st.builds(lambda t, p: [t, p], name, number),
        st.builds(lambda t, p: (t, p), name, number),
        st.builds(lambda t, p: [t, p], name, st.sampled_from([-1, 2**31, 2**70, -(2**70), True, False, 1.0, None])),
        st.builds(lambda t, p: [_Str(t), p], name, number),
        st.builds(lambda t, p: [t, _Int(p)], name, number),
        st.builds(lambda t, p: _Pair([t, p]), name, number),
        st.builds(lambda t, p: TopicPartition(t, p), name, number),
        st.builds(lambda t, p: [t, p, p], name, number),
        st.builds(lambda t: [t], name),
        st.builds(lambda t, p: [p, t], name, number),
        st.sampled_from([None, "t", 3, {}]),
    )


@examples(300)
@given(names=NAMES, data=st.data())
def test_json_pairs_read_in_c_are_the_plain_ones(names, data):
    """`partitions_from_json` reads plainly good pairs in C (`topic_partitions_of_pairs`) and
    anything else with its plain reference: the same objects, of the same types, or the same
    error naming the same entry; C leaves nothing plainly good to the reference."""
    value = data.draw(st.lists(_json_entry(names), max_size=12))

    def answer(read: object) -> object:
        try:
            return _exactly(read("members[0].owned"))
        except InvalidGroupError as error:
            return str(error)

    expected = answer(lambda where: json_format.plain_partitions_from_json(value, where))
    assert answer(lambda where: json_format.partitions_from_json(value, where)) == expected
    plain = all(type(e) in (list, tuple) and len(e) == 2 and type(e[0]) is str and type(e[1]) is int
                and 0 <= e[1] <= 2**31 - 1 for e in value)
    read = model.topic_partitions_of_pairs(value)
    assert (read is not None) == plain
    if read is not None:
        assert _exactly(read) == expected
        assert all(tp[0] is e[0] and tp[1] is e[1] for tp, e in zip(read, value))


def test_json_pairs_read_in_c_are_ordinary_topic_partitions_out_of_the_collectors_sight():
    """Equal, hashed and pickled as any other; dropping them gives back every reference taken."""
    name = "orders"
    value = [[name, 3], (name, 70_000)]
    before = sys.getrefcount(name), sys.getrefcount(TopicPartition)
    read = model.topic_partitions_of_pairs(value)
    assert read == [TopicPartition("orders", 3), TopicPartition("orders", 70_000)]
    assert pickle.loads(pickle.dumps(read)) == read and hash(read[0]) == hash(("orders", 3))
    assert not any(map(gc.is_tracked, read))
    del read
    assert (sys.getrefcount(name), sys.getrefcount(TopicPartition)) == before


@pytest.mark.parametrize("emptied", ["the list", "its pairs"])
def test_a_finalizer_emptying_the_json_pairs_mid_read_leaves_a_whole_answer_or_none(emptied):
    """The collector may run a finalizer while the C loop allocates, and the finalizer may empty
    what is being read: the loop reads a tuple of the entries, copied with the collector paused,
    and holds each entry's two objects before allocating, so it answers every pair as it was, or
    None where an entry it had not reached yet changed (the plain reader then reads what is
    there); never a freed object. The collection falls on each of the call's first allocations in
    turn (the copy of the list among them), and the finalizer fills what it freed with other
    lists: a read of freed entries finds those, or crashes."""
    expected = [TopicPartition(f"t{i}", i) for i in range(2000)]
    inside = 0
    for allocation in range(8):
        victim = [[f"t{i}", i] for i in range(2000)]
        state = {"calling": False, "ran while calling": False}
        filler: list[list[object]] = []

        class _Emptying:
            def __del__(self) -> None:
                state["ran while calling"] = state["calling"]
                for pair in victim if emptied == "its pairs" else ():
                    pair.clear()
                if emptied == "the list":
                    victim.clear()
                filler.extend([None, -1] for _ in range(4000))

        threshold = gc.get_threshold()
        try:
            gc.collect()
            gc.set_threshold(10**6)
            cycle = _Emptying()
            cycle.me = cycle
            del cycle  # garbage for the collection the threshold sets off
            gc.set_threshold(gc.get_count()[0] + allocation)
            state["calling"] = True
            read = model.topic_partitions_of_pairs(victim)
            state["calling"] = False
        finally:
            gc.set_threshold(*threshold)
        gc.collect()
        inside += state["ran while calling"]
        if emptied == "the list":  # (emptied before the copy, at the call's own allocations: nothing to read)
            assert read in ([], expected), allocation
        else:
            assert read in (None, expected), allocation
    assert inside, "no collection fell inside the call"


@examples(150)
@given(group=hostile_groups(), strategy=st.sampled_from(sorted(REGISTRY)))
def test_every_strategy_answers_the_same_without_the_compiled_part(group, strategy, monkeypatch_module):
    """A build without a compiler uses the plain references (`assignor.model`'s, the sticky
    deal's): the same plans, objects and columns (or the same refusal: Java's builders throw on
    some hostile claims, as Java does)."""
    compiled = _answers(strategy, group)
    with monkeypatch_module.context() as patch:
        patch.setattr(model, "_compiled", None)
        patch.setattr(sticky, "_compiled", None)
        plain = _answers(strategy, group)
    assert compiled == plain


def _answers(strategy: str, group: Group) -> object:
    try:
        plan, columns = assign(strategy, group), assign_columns(strategy, group)
    except AssignorError as refused:
        return type(refused), str(refused)
    return ({m: _exactly(tps) for m, tps in plan.assignment.items()},
            [c.tolist() for c in columns[:3]], columns.names)


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def test_objects_made_in_c_are_ordinary_topic_partitions():
    """Equal, hashed and pickled as any other; out of the collector's sight (a str and an int
    make no cycle); and dropping them gives back every reference they took."""
    names = ["orders", "payments"]
    topic, partition = np.array([0, 1, 1]), np.array([3, 70_000, 2**40])
    before = sys.getrefcount(TopicPartition), sys.getrefcount(names[1])
    made = model.topic_partitions_at(names, topic, partition)
    python = [TopicPartition("orders", 3), TopicPartition("payments", 70_000), TopicPartition("payments", 2**40)]
    assert made == python and list(map(hash, made)) == list(map(hash, python))
    assert pickle.loads(pickle.dumps(made)) == python
    assert made[0].topic == "orders" and made[1].partition == 70_000
    assert not any(map(gc.is_tracked, made))
    runs = model.member_topic_partitions(names, np.array([0, 4, 6]), np.array([-1, -1, -1, 0, 1, -1]), 2,
                                         [made[:1], ()])
    assert runs[0][0] is made[0]
    del made, runs, python
    assert (sys.getrefcount(TopicPartition), sys.getrefcount(names[1])) == before


def test_claims_as_columns_go_on_as_objects_too():
    """`assign_columns`'s owned columns and `assign`'s owned objects give one plan."""
    group = java_large("random50", 30, 20, 12)
    group = next_step(group, assign("sticky", group), "leave10")
    owned = Claims.of_lists([m.owned for m in group.members])
    for strategy in ("sticky", "cooperative-sticky"):
        plan = assign(strategy, group)
        columns = assign_columns(strategy, group, owned)
        ids = [m.id for m in group.members]
        as_pairs = sorted((ids[m], columns.names[t], p) for m, t, p in
                          zip(columns.member.tolist(), columns.topic.tolist(), columns.partition.tolist()))
        assert as_pairs == sorted((m, tp.topic, tp.partition) for m, tps in plan.assignment.items() for tp in tps)


def test_a_group_whose_members_own_nothing_is_planned_on_either_path(monkeypatch):
    group = Group({"t": 3}, [Member("a", ["t"]), Member("b", ["t"])])
    expected = {"a": [TopicPartition("t", 0), TopicPartition("t", 2)], "b": [TopicPartition("t", 1)]}
    assert assign("sticky", group).assignment == expected
    monkeypatch.setattr(model, "_compiled", None)
    monkeypatch.setattr(sticky, "_compiled", None)
    assert assign("sticky", group).assignment == expected
