"""The what-if engine: KIP-54's examples as event replays, rolling restarts, random sequences."""

from __future__ import annotations

import json
import math
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given
from hypothesis import strategies as st

from assignor import Group, Member, TopicPartition, assign, validate, whatif
from assignor.strategies import strategy_named
from assignor.whatif import Event, WhatIfError, parse_event, reference
from assignor.workloads import carry
from tests.budget import examples

ROOT = Path(__file__).resolve().parents[2]


def steps(result, strategy):
    return result["strategies"][strategy]["steps"]


def test_kip54_example2_member_leaves():
    """C0 leaves: sticky hands its one partition to C1 and moves nothing else; round robin
    reshuffles (the KIP: sticky preserves 5 assignments, round robin 3)."""
    group = Group(topics={"t0": 1, "t1": 2, "t2": 3},
                  members=[Member("C0", ["t0"]), Member("C1", ["t0", "t1"]), Member("C2", ["t0", "t1", "t2"])])
    result = whatif.run(group, [Event("member_leave", ("C0",))], check=True)
    sticky, roundrobin = steps(result, "sticky")[-1], steps(result, "roundrobin")[-1]
    assert sticky["moved"] == 0 and sticky["reassigned"] == 1 and sticky["spread"] == 0
    assert roundrobin["moved"] >= 2


def test_kip54_example3_member_joins():
    group = Group(topics={"t0": 2, "t1": 2}, members=[Member("C0", ["t0", "t1"]), Member("C1", ["t0", "t1"])])
    result = whatif.run(group, [parse_event("member_join:C2:t0,t1")], check=True)
    for strategy in ("sticky", "cooperative-sticky"):
        assert steps(result, strategy)[-1]["moved"] == 1
    assert steps(result, "cooperative-sticky")[-1]["rounds"] == 2
    assert steps(result, "cooperative-sticky")[-1]["revoked"] == 1
    assert steps(result, "sticky")[-1]["revoked"] == 4  # eager: everything is revoked
    assert steps(result, "range")[-1]["spread"] == 2  # range gives C2 nothing


def test_rolling_restart_under_sticky_moves_only_the_restarting_share():
    members = [Member(f"c{i}", ["a", "b"]) for i in range(5)]
    group = Group(topics={"a": 7, "b": 6}, members=members)
    result = whatif.run(group, [Event("rolling_restart")], ["sticky"], check=True)
    share = math.ceil(13 / 5)
    restart = steps(result, "sticky")[1:]
    assert len(restart) == 10
    for leave, rejoin in zip(restart[::2], restart[1::2]):
        assert leave["moved"] == 0 and leave["reassigned"] <= share
        assert rejoin["reassigned"] <= share and rejoin["moved"] == rejoin["reassigned"]
        assert rejoin["spread"] <= 1


def test_engine_plans_equal_direct_plans():
    """The wire round trip changes nothing: the engine's step equals planning the carried group."""
    group = Group(topics={"a": 5, "b": 3}, members=[Member("x", ["a", "b"]), Member("y", ["a"]), Member("z", ["b"])])
    result = whatif.run(group, [parse_event("member_leave:z")], ["sticky"], include_plans=True)
    first = assign("sticky", group)
    second = assign("sticky", Group(topics=group.topics, members=carry(group, first, 0).members[:2]))
    expected = {m: [[tp.topic, tp.partition] for tp in tps] for m, tps in second.assignment.items()}
    assert steps(result, "sticky")[-1]["assignment"] == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [("nope:1", "unknown event"), ("member_leave", "expected 1 arguments"),
     ("partitions_added:t:x", "an integer from 0 to 2147483647"), ("partitions_added:t:²", "an integer from 0"),
         ("topic_created:t:2147483648", "an integer from 0 to 2147483647"), ("member_leave:ghost", "no member 'ghost'"),
     ("partitions_added:a:1", "counts only grow"), ("topic_created:a:3", "exists"),
     ("member_join:x:a", "already in the group")],
)
def test_bad_events_are_clear_errors(text, message):
    group = Group(topics={"a": 2}, members=[Member("x", ["a"])])
    with pytest.raises(WhatIfError, match=message):
        whatif.run(group, [parse_event(text)])


