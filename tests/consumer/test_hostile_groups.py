"""Random hostile groups through every strategy, the what-if and the migration rehearsal: claims
of partitions past a topic's end, negative or unknown ones, a partition claimed by several
members (in one generation or in several), members with empty subscriptions or subscribed to
topics the cluster lacks, topics of no partitions, then joins, leaves, restarts and new
partitions. Every plan is valid by the oracle, and nothing raises but our own errors for what
is refused (a Java assignor's failure is reported in the step, not raised)."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given
from hypothesis import strategies as st

from assignor import Group, Member, TopicPartition, assign, validate, whatif
from assignor.errors import JavaAssignorFailure, LibrdkafkaAssignorFailure
from assignor.strategies import REGISTRY, strategy_named
from assignor.whatif import Event, WhatIfError
from tests.budget import examples

TOPICS = ["a", "b", "c"]
NAMES = [*TOPICS, "ghost"]  # "ghost": a topic the cluster lacks


@st.composite
def hostile_groups(draw) -> Group:
    counts = {t: draw(st.integers(0, 5)) for t in TOPICS}
    ids = draw(st.lists(st.sampled_from(["m0", "m1", "m2", "m3", "m4"]), min_size=1, max_size=5, unique=True))
    members = []
    for member in ids:
        topics = draw(st.lists(st.sampled_from(NAMES), max_size=3, unique=True))
        owned = draw(st.lists(st.builds(TopicPartition, st.sampled_from(NAMES), st.integers(-2, 6)), max_size=6))
        members.append(Member(member, topics, owned=owned, generation=draw(st.integers(-1, 3))))
    return Group(counts, members)


EVENTS = st.lists(st.one_of(
    st.builds(lambda m, t: Event("member_join", (m, tuple(t))), st.sampled_from(["j0", "j1"]),
              st.lists(st.sampled_from(NAMES), min_size=1, max_size=2, unique=True)),
    st.builds(lambda m: Event("member_leave", (m,)), st.sampled_from(["m0", "m1", "m2"])),
    st.builds(lambda t, n: Event("partitions_added", (t, n)), st.sampled_from(TOPICS), st.integers(5, 7)),
    st.just(Event("rolling_restart")),
), max_size=2)

# Two members claim t-0 in one generation and neither is given it: the what-if's reconciliation
# under kip848-* once raised KeyError here.
TWICE = Group({"a": 2}, [Member("m0", ["a"], owned=[TopicPartition("a", 0)], generation=1),
                         Member("m1", ["b"], owned=[TopicPartition("a", 0)], generation=1),
                         Member("m2", ["a"])])


@examples(60, suppress_health_check=[HealthCheck.too_slow])
@example(group=TWICE, events=[])
@given(group=hostile_groups(), events=EVENTS)
def test_every_strategy_and_the_what_if_take_hostile_groups(group, events):
    for name in REGISTRY:
        try:
            plan = assign(name, group)
        except JavaAssignorFailure:
            assert strategy_named(name).java, name  # where Java's own assignor throws, said so
            continue
        except LibrdkafkaAssignorFailure:
            assert strategy_named(name).peer == "librdkafka", name  # where librdkafka's leader stops, said so
            continue
        report = validate.report(group, plan)
        assert report["valid"], (name, report["errors"])
    try:
        result = whatif.run(group, events, check=True)
    except WhatIfError:
        return  # an event the group cannot take (a member that is not there): refused, named
    for name, run in result["strategies"].items():
        assert run["steps"], name
    for target in ("kip848-uniform", "kip848-range"):
        migration = whatif.migrate(group, events, target, check=True)
        assert migration  # a rehearsal, whatever the claims
