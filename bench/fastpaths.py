"""Each fast path against its own plain reference, on the same input, in the same process: what
the path earns (the README's Layout states the rule: over 10% on a user-facing row, or it goes).

- The wire's columnar reader (`read_join_group`, what every leader runs: `leader.sync`, the
  service's ``/v1/groups/{id}/sync``, a cluster snapshot) against the plain codec, member by member
  (`member_from_metadata`), on the JoinGroup of 2,000 members owning 1,000,000 partitions.
- The columnar writer (`encode_assignments`) against `encode_assignment` member by member, on
  the SyncGroup answer of the same group.
- The same reader on a group of three small members, where it does not earn its place: up to
  `columnar.PLAIN_UP_TO_BYTES` of metadata, `read_join_group` reads with the plain codec.
- The compiled response reader (`assignor.wire.compiled`, what every snapshot request's answer
  goes through) against the plain codec, on a Metadata answer of a million partitions; and its
  flexible arrays read in C (`assignor/wire/_compact_arrays.c`: KIP-848's topic partitions, topic
  names) against its own closures, in the snapshot of a consumer-protocol group of a million
  partitions (`bench.snapshot.consumer_case`).
- The same consumer-protocol snapshot with its million pairs made in C (``entry_pairs`` in
  `assignor/_topic_partitions.c`) against `snapshot._assigned_plainly`.
- A classic group's snapshot with its million ``[topic, partition]`` pairs made at once in C
  (`pairs_at`) against `plain_pairs_at`, on `bench.snapshot`'s group; and the same snapshot with
  its members' arrays of topic partitions read in C (`assignor/wire/_tp_arrays.c`) against the
  numpy rounds (`read_tp_columns_in_rounds`).
- The what-if engine on arrays (`whatif.run`) against its plain reference
  (`whatif.reference.run`), on a 10,000-partition group a member leaves.
- Java's sticky assignor's array steps against Java's steps as Java writes them
  (`JavaStickyAssignor(plain=True)`), on the Java client's random50 group (`bench/java.py`); on
  its uniform million-partition group, the claims and what is left to deal in columns
  (`java_sticky.columns`) against the sets, when 10 members leave, and the fresh plan's
  partitions made in C (`topic_partitions_at`).
- The package's C part (`assignor/_topic_partitions.c`, `assignor/solver/_deal.c`), each
  function against its plain reference inside `assign("sticky")`: the plan's `TopicPartition`s
  (`member_topic_partitions`) and the deal (`sticky._dealt`) on a fresh plan of 1,000,000
  partitions, the claimed ones read as columns (`claim_columns`) when 10 of its 2,000 members
  leave, subscriptions' names as indices (`name_indices`) on random subscriptions of 100,000
  partitions.
- The group JSON's claims read in C (`model.topic_partitions_of_pairs`) against
  `json_format.plain_partitions_from_json`, inside what `assignor plan` does with a group file
  once it is parsed (`group_from_json`, then `assign("sticky")`), on the million-partition group
  one generation on: every member owns its partitions, as in every group past its first
  rebalance and every live snapshot.
- KIP-848's columnar builders (`strategies.kip848.columns`, what `assign_columns` and the what-if
  run) against the plain model (`target_assignment`), at the largest of Kafka's own benchmark
  sizes (`bench/kip848.py`): uniform on a homogeneous group, uniform on a heterogeneous one,
  range.

Each figure is the best of `repeat` runs (Java's plain steps: one run); a row's gain is
reference / fast path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from bench.protocol import best_of


def _best(function: Callable[[], Any], repeat: int) -> float:
    return best_of(function, repeat)[0]


def wire(repeat: int) -> list[dict[str, Any]]:
    from assignor import assign, protocol
    from assignor.strategies import strategy_named
    from assignor.wire import messages
    from assignor.wire.buffers import Messages
    from assignor.workloads import java_large

    group = java_large("uniform", 500, 2000, 2000)
    plan = assign("sticky", group)
    metadata = {m.id: protocol.encode_subscription(protocol.Subscription(
        m.topics, protocol.encode_sticky_user_data(plan.assignment[m.id], 5))) for m in group.members}
    ids, joined = list(metadata), Messages.of_members(metadata)
    owned = sum(len(tps) for tps in plan.assignment.values())
    size = f"{len(ids):,} members / {owned:,} partitions"
    read = {"fast path": "JoinGroup read (`read_join_group`)", "input": size, "reference": "`member_from_metadata`",
            "reference_s": _best(lambda: [messages.member_from_metadata(m, metadata[m], "sticky") for m in ids],
                                 repeat),
            "fast_s": _best(lambda: protocol.read_join_group(ids, joined, "sticky"), repeat)}
    planned = strategy_named("sticky").planned(group)
    claims, members = planned.layout.owned_claims(planned.owner), len(planned.layout.members)
    by_member = {m: protocol.Assignment(tps) for m, tps in plan.assignment.items()}
    write = {"fast path": "SyncGroup write (`encode_assignments`)", "input": size, "reference": "`encode_assignment`",
             "reference_s": _best(lambda: {m: messages.encode_assignment(a) for m, a in by_member.items()}, repeat),
             "fast_s": _best(lambda: protocol.encode_assignments(claims, members, "sticky", 6), repeat)}
    return [read, write, *_small_group_read(repeat)]


def _small_group_read(repeat: int) -> list[dict[str, Any]]:
    """The JoinGroup read of a group of three members (160 bytes) in columns against the plain
    codec: the row behind `columnar.PLAIN_UP_TO_BYTES` (up to it, the plain codec reads)."""
    from assignor import assign, protocol
    from assignor.model import Group, Member
    from assignor.wire import columnar, messages
    from assignor.wire.buffers import Messages

    group = Group({"a": 5, "b": 5}, [Member(f"member-{i}", ["a", "b"]) for i in range(3)])
    plan = assign("cooperative-sticky", group)
    metadata = {m.id: protocol.encode_subscription(protocol.Subscription(
        m.topics, owned_partitions=plan.assignment[m.id], generation_id=3), version=3) for m in group.members}
    ids, joined = list(metadata), Messages.of_members(metadata)
    chosen = columnar.resolve("cooperative-sticky")
    size = f"{len(ids)} members / {sum(map(len, metadata.values()))} bytes"
    return [{"fast path": "JoinGroup read of a small group, in columns (`read_join_group` reads it plainly)",
             "input": size, "reference": "`member_from_metadata`",
             "reference_s": _best(lambda: [messages.member_from_metadata(m, metadata[m], chosen) for m in ids],
                                  max(repeat, 200)),
             "fast_s": _best(lambda: columnar._read_join_group(ids, joined, chosen, None), max(repeat, 200))}]


def kip848(repeat: int) -> list[dict[str, Any]]:
    from assignor.strategies import kip848
    from bench.kip848 import group_of

    rows = []
    for name, kind, members, topics, partitions in (("kip848-uniform", "homogeneous", 2000, 1000, 1000),
                                                    ("kip848-uniform", "heterogeneous", 1000, 100, 100),
                                                    ("kip848-range", "homogeneous", 2000, 1000, 1000)):
        group = group_of(kind, members, topics, partitions)
        rows.append({"fast path": f"{name} on columns (`kip848.columns`)",
                     "input": f"{kind}, {topics * partitions:,} partitions / {members:,} members",
                     "reference": "`target_assignment` (the model)",
                     "reference_s": _best(lambda: kip848.target_assignment(name, group), repeat),  # noqa: B023
                     "fast_s": _best(lambda: kip848.columns(name, group), repeat)})  # noqa: B023
    return rows


def whatif(repeat: int) -> list[dict[str, Any]]:
    from assignor import whatif
    from assignor.whatif import reference
    from assignor.workloads import java_large

    group = java_large("uniform", 100, 100, 100)
    events = [whatif.parse_event(f"member_leave:{group.members[0].id}")]
    rows = []
    for name in ("sticky", "cooperative-sticky"):
        rows.append({"fast path": f"what-if on arrays (`whatif.run`), {name}",
                     "input": "10,000 partitions / 100 members, one member leaves",
                     "reference": "`whatif.reference.run`",
                     "reference_s": _best(lambda: reference.run(group, events, name), repeat),  # noqa: B023
                     "fast_s": _best(lambda: whatif.run(group, events, [name], include_plans=True), repeat)})  # noqa: B023
    return rows


def java_sticky(repeat: int) -> list[dict[str, Any]]:
    from assignor.strategies.java_sticky import JavaStickyAssignor
    from bench.java import CASES, inputs

    rows = []
    for case in CASES:
        if case.kind != "random50" or case.members != 100:
            continue
        group = inputs(case)
        rows.append({"fast path": f"java-sticky's array steps, {case.step}",
                     "input": f"random50, {case.topics * case.partitions:,} partitions / {case.members:,} members",
                     "reference": "`JavaStickyAssignor(plain=True)`",
                     # Once: the plain steps take seconds here (minutes at 20,000 / 200).
                     "reference_s": _best(lambda: JavaStickyAssignor(plain=True).assign(group), 1),  # noqa: B023
                     "fast_s": _best(lambda: JavaStickyAssignor().assign(group), repeat)})  # noqa: B023
    return rows + _java_sticky_large(repeat)


def _java_sticky_large(repeat: int) -> list[dict[str, Any]]:
    """`java-sticky` on the java table's uniform million-partition group: the claims and what
    is left to deal in columns (`java_sticky.columns`) when 10 of its 2,000 members leave,
    against the sets (columns only from a size past the group); the fresh plan's every
    partition made in C (`topic_partitions_at`) against `plain_topic_partitions_at`."""
    from assignor import model
    from assignor.strategies.java_sticky import columns
    from bench.java import CASES, inputs

    million = "uniform, 1,000,000 partitions / 2,000 members"
    fresh, left = (inputs(next(c for c in CASES if c.kind == "uniform" and c.step == step))
                   for step in ("fresh", "leave10"))
    cases = [("the claims and what is left to deal in columns (`java_sticky.columns`)", columns, "COLUMNS_FROM",
              1 << 62, left, f"{million}, 10 leave", "the sets"),
             ("every partition made in C (`topic_partitions_at`)", columns, "topic_partitions_at",
              model.plain_topic_partitions_at, fresh, f"{million}, fresh", "`plain_topic_partitions_at`")]
    return _inside_assign("java-sticky", cases, "", repeat)


def _inside_assign(strategy: str, cases: list[tuple[Any, ...]], suffix: str, repeat: int) -> list[dict[str, Any]]:
    """Rows of fast paths inside ``assign(strategy)``: each case (the path in words, the module
    that calls it, its name there, its reference, the group, the input in words, the reference
    in words) timed with the reference put in the path's place, then as it is."""
    from assignor import assign

    rows = []
    for path, module, name, reference, group, size, reference_name in cases:
        with plain(module, name, reference):
            reference_s = _best(lambda: assign(strategy, group), repeat)  # noqa: B023
        rows.append({"fast path": f"`assign(\"{strategy}\")` with {path}{suffix}", "input": size,
                     "reference": reference_name, "reference_s": reference_s,
                     "fast_s": _best(lambda: assign(strategy, group), repeat)})  # noqa: B023
    return rows