EVENT_TEXT = st.one_of(
    st.builds(lambda i, t: f"member_join:n{i}:{t}", st.integers(0, 3), st.sampled_from(["a", "b", "a,b"])),
    st.builds(lambda i: f"member_leave:m{i}", st.integers(0, 3)),
    st.builds(lambda i, t: f"subscribe:m{i}:{t}", st.integers(0, 3), st.sampled_from(["a", "b", "c"])),
    st.builds(lambda i, t: f"unsubscribe:m{i}:{t}", st.integers(0, 3), st.sampled_from(["a", "b"])),
    st.builds(lambda n: f"partitions_added:a:{n}", st.integers(3, 9)),
    st.just("topic_created:c:4"), st.just("topic_deleted:b"),
    st.builds(lambda i, r: f"rack_changed:m{i}:{r}", st.integers(0, 3), st.sampled_from(["r1", "r2"])),
)


def applicable(group: Group, texts: list[str]) -> list[Event]:
    """The events in `texts` that apply in turn to `group` (the others are dropped)."""
    events, definition = [], group
    for text in texts:
        try:
            definition = whatif.apply_event(definition, parse_event(text))
            events.append(parse_event(text))
        except WhatIfError:
            continue
    return events


@examples(60, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(EVENT_TEXT, min_size=1, max_size=4), st.integers(1, 4))
def test_random_event_sequences_stay_valid(texts, members):
    group = Group(topics={"a": 3, "b": 4}, members=[Member(f"m{i}", ["a", "b"][: 1 + i % 2], rack=f"r{i % 2 + 1}")
                                                   for i in range(members)],
                  partition_racks={"a": [["r1"], ["r2"], ["r1"]], "b": [["r2"]] * 4})
    result = whatif.run(group, applicable(group, texts), check=True)  # every round through the oracle
    for strategy, outcome in result["strategies"].items():
        for step in outcome["steps"][1:]:
            if not strategy_named(strategy).protocol.classic:  # heartbeat intervals (KIP-848)
                assert step["rounds"] <= 2
            elif strategy == "cooperative-sticky":
                assert step["rounds"] <= 2
            elif strategy != "java-cooperative-sticky":  # Java's may take more (it is Java's)
                assert step["rounds"] == 1


@examples(30, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(EVENT_TEXT, st.just("rolling_restart")), min_size=1, max_size=3), st.integers(1, 4),
       st.sampled_from([None, 0.2, 5.0]))
@example(["member_leave:m0", "rolling_restart", "member_join:n1:a"], 4, 0.2)  # quick restarts, a static member
@example(["rolling_restart", "partitions_added:a:6"], 3, None)
def test_a_run_of_every_strategy_answers_for_each_as_its_run_alone(texts, members, restart):
    """A run of several strategies expands its events once per protocol (`replay._timeline`):
    each strategy's answer is the one a run of it alone gives, static members and quick
    restarts included."""
    group = Group(topics={"a": 3, "b": 4}, members=[
        Member(f"m{i}", ["a", "b"][: 1 + i % 2], group_instance_id=f"static-{i}" if i % 3 == 1 else None)
        for i in range(members)])
    events, timing = applicable(group, texts), whatif.Timing(restart_seconds=restart)
    together = whatif.run(group, events, include_plans=True, timing=timing)["strategies"]
    for strategy, outcome in together.items():
        alone = whatif.run(group, events, [strategy], include_plans=True, timing=timing)["strategies"][strategy]
        assert outcome == alone, strategy


