"""fleet-whatif: replay events on every consumer group of a fleet, under each strategy.

Input
    groups: one row per member: ``cluster, group_id, member_id, topics (list of names),
    owned (list of {topic, partition}), generation, rack, group_instance_id, topic_regex,
    member_type, protocol, assignor`` (a static member's instance id, KIP-345; a consumer-protocol
    member's regex subscription, KIP-848, which a ``topic_created`` event is matched against, and
    its type, ``classic`` in a group mid-upgrade; the group's protocol, ``classic`` or
    ``consumer``, and the assignor it uses, as a snapshot's rows give them: a group on the
    consumer protocol has no move to rehearse, and a classic group's rehearsals say which starts
    from the strategy it runs; the last seven may be null or absent);
    topics: ``cluster, topic, partitions``. Parquet or JSON lines.
Output
    One row per group x strategy (`RESULT_COLUMNS`): moved, revoked, rounds, balance score,
    spread, rack locality and plan time of the what-if engine's summary, and optionally the final
    plan as JSON. Rows that cannot be used go to ``errors`` with the reason, and the group is
    planned without them; a group whose events do not concern it (a topic it does not read, a
    member it does not have) skips those events and counts them.
    With ``migrate`` (a consumer-protocol strategy), one row per group x classic strategy
    instead (`MIGRATION_COLUMNS`): `assignor.whatif.migrate`'s rehearsal of the move to KIP-848,
    summed up per strategy by `migration_summary`.

`group_whatif` is the whole per-group computation on pandas frames; the Spark job runs it in
``groupBy(cluster, group_id).cogroup(...).applyInPandas`` (a frame per group) and `run_local` runs
its rows in a loop (one frame of every group's), so the two paths give the same rows.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple, cast, get_type_hints

import numpy as np
import pandas as pd

from assignor import whatif
from assignor.errors import AssignorError
from assignor.json_format import SNAPSHOT_FIELDS, SNAPSHOT_MEMBER_FIELDS, strict_loads
from assignor.model import INT32_MAX, INT32_MIN, UNKNOWN_GENERATION, Group, Member, TopicPartition
from assignor.strategies import java_counterparts

GROUP_COLUMNS = ("cluster", "group_id", "member_id", "topics", "owned", "generation", "rack", "group_instance_id",
                 "topic_regex", "member_type", "protocol", "assignor", "assignment_user_data")
#: The columns a snapshot's rows carry that describe and plan nothing, with what each must be
#: (the group JSON's: `json_format.SNAPSHOT_FIELDS`).
_DESCRIBED = (("member_type", SNAPSHOT_MEMBER_FIELDS["member_type"]), ("protocol", SNAPSHOT_FIELDS["protocol"]),
              ("assignor", SNAPSHOT_FIELDS["assignor"]),
              ("assignment_user_data", SNAPSHOT_FIELDS["assignment_user_data"]))
#: The member columns a row may leave out (JSON lines) or hold nulls in.
_OPTIONAL = GROUP_COLUMNS[2:]

#: Spark's type of each Python type a typed record's field has.
_SPARK_TYPES = {int: "bigint", float: "double", str: "string", float | None: "double", str | None: "string"}


def _columns_of(record: type) -> dict[str, str]:
    """A typed record's fields (a TypedDict of `assignor.whatif`) as Spark columns."""
    return {name: _SPARK_TYPES[kind] for name, kind in get_type_hints(record).items()}


#: One row per group x strategy: who and what, then the what-if engine's summary
#: (`assignor.whatif.Summary`, its columns derived from it), then what the job adds.
RESULT_COLUMNS = {
    "cluster": "string", "group_id": "string", "kind": "string", "strategy": "string", "member_id": "string",
    "reason": "string", "members": "bigint", "partitions": "bigint",
    **_columns_of(whatif.Summary),
    "skipped_events": "bigint", "plan_seconds": "double", "plan": "string",
}
RESULT_SCHEMA = ", ".join(f"{name} {kind}" for name, kind in RESULT_COLUMNS.items())
_PANDAS_TYPES = {"string": "object", "bigint": "Int64", "double": "float64", "boolean": "boolean"}


def empty_result(columns: dict[str, str] = RESULT_COLUMNS) -> pd.DataFrame:
    return pd.DataFrame({name: pd.Series(dtype=_PANDAS_TYPES[kind]) for name, kind in columns.items()})


def _frame(rows: list[dict[str, Any]], columns: dict[str, str] = RESULT_COLUMNS) -> pd.DataFrame:
    if not rows:
        return empty_result(columns)
    frame = pd.DataFrame(rows, columns=list(columns))
    for name, kind in columns.items():
        frame[name] = frame[name].astype(_PANDAS_TYPES[kind])
    return frame


