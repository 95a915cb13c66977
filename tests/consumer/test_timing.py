"""Time as the coordinator keeps it in the rehearsal (`assignor.whatif.timing`): a restarted
member back before the coordinator acts on its leave leaves and returns in one step, taking its
predecessor's place; otherwise its leave is a rebalance of its own. The rule's cases, the steps
it gives under both protocols and during the upgrade, and the settings held together wherever a
user gives them (the CLI, the service, the fleet job). The real broker's side is in
tests/integration/test_quick_restarts.py."""

from __future__ import annotations

import dataclasses
import json

import pytest

from api.models import WhatIfRequest
from assignor import Group, Member, TopicPartition, cli, whatif
from assignor.errors import WhatIfError
from assignor.whatif.refusals import MAX_SIZE_BOUNDS, POLICIES
from assignor.whatif.refusals import SETTINGS as CONVERSION_SETTINGS
from assignor.whatif.timing import BOUNDS, SETTINGS, Timing, timing_of

T = "t"


def balanced(members: int = 3, partitions: int = 6) -> Group:
    per = partitions // members
    return Group({T: partitions}, [Member(f"m{i}", [T], [TopicPartition(T, p) for p in range(i * per, (i + 1) * per)],
                                          generation=3) for i in range(members)])


@pytest.mark.parametrize(("timing", "where", "in_time"), [
    # Unset: a restart is slower than anything (each leave is a rebalance of its own).
    (Timing(), {"classic": True, "others": 2, "consumer_others": 0, "at_rest": True}, False),
    # Classic: the last of the two others is expected to rejoin after 3 s * 2/3 = 2 s.
    (Timing(1.9), {"classic": True, "others": 2, "consumer_others": 0, "at_rest": True}, True),
    (Timing(2.1), {"classic": True, "others": 2, "consumer_others": 0, "at_rest": True}, False),
    # A member alone: its leave empties the group at once.
    (Timing(0.0), {"classic": True, "others": 0, "consumer_others": 0, "at_rest": True}, False),
    # Consumer protocol, nobody else heartbeating with it (the upgrade's classic members): in time.
    (Timing(600.0), {"classic": False, "others": 5, "consumer_others": 0, "at_rest": True}, True),
    # At rest: the first of two others' heartbeats expected after 5 s / 3.
    (Timing(1.6), {"classic": False, "others": 2, "consumer_others": 2, "at_rest": True}, True),
    (Timing(1.7), {"classic": False, "others": 2, "consumer_others": 2, "at_rest": True}, False),
    # Right after a target: no new one before the assignment interval has run out.
    (Timing(4.0, consumer_heartbeat_ms=500, assignment_interval_ms=5000),
     {"classic": False, "others": 2, "consumer_others": 2, "at_rest": False}, True),
    (Timing(4.0, consumer_heartbeat_ms=500, assignment_interval_ms=5000),
     {"classic": False, "others": 2, "consumer_others": 2, "at_rest": True}, False),
    (Timing(0.1, consumer_heartbeat_ms=500, assignment_interval_ms=0),
     {"classic": False, "others": 4, "consumer_others": 4, "at_rest": False}, False),
])
def test_back_in_time(timing, where, in_time):
    assert timing.back_in_time(**where) is in_time


@pytest.mark.parametrize(("values", "message"), [
    ({"restart_seconds": -1}, "restart_seconds: expected seconds in [0, 86,400], got -1"),
    ({"restart_seconds": float("nan")}, "restart_seconds"),
    ({"restart_seconds": True}, "restart_seconds"),
    ({"consumer_heartbeat_ms": 0}, "consumer_heartbeat_ms: expected milliseconds in [1, 2147483647]"),
    ({"assignment_interval_ms": 2**31}, "assignment_interval_ms"),
    ({"classic_heartbeat_ms": 1.5}, "classic_heartbeat_ms"),
    ({"session_timeout_ms": 0}, "session_timeout_ms: expected milliseconds in [1, 2147483647]"),
    ({"rebalance_timeout_ms": 1}, "rebalance_timeout_ms: not a timing setting"),
])
def test_settings_kafka_would_refuse_are_refused(values, message):
    with pytest.raises(WhatIfError, match=message.replace("[", r"\[").replace("]", r"\]")):
        timing_of(values)