@pytest.mark.external
def test_cli_whatif_table_and_json():
    command = [sys.executable, "-m", "assignor.cli", "whatif", "examples/group.json", "--event", "member_leave:c2"]
    table = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert "cooperative-sticky" in table and "summary" in table
    data = json.loads(subprocess.run([*command, "--json", "--strategy", "sticky"], capture_output=True, text=True,
                                     cwd=ROOT, check=True).stdout)
    assert list(data["strategies"]) == ["sticky"]
    bad = subprocess.run([*command, "--event", "member_leave:ghost"], capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and "no member 'ghost'" in bad.stderr


#: The strategies the plain engine below replays: the classic protocols' (it speaks JoinGroup and
#: SyncGroup; KIP-848 steps are `assignor.reconcile`'s, tested in test_reconcile.py).
CLASSIC = [s for s in whatif.ALL_STRATEGIES if strategy_named(s).protocol.classic]


@examples(60, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(EVENT_TEXT | st.just("rolling_restart"), min_size=1, max_size=3), st.integers(1, 5),
       st.sampled_from(CLASSIC), st.randoms(use_true_random=False))
# Members who leave take their partitions with them: an engine that counted those as revoked was
# caught only on some seeds. These cases catch it on every run.
@example(["member_leave:m0"], 3, "sticky", random.Random(1))
@example(["member_leave:m1", "member_leave:m2"], 4, "cooperative-sticky", random.Random(2))
@example(["rolling_restart"], 3, "java-sticky", random.Random(3))
# Quick restarts in a group where two members claim one partition: which claim counts as its
# owner before the step (the departed member's, where it stood), and a step Java's assignor fails
# showing the assignment of the step before (not the departed member's name).
@example(["rolling_restart"], 3, "java-sticky", random.Random(13))
@example(["rolling_restart"], 3, "java-sticky", random.Random(5))
def test_engine_equals_the_plain_engine(texts, members, strategy, rng):
    """Columns, lockstep decoding and vectorised figures give what the plain object code gives."""
    from assignor import TopicPartition

    topics = {"a": rng.randint(1, 7), "b": rng.randint(0, 5)} if rng.random() < 0.9 else {}
    # Claims a client may send that name nothing the group has: an unknown topic, a partition
    # past the count (and, with no topics at all, everything).
    stray = [TopicPartition("ghost", 1), TopicPartition("a", 99)]
    group = Group(topics=topics, members=[
        Member(f"m{i}", rng.sample(["a", "b"], rng.randint(1, 2)), generation=rng.randint(-1, 3),
               owned=[TopicPartition(t, p) for t in topics for p in range(topics[t]) if rng.random() < 0.3]
               + [tp for tp in stray if rng.random() < 0.2],
               group_instance_id=f"static-{i}" if rng.random() < 0.3 else None)
        for i in range(members)])
    events = applicable(group, texts)
    # Restarts quicker than the classic rebalance their leave starts (one step each), or not.
    timing = whatif.Timing(restart_seconds=rng.choice([None, 0.2, 5.0]))
    engine = steps(whatif.run(group, events, [strategy], include_plans=True, timing=timing), strategy)
    plain = reference.run(group, events, strategy, timing)
    if strategy.startswith("java-"):  # Java's order within a member, ours by partition: compare as sets
        for step in engine + plain:
            step["assignment"] = {m: sorted(map(tuple, tps)) for m, tps in step["assignment"].items()}
    assert [{k: step[k] for k in plain[0]} for step in engine] == plain


def test_topic_spread_and_rack_locality_figures():
    """Both figures were reported but checked by no test. Two members on racks r0 and r1, one
    topic of 4 partitions each replicated on one rack (r1, r1, r0, r0): sticky and range (as
    Java's since KIP-881) give each member two partitions of its own rack (topic spread 0, full
    locality); roundrobin ignores racks and, dealing 0 and 2 to m0 and 1 and 3 to m1, reads half
    locally. Without racks on the members, range deals plain ranges: 0-1 to m0, nothing local."""
    group = Group(topics={"t": 4}, members=[Member("m0", ["t"], rack="r0"), Member("m1", ["t"], rack="r1")],
                  partition_racks={"t": [["r1"], ["r1"], ["r0"], ["r0"]]})
    result = whatif.run(group, [], ["sticky", "range", "roundrobin"], check=True)["strategies"]
    sticky, range_, roundrobin = (result[s]["steps"][0] for s in ("sticky", "range", "roundrobin"))
    assert sticky["topic_spread"] == 0 and sticky["rack_locality"] == 1.0
    assert range_["topic_spread"] == 0 and range_["rack_locality"] == 1.0
    assert roundrobin["topic_spread"] == 0 and roundrobin["rack_locality"] == 0.5
    plain = assign("range", Group(group.topics, [Member("m0", ["t"]), Member("m1", ["t"])],
                                  partition_racks=group.partition_racks))
    assert [tp.partition for tp in plain.assignment["m0"]] == [0, 1]
    uneven = Group(topics={"t": 3}, members=[Member("m0", ["t"]), Member("m1", ["t"])])
    step = whatif.run(uneven, [], ["range"])["strategies"]["range"]["steps"][0]
    assert step["topic_spread"] == 1 and step["rack_locality"] is None


def test_unknown_strategies_are_named_without_planning():
    """Strategy names were checked by running a plan on an empty group; now a lookup does it."""
    from assignor.errors import UnknownStrategyError

    assert strategy_named("sticky").name == "sticky"
    for bad in ("nope", None, 3):
        with pytest.raises(UnknownStrategyError):
            strategy_named(bad)
        with pytest.raises(UnknownStrategyError):
            whatif.run(Group(topics={}, members=[]), [], [bad])


def test_layouts_do_not_share_their_default_claims():
    """`Layout.claims` defaulted to one tuple of arrays shared by every layout built without
    claims; a change through one would have shown in all."""
    from assignor.solver.dense import Layout

    empty = np.zeros(0, np.int64)
    first = Layout([], empty, np.zeros(1, np.int64), [], empty)
    second = Layout([], empty, np.zeros(1, np.int64), [], empty)
    assert all(a is not b for a, b in zip(first.claims, second.claims))


@st.composite
def _contested_groups(draw) -> Group:
    """Members claiming partitions of one topic, several of them the same one, at various
    generations (KIP-341: the highest generation's claimant is the rightful owner)."""
    partitions = draw(st.integers(1, 5))
    count = draw(st.integers(1, 4))
    members = tuple(
        Member(f"m{i}", ("t",), owned=tuple(TopicPartition("t", p) for p in sorted(
            draw(st.sets(st.integers(0, partitions - 1), max_size=partitions)))),
            generation=draw(st.integers(0, 4)))
        for i in range(count))
    return Group(topics={"t": partitions}, members=members)


@pytest.mark.parametrize("strategy", ["cooperative-sticky", "java-cooperative-sticky"])
@given(group=_contested_groups())
@example(group=Group(topics={"t": 2}, members=(
    Member("a", ("t",), owned=(TopicPartition("t", 0),), generation=3),
    Member("b", ("t",), owned=(TopicPartition("t", 0),), generation=2))))
@examples(150)
def test_the_what_if_counts_unsafe_hand_overs_by_the_oracles_rule(strategy, group):
    """What-if counted a partition given back to its rightful owner (a, generation 3) as unsafe
    while a stale claimant (b, generation 2) still listed it; the oracle did not. Both follow
    `validate.handed_while_claimed` now."""
    step = whatif.run(group, [], [strategy])["strategies"][strategy]["steps"][0]
    assert step["unsafe_handovers"] == validate.report(group, assign(strategy, group))["unsafe_handovers"]


@pytest.mark.parametrize("strategy", whatif.ALL_STRATEGIES)
def test_a_static_members_restart_rebalances_nothing(strategy):
    """A static member (KIP-345) that restarts is back within its session: Kafka 4.3 hands it its
    partitions again (classic) or replaces the old member without a new epoch (consumer
    protocol), and nothing moves. Where the rehearsal said 7 moved for three members, it now says
    0; dynamic members in the same group still leave and rejoin."""
    group = Group({"t": 6}, [Member("a", ["t"], group_instance_id="i-a"), Member("b", ["t"], group_instance_id="i-b"),
                             Member("c", ["t"])])
    run = whatif.run(group, [parse_event("rolling_restart")], [strategy], include_plans=True)["strategies"][strategy]
    current, *restarts = run["steps"]
    assert [s["event"] for s in restarts] == ["restart a: static, back within its session",
                                              "restart b: static, back within its session",
                                              "restart c: leave", "restart c: rejoin"]
    for step in restarts[:2]:
        assert (step["rounds"], step["revoked"], step["moved"], step["reassigned"]) == (0, 0, 0, 0)
        assert step["assignment"] == current["assignment"]


_CLAIMS = st.one_of(
    st.builds(TopicPartition, st.sampled_from(["a", "b", "c", "gone"]), st.integers(-2, 6)),
    st.builds(TopicPartition, st.just("a"), st.sampled_from([True, 2**31, 2**70, 1.0])),
    st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 6)),
    st.lists(st.sampled_from(["b", 3]), min_size=2, max_size=2))