def _is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _as_list(value: object, what: str) -> list[Any] | None:
    """Arrays arrive as lists (JSON), numpy arrays (Arrow) or None; anything else (a string,
    an object) is AssignorError naming `what`, never read letter by letter."""
    if _is_missing(value):
        return None
    if not isinstance(value, list | tuple | np.ndarray):
        raise AssignorError(f"{what}: expected a list, got {type(value).__name__} {_shown(value)}")
    return list(cast(Iterable[Any], value))


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _integer(value: object, what: str, low: int, high: int = INT32_MAX) -> int:
    """`value` as an integer in [low, high]: an int, or a float with no fraction (pandas reads a
    JSON-lines column with a gap as floats); a fraction, a string or a bool is AssignorError
    naming `what`, never truncated."""
    if type(value) is int and low <= value <= high:  # (most values: a partition, a count, a generation)
        return value
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.integer | np.floating):
        raise AssignorError(f"{what}: expected an integer, got {type(value).__name__} {_shown(value)}")
    if isinstance(value, float | np.floating) and not (math.isfinite(value) and float(value).is_integer()):
        raise AssignorError(f"{what}: expected an integer, got {_shown(value)}")
    number = int(value)
    if not low <= number <= high:
        raise AssignorError(f"{what}: {number} is not in [{low}, {high}]")
    return number


def _topics_of(cluster: str, group_id: str, topics: pd.DataFrame, errors: list[dict[str, Any]]) -> dict[str, int]:
    known: dict[str, int] = {}
    bad: set[str] = set()
    ordered = topics.sort_values("topic", kind="stable")
    for name, count in zip(ordered["topic"].tolist(), ordered["partitions"].tolist(), strict=True):
        if _is_missing(count):
            continue  # subscribed but absent from the topic table: reported with each member
        try:
            count = _integer(count, f"topic {name!r}: partition count", 0)
        except AssignorError as error:
            errors.append(_error(cluster, group_id, None, str(error)))
            bad.add(name)
            continue
        if name in known and known[name] != count:
            errors.append(_error(cluster, group_id, None,
                                 f"topic {name!r}: two partition counts ({known[name]} and {count})"))
            bad.add(name)
        known[name] = count
    return {name: count for name, count in known.items() if name not in bad}


def _error(cluster: str | None, group_id: str | None, member_id: str | None, reason: str,
           strategy: str | None = None) -> dict[str, Any]:
    return {"cluster": cluster, "group_id": group_id, "kind": "error", "member_id": member_id, "reason": reason,
            "strategy": strategy}


def _member(row: Any, topics: dict[str, int]) -> Member:
    """A Member from one row, or AssignorError saying why the row cannot be used."""
    if _is_missing(row.member_id) or not isinstance(row.member_id, str) or not row.member_id:
        raise AssignorError("member_id is missing" if _is_missing(row.member_id) or row.member_id == ""
                            else f"member_id: expected a string, got {_shown(row.member_id)}")
    subscribed = _as_list(row.topics, "topics")
    if not subscribed:
        raise AssignorError("topics is empty")
    for topic in subscribed:
        if not isinstance(topic, str):
            raise AssignorError(f"topics: expected topic names, got {type(topic).__name__} {_shown(topic)}")
    unknown = sorted({t for t in subscribed if t not in topics})
    if unknown:
        raise AssignorError(f"unknown topic {unknown[0]!r} (not in the cluster's topic table)")
    owned = []
    for j, entry in enumerate(_as_list(row.owned, "owned") or []):
        if not isinstance(entry, dict):
            raise AssignorError(f"owned[{j}]: expected {{topic, partition}}, got {_shown(entry)}")
        topic, partition = entry.get("topic"), entry.get("partition")
        if _is_missing(topic) or _is_missing(partition):
            raise AssignorError(f"owned[{j}]: {_shown(entry)} needs a topic and a partition")
        if not isinstance(topic, str):
            raise AssignorError(f"owned[{j}].topic: expected a string, got {_shown(topic)}")
        owned.append(TopicPartition(topic, _integer(partition, f"owned[{j}].partition of topic {topic!r}", 0)))
    generation = (UNKNOWN_GENERATION if _is_missing(row.generation)
                  else _integer(row.generation, "generation", INT32_MIN))
    if not _is_missing(row.rack) and not isinstance(row.rack, str):
        raise AssignorError(f"rack: expected a string, got {_shown(row.rack)}")
    rack = None if _is_missing(row.rack) else row.rack
    if not _is_missing(row.group_instance_id) and not isinstance(row.group_instance_id, str):
        raise AssignorError(f"group_instance_id: expected a string, got {_shown(row.group_instance_id)}")
    instance = None if _is_missing(row.group_instance_id) else row.group_instance_id
    if not _is_missing(row.topic_regex) and not isinstance(row.topic_regex, str):
        raise AssignorError(f"topic_regex: expected a string, got {_shown(row.topic_regex)}")
    regex = None if _is_missing(row.topic_regex) else row.topic_regex
    for name, (valid, expected) in _DESCRIBED:  # (what a snapshot's JSON must hold in them)
        value = getattr(row, name)
        if not _is_missing(value) and not valid(value):
            raise AssignorError(f"{name}: expected {expected}, got {_shown(value)}")
    return Member(row.member_id, subscribed, owned=owned, generation=generation, rack=rack,
                  group_instance_id=instance, topic_regex=regex)


