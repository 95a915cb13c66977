"""A cluster's live groups as the fleet job's input rows (`pipeline.fleet`'s ``groups`` and
``topics``): ``assignor pipeline snapshot`` writes them, and ``fleet-whatif --bootstrap-server``
plans from them. One row per member, in the coordinator's order; a consumer-protocol member's
``owned`` is its target, what the broker's assignors compute the next target from (as
`assignor.json_format` reads a snapshot), its regex subscription its ``topic_regex``, its
``member_type`` (``classic`` in a group mid-upgrade), and each row the group's ``protocol``,
``assignor`` and (classic) ``assignment_user_data``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.sample import GROUPS_ARROW, TOPICS_ARROW

__all__ = ["rows_of", "write_rows"]


def rows_of(snapshot: dict[str, Any], cluster: str) -> tuple[pa.Table, pa.Table]:
    """(groups table, topics table) of a snapshot (`assignor.cluster.snapshot`'s ``{"groups"}``)."""
    members: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    for group in snapshot["groups"]:
        counts.update(group["topics"])
        for member in group["members"]:
            planned = member.get("target", member["owned"])
            members.append({"cluster": cluster, "group_id": group["group_id"], "member_id": member["id"],
                            "topics": member["topics"], "owned": [{"topic": t, "partition": p} for t, p in planned],
                            "generation": member["generation"], "rack": member["rack"],
                            "group_instance_id": member.get("group_instance_id"),
                            "topic_regex": member.get("topic_regex"), "member_type": member.get("member_type"),
                            "protocol": group.get("protocol"), "assignor": group.get("assignor"),
                            "assignment_user_data": group.get("assignment_user_data")})
    topics = [{"cluster": cluster, "topic": name, "partitions": count} for name, count in sorted(counts.items())]
    return pa.Table.from_pylist(members, schema=GROUPS_ARROW), pa.Table.from_pylist(topics, schema=TOPICS_ARROW)


def write_rows(snapshot: dict[str, Any], cluster: str, out: Path) -> dict[str, Path]:
    """`rows_of` written as ``groups.parquet`` and ``topics.parquet`` into `out` (created)."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {"groups": out / "groups.parquet", "topics": out / "topics.parquet"}
    for table, path in zip(rows_of(snapshot, cluster), paths.values(), strict=True):
        pq.write_table(table, path)
    return paths
