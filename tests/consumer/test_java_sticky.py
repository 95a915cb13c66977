"""`java-sticky` and `java-cooperative-sticky` against the Java client's own recorded calls.

Every ``sticky`` / ``cooperative-sticky`` call of every scenario file in ``tests/golden/scenarios``
(files dropped in beside them are picked up too) must give Java's output member by member, in
Java's order, with the builder Java used and the leader's remembered generation after it.
"""

from __future__ import annotations

import json
from unittest import mock

import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from assignor import Group, JavaAssignorFailure, Member, Plan, TopicPartition, assign, validate, whatif
from assignor.ordering import hashmap_order
from assignor.strategies.java_sticky import JavaStickyAssignor, columns
from tests import golden
from tests.budget import examples
from tests.conftest import check

TP = TopicPartition


def _all_calls() -> list[tuple[str, str, dict]]:
    """(id, Java assignor, call) for every file in the scenarios directory, index or not."""
    found = []
    for path in sorted(golden.SCENARIOS.glob("*.json")):
        if path.name == "index.json":
            continue
        scenario = json.loads(path.read_text())
        for r in scenario["rounds"]:
            for strategy in ("sticky", "cooperative-sticky"):
                for j, call in enumerate(r["results"][strategy]["calls"]):
                    found.append((f"{path.stem}-r{r['round']}-{strategy}-c{j}", strategy, call))
    return found


CALLS = _all_calls()


@pytest.mark.parametrize(("call_id", "strategy", "call"), CALLS, ids=[c[0] for c in CALLS])
def test_plan_equals_javas_in_javas_order(call_id, strategy, call):
    group = golden.group_of(call)
    leader = JavaStickyAssignor(cooperative=strategy == "cooperative-sticky",
                                max_generation=call["input"]["leader_max_generation_before"])
    plan = leader.assign(group)
    expected = {m: [TP(t, p) for t, p in tps] for m, tps in call["output"].items()}
    assert plan.assignment == expected
    assert leader.builder == call["builder"]
    assert leader.max_generation == call["leader_max_generation_after"]
    report = validate.report(group, plan)
    assert report["valid"], report["errors"]


def test_every_call_is_covered_and_both_builders_are():
    builders = {(strategy, call["builder"]) for _, strategy, call in CALLS}
    assert len(CALLS) >= 140
    assert builders == {(s, b) for s in ("sticky", "cooperative-sticky") for b in ("constrained", "general")}


@pytest.mark.parametrize(("call_id", "strategy", "call"), CALLS, ids=[c[0] for c in CALLS])
def test_member_hashmap_order_is_javas(call_id, strategy, call):
    ids = [sub["member_id"] for sub in call["input"]["subscriptions"]]
    assert hashmap_order(ids) == call["input"]["subscriptions_hashmap_iteration_order"]


def test_strategies_are_selectable_by_name_with_a_fresh_leader():
    call = next(c for _, s, c in CALLS if s == "sticky" and c["input"]["leader_max_generation_before"] == -1)
    plan = assign("java-sticky", golden.group_of(call))
    assert plan.strategy == "java-sticky"
    assert plan.assignment == {m: [TP(t, p) for t, p in tps] for m, tps in call["output"].items()}


def test_the_leader_remembers_its_highest_generation():
    """Java's maxGeneration is a field of the assignor instance: members reporting generation 3
    to a leader that saw 5 are all 'older', so their partitions become previous owners."""
    leader = JavaStickyAssignor()
    leader.assign(Group({"t": 2}, [Member("a", ["t"], generation=5)]))
    leader.assign(Group({"t": 2}, [Member("a", ["t"], [TP("t", 0)], generation=3)]))
    assert leader.max_generation == 5


# -- where Java fails --------------------------------------------------------------------------


#: A kept claim of a partition the topic does not have: Java's two-pointer walk over the
#: partitions stops at it and counts every later partition as unassigned, so its round-robin
#: runs out of members (IllegalStateException).
THROWS = Group({"t": 1}, [Member("m0", ["t"], generation=2), Member("m1", ["t"], generation=2),
                          Member("m2", ["t"], [TP("t", 2)], generation=2)])


def test_constrained_builder_failure_is_our_error():
    with pytest.raises(JavaAssignorFailure, match="IllegalStateException"):
        assign("java-sticky", THROWS)
    check(THROWS, assign("sticky", THROWS))  # ours drops the claim