def _applicable(group: Group, events: Sequence[whatif.Event]) -> tuple[list[whatif.Event], int]:
    """The events that concern this group, in order, and how many did not."""
    kept, skipped, definition = [], 0, group
    for event in events:
        if event.kind == "rolling_restart":
            kept.append(event)
            continue
        try:
            definition = whatif.apply_event(definition, event)
        except AssignorError:
            skipped += 1
            continue
        kept.append(event)
    return kept, skipped


#: A row of a JSON-lines input as read: either path hands the per-group step the line itself,
#: which reads it by the core's JSON rules (`json_format.strict_loads`) with this module's row
#: rules. Spark's typed JSON reader would decide otherwise, silently: a field that does not fit
#: the schema (``"generation": "x"``, ``owned`` as a string or as pairs, ``1e12`` partitions)
#: becomes null and the row is planned anyway, where the local path refused it.
LINE = "line"


#: What each JSON-lines table keeps beside the line: the keys it is grouped and joined on.
_JSON_KEYS = {"groups": ("cluster", "group_id", "topics"), "topics": ("cluster", "topic")}


def json_lines(texts: Iterable[str], table: str) -> pd.DataFrame:
    """The JSON lines of `table` (``groups`` or ``topics``) as the local path reads them: per
    line its keys (`_JSON_KEYS`: None where the line is not a JSON object or lacks one; a
    member's topics as a list of its names) beside the line itself (`LINE`). Spark builds the
    same columns with ``get_json_object`` (`spark_json_lines`)."""
    keys = _JSON_KEYS[table]
    rows = []
    for line in texts:
        text = line.rstrip("\n").rstrip("\r")  # (a file's lines end with their separator; Spark's do not)
        if not text.strip():
            continue
        parsed = _parsed(text)
        row: dict[str, Any] = {key: _json_key(parsed.get(key)) for key in keys if key != "topics"}
        if "topics" in keys:
            listed = parsed.get("topics")
            row["topics"] = [t for t in listed if isinstance(t, str)] if isinstance(listed, list) else None
        rows.append({**row, LINE: text})
    return pd.DataFrame(rows, columns=[*keys, LINE])


def spark_json_lines(spark: Any, path: str, table: str) -> Any:
    """`json_lines` on Spark: the same columns from the same lines."""
    from pyspark.sql import functions as F

    lines = spark.read.text(path).where(F.trim("value") != "")
    columns = [F.get_json_object("value", f"$.{key}").alias(key) for key in _JSON_KEYS[table] if key != "topics"]
    if table == "groups":
        topics = F.from_json(F.get_json_object("value", "$.topics"), "array<string>")
        columns.append(F.filter(topics, lambda t: t.isNotNull()).alias("topics"))
    return lines.select(*columns, F.col("value").alias(LINE))


def _json_key(value: object) -> Any:
    """A key column's value as Spark's ``get_json_object`` gives it: a string, or None."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _parsed(text: object) -> dict[str, Any]:
    """A line's JSON object, or ``{}`` when it is none (`_rows_of` reports it)."""
    if not isinstance(text, str):
        return {}
    try:
        value = strict_loads(text.encode("utf-8", "surrogatepass"))
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _rows_of(members: pd.DataFrame, errors: list[dict[str, Any]], cluster: str | None,
             group_id: str | None) -> pd.DataFrame:
    """Member rows with their fields: read from each row's `LINE` (JSON lines), where a line that
    is not a JSON object becomes an error; typed columns (Parquet) as they are."""
    if LINE not in members:
        return members
    rows = []
    for text in members[LINE]:
        value = _parsed(text)
        if not value:
            errors.append(_error(cluster, group_id, None, f"not a JSON object: {_shown(text)}"))
            continue
        rows.append(value)
    return pd.DataFrame.from_records(rows, columns=list(dict.fromkeys([*GROUP_COLUMNS, *(k for r in rows for k in r)])))


