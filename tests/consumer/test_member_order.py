"""The rehearsal plans each consumer-protocol target with the members in the coordinator's
order (`assignor.whatif.consumer._in_coordinator_order`): its member map as it iterates
(`MemberMap`, held to Kafka's own class in tests/integration/test_member_map.py), then the
member whose joining heartbeat computes the target. Step by step, the what-if's plan is
`assign`'s on the members so ordered, kept by hand here."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignor import Group, Member, TopicPartition, assign, whatif
from assignor.strategies.kip848.member_map import MemberMap
from tests.budget import examples


def pairs(assignment) -> dict[str, list[tuple[str, int]]]:
    return {m: sorted((t, p) for t, p in tps) for m, tps in assignment.items()}


#: Ids of one ``String.hashCode`` ("Aa" and "BB" hash alike): they share a bucket of every
#: ``HashMap`` and a slot of every member map, where only the order decides.
ALIKE = ["".join(blocks) for blocks in itertools.product(["Aa", "BB"], repeat=3)]


@pytest.mark.parametrize("strategy", ["kip848-uniform", "kip848-range"])
@given(seed=st.integers(0, 2**32 - 1))
@examples(60)
def test_each_target_is_planned_in_the_coordinators_member_order(strategy, seed):
    rng = random.Random(seed)
    topics = {"a": rng.randint(1, 12), "b": rng.randint(0, 6)}
    names = rng.sample(ALIKE, len(ALIKE))
    ids = [names.pop() for _ in range(rng.randint(1, 4))]
    group = Group(topics, [Member(m, rng.sample(sorted(topics), rng.randint(1, 2))) for m in ids])
    texts, present = [], list(ids)
    for _ in range(rng.randint(1, 6)):
        if present and rng.random() < 0.4:
            texts.append(f"member_leave:{present.pop(rng.randrange(len(present)))}")
        elif names:
            name = names.pop()
            present.append(name)
            texts.append(f"member_join:{name}:{','.join(rng.sample(sorted(topics), rng.randint(1, 2)))}")
    events = [whatif.parse_event(t) for t in texts]
    steps = whatif.run(group, events, [strategy], include_plans=True)["strategies"][strategy]["steps"]
    # By hand: the map starts from the members as listed, a leave removes, a join computes with
    # the joiner last, then every member is updated.
    members = MemberMap.of(ids)
    definition, owned = group, {m.id: [] for m in group.members}
    for event, step in zip([None, *events], steps, strict=True):
        if event is not None:
            definition = whatif.apply_event(definition, event)
        by_id = {m.id: m for m in definition.members}
        for gone in [k for k in members if k not in by_id]:
            members.remove(gone)
        ordered = [by_id[k] for k in members] + [m for m in definition.members if m.id not in members]
        current = [Member(m.id, m.topics, [TopicPartition(t, p) for t, p in owned.get(m.id, [])]) for m in ordered]
        plan = assign(strategy, Group(definition.topics, current))
        assert pairs({m: [tuple(tp) for tp in tps] for m, tps in plan.assignment.items()}) == \
            pairs({m: [tuple(tp) for tp in tps] for m, tps in step["assignment"].items()}), (texts, step["event"])
        owned = {m: [tuple(tp) for tp in tps] for m, tps in step["assignment"].items()}
        for m in ordered:
            members.put(m.id)


def test_the_conversion_computes_in_the_classic_groups_order_with_the_returning_member_last():
    """``ConsumerGroup.fromClassicGroup`` fills the new map in the classic group's ``HashMap``
    order; the returning member computes the target last. Ids of one hash: the order alone
    decides which members keep what."""
    from assignor.ordering import hashmap_order

    ids = ALIKE[:4]
    owned = {m: [TopicPartition("a", p) for p in range(3 * i, 3 * i + 3)] for i, m in enumerate(ids)}
    group = Group({"a": 12}, [Member(m, ["a"], owned[m]) for m in ids])
    migration = whatif.migrate(group, [], "kip848-uniform", ["cooperative-sticky"], include_plans=True)
    leave, conversion = migration["upgrade"]["steps"][:2]
    joiner = whatif.consumer_member_id(ids[0])
    classic = hashmap_order(ids[1:])
    held = {m: [TopicPartition(t, p) for t, p in tps] for m, tps in leave["assignment"].items()}
    expected = assign("kip848-uniform", Group({"a": 12}, [*(Member(m, ["a"], held[m]) for m in classic),
                                                          Member(joiner, ["a"])]))
    assert pairs({m: [tuple(tp) for tp in tps] for m, tps in expected.assignment.items()}) == \
        pairs({m: [tuple(tp) for tp in tps] for m, tps in conversion["assignment"].items()})


@given(st.lists(st.tuples(st.sampled_from(["put", "remove", "put_all"]),
                          st.lists(st.sampled_from(ALIKE + [f"consumer-{i}" for i in range(12)]), max_size=14)),
                max_size=12))
@examples(200)
def test_put_all_is_put_in_turn(operations):
    """`MemberMap.put_all` passes over keys already there, where the load does not grow the
    table: the same map, slot for slot, as `put` called for each key."""
    bulk, one_by_one = MemberMap(), MemberMap()
    for operation, keys in operations:
        if operation == "remove":
            for key in keys:
                bulk.remove(key)
                one_by_one.remove(key)
            continue
        if operation == "put_all":
            bulk.put_all(keys)
        else:
            for key in keys:
                bulk.put(key)
        for key in keys:
            one_by_one.put(key)
        assert list(bulk) == list(one_by_one) and bulk._slots == one_by_one._slots


def test_a_joins_targets_under_range_depend_on_the_id_the_member_draws():
    """The README's word on a join under the consumer protocol: the member draws its id (KIP-1082),
    and ``range`` deals in member id order, so where a new id sorts decides which ranges shift:
    on three members of two topics (9 and 4 partitions), 200 random base64url ids make four
    different targets; a what-if plans the id it is given."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    draw = random.Random(1)

    def drawn() -> str:
        return "".join(draw.choice(alphabet) for _ in range(22))

    topics = {"ta": 9, "tb": 4}
    ids = [drawn() for _ in range(3)]
    settled = assign("kip848-range", Group(topics, [Member(i, ["ta", "tb"]) for i in ids])).assignment
    members = [Member.decoded(i, ("ta", "tb"), 1, None, tuple(settled[i])) for i in ids]
    outcomes = set()
    for _ in range(200):
        joiner = drawn()
        plan = assign("kip848-range", Group(topics, [*members, Member(joiner, ["ta", "tb"])])).assignment
        outcomes.add(tuple(tuple(sorted(plan[m])) for m in [*ids, joiner]))
    assert len(outcomes) == 4