@pytest.mark.parametrize(("owned", "message"), [
    # u-5 sorts before the claims of t: every partition of t after it is handed out again.
    ([TP("u", 5), TP("t", 0)], "two members"),
    # t-9 sorts last: Java returns a plan with a partition that does not exist.
    ([TP("t", 0), TP("t", 9)], "does not exist"),
])
def test_general_builder_broken_plans_are_our_error(owned, message):
    group = Group({"t": 4, "u": 2}, [Member("a", ["t", "u"], owned, generation=2),
                                     Member("b", ["t"], [TP("t", 1)], generation=2)])
    with pytest.raises(JavaAssignorFailure, match=message):
        assign("java-cooperative-sticky", group)


def test_whatif_reports_javas_failure_as_a_step_and_goes_on():
    group = THROWS
    result = whatif.run(group, [whatif.parse_event("member_join:c:t")], ["java-sticky", "sticky"], check=True)
    java = result["strategies"]["java-sticky"]
    assert "IllegalStateException" in java["steps"][0]["failed"]
    # Nothing changed hands, so the members rejoin with the same claim, and Java fails again.
    assert "IllegalStateException" in java["steps"][1]["failed"]
    assert java["summary"]["failed_steps"] == 2
    assert result["comparisons"]["java-sticky vs sticky"]["java_failures"] == 2
    assert result["strategies"]["sticky"]["summary"]["failed_steps"] == 0


def test_an_empty_subscription_passes_javas_equality_test_and_java_fails():
    """Java's test for equal subscriptions starts from the first non-empty one, so a member
    with none does not break it; the constrained builder then deals it partitions of topics it
    does not subscribe to."""
    group = Group({"a": 3, "b": 4}, [Member("m0", []), Member("m1", ["a", "b"])])
    with pytest.raises(JavaAssignorFailure, match="does not subscribe to"):
        assign("java-sticky", group)
    check(group, assign("sticky", group))


# -- Java's behaviour kept, and flagged ---------------------------------------------------------


def test_javas_cooperative_plans_hand_nothing_over_while_another_member_claims_it():
    """Java 4.3.0's cooperative assignor withholds every partition changing hands (KAFKA-14639's
    highest-generation owner keeps its partitions; KAFKA-15170 counts those it drops): over every
    recorded cooperative call, no partition goes to a member while another member that is not
    its rightful owner still claims it."""
    for call_id, call in golden.calls("cooperative-sticky"):
        group = golden.group_of(call)
        report = validate.report(group, golden.java_plan(call, "cooperative-sticky"))
        assert report["valid"] and report["unsafe_handovers"] == 0, call_id


def test_a_handover_while_claimed_is_flagged_for_java_and_an_error_for_ours():
    """The oracle's rule, on a hand-made plan: a partition given to a member while another
    member claims it, and that member is not its rightful owner."""
    group = Group({"t": 2}, [Member("a", ["t"], [TP("t", 0), TP("t", 1)], generation=2), Member("b", ["t"])])
    plan = {"a": [TP("t", 0)], "b": [TP("t", 1)]}
    java = validate.report(group, Plan("java-cooperative-sticky", plan))
    assert java["valid"] and java["unsafe_handovers"] == 1 and any("still claimed" in f for f in java["flags"])
    ours = validate.report(group, Plan("cooperative-sticky", plan))
    assert not ours["valid"]
    assert ours["errors"] == ["TopicPartition(topic='t', partition=1) given to b while a still owns it"]


# -- the fast paths against Java's steps as Java writes them ------------------------------------

TOPICS = ["a", "b", "c", "d"]


@st.composite
def groups(draw):
    """Groups a Java leader can meet: alike or different subscriptions, claims with conflicts,
    stale generations, repeats and partitions the topic does not have, and sometimes racks."""
    topics = {t: draw(st.integers(0, 9)) for t in TOPICS[: draw(st.integers(1, 4))]}
    names = list(topics)
    alike = draw(st.booleans())
    shared = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
    racked = draw(st.booleans())
    members = []
    for i in range(draw(st.integers(1, 7))):
        subscribed = shared if alike else draw(st.lists(st.sampled_from(names), unique=True))
        owned = draw(st.lists(st.tuples(st.sampled_from(names), st.integers(0, 10)), max_size=8))
        members.append(Member(f"consumer-{i}", subscribed, [TP(t, p) for t, p in owned],
                              generation=draw(st.integers(-1, 3)),
                              rack=draw(st.sampled_from(["r0", "r1", None])) if racked else None))
    racks = {t: [[f"r{(p + j) % 2}"] for p in range(n)] for j, (t, n) in enumerate(topics.items())} if racked \
        else None
    return Group(topics, members, racks)