def _topic_rows(topics: pd.DataFrame) -> pd.DataFrame:
    """``topic, partitions``, partitions read from each row's `LINE` for JSON lines."""
    if LINE not in topics:
        return topics
    return topics.assign(partitions=[_parsed(text).get("partitions") for text in topics[LINE]])[["topic", "partitions"]]


class _MemberRow(NamedTuple):
    """A member row's fields, each as pandas gives it (``Series.tolist``, as ``itertuples``)."""

    member_id: Any
    topics: Any
    owned: Any
    generation: Any
    rack: Any
    group_instance_id: Any
    topic_regex: Any
    member_type: Any
    protocol: Any
    assignor: Any
    assignment_user_data: Any


def _member_rows(members: pd.DataFrame) -> list[_MemberRow]:
    """One group's member rows in member id order (as text: a bad row's id may be anything),
    stable. Read column by column: ``itertuples`` and a sorted frame cost a group of three
    members two milliseconds, more than its what-if."""
    rows = list(map(_MemberRow._make, zip(*(members[column].tolist() for column in _OPTIONAL), strict=True)))
    order = members["member_id"].astype(str).tolist()
    return [rows[i] for i in sorted(range(len(rows)), key=order.__getitem__)]


def _key(value: object) -> str | None:
    return None if _is_missing(value) else str(value)


class _GroupRows(NamedTuple):
    """One group's rows read (`_group_of`): its group (None when no row is usable), the rows
    that went to errors and why, and the group's protocol, assignor and assignment user data as
    its usable rows give them (a snapshot's), or None, and each usable row's member type (None
    where not given)."""

    cluster: str | None
    group_id: str | None
    group: Group | None
    errors: list[dict[str, Any]]
    protocol: str | None = None
    assignor: str | None = None
    member_types: tuple[str | None, ...] = ()
    assignment_user_data: bool | None = None

    def described(self) -> dict[str, Any]:
        """The group as a snapshot of it says (what `whatif.rehearsed_from` reads, and the
        rehearsal's conversion: ``assignment_user_data``)."""
        return {"group_id": self.group_id, "protocol": self.protocol, "assignor": self.assignor,
                **({} if self.assignment_user_data is None else {"assignment_user_data": self.assignment_user_data}),
                "members": [{} if kind is None else {"member_type": kind} for kind in self.member_types]}


def _group_of(members: pd.DataFrame, topics: pd.DataFrame) -> _GroupRows:
    """The group of one group's rows (`_GroupRows`)."""
    cluster, group_id = _key(members["cluster"].iloc[0]), _key(members["group_id"].iloc[0])
    errors: list[dict[str, Any]] = []
    members = _rows_of(members, errors, cluster, group_id)
    for optional in _OPTIONAL:  # JSON lines may leave them out
        if optional not in members:
            members = members.assign(**{optional: None})
    if cluster is None or group_id is None:  # rows of no group: each said so, none planned
        for row in members.itertuples(index=False):
            errors.append(_error(cluster, group_id, _key(row.member_id), "cluster and group_id are needed"))
        return _GroupRows(cluster, group_id, None, errors)
    known = _topics_of(cluster, group_id, _topic_rows(topics), errors)
    group_members: list[Member] = []
    seen: set[str] = set()
    instances: dict[str, str] = {}  # instance id -> the member holding it (KIP-345: one member per instance)
    used: list[_MemberRow] = []
    for row in _member_rows(members):
        try:
            member = _member(row, known)
            if member.id in seen:
                raise AssignorError(f"duplicate member_id {member.id!r}")
            instance = member.group_instance_id
            if instance is not None and instances.setdefault(instance, member.id) != member.id:
                raise AssignorError(f"group_instance_id {instance!r} is {instances[instance]!r}'s already")
        except AssignorError as error:
            errors.append(_error(cluster, group_id, None if _is_missing(row.member_id) else str(row.member_id),
                                 str(error)))
            continue
        seen.add(member.id)
        group_members.append(member)
        used.append(row)
    if not group_members:
        errors.append(_error(cluster, group_id, None, "no usable member rows"))
        return _GroupRows(cluster, group_id, None, errors)
    subscribed = {t for m in group_members for t in m.topics}
    protocol = next((row.protocol for row in used if not _is_missing(row.protocol)), None)
    assignor = next((row.assignor for row in used if not _is_missing(row.assignor)), None)
    user_data = next((row.assignment_user_data for row in used if not _is_missing(row.assignment_user_data)), None)
    return _GroupRows(cluster, group_id, Group(topics={t: known[t] for t in sorted(subscribed)}, members=group_members),
                      errors, protocol, assignor,
                      tuple(None if _is_missing(row.member_type) else row.member_type for row in used), user_data)