def steps_of(result, strategy):
    return [(s["event"].split(":")[0] if s["event"].startswith("restart") else s["event"], s["moved"], s["revoked"])
            for s in result["strategies"][strategy]["steps"]]


@pytest.mark.parametrize("strategy", ["kip848-uniform", "cooperative-sticky", "java-cooperative-sticky"])
def test_a_quick_rolling_restart_moves_nothing_each_member_takes_its_predecessors_place(strategy):
    """After a join (a target just computed), each member back within the interval (consumer
    protocol) or before the others have rejoined (classic): one step per member, nothing moves,
    and each member ends with what it held (the partitions divide evenly: none is left over for
    the uniform assignor to give to another member)."""
    group = balanced(3, 12)
    events = [whatif.parse_event("member_join:m3:t"), whatif.parse_event("rolling_restart")]
    timing = Timing(0.3, consumer_heartbeat_ms=500, assignment_interval_ms=5000)
    quick = whatif.run(group, events, [strategy], include_plans=True, timing=timing, check=True)
    steps = quick["strategies"][strategy]["steps"]
    restarts = steps[2:]
    assert len(restarts) == 4 and all("back after 0.3 s" in s["event"] for s in restarts)
    assert [(s["moved"], s["revoked"]) for s in restarts] == [(0, 0)] * 4
    assert steps[-1]["assignment"] == steps[1]["assignment"]
    # Slow restarts (the default): a leave and a rejoin each, and partitions move.
    slow = whatif.run(group, events, [strategy], timing=whatif.DEFAULT_TIMING)["strategies"][strategy]["steps"]
    assert len(slow) == 2 + 8 and sum(s["moved"] for s in slow[2:]) > 0


def test_the_first_restart_of_a_run_finds_the_group_at_rest():
    """Rolling restart as the first event: the last target was long ago, so only the others'
    heartbeats (expected after 0.5 s / 3) come before the member is back: its leave is a step of
    its own; the restarts after it come within the interval."""
    timing = Timing(0.3, consumer_heartbeat_ms=500, assignment_interval_ms=5000)
    result = whatif.run(balanced(), [whatif.parse_event("rolling_restart")], ["kip848-uniform"], timing=timing)
    labels = [s["event"] for s in result["strategies"]["kip848-uniform"]["steps"][1:]]
    assert labels == ["restart m0: leave", "restart m0: rejoin", *(f"restart m{i}: back after 0.3 s, before the "
                                                                    "rebalance its leave starts" for i in (1, 2))]


def test_a_quick_upgrade_converts_at_the_first_return_and_moves_nothing():
    """The upgrade: the first member is back under the consumer protocol before the classic
    rebalance its leave started completes, and converts the group; the others are back before the
    next target (the converted group's only other consumer-protocol members are those back
    already, and the interval has just started). Each returns to what it held."""
    group = balanced()
    timing = Timing(0.3, assignment_interval_ms=5000)
    migration = whatif.migrate(group, [], "kip848-uniform", ["cooperative-sticky"], timing=timing,
                               include_plans=True, check=True)
    steps = migration["upgrade"]["steps"]
    assert len(steps) == 3 and "converting to kip848-uniform" in steps[0]["event"]
    assert [(s["moved"], s["revoked"]) for s in steps] == [(0, 0)] * 3
    renamed = {whatif.consumer_member_id(m.id): sorted([tp.topic, tp.partition] for tp in m.owned)
               for m in group.members}
    assert {m: sorted(v) for m, v in steps[-1]["assignment"].items()} == renamed
    assert migration["upgrade"]["moved"] == 0
    slow = whatif.migrate(group, [], "kip848-uniform", ["cooperative-sticky"])
    assert slow["upgrade"]["moved"] > 0 and len(slow["upgrade"]["steps"]) == 6