@examples(300)
@given(st.lists(st.lists(_CLAIMS, max_size=6), max_size=5), st.data())
def test_the_members_claims_read_in_c_are_those_read_one_by_one(owned, data):
    """`state._claims_of` reads the members' claims in C where each is a `TopicPartition` of a
    topic the group has and a partition a client can send, else one by one as
    `state._claims_plainly` does; either way the same columns (topics named in order of first
    appearance) or the same error naming the claim."""
    from assignor.whatif import state
    from assignor.whatif.state import _claims_of, _claims_plainly

    sendable = [TopicPartition(*tp) if isinstance(tp, tuple) else tp for tp in data.draw(st.lists(_CLAIMS))]
    members = [Member(f"m{i}", ["a"], claims) for i, claims in enumerate([*owned, sendable])]
    topics = dict.fromkeys(data.draw(st.permutations(["c", "b", "a"])), 7)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(state, "COLUMNS_FROM", 0)  # (in columns whatever their number)
        try:
            expected = _claims_plainly(members)
        except WhatIfError as error:
            with pytest.raises(WhatIfError, match=re.escape(str(error))):
                _claims_of(members, topics)
            return
        found = _claims_of(members, topics)
    assert found.names == expected.names
    for column in ("member", "topic", "partition"):
        assert getattr(found, column).tolist() == getattr(expected, column).tolist(), column