def group_whatif(members: pd.DataFrame, topics: pd.DataFrame, events: Sequence[str],
                 strategies: Sequence[str], include_plan: bool = False,
                 timing: whatif.Timing = whatif.DEFAULT_TIMING) -> pd.DataFrame:
    """Rows for one group (members: its member rows; topics: ``topic, partitions`` of the topics
    its members subscribe to, partitions null when the cluster does not know the topic)."""
    return _frame(_whatif_rows(members, topics, events, strategies, include_plan, timing))


def _whatif_rows(members: pd.DataFrame, topics: pd.DataFrame, events: Sequence[str], strategies: Sequence[str],
                 include_plan: bool = False, timing: whatif.Timing = whatif.DEFAULT_TIMING) -> list[dict[str, Any]]:
    """`group_whatif`'s rows as dicts (`run_local` makes one frame of every group's)."""
    if members.empty:
        return []
    cluster, group_id, group, errors, *_snapshot_fields = _group_of(members, topics)
    if group is None:
        return errors
    kept, skipped = _applicable(group, [whatif.parse_event(text) for text in events])
    rows = []
    for strategy in strategies:
        started = time.perf_counter()
        try:
            result = whatif.run(group, kept, [strategy], include_plans=include_plan,
                                timing=timing)["strategies"][strategy]
        except AssignorError as error:
            errors.append(_error(cluster, group_id, None, str(error), strategy))
            continue
        seconds = time.perf_counter() - started
        plan = json.dumps(result["steps"][-1]["assignment"], sort_keys=True) if include_plan else None
        rows.append({"cluster": cluster, "group_id": group_id, "kind": "result", "strategy": strategy,
                     "member_id": None, "reason": None, "members": len(group.members),
                     "partitions": sum(group.topics.values()), **result["summary"], "skipped_events": skipped,
                     "plan_seconds": seconds, "plan": plan})
    return rows + errors


#: ``--migrate``: one row per group x classic strategy it runs today (`assignor.whatif.migrate`):
#: what converting to KIP-848's consumer protocol moves, how long the group runs mixed, the
#: balance after the later events staying classic, migrated and under our ``sticky`` (the
#: optimum), and the partitions paused by the later events before (classic) and after
#: (consumer protocol): see `paused`. ``refused``: why Kafka would refuse the conversion, and
#: what to change (`assignor.whatif.refusals`), or null. ``runs_today``: whether the strategy is
#: the one the group runs (`whatif.strategy_today`: its snapshot's assignor as Kafka's clients
#: run it), null when the rows do not say.
MIGRATION_COLUMNS = {
    "cluster": "string", "group_id": "string", "kind": "string", "strategy": "string", "target": "string",
    "runs_today": "boolean", "member_id": "string", "reason": "string", "members": "bigint", "partitions": "bigint",
    "today_balance_score": "bigint", "conversion_moved": "bigint", "conversion_revoked": "bigint",
    "mixed_restarts": "bigint", "upgrade_moved": "bigint", "upgrade_revoked": "bigint",
    "upgrade_max_unowned": "double", "upgrade_max_unowned_seconds": "double",
    "classic_balance_score": "bigint", "consumer_balance_score": "bigint", "sticky_balance_score": "bigint",
    "classic_spread": "bigint", "consumer_spread": "bigint", "balance_worse": "boolean",
    "paused_before": "bigint", "paused_after": "bigint", "max_unowned_after": "double",
    "refused": "string", "skipped_events": "bigint", "plan_seconds": "double",
}
MIGRATION_SCHEMA = ", ".join(f"{name} {kind}" for name, kind in MIGRATION_COLUMNS.items())


def paused(step: whatif.Step) -> int:
    """Partitions an event stops: every partition a member still in the group revokes (an eager
    classic protocol revokes all it owns; a cooperative one and KIP-848 only what moves) and the
    partitions of members that left, until their new owner has them. ``moved`` counts the
    partitions taken from members still in the group, ``reassigned`` those plus the departed
    members' (`assignor.whatif`), so the departed members' are ``reassigned - moved``."""
    return max(step["revoked"], step["moved"]) + step["reassigned"] - step["moved"]


def group_migration(members: pd.DataFrame, topics: pd.DataFrame, events: Sequence[str], target: str,
                    strategies: Sequence[str], timing: whatif.Timing = whatif.DEFAULT_TIMING,
                    conversion: whatif.Conversion = whatif.DEFAULT_CONVERSION) -> pd.DataFrame:
    """`group_whatif`'s counterpart for ``--migrate``: one `MIGRATION_COLUMNS` row per classic
    strategy the group might run today (each rehearsal starts from that strategy's plan)."""
    return _frame(_migration_rows(members, topics, events, target, strategies, timing, conversion), MIGRATION_COLUMNS)