def metadata(repeat: int) -> list[dict[str, Any]]:
    """A snapshot's Metadata response for a million partitions (500 topics of 2,000, three
    replicas on three racks): `compiled.decode` against `codec.decode`."""
    from assignor.wire import admin, codec, compiled

    topics = [(0, f"topic-{t:03d}", "AAAAAAAAAAAAAAAAAAAAAA", False,
               [(0, p, 1, 0, [1, 2, 3], [1, 2, 3], []) for p in range(2000)], -2147483648) for t in range(500)]
    api = admin.METADATA
    data = codec.encode(api.response, {"throttle_time_ms": 0, "brokers": [(n, "h", 9092, f"r{n}") for n in (1, 2, 3)],
                                       "cluster_id": "c", "controller_id": 1, "topics": topics}, api.version)
    return [{"fast path": "Metadata read (`compiled.decode`)", "input": "500 topics / 1,000,000 partitions",
             "reference": "`codec.decode`", "reference_s": _best(lambda: codec.decode(api.response, data, api.version),
                                                                 repeat),
             "fast_s": _best(lambda: compiled.decode(api.response, data, api.version), repeat)}]


@contextmanager
def plain(module: Any, name: str, reference: Any) -> Iterator[None]:
    """`module`'s `name` (a fast path) replaced by its `reference` for the block: where the
    caller looks it up, as the reference's run needs."""
    fast = getattr(module, name)
    setattr(module, name, reference)
    try:
        yield
    finally:
        setattr(module, name, fast)