def _outcome(leader: JavaStickyAssignor, group: Group):
    try:
        return leader.assign(group).assignment, leader.max_generation
    except JavaAssignorFailure as failure:
        return str(failure)


@examples(400, suppress_health_check=[HealthCheck.too_slow])
@given(groups(), st.booleans(), st.integers(-1, 4))
def test_fast_paths_equal_javas_steps(group, cooperative, remembered):
    fast = _outcome(JavaStickyAssignor(cooperative, remembered), group)
    plain = _outcome(JavaStickyAssignor(cooperative, remembered, plain=True), group)
    assert fast == plain
    if not isinstance(fast, str):
        report = validate.report(group, Plan("java-cooperative-sticky" if cooperative else "java-sticky", fast[0]))
        assert report["valid"], report["errors"]


@st.composite
def kept_groups(draw):
    """Groups whose claims Java keeps whole (each partition claimed once, by a member of the
    topic): some members over quota, some new, sometimes on other racks than their partitions."""
    topics = {t: draw(st.integers(1, 9)) for t in TOPICS[: draw(st.integers(1, 4))]}
    partitions = draw(st.permutations([TP(t, p) for t, n in topics.items() for p in range(n)]))
    count = draw(st.integers(1, 7))
    cuts = sorted(draw(st.lists(st.integers(0, len(partitions)), min_size=count - 1, max_size=count - 1)))
    racked = draw(st.booleans())
    members = [Member(f"consumer-{i}", list(topics), partitions[start:end], generation=1,
                      rack=draw(st.sampled_from(["r0", "r1"])) if racked else None)
               for i, (start, end) in enumerate(zip([0, *cuts], [*cuts, len(partitions)]))]
    racks = {t: [[f"r{(p + j) % 2}"] for p in range(n)] for j, (t, n) in enumerate(topics.items())} if racked \
        else None
    return Group(topics, members, racks)


@examples(400, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(groups(), kept_groups()), st.booleans(), st.integers(-1, 4))
def test_columns_equal_javas_steps_at_every_size(group, cooperative, remembered):
    """The column steps (`columns`: whether every claim can be kept, what is left to deal) on
    from the first claim, against Java's steps: claims of other topics, of partitions the topic
    lacks, of one partition by two members, over quota and on another rack."""
    with mock.patch.object(columns, "COLUMNS_FROM", 0):
        fast = _outcome(JavaStickyAssignor(cooperative, remembered), group)
    assert fast == _outcome(JavaStickyAssignor(cooperative, remembered, plain=True), group)


@examples(30)
@given(st.integers(2, 12), st.integers(1, 6), st.integers(1, 40), st.randoms(use_true_random=False))
def test_fast_paths_equal_javas_steps_on_larger_random_groups(members, topics, partitions, rng):
    """random50-like groups (the shape of Java's slow cases), fresh and after a leave."""
    names = [f"t{j}" for j in range(topics)]
    group = Group({t: partitions for t in names},
                  [Member(f"c{i:02d}", [t for t in names if rng.random() < 0.5] or [names[i % topics]])
                   for i in range(members)])
    plan = assign("java-sticky", group)
    assert plan.assignment == JavaStickyAssignor(plain=True).assign(group).assignment
    left = Group(group.topics, [Member(m.id, m.topics, plan.assignment[m.id], generation=1)
                                for i, m in enumerate(group.members) if i % 3 != 2])
    assert assign("java-sticky", left).assignment == JavaStickyAssignor(plain=True).assign(left).assignment


# -- the leader path: Java's SyncGroup bytes -----------------------------------------------------