def _migration_rows(members: pd.DataFrame, topics: pd.DataFrame, events: Sequence[str], target: str,
                    strategies: Sequence[str], timing: whatif.Timing = whatif.DEFAULT_TIMING,
                    conversion: whatif.Conversion = whatif.DEFAULT_CONVERSION) -> list[dict[str, Any]]:
    """`group_migration`'s rows as dicts."""
    if members.empty:
        return []
    read = _group_of(members, topics)
    cluster, group_id, group, errors = read.cluster, read.group_id, read.group, read.errors
    if group is None:
        return errors
    described = read.described()
    try:
        whatif.rehearsed_from(described)
    except AssignorError as refused:  # (a group on the consumer protocol)
        return [*errors, _error(cluster, group_id, None, str(refused))]
    today = whatif.strategy_today(described)
    conversion = conversion.as_described(described)  # (what its assignments carry: KAFKA-18134)
    kept, skipped = _applicable(group, [whatif.parse_event(text) for text in events])
    rows = []
    for strategy in strategies:
        started = time.perf_counter()
        try:
            migration = whatif.migrate(group, kept, target, [strategy], timing=timing, conversion_rules=conversion)
        except AssignorError as error:
            errors.append(_error(cluster, group_id, None, str(error), strategy))
            continue
        later = migration["events"]
        last = later[-1] if later else None
        upgrade = migration["upgrade"]
        final = last["consumer"] if last else (upgrade["steps"][-1] if upgrade["steps"] else migration["conversion"])
        classic = last["classic"][strategy] if last else migration["today"]
        rows.append({
            "cluster": cluster, "group_id": group_id, "kind": "result", "strategy": strategy, "target": target,
            "runs_today": None if today is None else strategy == today,
            "member_id": None, "reason": None, "members": len(group.members),
            "partitions": sum(group.topics.values()), "today_balance_score": migration["today"]["balance_score"],
            "conversion_moved": migration["conversion"]["moved"],
            "conversion_revoked": migration["conversion"]["revoked"], "mixed_restarts": upgrade["restarts"],
            "upgrade_moved": upgrade["moved"], "upgrade_revoked": upgrade["revoked"],
            "upgrade_max_unowned": upgrade["max_unowned"],
            "upgrade_max_unowned_seconds": upgrade["max_unowned_seconds"],
            "classic_balance_score": classic["balance_score"], "consumer_balance_score": final["balance_score"],
            "sticky_balance_score": migration["vs_optimum"]["sticky_balance_score"],
            "classic_spread": classic["spread"], "consumer_spread": final["spread"],
            "balance_worse": final["balance_score"] > classic["balance_score"],
            "paused_before": sum(paused(e["classic"][strategy]) for e in later),
            "paused_after": sum(paused(e["consumer"]) for e in later),
            "max_unowned_after": max((e["consumer"].get("max_unowned", 0.0) for e in later), default=0.0),
            "refused": None if migration["refused"] is None else
            f"{migration['refused']['reason']}; to upgrade: {migration['refused']['change']}",
            "skipped_events": skipped, "plan_seconds": time.perf_counter() - started})
    return rows + errors


def migration_summary(rows: pd.DataFrame, worst: int = 3) -> pd.DataFrame:
    """The fleet's answer per classic strategy: groups, groups Kafka would refuse to convert,
    groups whose balance gets worse,
    partitions moved at conversion and during the rolling upgrade, partitions paused by the
    later events before and after, the longest a partition goes unowned (heartbeat intervals),
    and the worst groups by name: those the move costs something (balance score lost, more
    partitions paused after than before, partitions moved at conversion), in that order."""
    out = []
    for (strategy, target), frame in rows.groupby(["strategy", "target"], sort=True):
        ranked = frame.assign(lost=frame["consumer_balance_score"] - frame["classic_balance_score"],
                              extra=frame["paused_after"] - frame["paused_before"])
        ranked = ranked[(ranked["lost"] > 0) | (ranked["extra"] > 0) | (ranked["conversion_moved"] > 0)]
        ranked = ranked.sort_values(["lost", "extra", "conversion_moved", "cluster", "group_id"],
                                    ascending=[False, False, False, True, True])
        out.append({"strategy": strategy, "target": target, "groups": len(frame),
                    "groups_refused": int(frame["refused"].notna().sum()),
                    "groups_worse": int(frame["balance_worse"].sum()),
                    "conversion_moved": int(frame["conversion_moved"].sum()),
                    "upgrade_moved": int(frame["upgrade_moved"].sum()),
                    "paused_before": int(frame["paused_before"].sum()),
                    "paused_after": int(frame["paused_after"].sum()),
                    "max_unowned_after": float(frame["max_unowned_after"].max()),
                    "worst_groups": ", ".join(f"{r.cluster}/{r.group_id} (balance {int(r.lost):+d}, paused "
                                              f"{int(r.extra):+d}, converting moves {int(r.conversion_moved)})"
                                              for r in ranked.head(worst).itertuples()) or "none"})
    return pd.DataFrame(out, columns=["strategy", "target", "groups", "groups_refused", "groups_worse",
                                      "conversion_moved",
                                      "upgrade_moved", "paused_before", "paused_after", "max_unowned_after",
                                      "worst_groups"])