def test_a_quick_restart_is_a_new_member_that_claims_nothing():
    """The member back under its old id is a new consumer: its predecessor's partitions are
    free for the rebalance, not claimed by it (under cooperative-sticky a claim would count them
    as kept): they are reassigned from the member that left, and nothing moves between members."""
    group = balanced(2, 4)
    timing = Timing(0.1, classic_heartbeat_ms=3000)
    result = whatif.run(group, [whatif.parse_event("rolling_restart")], ["cooperative-sticky"], timing=timing,
                        include_plans=True)
    first = result["strategies"]["cooperative-sticky"]["steps"][1]
    assert first["rounds"] == 1 and first["revoked"] == 0 and first["moved"] == 0 and first["reassigned"] == 2
    assert first["assignment"]["m0"] == [[T, 0], [T, 1]]


def test_the_timing_settings_are_the_same_everywhere_a_user_gives_them():
    """One list (`SETTINGS`), with its bounds (`BOUNDS`): the dataclass, the CLI's flags, the
    service's fields and their limits."""
    assert list(SETTINGS) == list(BOUNDS) == [f.name for f in dataclasses.fields(Timing)]
    import argparse

    from pipeline.cli import add_jobs

    jobs = argparse.ArgumentParser()
    add_jobs(jobs.add_subparsers(dest="job"))
    for parser in (cli._parser()._subparsers._group_actions[0].choices["whatif"],
                   jobs._subparsers._group_actions[0].choices["fleet-whatif"]):
        flags = {a.dest: a.option_strings for a in parser._actions}
        assert all(flags[name] == ["--" + name.replace("_", "-")] for name in [*SETTINGS, *CONVERSION_SETTINGS])
    schema = WhatIfRequest.model_json_schema()["properties"]
    for name, (low, high) in BOUNDS.items():
        number = next(k for k in schema[name]["anyOf"] if k["type"] != "null")
        assert (number["minimum"], number["maximum"]) == (low, high), name
        assert schema[name]["description"] == SETTINGS[name]
    for name, meaning in CONVERSION_SETTINGS.items():
        assert schema[name]["description"] == meaning
    policy = next(k for k in schema["migration_policy"]["anyOf"] if k.get("type") != "null")
    assert policy["enum"] == list(POLICIES)
    size = next(k for k in schema["consumer_max_size"]["anyOf"] if k["type"] != "null")
    assert (size["minimum"], size["maximum"]) == MAX_SIZE_BOUNDS


def test_the_cli_takes_the_flags(capsys, tmp_path):
    path = tmp_path / "group.json"
    path.write_text(json.dumps({"topics": {T: 6}, "members": [
        {"id": m.id, "topics": [T], "owned": [[tp.topic, tp.partition] for tp in m.owned], "generation": 3}
        for m in balanced().members]}))
    argv = ["whatif", str(path), "--strategy", "kip848-uniform", "--event", "member_join:m3:t", "--event",
            "rolling_restart", "--json", "--restart-seconds", "0.3", "--consumer-heartbeat-ms", "500",
            "--assignment-interval-ms", "5000"]
    assert cli.main(argv) == 0
    steps = json.loads(capsys.readouterr().out)["strategies"]["kip848-uniform"]["steps"]
    assert len(steps) == 6 and sum(s["moved"] for s in steps[2:]) == 0
    assert cli.main([*argv[:-6], "--restart-seconds", "-2"]) == 2
    assert capsys.readouterr().err == ("assignor: error: restart_seconds: expected seconds in [0, 86,400], "
                                       "got -2.0\n")