def compiled(repeat: int) -> list[dict[str, Any]]:
    """The package's C part, each function against its plain reference inside `assign`
    (the reference put in its place in the module that calls it, for the reference's run), on
    the case it serves most: a fresh plan's objects and deal, a rebalance's claims, random
    subscriptions' names."""
    from assignor import assign, model
    from assignor.solver import dense
    from assignor.strategies import sticky
    from assignor.workloads import java_large, next_step

    def runs_plainly(names: Any, offsets: Any, owner: Any, members: int, previous: Any = None) -> Any:
        return model.plain_member_topic_partitions(names, offsets, owner, members)

    fresh = java_large("uniform", 500, 2000, 2000)
    left = next_step(fresh, assign("sticky", fresh), "leave10")
    random = java_large("random50", 1000, 100, 1000)
    random = next_step(random, assign("sticky", random), "leave10")
    million = "uniform, 1,000,000 partitions / 2,000 members"
    cases = [("the plan's TopicPartitions (`member_topic_partitions`)", dense, "member_topic_partitions",
              runs_plainly, fresh, f"{million}, fresh", "`plain_member_topic_partitions`"),
             ("the deal (`sticky._dealt`)", sticky, "_dealt", sticky._deal_plainly, fresh, f"{million}, fresh",
              "`sticky._deal_plainly`"),
             ("claimed TopicPartitions as columns (`claim_columns`)", dense, "claim_columns", lambda *_: None,
              left, f"{million}, 10 leave", "`dense._parse_claims` in Python"),
             ("subscriptions' names as indices (`name_indices`)", dense, "name_indices", model.plain_name_indices,
              random, "random50, 100,000 partitions / 1,000 members, 10 leave", "`plain_name_indices`")]
    return _inside_assign("sticky", cases, " in C", repeat)