#: ``switching/``: per group and pair, what switching from Java's assignor to ours changes.
SWITCHING_COLUMNS = {"cluster": "string", "group_id": "string", "java": "string", "ours": "string",
                     **_columns_of(whatif.Comparison)}


def switching(results: pd.DataFrame) -> pd.DataFrame:
    """Per group and pair of strategies run on it (`assignor.strategies.java_counterparts`),
    what switching from Java's assignor to ours changes: `assignor.whatif.compare` of the two
    summaries (positive is better with ours)."""
    summary_columns = list(get_type_hints(whatif.Summary))
    columns = list(SWITCHING_COLUMNS)
    rows = []
    keyed = results.set_index(["cluster", "group_id", "strategy"])
    for (cluster, group_id), _ in results.groupby(["cluster", "group_id"], sort=True):
        for java, ours in java_counterparts():
            if (cluster, group_id, java.name) not in keyed.index or (cluster, group_id, ours.name) not in keyed.index:
                continue
            a, b = (_summary(keyed.loc[(cluster, group_id, s.name)], summary_columns) for s in (java, ours))
            rows.append(dict(zip(columns, [cluster, group_id, java.name, ours.name, *whatif.compare(a, b).values()],
                                 strict=True)))
    # Typed by the columns, not by what the results came as: Spark's collected rows hold floats
    # where a column has nulls, the local rows nullable integers.
    return _frame(rows, SWITCHING_COLUMNS)


def _summary(row: pd.Series, columns: list[str]) -> whatif.Summary:
    """A result row's summary, as the what-if engine gave it."""
    values = {name: (None if pd.isna(row[name]) else row[name].item() if hasattr(row[name], "item") else row[name])
              for name in columns}
    return cast(whatif.Summary, values)


def switching_summary(per_group: pd.DataFrame) -> pd.DataFrame:
    """The fleet's answer per pair: groups compared, improved (ours no worse on moves and
    balance, and better on one), worse (worse on either), and the totals."""
    rows = []
    for (java, ours), frame in per_group.groupby(["java", "ours"], sort=False):
        better = (frame.moves_saved > 0) | (frame.balance_score_gained > 0)
        worse = (frame.moves_saved < 0) | (frame.balance_score_gained < 0)
        rows.append({"java": java, "ours": ours, "groups": len(frame), "groups_improved": int((better & ~worse).sum()),
                     "groups_worse": int(worse.sum()), "moves_saved": int(frame.moves_saved.sum()),
                     "revocations_saved": int(frame.revocations_saved.sum()),
                     "balance_score_gained": int(frame.balance_score_gained.sum()),
                     "unsafe_handovers_avoided": int(frame.unsafe_handovers_avoided.sum()),
                     "java_failures": int(frame.java_failures.sum())})
    return pd.DataFrame(rows)


def check_request(events: Sequence[str], strategies: Sequence[str], migrate: str | None = None) -> None:
    """Fail before any work on an event or strategy that no group could use."""
    from assignor.strategies import assign

    for text in events:
        whatif.parse_event(text)
    for name in strategies:
        assign(name, Group(topics={}))
    if migrate is not None:
        whatif.check_migration(migrate, strategies)


#: The columns without which no row of a table can be read (the others may be left out).
REQUIRED_COLUMNS = {"groups": ("cluster", "group_id", "member_id", "topics"),
                    "topics": ("cluster", "topic", "partitions")}


def check_columns(groups: Any, topics: Any) -> None:
    """ValueError naming the table and the columns it lacks (pandas or Spark frames; JSON lines
    carry their fields in each line, `LINE`)."""
    for name, table in (("groups", groups), ("topics", topics)):
        columns = list(table.columns)
        needed = _JSON_KEYS[name] if LINE in columns else REQUIRED_COLUMNS[name]
        missing = [c for c in needed if c not in columns]
        if missing:
            raise ValueError(f"--{name}: the table has no column(s) {missing} (it needs "
                             f"{', '.join(REQUIRED_COLUMNS[name])})")