def test_a_later_event_quick_under_one_protocol_only_is_compared_as_a_whole():
    """1.8 s away: before the classic rebalance completes (3 s * 2/3), after the consumer
    protocol's next heartbeat is expected (5 s / 3): the classic side restarts in one step per
    member, the consumer side in two; the later event is then compared as one."""
    group = balanced()
    events = [whatif.parse_event("rolling_restart"), whatif.parse_event("member_leave:m0")]
    migration = whatif.migrate(group, events, "kip848-uniform", ["cooperative-sticky"],
                               timing=Timing(restart_seconds=1.8), check=True)
    restart, leave = migration["events"]
    assert restart["event"] == "rolling_restart" and leave["event"] == "member_leave:m0"
    assert restart["consumer"]["moved"] == 6 and restart["classic"]["cooperative-sticky"]["moved"] == 0
    assert restart["saved"]["cooperative-sticky"]["moves"] == -6


def test_a_static_member_away_longer_than_its_session_is_removed_and_joins_again():
    static = Group({T: 6}, [Member(m.id, m.topics, m.owned, 3, group_instance_id=f"i-{m.id}")
                            for m in balanced().members])
    within = whatif.run(static, [whatif.parse_event("rolling_restart")], ["cooperative-sticky"],
                        timing=Timing(restart_seconds=30))["strategies"]["cooperative-sticky"]["steps"]
    assert [s["event"] for s in within[1:]] == [f"restart m{i}: static, back within its session" for i in range(3)]
    away = whatif.run(static, [whatif.parse_event("rolling_restart")], ["cooperative-sticky"],
                      timing=Timing(restart_seconds=60))["strategies"]["cooperative-sticky"]["steps"]
    assert [s["event"] for s in away[1:3]] == ["restart m0: static, away longer than its session: leave",
                                               "restart m0: rejoin"]
    assert len(away) == 1 + 6 and sum(s["moved"] for s in away) > 0
    short = whatif.migrate(static, [], "kip848-uniform", ["cooperative-sticky"],
                           timing=Timing(restart_seconds=7, session_timeout_ms=6000))
    assert len(short["upgrade"]["steps"]) == 6 and short["upgrade"]["moved"] > 0


@pytest.mark.parametrize(("timing", "members", "since_last", "seconds"), [
    (Timing(), 4, None, 1.0),  # the first of four heartbeats every 5 s: 5/5
    (Timing(), 0, None, None),  # nobody heartbeats under the consumer protocol: no target until a join
    (Timing(assignment_interval_ms=3000), 4, 0.5, 2.5),  # the interval has 2.5 s to run
    (Timing(assignment_interval_ms=3000), 4, 2.5, 1.0),
    (Timing(assignment_interval_ms=3000), 4, None, 1.0),  # at rest: the last target long ago
])
def test_until_target(timing, members, since_last, seconds):
    assert timing.until_target(members, since_last) == seconds


def test_a_leave_waits_for_the_next_target_and_a_join_computes_it():
    """Under the consumer protocol the departed member's partitions are unowned from its leave:
    the target comes at the first of the others' heartbeats (5 s / 3 at rest), then each new
    owner takes its share at its own next heartbeat. A joining member's own heartbeat computes
    the target: it has what is free at once."""
    timing = Timing(consumer_heartbeat_ms=1000)
    result = whatif.run(balanced(), [whatif.parse_event("member_leave:m2"), whatif.parse_event("member_join:m3:t")],
                        ["kip848-uniform"], timing=timing)
    leave, join = result["strategies"]["kip848-uniform"]["steps"][1:]
    wait = timing.until_target(2, None)
    assert wait == pytest.approx(1 / 3)
    assert leave["max_unowned_seconds"] > wait and leave["seconds"] == pytest.approx(leave["max_unowned_seconds"])
    assert leave["max_unowned_seconds"] == pytest.approx(leave["max_unowned"] * 1.0)
    assert join["rounds"] == 1 and join["seconds"] <= 1.0  # (m3 takes the rest at its next heartbeat)