def group_json(repeat: int) -> list[dict[str, Any]]:
    """A group file's plan once parsed: `group_from_json`, then `assign("sticky")`, with the
    claims read in C and with `topic_partitions_of_pairs` answering None (its plain reference)."""
    import json

    from assignor import assign, json_format
    from assignor.workloads import carry, java_large

    fresh = java_large("uniform", 500, 2000, 2000)
    data = json.loads(json.dumps(json_format.group_to_json(carry(fresh, assign("sticky", fresh), 5))))

    def planned() -> Any:
        return assign("sticky", json_format.group_from_json(data))

    with plain(json_format, "topic_partitions_of_pairs", lambda value: None):
        reference_s = _best(planned, repeat)
    return [{"fast path": "a group file's plan (`group_from_json`, then `assign(\"sticky\")`) with its claims "
                          "read in C (`topic_partitions_of_pairs`)",
             "input": "uniform, 1,000,000 partitions / 2,000 members, each owning its partitions",
             "reference": "`plain_partitions_from_json`", "reference_s": reference_s,
             "fast_s": _best(planned, repeat)}]


def compact_arrays(repeat: int) -> list[dict[str, Any]]:
    """The snapshot of a consumer-protocol group of 2,000 members over 1,000,000 partitions
    (`bench.snapshot.consumer_case`: its responses decoded, its JSON built) with the compiled
    reader's flexible arrays read in C, and without its C part (the closures read them)."""
    from assignor.wire import compiled as reader
    from bench.snapshot import consumer_case

    build, _size = consumer_case()
    reader._reader.cache_clear()
    with plain(reader, "_in_c", None):
        reference_s = _best(build, repeat)
    reader._reader.cache_clear()  # (the readers made without C are not kept)
    return [{"fast path": "a consumer-protocol group's snapshot (`compiled.decode` of ConsumerGroupDescribe, "
                          "then its JSON) with its topic partitions and names read in C (`_compact_arrays`)",
             "input": "2,000 members / 1,000,000 partitions, 500 topics each",
             "reference": "the compiled reader's closures", "reference_s": reference_s,
             "fast_s": _best(build, repeat)}]