@examples(300)
@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from("tuv"), st.integers(0, 5)), max_size=30),
       st.lists(st.tuples(st.integers(0, 4), st.sampled_from("tuw"), st.integers(0, 5)), max_size=30),
       st.permutations(range(5)))
def test_partitions_given_to_another_member_counted_in_columns(before, after, renumbered):
    """`consumer._reassigned` counts in columns what a dict of every partition's holder counts:
    a partition given to a member other than the one holding it (one held by nobody: not
    counted), partitions held once; member numbers compared, each side's own topic names."""
    from assignor.model import Claims
    from assignor.whatif.consumer import _claimed_once, _reassigned

    def claims(rows: list[tuple[int, str, int]]) -> Claims:
        return Claims.of_lists([[(t, p) for m, t, p in rows if m == member] for member in range(5)])

    owned, assigned = claims(before), claims(after)
    owners, takers = np.arange(5), np.array(renumbered)  # (member i of `assigned` is number renumbered[i])
    holder = {(t, p): m for m, t, p in before}
    expected = sum(1 for m, t, p in after if holder.get((t, p), renumbered[m]) != renumbered[m])
    assert _claimed_once(owned) == (len({(t, p) for _m, t, p in before}) == len(before))
    if _claimed_once(owned):
        assert _reassigned(owned, owners, assigned, takers) == expected


@pytest.mark.parametrize("seed", range(6))
def test_steps_read_in_columns_answer_as_steps_read_row_by_row(seed):
    """A what-if's steps read the members' claims and holdings in columns from `COLUMNS_FROM`
    claims (and a consumer-protocol step counts in columns, following only the members with
    something to do); below, row by row. The same answers either way, under the consumer
    protocol and the classic one, for a leave, a join, new partitions and a rolling restart, and
    for rehearsed migrations from a cooperative and an eager protocol (whose classic members the
    consumer-protocol steps host)."""
    from assignor.whatif import state
    from assignor.workloads import java_large

    rng = random.Random(seed)
    group = java_large(rng.choice(["uniform", "random50"]), rng.randrange(2, 6), rng.randrange(5, 40),
                       rng.randrange(3, 12))
    plan = assign("cooperative-sticky", group)
    group = Group(group.topics, [Member(m.id, m.topics, plan.assignment[m.id], 3) for m in group.members])
    topic = next(iter(group.topics))
    events = [parse_event(f"member_leave:{group.members[1].id}"),
              parse_event(f"member_join:late:{','.join(group.members[0].topics)}"),
              parse_event(f"partitions_added:{topic}:{group.topics[topic] + 3}"), Event("rolling_restart")]
    strategies = ["kip848-uniform", "kip848-range", "cooperative-sticky"]

    def answers() -> tuple[Any, ...]:
        return (whatif.run(group, events, strategies, include_plans=True),
                *(whatif.migrate(group, events[:2], "kip848-uniform", [classic], include_plans=True)
                  for classic in ("cooperative-sticky", "sticky")))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(state, "COLUMNS_FROM", 0)
        in_columns = answers()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(state, "COLUMNS_FROM", 10**9)
        row_by_row = answers()
    assert json.dumps(in_columns, sort_keys=True, default=str) == json.dumps(row_by_row, sort_keys=True, default=str)
