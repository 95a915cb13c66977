"""The Spark jobs: the Spark path equals the single-process path row for row, bad rows go to
errors with their reason, and the numbers are the core's (whatif, Java-exact partitioning)."""

from __future__ import annotations

import base64
import json

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from assignor import whatif
from assignor.cli import main
from assignor.errors import AssignorError
from assignor.model import Group, Member, TopicPartition
from assignor.partitioners import partition_for_key
from assignor.strategies import java_counterparts
from pipeline import fleet, sample, skew

STRATEGIES = list(whatif.ALL_STRATEGIES)
EVENTS = ["member_leave:consumer-0-0", "partitions_added:t007:96", "subscribe:consumer-1-1:t003"]
KEYS = ["cluster", "group_id", "kind", "strategy", "member_id"]


@pytest.fixture(scope="module")
def fleet_data(tmp_path_factory):
    out = tmp_path_factory.mktemp("fleet")
    return sample.write(out, groups=16, topics=10, records_count=20_000, seed=3)


def ordered(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.drop(columns=["plan_seconds"]).astype({"rack_locality": "float64"})
    frame = frame.astype(object).where(frame.notna(), None)  # one kind of missing value on both sides
    return frame.sort_values(KEYS, na_position="first", ignore_index=True, key=lambda c: c.astype(str))


def test_fleet_spark_equals_local(spark, fleet_data):
    groups = pq.read_table(fleet_data["groups"]).to_pandas()
    topics = pq.read_table(fleet_data["topics"]).to_pandas()
    local = fleet.run_local(groups, topics, EVENTS, STRATEGIES, include_plan=True)
    distributed = fleet.run_spark(spark, spark.read.parquet(str(fleet_data["groups"])),
                                  spark.read.parquet(str(fleet_data["topics"])), EVENTS, STRATEGIES,
                                  include_plan=True).toPandas()
    pd.testing.assert_frame_equal(ordered(local), ordered(distributed), check_dtype=False)
    results = local[local["kind"] == "result"]
    assert results.groupby(["cluster", "group_id"]).ngroups == 16 and len(results) == 16 * len(STRATEGIES)
    # switching/ from either path: the same values, of the same types (Spark's collected rows
    # came as floats where the local ones were integers)
    pd.testing.assert_frame_equal(fleet.switching(results),
                                  fleet.switching(distributed[distributed["kind"] == "result"]))
    errors = local[local["kind"] == "error"].set_index("member_id", drop=False)
    assert "unknown topic 'no-such-topic'" in errors.loc["ghost-reader", "reason"]
    assert "-4 is not in [0, 2147483647]" in errors.loc["negative-claim", "reason"]
    assert (errors["reason"] == "member_id is missing").sum() == 1


#: JSON lines a fleet's export can hold, each of which aborted the local job, was truncated, or
#: was planned by Spark with the bad field read as null.
HOSTILE_LINES = [
    {"cluster": "c", "group_id": "g", "member_id": "ok", "topics": ["t"], "owned": [{"topic": "t", "partition": 0}],
     "generation": 3, "rack": None},
    {"cluster": "c", "group_id": "g", "member_id": "owned-string", "topics": ["t"], "owned": "t-0"},
    {"cluster": "c", "group_id": "g", "member_id": "owned-pairs", "topics": ["t"], "owned": [["t", 1]]},
    {"cluster": "c", "group_id": "g", "member_id": "nested-topics", "topics": [["t"]]},
    {"cluster": "c", "group_id": "g", "member_id": "generation-x", "topics": ["t"], "generation": "x"},
    {"cluster": "c", "group_id": "g", "member_id": "float-partition", "topics": ["t"],
     "owned": [{"topic": "t", "partition": 1.5}]},
    {"cluster": "c", "group_id": "g", "member_id": "huge-topic", "topics": ["huge"]},
    {"cluster": "c", "group_id": "g2", "member_id": "no-topics"},
    {"group_id": "g3", "member_id": "no-cluster", "topics": ["t"]},
    {"cluster": "c", "group_id": "g", "member_id": "instance-number", "topics": ["t"], "group_instance_id": 7},
    {"cluster": "c", "group_id": "g", "member_id": "instance-space", "topics": ["t"], "group_instance_id": "i 1"},
    {"cluster": "c", "group_id": "g", "member_id": "p-static", "topics": ["t"], "group_instance_id": "i-1"},
    {"cluster": "c", "group_id": "g", "member_id": "q-same-instance", "topics": ["t"], "group_instance_id": "i-1"},
]
HOSTILE_REASONS = {
    "owned-string": "owned: expected a list, got str 't-0'",
    "owned-pairs": "owned[0]: expected {topic, partition}, got ['t', 1]",
    "nested-topics": "topics: expected topic names, got list ['t']",
    "generation-x": "generation: expected an integer, got str 'x'",
    "float-partition": "owned[0].partition of topic 't': expected an integer, got 1.5",
    "huge-topic": "unknown topic 'huge' (not in the cluster's topic table)",
    "no-topics": "topics is empty",
    "no-cluster": "cluster and group_id are needed",
    "instance-number": "group_instance_id: expected a string, got 7",
    "instance-space": ("member 'instance-space': group_instance_id must be 1-249 of a-z, A-Z, 0-9, '.', '_' and '-' "
                       "(Kafka's rule), got 'i 1'"),
    "q-same-instance": "group_instance_id 'i-1' is 'p-static''s already",
}


def test_malformed_rows_go_to_errors_the_same_on_spark_and_locally(spark, tmp_path):
    """Every malformed row is an error row naming the field, the rest of its group is planned,
    and Spark reads each line as the local path does (lines, not Spark's typed JSON reader)."""
    from pipeline.cli import _read_local, _read_spark

    groups, topics = tmp_path / "groups.jsonl", tmp_path / "topics.jsonl"
    groups.write_text("\n".join(json.dumps(row) for row in HOSTILE_LINES) + "\nnot json\n")
    topics.write_text(json.dumps({"cluster": "c", "topic": "t", "partitions": 4}) + "\n"
                      + json.dumps({"cluster": "c", "topic": "huge", "partitions": 1e12}) + "\n")
    local = fleet.run_local(_read_local(str(groups), "groups"), _read_local(str(topics), "topics"), [], ["sticky"])
    distributed = fleet.run_spark(spark, _read_spark(spark, str(groups), "groups"),
                                  _read_spark(spark, str(topics), "topics"), [], ["sticky"]).toPandas()
    pd.testing.assert_frame_equal(ordered(local), ordered(distributed), check_dtype=False)
    errors = local[local["kind"] == "error"]
    reasons = dict(zip(errors["member_id"], errors["reason"], strict=True))
    assert {m: reasons[m] for m in HOSTILE_REASONS} == HOSTILE_REASONS
    assert set(errors["reason"]) >= {"topic 'huge': partition count: 1000000000000 is not in [0, 2147483647]",
                                     "not a JSON object: 'not json'", "no usable member rows"}
    planned = local[local["kind"] == "result"]
    assert list(planned["group_id"]) == ["g"] and planned["members"].tolist() == [2]


def test_member_rows_are_read_with_their_columns_in_member_id_order_as_text():
    """A group's rows are read column by column (`fleet._member_rows`: one field per member
    column a row may hold) and taken in member id order as text, stably: a bad row's id (a
    number, a null) sorts by what it prints."""
    assert fleet._MemberRow._fields == fleet._OPTIONAL
    rows = pd.DataFrame({"member_id": ["b", 10, None, "a", 9, "b"], "topics": [["t"]] * 6, "owned": [[]] * 6,
                         "generation": [1, 2, 3, 4, 5, 6], "rack": [None] * 6, "group_instance_id": [None] * 6,
                         "topic_regex": [None] * 6, "member_type": [None] * 6, "protocol": [None] * 6,
                         "assignor": [None] * 6, "assignment_user_data": [None] * 6})
    read = fleet._member_rows(rows)
    assert [(r.member_id, r.generation) for r in read] == [(10, 2), (9, 5), (None, 3), ("a", 4), ("b", 1), ("b", 6)]
    assert all(type(r.generation) is int for r in read)


def test_static_members_rows_plan_as_the_engine_plans_them():
    """A static member's row carries its ``group_instance_id``: under range the static members
    are dealt to first, and their restarts (back within the session, KIP-345) move nothing, as the
    engine says for the same group; without the column, the group is all dynamic."""
    rows = pd.DataFrame([{"cluster": "c", "group_id": "g", "member_id": m, "topics": ["t"], "owned": [],
                          "generation": 1, "rack": None, "group_instance_id": i}
                         for m, i in (("a", None), ("b", "instance-2"), ("c", "instance-1"))])
    topics = pd.DataFrame({"topic": ["t"], "partitions": [5]})
    group = Group({"t": 5}, [Member(m, ["t"], generation=1, group_instance_id=i)
                             for m, i in (("a", None), ("b", "instance-2"), ("c", "instance-1"))])
    events = ["rolling_restart"]
    summary = whatif.run(group, [whatif.parse_event(e) for e in events], ["range"],
                         include_plans=True)["strategies"]["range"]
    row = fleet.group_whatif(rows, topics, events, ["range"], include_plan=True).iloc[0]
    assert json.loads(row["plan"]) == summary["steps"][-1]["assignment"]
    assert json.loads(row["plan"]) == {"a": [["t", 4]], "b": [["t", 2], ["t", 3]], "c": [["t", 0], ["t", 1]]}
    assert row["moved"] == summary["summary"]["moved"]
    dynamic = fleet.group_whatif(rows.drop(columns=["group_instance_id"]), topics, events, ["range"],
                                 include_plan=True).iloc[0]
    assert json.loads(dynamic["plan"])["a"] == [["t", 0], ["t", 1]]


def test_a_regex_members_row_takes_a_created_topic_as_the_engine_does(tmp_path):
    """A consumer-protocol member's row carries its regex subscription (``topic_regex``, as a
    snapshot's rows write it): a ``topic_created`` the regex takes is read by that member, as the
    engine plans the same group, from Parquet (`snapshot_rows`) and JSON lines alike; without
    the column, or with a regex that does not take the topic, nobody reads it. A regex that is
    not text is the row's error."""
    from pipeline.snapshot_rows import write_rows

    snapshot = {"groups": [{"group_id": "g", "topics": {"orders.v1": 4}, "members": [
        {"id": "a", "topics": ["orders.v1"], "owned": [], "target": [["orders.v1", 0], ["orders.v1", 1]],
         "generation": 3, "rack": None, "topic_regex": r"orders\.v[[:digit:]]+"},
        {"id": "b", "topics": ["orders.v1"], "owned": [], "target": [["orders.v1", 2], ["orders.v1", 3]],
         "generation": 3, "rack": None}]}]}
    paths = write_rows(snapshot, "c", tmp_path / "rows")
    rows = pd.read_parquet(paths["groups"])
    assert rows["topic_regex"].tolist() == [r"orders\.v[[:digit:]]+", None]
    topics = pd.DataFrame({"topic": ["orders.v1"], "partitions": [4]})
    events = ["topic_created:orders.v2:4"]
    group = Group({"orders.v1": 4}, [
        Member("a", ["orders.v1"], [TopicPartition("orders.v1", 0), TopicPartition("orders.v1", 1)], 3,
               topic_regex=r"orders\.v[[:digit:]]+"),
        Member("b", ["orders.v1"], [TopicPartition("orders.v1", 2), TopicPartition("orders.v1", 3)], 3)])
    engine = whatif.run(group, [whatif.parse_event(e) for e in events], ["kip848-uniform"],
                        include_plans=True)["strategies"]["kip848-uniform"]["steps"][-1]["assignment"]
    assert sorted(engine["a"]) == [["orders.v2", p] for p in range(4)]  # (the uniform assignor's balance)
    lines = pd.DataFrame({"cluster": "c", "group_id": "g", "topics": [["orders.v1"]] * 2, fleet.LINE: [
        json.dumps({"cluster": "c", "group_id": "g", "member_id": m["id"], "topics": m["topics"], "generation": 3,
                    "owned": [{"topic": t, "partition": p} for t, p in m["target"]],
                    **({"topic_regex": m["topic_regex"]} if "topic_regex" in m else {})})
        for m in snapshot["groups"][0]["members"]]})
    for members in (rows, lines):
        planned = fleet.group_whatif(members, topics, events, ["kip848-uniform"], include_plan=True).iloc[0]
        assert json.loads(planned["plan"]) == engine and planned["skipped_events"] == 0
    for members in (rows.drop(columns=["topic_regex"]), rows.assign(topic_regex=["orders", None])):
        planned = fleet.group_whatif(members, topics, events, ["kip848-uniform"], include_plan=True).iloc[0]
        assert {t for ps in json.loads(planned["plan"]).values() for t, _p in ps} == {"orders.v1"}
    not_text = rows.assign(topic_regex=pd.Series([7, None], dtype=object))
    wrong = fleet.group_whatif(not_text, topics, events, ["kip848-uniform"])
    assert wrong[wrong["kind"] == "error"][["member_id", "reason"]].to_dict("records") == [
        {"member_id": "a", "reason": "topic_regex: expected a string, got 7"}]


def test_a_group_on_the_consumer_protocol_has_no_rehearsal_in_the_fleet(tmp_path):
    """A snapshot's rows carry the group's ``protocol`` and ``assignor``: under ``--migrate`` a
    consumer-protocol group is an error row saying it has moved (as `whatif.rehearsed_from`
    refuses its snapshot), and one mid-upgrade (``member_type``: some members still classic)
    saying so; a classic one is rehearsed from each strategy asked, ``runs_today`` saying which is
    the one it runs (null where the rows do not say); a protocol or member type that is neither
    is the row's error."""
    from pipeline.snapshot_rows import write_rows

    member = {"id": "a", "topics": ["t"], "owned": [["t", 0], ["t", 1]], "generation": 3, "rack": None}
    upgrading = {"group_id": "upgrading", "protocol": "consumer", "assignor": "uniform", "topics": {"t": 2},
                 "members": [{**member, "target": [["t", 0]], "member_type": "consumer"},
                             {**member, "id": "b", "owned": [], "target": [["t", 1]], "member_type": "classic"}]}
    snapshot = {"groups": [{"group_id": "moved", "protocol": "consumer", "assignor": "uniform", "topics": {"t": 2},
                            "members": [{**member, "target": member["owned"]}]},
                           {"group_id": "staying", "protocol": "classic", "assignor": "range", "topics": {"t": 2},
                            "members": [member]}, upgrading]}
    paths = write_rows(snapshot, "c", tmp_path / "rows")
    groups, topics = pd.read_parquet(paths["groups"]), pd.read_parquet(paths["topics"])
    assert groups["protocol"].tolist() == ["consumer", "classic", "consumer", "consumer"]
    assert groups["assignor"].tolist() == ["uniform", "range", "uniform", "uniform"]
    assert groups["member_type"].tolist() == [None, None, "consumer", "classic"]
    found = fleet.run_local(groups, topics, [], ["range", "cooperative-sticky"], migrate="kip848-uniform")
    with pytest.raises(AssignorError) as mid_upgrade:  # (the fleet's error row says what the CLI would)
        whatif.rehearsed_from(upgrading)
    assert found[["group_id", "kind", "strategy", "runs_today", "reason"]].sort_values(
        ["group_id", "strategy"], na_position="first").astype(object).where(found.notna(), None).to_dict("records") == [
        {"group_id": "moved", "kind": "error", "strategy": None, "runs_today": None,
         "reason": "group 'moved' is on KIP-848's consumer protocol already (assignor 'uniform'): nothing to "
                   "rehearse; replay events without migrating"},
        {"group_id": "staying", "kind": "result", "strategy": "cooperative-sticky", "runs_today": False,
         "reason": None},
        {"group_id": "staying", "kind": "result", "strategy": "range", "runs_today": True, "reason": None},
        {"group_id": "upgrading", "kind": "error", "strategy": None, "runs_today": None,
         "reason": str(mid_upgrade.value)}]
    assert str(mid_upgrade.value) == (
        "group 'upgrading' is on KIP-848's consumer protocol already (assignor 'uniform'), 1 of its 2 members still "
        "classic (an upgrade under way): a rehearsal starts from a classic group, before its first member moves; "
        "replay events without migrating")
    unknown = fleet.run_local(groups.drop(columns=["assignor"]), topics, [], ["range"], migrate="kip848-uniform")
    assert unknown[unknown["kind"] == "result"]["runs_today"].isna().all()  # (rows that do not say)
    odd = fleet.run_local(groups.assign(protocol="eager"), topics, [], ["range"], migrate="kip848-uniform")
    assert set(odd["reason"]) == {'protocol: expected "classic" or "consumer", got \'eager\'', "no usable member rows"}
    odd = fleet.run_local(groups.assign(member_type="static"), topics, [], ["range"], migrate="kip848-uniform")
    assert set(odd["reason"]) == {'member_type: expected "classic" or "consumer", got \'static\'',
                                  "no usable member rows"}


def test_the_fleet_job_times_restarts_as_the_engine_does(tmp_path, capsys):
    """``--restart-seconds`` and Kafka's settings: each group's rows are the engine's with the
    same `Timing`, locally and from the command line."""
    rows = pd.DataFrame([{"cluster": "c", "group_id": "g", "member_id": m, "topics": ["t"],
                          "owned": [{"topic": "t", "partition": 2 * i}, {"topic": "t", "partition": 2 * i + 1}],
                          "generation": 2, "rack": None, "group_instance_id": None} for i, m in enumerate("abc")])
    topics = pd.DataFrame({"topic": ["t"], "partitions": [6]})
    timing = whatif.Timing(restart_seconds=1.0)
    group = Group({"t": 6}, [Member(m, ["t"], [TopicPartition("t", 2 * i), TopicPartition("t", 2 * i + 1)], 2)
                             for i, m in enumerate("abc")])
    engine = whatif.run(group, [whatif.parse_event("rolling_restart")], ["cooperative-sticky"],
                        timing=timing)["strategies"]["cooperative-sticky"]["summary"]
    row = fleet.group_whatif(rows, topics, ["rolling_restart"], ["cooperative-sticky"], timing=timing).iloc[0]
    assert (row["steps"], row["moved"]) == (engine["steps"], engine["moved"]) == (3, 0)
    groups, topic_rows = tmp_path / "groups.jsonl", tmp_path / "topics.jsonl"
    groups.write_text("\n".join(json.dumps(r) for r in rows.to_dict("records")))
    topic_rows.write_text(json.dumps({"cluster": "c", "topic": "t", "partitions": 6}))
    assert main(["pipeline", "fleet-whatif", "--local", "--groups", str(groups), "--topics", str(topic_rows),
                 "--event", "rolling_restart", "--strategy", "cooperative-sticky", "--restart-seconds", "1",
                 "--out", str(tmp_path / "out")]) == 0
    written = pd.read_parquet(tmp_path / "out" / "results")
    assert (written["steps"].tolist(), written["moved"].tolist()) == ([3], [0])


def test_the_fleet_jobs_tables_print_names_as_text(tmp_path, capsys):
    """A group ``[/x]`` and an error's reason quoting ``[/y]`` were Rich markup in the job's
    table and line (a MarkupError traceback); a topic ``:ok:`` an emoji."""
    rows = [{"cluster": "c", "group_id": "[/x]", "member_id": m, "topics": [":ok:"], "owned": [], "generation": 1}
            for m in ("a", "b")]
    rows.append({"cluster": "c", "group_id": "[/x]", "member_id": "z", "topics": ["[/y]"], "owned": []})
    groups, topics = tmp_path / "groups.jsonl", tmp_path / "topics.jsonl"
    groups.write_text("\n".join(json.dumps(r) for r in rows))
    topics.write_text(json.dumps({"cluster": "c", "topic": ":ok:", "partitions": 4}))
    assert main(["pipeline", "fleet-whatif", "--local", "--groups", str(groups), "--topics", str(topics),
                 "--event", "member_leave:a", "--strategy", "range", "--out", str(tmp_path / "out")]) == 0
    shown = capsys.readouterr().out
    assert "c/[/x] (" in shown and "unknown topic '[/y]'" in shown, shown


def test_the_fleet_job_says_which_groups_kafka_would_refuse_to_convert():
    rows = pd.DataFrame([{"cluster": "c", "group_id": g, "member_id": m, "topics": ["t"], "owned": [],
                          "generation": 1, "rack": None, "group_instance_id": None}
                         for g, size in (("small", 2), ("large", 4)) for m in map(str, range(size))])
    topics = pd.DataFrame({"cluster": ["c"], "topic": ["t"], "partitions": [6]})
    result = fleet.run_local(rows, topics, [], ["cooperative-sticky"], migrate="kip848-uniform",
                             conversion=whatif.Conversion(consumer_max_size=2))
    refused = dict(zip(result["group_id"], result["refused"], strict=True))
    assert refused["small"] is None and "has 3 members, more than group.consumer.max.size=2" in refused["large"]
    summary = fleet.migration_summary(result[result["kind"] == "result"])
    assert summary["groups_refused"].tolist() == [1]


def test_a_table_without_a_needed_column_is_one_line(tmp_path, capsys):
    groups = tmp_path / "groups.parquet"
    pq.write_table(pa.table({"cluster": ["c"], "group_id": ["g"], "member_id": ["a"]}), groups)
    topics = tmp_path / "topics.parquet"
    pq.write_table(pa.table({"cluster": ["c"], "topic": ["t"], "partitions": [3]}), topics)
    assert main(["pipeline", "fleet-whatif", "--local", "--groups", str(groups), "--topics", str(topics),
                 "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == ("assignor: error: --groups: the table has no column(s) ['topics'] (it needs "
                                       "cluster, group_id, member_id, topics)\n")


@pytest.mark.parametrize("migrate", [None, "kip848-uniform"])
def test_a_fleet_of_no_groups_is_an_empty_answer(migrate):
    """A groups table with its columns and no row (an export of a cluster without groups) was a
    KeyError from pandas: the filter on the exploded topics was no mask when empty."""
    groups, topics = sample.fleet(groups=2)
    found = fleet.run_local(groups.slice(0, 0).to_pandas(), topics.to_pandas(), ["rolling_restart"], ["range"],
                            migrate=migrate)
    columns = fleet.RESULT_COLUMNS if migrate is None else fleet.MIGRATION_COLUMNS
    assert found.empty and list(found.columns) == list(columns)
    pd.testing.assert_frame_equal(found, fleet.empty_result(columns))


def test_a_group_row_equals_the_whatif_engine(fleet_data):
    groups = pq.read_table(fleet_data["groups"]).to_pandas()
    topics = pq.read_table(fleet_data["topics"]).to_pandas()
    members = groups[(groups["cluster"] == "cluster-1") & (groups["group_id"] == "group-2")]
    counts = topics[topics["cluster"] == "cluster-1"].set_index("topic")["partitions"]
    group = Group(topics={t: int(counts[t]) for t in sorted({t for ts in members["topics"] for t in ts})},
                  members=[Member(r.member_id, list(r.topics), [TopicPartition(o["topic"], o["partition"])
                                                               for o in r.owned], int(r.generation))
                           for r in members.sort_values("member_id").itertuples()])
    events = ["rolling_restart"]
    expected = whatif.run(group, [whatif.parse_event(e) for e in events], STRATEGIES)["strategies"]
    group_topics = pd.DataFrame({"topic": list(group.topics), "partitions": list(group.topics.values())})
    rows = fleet.group_whatif(members, group_topics, events, STRATEGIES).set_index("strategy")
    for strategy in STRATEGIES:
        summary = expected[strategy]["summary"]
        for column in ("steps", "rounds", "revoked", "moved", "reassigned", "final_balance_score", "max_spread",
                       "unsafe_handovers", "failed_steps"):
            assert rows.loc[strategy, column] == summary[column], (strategy, column)
    # The fleet's comparison of a group is the engine's own.
    compared = fleet.switching(rows.reset_index()).set_index("java")
    engine = whatif.run(group, [whatif.parse_event(e) for e in events], STRATEGIES)["comparisons"]
    pairs = java_counterparts()
    assert {j.name for j, _ in pairs} == {"java-sticky", "java-cooperative-sticky"}
    for java, ours in pairs:
        figures = engine[f"{java.name} vs {ours.name}"]
        assert set(figures) <= set(compared.columns)
        for column, value in figures.items():
            assert compared.loc[java.name, column] == value, (java.name, column)


def test_events_a_group_does_not_have_are_skipped_and_counted():
    members = pd.DataFrame([{"cluster": "c", "group_id": "g", "member_id": "m1", "topics": ["a"], "owned": [],
                             "generation": 1, "rack": None}])
    rows = fleet.group_whatif(members, pd.DataFrame({"topic": ["a"], "partitions": [4]}),
                              ["member_leave:nobody", "partitions_added:a:8", "topic_deleted:zzz"], ["sticky"])
    assert rows.loc[0, "skipped_events"] == 2 and rows.loc[0, "partitions"] == 4 and rows.loc[0, "steps"] == 1


def write_csv(table: pa.Table, path) -> str:
    pacsv.write_csv(table, str(path))
    return str(path)


@pytest.fixture(scope="module")
def records_path(fleet_data):
    return str(fleet_data["records"])


def assert_tables_equal(local: dict, distributed: dict) -> None:
    for name in ("partitions", "skew", "hot_keys", "moves"):
        pd.testing.assert_frame_equal(local[name], distributed[name], check_dtype=False)


def test_key_skew_spark_equals_local_and_java(spark, records_path):
    counts = [12, 16, 24]
    local = skew.run_local(records_path, counts)
    distributed, errors = skew.run_spark(spark, skew.read_spark(spark, records_path), counts)
    assert_tables_equal(local, distributed)
    assert sorted(errors.toPandas()["reason"]) == sorted(local["errors"]["reason"]) == sorted(
        [skew.NULL_KEY, skew.BAD_SIZE, skew.NULL_TOPIC])
    # Every good record is counted once per partition count, where Java's producer puts its key.
    table = pq.read_table(records_path).to_pandas().dropna()
    table = table[table["size"] >= 0]
    for n in counts:
        assert local["partitions"].query("partitions_n == @n")["records"].sum() == len(table)
    sample_rows = table.head(300)
    expected = sample_rows.assign(partition=[partition_for_key(k, 16) for k in sample_rows["key"]])
    per_partition = expected.groupby(["topic", "partition"]).size()
    observed = local["partitions"].query("partitions_n == 16").set_index(["topic", "partition"])["records"]
    assert (observed.loc[per_partition.index] >= per_partition).all()
    moves = local["moves"].query("from_n == 12 and to_n == 24")
    assert ((moves["key_fraction"] > 0.45) & (moves["key_fraction"] < 0.55)).all()  # N -> 2N moves half


def test_key_skew_from_csv_text_keys(spark, tmp_path):
    keys = ["alice", "bob", "carol", "bob", "émile", "bob"]
    utf8 = write_csv(pa.table({"topic": ["t"] * 6, "key": keys, "size": [10, 20, 30, 20, 5, 20]}), tmp_path / "u.csv")
    local = skew.run_local(utf8, [3, 5])
    distributed, _ = skew.run_spark(spark, skew.read_spark(spark, utf8), [3, 5])
    assert_tables_equal(local, distributed)
    hot = local["hot_keys"]
    assert (hot.loc[0, "key"], hot.loc[0, "records"], hot.loc[0, "bytes"]) == (b"bob", 3, 60)
    by_partition = local["partitions"].query("partitions_n == 5").set_index("partition")["records"]
    for key in set(keys):
        assert by_partition[partition_for_key(key.encode(), 5)] >= 1

    encoded = [base64.b64encode(k.encode()).decode() for k in keys[:4]] + ["not*base64", None]
    b64 = write_csv(pa.table({"topic": ["t"] * 6, "key": pa.array(encoded, pa.string()), "size": [1] * 6}),
                    tmp_path / "b.csv")
    local = skew.run_local(b64, [3, 5], key_encoding="base64")
    distributed, errors = skew.run_spark(spark, skew.read_spark(spark, b64), [3, 5], key_encoding="base64")
    assert_tables_equal(local, distributed)
    assert sorted(errors.toPandas()["reason"]) == sorted(local["errors"]["reason"]) == sorted(
        [skew.BAD_BASE64, skew.NULL_KEY])
    assert local["skew"]["records"].tolist() == [4, 4]


def test_bad_partition_counts_are_refused():
    for counts in ([], [0, 4], [4, 4]):
        with pytest.raises(ValueError):
            skew.check_counts(counts)


def test_cli_runs_both_jobs(tmp_path, capsys):
    data = tmp_path / "data"
    assert main(["pipeline", "make-sample", "--out", str(data), "--groups", "6", "--records", "5000"]) == 0
    out = tmp_path / "fleet"
    assert main(["pipeline", "fleet-whatif", "--groups", str(data / "groups.parquet"), "--topics",
                 str(data / "topics.parquet"), "--event", "rolling_restart", "--strategy", "sticky",
                 "--out", str(out), "--local"]) == 0
    assert "fleet-whatif: 6 groups" in capsys.readouterr().out
    results = pd.read_parquet(out / "results")  # a directory of Parquet files, as Spark writes
    assert set(results["strategy"]) == {"sticky"} and len(pd.read_parquet(out / "errors")) == 3
    switched = tmp_path / "switch"
    assert main(["pipeline", "fleet-whatif", "--groups", str(data / "groups.parquet"), "--topics",
                 str(data / "topics.parquet"), "--event", "member_leave:consumer-0-0", "--strategy", "sticky",
                 "--strategy", "java-sticky", "--out", str(switched), "--local", "--plot"]) == 0
    assert "switching from Java's assignors to ours" in capsys.readouterr().out
    per_group = pd.read_parquet(switched / "switching")
    assert set(per_group["java"]) == {"java-sticky"} and len(per_group) == 6
    assert (switched / "switching.png").stat().st_size > 1000
    skewed = tmp_path / "skew"
    assert main(["pipeline", "key-skew", "--records", str(data / "records.parquet"), "--partitions", "6,12",
                 "--out", str(skewed), "--local", "--plot"]) == 0
    assert "6 -> 12" in capsys.readouterr().out
    assert sorted(p.name for p in skewed.glob("skew-*.png")) == ["skew-events-0.png", "skew-events-1.png",
                                                                  "skew-events-2.png"]
    assert main(["pipeline", "key-skew", "--records", str(data / "records.parquet"), "--partitions", "6,6",
                 "--out", str(skewed), "--local"]) == 2


def test_cli_on_spark_with_json_lines(spark, tmp_path, capsys):
    groups = tmp_path / "groups.jsonl"
    groups.write_text("\n".join(json.dumps(row) for row in [
        {"cluster": "c", "group_id": "g", "member_id": "a", "topics": ["t"], "owned": [{"topic": "t", "partition": 0}],
         "generation": 2},
        {"cluster": "c", "group_id": "g", "member_id": "b", "topics": ["t"], "owned": [], "generation": 2}]))
    topics = tmp_path / "topics.jsonl"
    topics.write_text(json.dumps({"cluster": "c", "topic": "t", "partitions": 4}))
    out = tmp_path / "out"
    assert main(["pipeline", "fleet-whatif", "--groups", str(groups), "--topics", str(topics), "--event",
                 "member_leave:a", "--out", str(out), "--master", "local[2]"]) == 0
    results = pd.read_parquet(out / "results").set_index("strategy")
    assert results.loc["sticky", "moved"] == 0 and results.loc["sticky", "members"] == 2
    local = fleet.run_local(fleet.json_lines(groups.read_text().splitlines(), "groups"),
                            fleet.json_lines(topics.read_text().splitlines(), "topics"), ["member_leave:a"], STRATEGIES)
    assert local.set_index("strategy").loc["sticky", "reassigned"] == results.loc["sticky", "reassigned"]


MIGRATION_EVENTS = ["member_leave:consumer-1-0", "partitions_added:t007:96", "member_join:late:t003"]


def test_fleet_migration_spark_equals_local_and_the_engine(spark, fleet_data):
    groups = pq.read_table(fleet_data["groups"]).to_pandas()
    topics = pq.read_table(fleet_data["topics"]).to_pandas()
    classic = list(whatif.MIGRATE_FROM)
    local = fleet.run_local(groups, topics, MIGRATION_EVENTS, classic, migrate="kip848-uniform")
    distributed = fleet.run_spark(spark, spark.read.parquet(str(fleet_data["groups"])),
                                  spark.read.parquet(str(fleet_data["topics"])), MIGRATION_EVENTS, classic,
                                  migrate="kip848-uniform").toPandas()

    def same(frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame.drop(columns=["plan_seconds"])
        frame = frame.astype(object).where(frame.notna(), None)
        return frame.sort_values(KEYS, na_position="first", ignore_index=True, key=lambda c: c.astype(str))

    pd.testing.assert_frame_equal(same(local), same(distributed), check_dtype=False)
    rows = local[local["kind"] == "result"]
    assert len(rows) == 16 * len(classic) and set(rows["target"]) == {"kip848-uniform"}
    assert (local["kind"] == "error").sum() == 3  # the sample's bad rows, as in the what-if job
    # One group's row is the engine's migration, figure by figure.
    members = groups[(groups["cluster"] == "cluster-0") & (groups["group_id"] == "group-1")]
    counts = topics[topics["cluster"] == "cluster-0"].set_index("topic")["partitions"]
    group = Group(topics={t: int(counts[t]) for t in sorted({t for ts in members["topics"] for t in ts})},
                  members=[Member(r.member_id, list(r.topics), [TopicPartition(o["topic"], o["partition"])
                                                               for o in r.owned], int(r.generation))
                           for r in members.sort_values("member_id").itertuples()])
    # group-1 reads neither t007 nor t003: the partitions event is skipped; a member may join
    # with a topic the group does not know (it gets nothing of it).
    assert not {"t007", "t003"} & set(group.topics)
    kept = [e for e in MIGRATION_EVENTS if not e.startswith("partitions_added")]
    migration = whatif.migrate(group, [whatif.parse_event(e) for e in kept], "kip848-uniform", [classic[0]])
    row = rows.set_index(["cluster", "group_id", "strategy"]).loc[("cluster-0", "group-1", classic[0])]
    last = migration["events"][-1]
    assert row["skipped_events"] == 1 and row["members"] == len(group.members)
    assert row["conversion_moved"] == migration["conversion"]["moved"]
    assert row["upgrade_moved"] == migration["upgrade"]["moved"] and row["mixed_restarts"] == len(group.members)
    assert row["consumer_balance_score"] == last["consumer"]["balance_score"]
    assert row["classic_balance_score"] == last["classic"][classic[0]]["balance_score"]
    assert row["paused_after"] == sum(fleet.paused(e["consumer"]) for e in migration["events"])
    assert row["paused_before"] == sum(fleet.paused(e["classic"][classic[0]]) for e in migration["events"])
    # The leaver's partitions stop under either protocol; nobody else's do (both are incremental).
    leaver = sum(len(o) for m, o in zip(members["member_id"], members["owned"]) if m == "consumer-1-0")
    assert row["paused_before"] == row["paused_after"] == leaver


def test_paused_counts_what_stops():
    eager = {"revoked": 10, "moved": 2, "reassigned": 5}  # all of the survivors' 10, and 3 of a leaver's
    cooperative = {"revoked": 2, "moved": 2, "reassigned": 5}
    assert fleet.paused(eager) == 13 and fleet.paused(cooperative) == 5  # type: ignore[arg-type]


def test_migration_summary_names_the_worst_groups():
    def row(group_id: str, classic: int, consumer: int, moved: int, before: int = 0, after: int = 0) -> dict:
        return {"cluster": "c", "group_id": group_id, "strategy": "cooperative-sticky", "target": "kip848-uniform",
                "classic_balance_score": classic, "consumer_balance_score": consumer,
                "balance_worse": consumer > classic, "conversion_moved": moved, "upgrade_moved": 0,
                "paused_before": before, "paused_after": after, "max_unowned_after": 0.5, "refused": None}

    rows = pd.DataFrame([row("fine", 10, 10, 0), row("moves", 10, 10, 4), row("worse", 10, 14, 0),
                         row("better", 10, 8, 0, before=30, after=3)])
    summary = fleet.migration_summary(rows).iloc[0]
    assert summary["groups"] == 4 and summary["groups_worse"] == 1 and summary["conversion_moved"] == 4
    assert (summary["paused_before"], summary["paused_after"]) == (30, 3)
    assert summary["worst_groups"] == ("c/worse (balance +4, paused +0, converting moves 0), "
                                       "c/moves (balance +0, paused +0, converting moves 4)")
    assert fleet.migration_summary(rows.iloc[[0]]).iloc[0]["worst_groups"] == "none"


def test_cli_fleet_migration(tmp_path, capsys):
    data = tmp_path / "data"
    assert main(["pipeline", "make-sample", "--out", str(data), "--groups", "6", "--records", "1000"]) == 0
    out = tmp_path / "migrate"
    common = ["pipeline", "fleet-whatif", "--groups", str(data / "groups.parquet"), "--topics",
              str(data / "topics.parquet"), "--event", "member_leave:consumer-0-0", "--out", str(out), "--local"]
    assert main([*common, "--migrate", "kip848-range"]) == 0
    printed = capsys.readouterr().out
    assert "fleet-whatif --migrate kip848-range: 6 groups" in printed and "worst groups" in printed
    rows = pd.read_parquet(out / "migration")
    assert set(rows["strategy"]) == set(whatif.MIGRATE_FROM) and len(rows) == 6 * len(whatif.MIGRATE_FROM)
    assert len(pd.read_parquet(out / "errors")) == 3
    assert main([*common, "--migrate", "sticky"]) == 2
    assert "'sticky' is not a strategy of KIP-848's consumer protocol" in capsys.readouterr().err
    assert main([*common, "--migrate", "kip848-uniform", "--strategy", "kip848-range"]) == 2
    assert "'kip848-range' is not a classic strategy" in capsys.readouterr().err


@pytest.mark.parametrize("topics", [1, 2, 3])
def test_a_sample_of_fewer_topics_than_a_group_may_read(topics):
    """A group reads up to four topics: a cluster of fewer made ``make-sample --topics 3`` fail
    ("Cannot take a larger sample than population")."""
    groups, topic_rows = sample.fleet(groups=20, topics=topics, seed=5)
    assert groups.num_rows > 0 and topic_rows.num_rows == 2 * topics
    assert {t for ts in groups.column("topics").to_pylist() for t in ts} <= set(topic_rows.column("topic").to_pylist())


def test_a_snapshots_assignment_user_data_refuses_its_groups_conversion(tmp_path):
    """A snapshot's rows carry a classic group's ``assignment_user_data`` (some member's
    assignment carries user data): its rehearsal is refused at the conversion as Kafka would
    (KAFKA-18134), the other group's not, with one set of conversion settings for both."""
    from pipeline.snapshot_rows import write_rows

    member = {"id": "a", "topics": ["t"], "owned": [["t", 0], ["t", 1]], "generation": 3, "rack": None}
    snapshot = {"groups": [{"group_id": g, "protocol": "classic", "assignor": "cooperative-sticky",
                            "assignment_user_data": g == "carrying", "topics": {"t": 2},
                            "members": [member, {**member, "id": "b", "owned": []}]}
                           for g in ("carrying", "plain")]}
    paths = write_rows(snapshot, "c", tmp_path / "rows")
    groups, topics = pd.read_parquet(paths["groups"]), pd.read_parquet(paths["topics"])
    assert groups["assignment_user_data"].tolist() == [True, True, False, False]
    found = fleet.run_local(groups, topics, [], ["cooperative-sticky"], migrate="kip848-uniform")
    refused = dict(zip(found["group_id"], found["refused"], strict=True))
    assert "KAFKA-18134" in refused["carrying"] and refused["plain"] is None
    odd = fleet.run_local(groups.assign(assignment_user_data="yes"), topics, [], ["range"], migrate="kip848-uniform")
    assert set(odd["reason"]) == {"assignment_user_data: expected true or false, got 'yes'", "no usable member rows"}