def snapshot_pairs(repeat: int) -> list[dict[str, Any]]:
    """The snapshot of `bench.snapshot`'s large classic group, its million ``[topic, partition]``
    pairs made at once in C (`model.pairs_at`) against `model.plain_pairs_at`."""
    from assignor import model
    from bench.snapshot import classic_case

    build, _size = classic_case()
    with plain(model, "pairs_at", model.plain_pairs_at):  # (`Claims.member_pairs` looks it up there)
        reference_s = _best(build, repeat)
    return [{"fast path": "a classic group's snapshot (DescribeGroups and Metadata decoded, then its JSON) with its "
                          "pairs made in C (`pairs_at`)", "input": "2,000 members / 1,000,000 partitions",
             "reference": "`plain_pairs_at`", "reference_s": reference_s, "fast_s": _best(build, repeat)}]


def tp_arrays(repeat: int) -> list[dict[str, Any]]:
    """The snapshot of `bench.snapshot`'s large classic group with its members' arrays of topic
    partitions (JoinGroup's owned partitions, SyncGroup's assignments) read in C
    (`assignor/wire/_tp_arrays.c`) against the numpy rounds (`read_tp_columns_in_rounds`)."""
    from assignor.wire import arrays
    from bench.snapshot import classic_case

    build, _size = classic_case()
    with plain(arrays, "_in_c", None):
        reference_s = _best(build, repeat)
    return [{"fast path": "a classic group's snapshot with its members' arrays of topic partitions read in C "
                          "(`_tp_arrays`)", "input": "2,000 members / 1,000,000 partitions, twice",
             "reference": "`read_tp_columns_in_rounds` (numpy)", "reference_s": reference_s,
             "fast_s": _best(build, repeat)}]


def entry_pairs(repeat: int) -> list[dict[str, Any]]:
    """The snapshot of a consumer-protocol group of 2,000 members over 1,000,000 partitions
    (`bench.snapshot.consumer_case`) with its pairs made in C (``entry_pairs``, never tracked by
    the cyclic collector) against `snapshot._assigned_plainly` (as `zip` makes them)."""
    import importlib

    from bench.snapshot import consumer_case

    snapshot = importlib.import_module("assignor.cluster.snapshot")  # (the package's `snapshot` is its function)
    build, _size = consumer_case()
    with plain(snapshot, "_in_c", None):
        reference_s = _best(build, repeat)
    return [{"fast path": "a consumer-protocol group's snapshot with its pairs made in C (`entry_pairs`)",
             "input": "2,000 members / 1,000,000 partitions, 500 topics each",
             "reference": "`_assigned_plainly`", "reference_s": reference_s, "fast_s": _best(build, repeat)}]


def run(repeat: int = 3) -> list[dict[str, Any]]:
    return [*wire(repeat), *metadata(repeat), *compact_arrays(repeat), *entry_pairs(repeat), *snapshot_pairs(repeat),
            *tp_arrays(repeat), *compiled(repeat),
            *group_json(repeat), *kip848(repeat), *whatif(repeat), *java_sticky(repeat)]