@pytest.mark.parametrize(("call_id", "strategy", "call"), CALLS[::7], ids=[c[0] for c in CALLS[::7]])
def test_leader_sync_writes_what_a_java_leader_writes(call_id, strategy, call):
    """From the members' recorded JoinGroup bytes to SyncGroup bytes: Java's plan, in Java's
    order, with no user data, as Java's ConsumerProtocol writes an assignment."""
    from assignor import protocol
    from assignor.leader import LeaderCache, sync

    java = "java-cooperative-sticky" if strategy == "cooperative-sticky" else "java-sticky"
    cache = LeaderCache()
    cache.leaders[java] = JavaStickyAssignor(java == "java-cooperative-sticky",
                                             call["input"]["leader_max_generation_before"])
    metadata = {sub["member_id"]: bytes.fromhex(sub["wire_v3_hex"]) for sub in call["input"]["subscriptions"]}
    result = sync(strategy, 9, call["input"]["topics"], metadata, cache=cache, strategy=java)
    for member, tps in call["output"].items():
        expected = protocol.encode_assignment(protocol.Assignment([TP(t, p) for t, p in tps], None))
        assert result.assignments[member] == expected, member
    with pytest.raises(Exception, match="plans the 'sticky' protocol"):
        sync("cooperative-sticky" if java == "java-sticky" else "range", 9, call["input"]["topics"], metadata,
             strategy="java-sticky")


@pytest.mark.parametrize(("stride", "moved", "jvm_first"), [(64, 12, 197), (128, 12, 389), (64, 30, 453)])
def test_a_move_back_takes_the_partition_javas_hash_set_gives_first(stride, moved, jvm_first):
    """Java's ``getTheActualPartitionToBeMoved`` moves back the first partition of the pair's
    ``HashSet<TopicPartition>``: after `moved` partitions of a topic `stride` apart went from a
    to b, one of the set's bins holds nine or more and is a red-black tree, whose root the set
    iterates first (the JVM gave `jvm_first`; a plain bin gives the first moved, 5)."""
    from assignor.strategies.java_sticky.movements import Movements

    movements = Movements()
    for k in range(moved):
        movements.move(TP("t", 5 + stride * k), "a", "b")
    assert movements.to_move(TP("t", 1), "b", "a") == TP("t", jvm_first)
    movements.move(TP("t", jvm_first), "b", "a")  # (moved back: no record left of it)
    assert TP("t", jvm_first) not in movements.pair_of


#: A group Java's ``StickyAssignor`` never plans: its general builder's reassignment loop
#: (``performReassignments``: ``do { ... } while (modified)``) moves a partition of t0 one way
#: and another back every pass, forever (kafka-clients 4.3.1 in a JVM is still at it after 15 s:
#: ``tests/integration/test_java_assignors.py``). Found by that test's random groups; the new
#: member subscribes to t2 and t0, whose owners are balanced among themselves but not with it.
LOOPING = Group({"t0": 11, "t1": 3, "t2": 45}, [
    Member(member, topics, owned=[TP(t, p) for t, ps in owned.items() for p in ps], generation=5 if owned else -1)
    for member, topics, owned in [
        ("c-254502", ["t2"], {"t2": [9, 16, 23, 27, 33, 40, 26]}),
        ("consumer-159621", ["t2"], {"t2": [0, 1, 2, 4, 11, 18, 25, 35, 42, 36]}),
        ("c-315582", ["t0"], {"t0": [2, 5, 8, 0, 6]}),
        ("app-1-294847", ["t0"], {"t0": [1, 4, 7, 10, 3, 9]}),
        ("consumer-731428", ["t2"], {"t2": [6, 13, 20, 30, 37, 44, 5, 43]}),
        ("c-719976", ["t2"], {"t2": [3, 10, 17, 24, 28, 34, 41, 29]}),
        ("consumer-76405", ["t2"], {"t2": [7, 14, 21, 31, 38, 12]}),
        ("consumer-91129", ["t1", "t2"], {"t2": [8, 15, 22, 32, 39, 19]}),
        ("consumer-310329", ["t2", "t0"], {})]])


def test_where_javas_reassignment_loop_never_ends_ours_says_so_at_once():
    """Ours follows Java's steps, so it would loop forever too: the loop notices it is back in a
    state it was in (then it cycles: the steps are deterministic) and raises; what-if records
    the step as failed and goes on."""
    with pytest.raises(JavaAssignorFailure, match="never returns"):
        assign("java-sticky", LOOPING)
    result = whatif.run(LOOPING, [], ["java-sticky"])["strategies"]["java-sticky"]["steps"][0]
    assert "never returns" in result["failed"]