def test_eager_members_revocations_are_an_expected_value_with_its_range(capsys, tmp_path):
    """An eager (range) group's upgrade: members not restarted yet rejoin once or twice as their
    heartbeats fall; the rehearsal gives the expected count and its least and most, step by step
    and in all (a cooperative group's count has no range), and the CLI prints them."""
    both = ["orders", "payments"]  # (the README's group: c2 reads one topic of two)
    group = Group({"orders": 4, "payments": 2}, [
        Member("c0", both, [TopicPartition("orders", p) for p in range(3)] + [TopicPartition("payments", 0)], 4),
        Member("c1", both, [TopicPartition("orders", 3), TopicPartition("payments", 1)], 4),
        Member("c2", ["orders"])])
    eager = whatif.migrate(group, [], "kip848-uniform", ["range"])["upgrade"]
    least, most = eager["revoked_range"]
    assert least <= eager["revoked"] <= most and least < most
    assert any("revoked_range" in s for s in eager["steps"])
    cooperative = whatif.migrate(group, [], "kip848-uniform", ["cooperative-sticky"])["upgrade"]
    assert cooperative["revoked_range"] == [cooperative["revoked"]] * 2
    assert not any("revoked_range" in s for s in cooperative["steps"])
    path = tmp_path / "group.json"
    path.write_text(json.dumps({"topics": group.topics, "members": [
        {"id": m.id, "topics": list(m.topics), "owned": [[tp.topic, tp.partition] for tp in m.owned],
         "generation": m.generation} for m in group.members]}))
    assert cli.main(["whatif", str(path), "--migrate", "kip848-uniform", "--strategy", "range"]) == 0
    assert f"{eager['revoked']} ({least}-{most}) revoked" in capsys.readouterr().out


def test_changes_that_come_together():
    """Three joins sent at once: one classic rebalance; under the consumer protocol the first
    joining heartbeat computes a target at once and the other two share the next (with an
    assignment interval of 0, each its own); leaves compute nothing, so leaves and a join are
    one target (Apache Kafka 4.3.1: tests/integration/test_kip848_broker.py)."""
    joins = whatif.parse_event("member_join:a:t+member_join:b:t+member_join:c:t")
    assert str(joins) == "member_join:a:t+member_join:b:t+member_join:c:t"

    def labels(event, strategy, timing=whatif.DEFAULT_TIMING):
        steps = whatif.run(balanced(), [event], [strategy], timing=timing)["strategies"][strategy]["steps"][1:]
        return [s["event"] for s in steps]

    assert labels(joins, "cooperative-sticky") == [str(joins)]
    assert labels(joins, "kip848-uniform") == ["member_join:a:t: a target at once",
                                               "member_join:b:t+member_join:c:t: one target at the next computation"]
    assert labels(joins, "kip848-uniform", Timing(assignment_interval_ms=0)) == [
        f"member_join:{m}:t: a target at once" for m in "abc"]
    mixed = whatif.parse_event("member_leave:m0+member_leave:m1+member_join:a:t+partitions_added:t:9")
    assert labels(mixed, "kip848-uniform") == ["member_leave:m0+member_leave:m1+member_join:a:t: a target at once",
                                               "partitions_added:t:9: one target at the next computation"]
    leaves = whatif.parse_event("member_leave:m0+member_leave:m1")
    assert labels(leaves, "kip848-range") == ["member_leave:m0+member_leave:m1"]
    migration = whatif.migrate(balanced(), [joins], "kip848-uniform", ["cooperative-sticky"], check=True)
    assert [e["event"] for e in migration["events"]] == [str(joins)]  # two consumer steps, one classic: as one


@pytest.mark.parametrize(("text", "message"), [
    ("member_join:a:t+rolling_restart", "together: rolling_restart restarts members"),
    ("rollback:m0+member_leave:m1", "together: rollback restarts members"),
    ("member_join:a:t+", "member_join: 't\\+' is not a topic"),
    ("member_leave:m0+topic_deleted:t+", "topic_deleted: 't\\+' is not a topic"),
])
def test_changes_together_that_cannot_be(text, message):
    with pytest.raises(WhatIfError, match=message):
        whatif.parse_event(text)
