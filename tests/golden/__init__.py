"""Loaders for the golden data written by the Java client, vendored beside this module (see
README.md here for its provenance)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from assignor import Group, Member, Plan, TopicPartition

GOLDEN = Path(__file__).resolve().parent
SCENARIOS = GOLDEN / "scenarios"


@cache
def scenario(name: str) -> dict:
    return json.loads((SCENARIOS / f"{name}.json").read_text())


def scenario_names() -> list[str]:
    index = json.loads((SCENARIOS / "index.json").read_text())
    return [entry["name"] for entry in index["scenarios"]]


def calls(strategy: str) -> list[tuple[str, dict]]:
    """(id, call) for every recorded call of `strategy` across all scenarios."""
    found = []
    for name in scenario_names():
        for r in scenario(name)["rounds"]:
            for j, call in enumerate(r["results"][strategy]["calls"]):
                found.append((f"{name}-r{r['round']}-c{j}", call))
    return found


def group_of(call: dict) -> Group:
    """The group a Java assignor saw: previous ownership as Java decoded it (member_data)."""
    members = []
    for sub in call["input"]["subscriptions"]:
        data = sub.get("member_data") or {"partitions": sub.get("owned_partitions") or [],
                                          "generation": sub.get("generation_id")}
        generation = data["generation"]
        members.append(
            Member(
                sub["member_id"],
                topics=sub["topics"],
                owned=[TopicPartition(t, p) for t, p in data["partitions"]],
                generation=-1 if generation is None else generation,
                rack=sub.get("rack_id"),
            )
        )
    return Group(topics=call["input"]["topics"], members=members)


def java_plan(call: dict, strategy: str) -> Plan:
    """The recorded Java plan of a call of `strategy`'s recordings, as a plan of Java's own
    strategy (``java-sticky`` for the sticky recordings): the oracle applies Java's rules to it,
    not the promises only ours make (KIP-341's earlier owner, handovers)."""
    name = f"java-{strategy}" if strategy in ("sticky", "cooperative-sticky") else strategy
    return Plan(name, {m: [TopicPartition(t, p) for t, p in tps] for m, tps in call["output"].items()})


# -- KIP-848: the broker's assignors (kip848/README.md) ------------------------------------------

KIP848 = GOLDEN / "kip848"


@cache
def kip848_file(name: str) -> dict:
    import gzip
    with gzip.open(KIP848 / f"{name}.json.gz", "rt") as f:
        return json.load(f)


def kip848_calls() -> list[tuple[str, dict]]:
    """(id, call) for every recorded call of the broker's assignors."""
    names = sorted(p.name.removesuffix(".json.gz") for p in KIP848.glob("*.json.gz"))
    return [(f"{name}-{i}-{call['name']}", call) for name in names for i, call in enumerate(kip848_file(name)["calls"])]


def kip848_group(call: dict) -> Group:
    """The group of a recorded call: each member's current target assignment as `owned`, in
    record order; topic ids as recorded."""
    given = call["input"]
    members = [Member(m["id"], m["topics"], [TopicPartition(t, p) for t, ps in m["assigned"].items() for p in ps])
               for m in given["members"]]
    return Group(given["topics"], members, topic_ids=given["topicIds"])
