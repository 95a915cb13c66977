"""Realistic sample data for both jobs, seeded: a fleet of consumer groups and produced records.

Fleet: clusters with topics of 3 to 64 partitions; groups of mixed sizes (mostly small, a few
large) with three subscription shapes (one topic, the same few topics, each member its own mix);
each group's current state is a balanced sticky plan at a random generation, so a what-if starts
where a real fleet is. Records: Zipf key popularity (a few hot keys, a long tail) and log-normal
sizes. ``bad_rows`` adds a few rows of each kind the jobs must route to ``errors``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from assignor import Group, Member, assign
from assignor.strategies import DEFAULT_STRATEGY

OWNED_TYPE = pa.list_(pa.struct([("topic", pa.string()), ("partition", pa.int32())]))
GROUPS_ARROW = pa.schema([("cluster", pa.string()), ("group_id", pa.string()), ("member_id", pa.string()),
                          ("topics", pa.list_(pa.string())), ("owned", OWNED_TYPE), ("generation", pa.int32()),
                          ("rack", pa.string()), ("group_instance_id", pa.string()), ("topic_regex", pa.string()),
                          ("member_type", pa.string()), ("protocol", pa.string()), ("assignor", pa.string()),
                          ("assignment_user_data", pa.bool_())])
TOPICS_ARROW = pa.schema([("cluster", pa.string()), ("topic", pa.string()), ("partitions", pa.int32())])
RECORDS_ARROW = pa.schema([("topic", pa.string()), ("key", pa.binary()), ("size", pa.int64())])


def fleet(clusters: int = 2, groups: int = 50, topics: int = 20, seed: int = 7,
          bad_rows: bool = False) -> tuple[pa.Table, pa.Table]:
    """(groups table, topics table)."""
    rng = np.random.default_rng(seed)
    member_rows: list[dict[str, Any]] = []
    topic_rows: list[dict[str, Any]] = []
    per_cluster = [groups // clusters + (1 if c < groups % clusters else 0) for c in range(clusters)]
    for c in range(clusters):
        cluster = f"cluster-{c}"
        counts = {f"t{t:03d}": int(rng.choice([3, 6, 12, 24, 48, 64])) for t in range(topics)}
        topic_rows += [{"cluster": cluster, "topic": t, "partitions": n} for t, n in counts.items()]
        names = list(counts)
        for g in range(per_cluster[c]):
            size = int(min(1 + rng.zipf(1.6), 60))
            shape = rng.choice(["one", "shared", "mixed"], p=[0.4, 0.4, 0.2])
            # 1-4 topics, no more than the cluster has (the draw is the same where it has 4 or more)
            pool = list(rng.choice(names, size=int(rng.integers(1, min(4, len(names)) + 1)), replace=False))
            subscriptions = []
            for _ in range(size):
                if shape == "one":
                    subscriptions.append(pool[:1])
                elif shape == "shared":
                    subscriptions.append(sorted(pool))
                else:
                    subscriptions.append(sorted(rng.choice(pool, size=int(rng.integers(1, len(pool) + 1)),
                                                           replace=False)))
            ids = [f"consumer-{g}-{m}" for m in range(size)]
            group = Group(topics={t: counts[t] for t in pool},
                          members=[Member(i, list(s)) for i, s in zip(ids, subscriptions)])
            plan = assign(DEFAULT_STRATEGY.name, group)
            generation = int(rng.integers(1, 50))
            racked = rng.random() < 0.3
            for i, (member_id, subscription) in enumerate(zip(ids, subscriptions)):
                member_rows.append({"cluster": cluster, "group_id": f"group-{g}", "member_id": member_id,
                                    "topics": list(subscription),
                                    "owned": [{"topic": tp.topic, "partition": tp.partition}
                                              for tp in plan.assignment[member_id]],
                                    "generation": generation, "rack": f"rack-{i % 3}" if racked else None})
    if bad_rows and member_rows:
        first = member_rows[0]
        member_rows.append({**first, "member_id": "ghost-reader", "topics": ["no-such-topic"], "owned": []})
        member_rows.append({**first, "member_id": "negative-claim", "owned": [{"topic": first["topics"][0],
                                                                              "partition": -4}]})
        member_rows.append({**first, "member_id": None, "owned": []})
    return (pa.Table.from_pylist(member_rows, schema=GROUPS_ARROW),
            pa.Table.from_pylist(topic_rows, schema=TOPICS_ARROW))


def records(count: int = 100_000, topics: int = 3, keys: int = 50_000, zipf: float = 1.2, seed: int = 11,
            bad_rows: bool = False) -> pa.Table:
    """`count` records over `topics` topics, keys drawn from `keys` ids with Zipf popularity."""
    rng = np.random.default_rng(seed)
    ids = np.minimum(rng.zipf(zipf, size=count), keys) - 1
    ids = (ids * 2654435761) % keys  # scatter popularity over the id space
    topic_index = rng.integers(0, topics, size=count)
    names = np.array([f"events-{t}" for t in range(topics)], dtype=object)
    width = len(str(keys))
    key_bytes = np.char.add(b"user-", np.char.zfill(ids.astype(str), width).astype(bytes))
    sizes = np.maximum(1, rng.lognormal(mean=6.0, sigma=0.7, size=count).astype(np.int64))
    table = pa.table({"topic": pa.array(names[topic_index], pa.string()),
                      "key": pa.array(key_bytes.tolist(), pa.binary()), "size": pa.array(sizes, pa.int64())},
                     schema=RECORDS_ARROW)
    if bad_rows:
        bad = pa.table({"topic": ["events-0", "events-0", None], "key": [None, b"user-x", b"user-y"],
                        "size": [100, -1, 5]}, schema=RECORDS_ARROW)
        table = pa.concat_tables([table, bad])
    return table


def write(out: str | Path, *, clusters: int = 2, groups: int = 50, topics: int = 20, records_count: int = 100_000,
          seed: int = 7, bad_rows: bool = True) -> dict[str, Path]:
    """Write groups.parquet, topics.parquet and records.parquet into `out`."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    group_table, topic_table = fleet(clusters, groups, topics, seed, bad_rows)
    paths = {"groups": out / "groups.parquet", "topics": out / "topics.parquet", "records": out / "records.parquet"}
    pq.write_table(group_table, paths["groups"])
    pq.write_table(topic_table, paths["topics"])
    pq.write_table(records(records_count, seed=seed + 1, bad_rows=bad_rows), paths["records"])
    return paths