def _subscribed_topics(groups: pd.DataFrame, topics: pd.DataFrame) -> pd.DataFrame:
    """cluster, group_id, topic, partitions (null when unknown) for every subscribed topic."""
    exploded = groups[["cluster", "group_id", "topics"]].explode("topics").dropna(subset=["topics"])
    # a topic that is not a name (a row's malformed list) is that row's error (`_member`), not here;
    # (astype: a mask also when there is no row, where map gives an empty column of objects)
    exploded = exploded[exploded["topics"].map(lambda topic: isinstance(topic, str)).astype(bool)]
    exploded = exploded.rename(columns={"topics": "topic"}).drop_duplicates()
    return exploded.merge(topics, on=["cluster", "topic"], how="left")


def _per_group(events: Sequence[str], strategies: Sequence[str], include_plan: bool, migrate: str | None,
               timing: whatif.Timing, conversion: whatif.Conversion
               ) -> Callable[[pd.DataFrame, pd.DataFrame], list[dict[str, Any]]]:
    """The per-group computation of a request, as row dicts: the what-if rows, or with `migrate`
    the migration's."""
    if migrate is not None:
        return lambda members, topics: _migration_rows(members, topics, events, migrate, strategies, timing,
                                                       conversion)
    return lambda members, topics: _whatif_rows(members, topics, events, strategies, include_plan, timing)


def run_local(groups: pd.DataFrame, topics: pd.DataFrame, events: Sequence[str], strategies: Sequence[str],
              include_plan: bool = False, migrate: str | None = None,
              timing: whatif.Timing = whatif.DEFAULT_TIMING,
              conversion: whatif.Conversion = whatif.DEFAULT_CONVERSION) -> pd.DataFrame:
    """The single-process path: every group in turn, in this process. With `migrate` (a
    consumer-protocol strategy) the rows are `MIGRATION_COLUMNS`, `strategies` the classic ones.
    `timing`, `conversion`: restarts and Kafka's settings (`assignor.whatif.timing`,
    `assignor.whatif.refusals`), the same for every group."""
    check_request(events, strategies, migrate)
    check_columns(groups, topics)
    subscribed = _subscribed_topics(groups, topics)
    per_group = _per_group(list(events), list(strategies), include_plan, migrate, timing, conversion)
    rows: list[dict[str, Any]] = []
    counts = LINE if LINE in subscribed else "partitions"
    # (dropna=False: rows without a cluster or group are a group too, of errors, as on Spark)
    by_group = {key: frame for key, frame in subscribed.groupby(["cluster", "group_id"], sort=False, dropna=False)}
    for key, members in groups.groupby(["cluster", "group_id"], sort=True, dropna=False):
        group_topics = by_group.get(key, subscribed.iloc[0:0])[["topic", counts]]
        rows += per_group(members, group_topics)
    # One frame of every group's rows: the frame a group's rows make (its columns typed) cost
    # more than planning a small group.
    return _frame(rows, RESULT_COLUMNS if migrate is None else MIGRATION_COLUMNS)


def run_spark(spark: Any, groups: Any, topics: Any, events: Sequence[str], strategies: Sequence[str],
              include_plan: bool = False, migrate: str | None = None,
              timing: whatif.Timing = whatif.DEFAULT_TIMING,
              conversion: whatif.Conversion = whatif.DEFAULT_CONVERSION) -> Any:
    """The Spark path: a DataFrame of `RESULT_COLUMNS` rows (results and errors), or with
    `migrate` of `MIGRATION_COLUMNS` rows."""
    from pyspark.sql import functions as F

    check_request(events, strategies, migrate)
    check_columns(groups, topics)
    # Fresh column names: cogrouping `groups` with a frame derived from it must not look like a
    # self-join to Spark's analyser.
    subscribed = (groups.select(F.col("cluster").alias("s_cluster"), F.col("group_id").alias("s_group"),
                                F.explode("topics").alias("topic")).dropna().distinct())
    counts = LINE if LINE in topics.columns else "partitions"
    known = topics.select(F.col("cluster").alias("t_cluster"), F.col("topic").alias("t_topic"), counts)
    subscribed = (subscribed.join(known, (subscribed.s_cluster == known.t_cluster)
                                  & (subscribed.topic == known.t_topic), how="left")
                  .select("s_cluster", "s_group", "topic", counts))
    compute = _per_group(list(events), list(strategies), include_plan, migrate, timing, conversion)
    columns = RESULT_COLUMNS if migrate is None else MIGRATION_COLUMNS

    def per_group(members: pd.DataFrame, group_topics: pd.DataFrame) -> pd.DataFrame:
        return _frame(compute(members, group_topics[["topic", counts]]), columns)

    schema = RESULT_SCHEMA if migrate is None else MIGRATION_SCHEMA
    return (groups.groupBy("cluster", "group_id").cogroup(subscribed.groupBy("s_cluster", "s_group"))
            .applyInPandas(per_group, schema=schema))
