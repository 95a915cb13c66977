"""Snapshots of live groups on Apache Kafka (`assignor.cluster`): what the snapshot says equals
what the members hold, and a what-if on it predicts the broker's next target, which the test
then makes happen and compares."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from assignor import Group, assign, whatif
from assignor.cluster import read_snapshot, read_summaries, settings_of
from assignor.cluster.client import Cluster
from assignor.cluster.connection import Connection
from assignor.errors import ClusterError
from assignor.json_format import group_from_json
from assignor.metadata_order import response_order
from assignor.wire.admin import Api
from assignor.wire.schema import BYTES, INT16, INT32, NULLABLE_STRING, STRING, Array, Field, Message
from bench.rebalance import create_topic, settle
from tests.java_group import COOPERATIVE, UNIFORM, JavaGroup

pytestmark = [pytest.mark.integration, pytest.mark.anyio]


def held(snapshot_group: dict) -> dict[str, set[int]]:
    """Client id -> the partitions the snapshot says the member holds."""
    return {m["client_id"]: {p for _t, p in m["owned"]} for m in snapshot_group["members"]}


def targets(snapshot_group: dict) -> dict[str, set[tuple[str, int]]]:
    return {m["id"]: {(t, p) for t, p in m["target"]} for m in snapshot_group["members"]}


def planned(strategy: str, group: Group) -> dict[str, set[tuple[str, int]]]:
    return {m: {(tp.topic, tp.partition) for tp in tps} for m, tps in assign(strategy, group).assignment.items()}


def as_json(snapshot: dict) -> dict:
    """A snapshot as its JSON reads back (its pairs, tuples in memory, as lists)."""
    return json.loads(json.dumps(snapshot))


async def snap(broker, group: str) -> dict:
    return await snap_at(broker.bootstrap, group)


async def snap_at(bootstrap: str, group: str) -> dict:
    found = await read_snapshot(settings_of(bootstrap), [group])
    assert found["skipped"] == [] and len(found["groups"]) == 1, found
    return found["groups"][0]


async def until_target(broker, group: str, members: int, partitions: int, timeout: float = 30.0,
                       held: bool = True) -> dict:
    """The group's snapshot once its target has `members` members and `partitions` partitions,
    and everyone holds it (not `held`: each member has a target, held or not)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        now = await snap(broker, group)
        if len(now["members"]) == members and sum(len(m["target"]) for m in now["members"]) == partitions and \
                all(sorted(m["owned"]) == sorted(m["target"]) if held else m["target"] for m in now["members"]):
            return now
        assert asyncio.get_running_loop().time() < deadline, now
        await asyncio.sleep(0.3)


async def test_a_consumer_protocol_group_and_its_next_targets(broker, java_members, capsys):
    """Java members of a KIP-848 group (the broker's ``uniform``), one static: the snapshot holds
    what each member holds, its instance id, the epochs and the assignor; a leave, a join and
    new partitions planned on it with ``kip848-uniform`` give the targets the broker computes, and
    so does the what-if of the static member's leave once its session ends (until then the broker
    keeps its partitions for it). A rehearsal of its move to the consumer protocol is refused: it
    has moved."""
    java = await JavaGroup(broker, java_members, "snap-consumer", 12).create()
    static = {**UNIFORM, "group.instance.id": f"{java.group}-static"}
    members = [await java.start(0, static), await java.start(1, UNIFORM), await java.start(2, UNIFORM)]
    try:
        owned = await settle(members, 12)
        now = await until_target(broker, java.group, 3, 12)
        assert (now["protocol"], now["assignor"], now["topics"]) == ("consumer", "uniform", {java.topic: 12})
        assert held(now) == owned
        assert [m.get("group_instance_id") for m in now["members"] if m["client_id"] == members[0].name] == \
            [f"{java.group}-static"]
        assert now["group_epoch"] == now["assignment_epoch"] and len(now["topic_ids"][java.topic]) == 22
        assert (await read_summaries(settings_of(broker.bootstrap), [java.group]))["groups"] == [{
            "group_id": java.group, "protocol": "consumer", "assignor": "uniform", "state": "Stable",
            "member_count": 3}]
        from assignor import cli

        assert await asyncio.to_thread(cli.main, ["whatif", "--bootstrap-server", broker.bootstrap, "--group",
                                                  java.group, "--migrate", "kip848-range"]) == 2
        assert capsys.readouterr().err == (
            f"assignor: error: group '{java.group}' is on KIP-848's consumer protocol already (assignor 'uniform'): "
            "nothing to rehearse; replay events without migrating\n")

        # A leave: the member map without it, each member's target the one the snapshot holds.
        leaving = next(m for m in now["members"] if m["client_id"] == members[2].name)
        predicted = planned("kip848-uniform", group_from_json({**now, "members": [
            m for m in now["members"] if m is not leaving]}))
        await members.pop().stop()
        after = await until_target(broker, java.group, 2, 12)
        assert targets(after) == predicted

        # New partitions: the same members, a larger topic.
        expected = planned("kip848-uniform", group_from_json({**after, "topics": {java.topic: 16}}))
        await asyncio.to_thread(_grow, broker.bootstrap, java.topic, 16)
        grown = await until_target(broker, java.group, 2, 16)
        assert targets(grown) == expected

        # A join: the new member after the map's (its heartbeat computes the target).
        members.append(await java.start(3, UNIFORM))
        joined = await until_target(broker, java.group, 3, 16)
        joiner = next(m["id"] for m in joined["members"] if m["client_id"] == members[-1].name)
        expected = planned("kip848-uniform", group_from_json({**grown, "members": [
            *grown["members"], {"id": joiner, "topics": [java.topic]}]}))
        assert targets(joined) == expected

        # The static member leaves: the broker keeps its partitions for it until its session
        # ends, then plans without it, as the what-if of that leave on the snapshot says.
        static = next(m["id"] for m in joined["members"] if m.get("group_instance_id"))
        final = settled_pairs(joined, f"member_leave:{static}", "kip848-uniform")
        await members.pop(0).stop()
        kept = await snap(broker, java.group)
        assert targets(kept) == targets(joined)  # (within its session: nothing moves)
        after = await until_target(broker, java.group, 2, 16, timeout=60.0)
        assert targets(after) == final
    finally:
        for member in members:
            await member.stop()


async def test_a_java_range_group_whose_static_member_comes_first(broker, java_members):
    """Java's ``RangeAssignor`` deals to static members first, by instance id, then to the others
    by member id (KIP-345): a static member whose id sorts after a dynamic one's gets the first
    ranges, and so does it in our ``range`` on the snapshot, which holds its instance id; without
    it, the plan would be another. So after a dynamic member joins."""
    from bench.java_members import CLASSIC, RANGE

    java = await JavaGroup(broker, java_members, "snap-static-range", 7).create()
    ranged = {**CLASSIC, "partition.assignment.strategy": RANGE}
    members = [await java.start(0, ranged)]  # (client id snap-static-range-...: its member id sorts first)
    try:
        await settle(members, 7)
        members.append(await java.start(1, {**ranged, "group.instance.id": f"zz-{java.group}"}))
        for joining in (False, True):
            if joining:
                members.append(await java.start(2, ranged))
            await settle(members, 7)
            now = await snap(broker, java.group)
            static = next(m for m in now["members"] if m.get("group_instance_id"))
            assert static["client_id"] == members[1].name and static["id"] > min(m["id"] for m in now["members"])
            assert {p for _t, p in static["owned"]} == ({0, 1, 2} if joining else {0, 1, 2, 3})
            assert planned("range", group_from_json(now)) == {m["id"]: {tuple(tp) for tp in m["owned"]}
                                                               for m in now["members"]}
            dynamic = {**now, "members": [{k: v for k, v in m.items() if k != "group_instance_id"}
                                          for m in now["members"]]}
            assert planned("range", group_from_json(dynamic))[static["id"]] != {tuple(tp) for tp in static["owned"]}
    finally:
        for member in members:
            await member.stop()


async def test_a_group_mid_upgrade_holds_its_classic_members(broker, java_members, capsys):
    """A classic cooperative-sticky group of Java members, one of them restarted on the consumer
    protocol (a rolling upgrade's first step): the group is a consumer group now, and its classic
    members are in its snapshot (``member_type``) with what they hold and their targets, as the
    broker plans for them. A classic member's leave planned on it with ``kip848-uniform`` is the
    broker's next target; a rehearsal of the move is refused, saying the upgrade is under way."""
    from assignor import cli

    java = await JavaGroup(broker, java_members, "snap-upgrade", 12).create()
    members, _owned = await java.classic(3, COOPERATIVE)
    try:
        await members.pop(0).stop()
        members.insert(0, await java.start(0, UNIFORM))  # (the group converts at its first heartbeat)
        await settle(members, 12)
        now = await until_target(broker, java.group, 3, 12)
        assert (now["protocol"], now["assignor"]) == ("consumer", "uniform")
        assert held(now) == {m.name: m.partitions() for m in members}
        assert {m["client_id"]: m["member_type"] for m in now["members"]} == {
            members[0].name: "consumer", members[1].name: "classic", members[2].name: "classic"}
        assert await asyncio.to_thread(cli.main, ["whatif", "--bootstrap-server", broker.bootstrap, "--group",
                                                  java.group, "--migrate", "kip848-uniform"]) == 2
        assert capsys.readouterr().err == (
            f"assignor: error: group '{java.group}' is on KIP-848's consumer protocol already (assignor 'uniform'), "
            "2 of its 3 members still classic (an upgrade under way): a rehearsal starts from a classic group, before "
            "its first member moves; replay events without migrating\n")

        leaving = next(m for m in now["members"] if m["client_id"] == members[2].name)  # (a classic member)
        predicted = planned("kip848-uniform", group_from_json({**now, "members": [
            m for m in now["members"] if m is not leaving]}))
        await members.pop().stop()
        after = await until_target(broker, java.group, 2, 12)
        assert targets(after) == predicted
    finally:
        for member in members:
            await member.stop()


class HoldingMember:
    """A librdkafka consumer-protocol member (``uniform``) whose revocations wait until `release`:
    its rebalance callback blocks, so it goes on holding what its target no longer gives it
    (KIP-848's UNREVOKED_PARTITIONS), and the group stays mid-reconciliation."""

    def __init__(self, bootstrap: str, group: str, topic: str) -> None:
        import confluent_kafka

        self.name = f"{group}.holding"
        self.consumer = confluent_kafka.Consumer({
            "bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer", "client.id": self.name,
            "group.remote.assignor": "uniform", "enable.auto.commit": False, "broker.address.family": "v4"})
        self.gate, self.stopping = threading.Event(), threading.Event()
        self.assigned: set[int] = set()
        self.consumer.subscribe([topic], on_assign=self._assigned, on_revoke=self._revoked)
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def _assigned(self, _consumer, partitions) -> None:
        self.assigned |= {tp.partition for tp in partitions}

    def _revoked(self, _consumer, partitions) -> None:
        self.gate.wait(120)
        self.assigned -= {tp.partition for tp in partitions}

    def _poll(self) -> None:
        while not self.stopping.is_set():
            self.consumer.poll(0.05)
        self.consumer.close()

    def release(self) -> None:
        self.gate.set()

    async def stop(self) -> None:
        self.release()
        self.stopping.set()
        await asyncio.to_thread(self.thread.join, 30)


async def test_a_consumer_group_mid_reconciliation_is_planned_from_its_targets(broker, java_members):
    """A consumer-protocol group caught mid-reconciliation (a member that has not yet given up
    what its new target takes from it, and one waiting for those partitions): the snapshot holds
    what each member holds and, apart from it, its target; a join planned on it with
    ``kip848-uniform`` from the targets (not from what is held, which would plan another
    group) is the target the broker computes, while the revocation is still pending."""
    java = await JavaGroup(broker, java_members, "snap-reconciling", 6).create()
    holding = HoldingMember(broker.bootstrap, java.group, java.topic)
    members: list[Any] = []
    try:
        deadline = asyncio.get_running_loop().time() + 30
        while holding.assigned != set(range(6)):  # alone, it holds all six
            assert asyncio.get_running_loop().time() < deadline, holding.assigned
            await asyncio.sleep(0.1)
        await until_target(broker, java.group, 1, 6)
        members.append(await java.start(0, UNIFORM))
        # The target of two members, the Java one waiting for what the other holds.
        now = await until_target(broker, java.group, 2, 6, held=False)
        by_name = {m["client_id"]: m for m in now["members"]}
        assert {p for _t, p in by_name[holding.name]["owned"]} == holding.assigned == set(range(6))
        assert by_name[members[0].name]["owned"] == [] and len(by_name[holding.name]["target"]) == 3
        assert now["group_epoch"] == now["assignment_epoch"]

        members.append(await java.start(1, UNIFORM))
        joined = await until_target(broker, java.group, 3, 6, held=False)
        joiner = next(m["id"] for m in joined["members"] if m["client_id"] == members[-1].name)
        group = {**now, "members": [*now["members"], {"id": joiner, "topics": [java.topic]}]}
        assert targets(joined) == planned("kip848-uniform", group_from_json(group))
        from_held = {**group, "members": [{**m, "target": m.get("owned", [])} for m in group["members"]]}
        assert targets(joined) != planned("kip848-uniform", group_from_json(from_held))
        assert {p for _t, p in next(m for m in joined["members"] if m["client_id"] == holding.name)["owned"]} == \
            set(range(6))  # (still held: the prediction did not wait for the revocation)
    finally:
        await holding.stop()
        for member in members:
            await member.stop()


async def test_a_regex_subscription_and_the_topic_it_takes_next(broker, java_members, tmp_path):
    """A Java member subscribed by a regex the broker resolves (KIP-848's ``SubscriptionPattern``,
    RE2/J syntax) beside one subscribed by name: the snapshot holds the regex and the topics it
    took; a what-if creating a topic the regex takes, planned with ``kip848-uniform``, gives the
    targets the broker computes once it resolves the regex again (at a heartbeat, 10 s at least
    after its last resolution: ``GroupMetadataManager.maybeUpdateRegularExpressions``); the fleet
    job's rows carry the regex and predict the same."""
    from pipeline.cli import run as pipeline

    prefix = f"rx{uuid.uuid4().hex[:6]}"
    first = await create_topic(broker.bootstrap, 6, prefix)
    regex = re.escape(prefix) + r"-[[:xdigit:]]{8}"
    group = f"snap-regex-{uuid.uuid4().hex[:8]}"
    members = [await java_members.member(f"{group}.by-regex", broker.bootstrap, group, [], UNIFORM,
                                         regex=regex).start(),
               await java_members.member(f"{group}.by-name", broker.bootstrap, group, [first], UNIFORM).start()]
    try:
        await settle(members, 6)
        now = await until_target(broker, group, 2, 6)
        by_regex = next(m for m in now["members"] if m["client_id"] == members[0].name)
        assert (by_regex["topic_regex"], by_regex["topics"]) == (regex, [first])
        assert "topic_regex" not in next(m for m in now["members"] if m is not by_regex)

        second = f"{prefix}-{uuid.uuid4().hex[:8]}"
        created = f"topic_created:{second}:4"
        predicted = settled_pairs(now, created, "kip848-uniform")
        assert {t for t, _p in predicted[by_regex["id"]]} >= {second}

        rows = tmp_path / "rows"
        args = ["--bootstrap-server", broker.bootstrap, "--group", group]
        assert await asyncio.to_thread(pipeline, ["snapshot", *args, "--out", str(rows)]) == 0
        import pandas as pd

        fleet = pipeline_fleet(pd.read_parquet(rows / "groups.parquet"), pd.read_parquet(rows / "topics.parquet"),
                               created)
        assert {m: {(t, p) for t, p in tps} for m, tps in fleet.items()} == predicted

        await create_topic(broker.bootstrap, 4, prefix, name=second)
        after = await until_target(broker, group, 2, 10, timeout=60.0)
        assert targets(after) == predicted
        assert next(m for m in after["members"] if m["id"] == by_regex["id"])["topics"] == sorted([first, second])
    finally:
        for member in members:
            await member.stop()


def pipeline_fleet(groups, topics, event: str) -> dict[str, list[list]]:
    """The final plan of the fleet job's what-if (``kip848-uniform``) for the one group of these rows."""
    from pipeline import fleet

    rows = fleet.group_whatif(groups, topics, [event], ["kip848-uniform"], include_plan=True)
    assert list(rows["kind"]) == ["result"], rows
    return json.loads(rows.iloc[0]["plan"])


def _grow(bootstrap: str, topic: str, count: int) -> None:
    from confluent_kafka.admin import AdminClient, NewPartitions

    admin = AdminClient({"bootstrap.servers": bootstrap, "broker.address.family": "v4"})
    for future in admin.create_partitions([NewPartitions(topic, count)]).values():
        future.result(30)


async def test_a_classic_cooperative_group(broker, java_members, capsys):
    """Java's cooperative-sticky members: the snapshot holds what each holds, the protocol and
    assignor; Java's assignor planned on it (``java-cooperative-sticky``) for a leave, then new
    partitions, then a join, gives what the group settles on after each; the rehearsal of its
    move to the consumer protocol starts from that strategy."""
    java = await JavaGroup(broker, java_members, "snap-classic", 12).create()
    # (metadata read each second: the leader sees new partitions soon, and rebalances for them)
    members, owned = await java.classic(3, {**COOPERATIVE, "metadata.max.age.ms": "1000"})
    try:
        now = await snap(broker, java.group)
        assert (now["protocol"], now["assignor"], now["topics"]) == ("classic", "cooperative-sticky", {java.topic: 12})
        assert held(now) == {m.name: owned[i] for i, m in enumerate(members)}
        assert len({m["generation"] for m in now["members"]}) == 1
        from assignor import cli

        args = ["whatif", "--bootstrap-server", broker.bootstrap, "--group", java.group, "--migrate", "kip848-uniform"]
        assert await asyncio.to_thread(cli.main, [*args, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["classic"] == "java-cooperative-sticky"
        await leave_grow_join(broker, java.group, members, java.topic, 12, 16,
                              lambda: java.start(3, {**COOPERATIVE, "metadata.max.age.ms": "1000"}),
                              "java-cooperative-sticky", leaver=2)
    finally:
        for member in members:
            await member.stop()


async def test_a_librdkafka_group_on_its_default_strategies(broker):
    """librdkafka members on librdkafka's default ``partition.assignment.strategy``
    (``range,roundrobin``: the group runs ``range``, dealt by a librdkafka leader): the snapshot
    holds what each member holds, and ``range`` (what `kafka_strategy` gives for the group's
    assignor) planned on it for a leave, then new partitions, then a join, is what the group
    settles on after each. So is a static member's leave (no LeaveGroup: it is dropped when its
    session ends) in a group of static members, dealt in the order of their instance ids. A group of
    static and dynamic members is dealt in the order of their member ids (not Java's: static
    members first), which is what ``librdkafka-range`` plans on the snapshot, and ``range`` on
    it without its instance ids; on ``roundrobin``, what ``librdkafka-roundrobin`` plans."""
    from bench.rebalance import LibrdkafkaMember
    from tests.ownership import Timeline

    topic = await create_topic(broker.bootstrap, 7)
    group = f"snap-rdk-range-{topic[-8:]}"
    names: dict[str, str] = {}

    def member(name: str, group: str, **settings: str) -> LibrdkafkaMember:
        # (metadata read each second: the leader sees new partitions soon, and rebalances for them)
        return LibrdkafkaMember(name, broker.bootstrap, group, topic, Timeline(), strategy=None, settings={
            "client.id": name, "topic.metadata.refresh.interval.ms": 1000, **settings})

    def settled_as(snapshot: dict, event: str) -> dict[str, set[int]]:
        """`settled_after` with ``range``, by client id."""
        names.update({m["id"]: m["client_id"] for m in snapshot["members"]})
        return {names[m]: ps for m, ps in settled_after(snapshot, event, "range").items()}

    members = [await member(f"{group}.m{i}", group).start() for i in range(3)]
    try:
        await settle(members, 7)
        now = await snap(broker, group)
        assert (now["protocol"], now["assignor"]) == ("classic", "range")
        assert planned("range", group_from_json(now)) == {m["id"]: {tuple(tp) for tp in m["owned"]}
                                                          for m in now["members"]}
        await leave_grow_join(broker, group, members, topic, 7, 9, lambda: member(f"{group}.m3", group).start(),
                              "range")
    finally:
        for m in members:
            await m.stop()

    static = f"{group}-static"
    members = [await member(f"{static}.m{i}", static, **{"group.instance.id": f"{static}-{'cab'[i]}"}).start()
               for i in range(3)]
    try:
        await settle(members, 9)
        now = await snap(broker, static)
        assert {m["client_id"]: m["group_instance_id"] for m in now["members"]} == {
            m.name: f"{static}-{'cab'[i]}" for i, m in enumerate(members)}
        assert held(now) == {name: set(range(3 * i, 3 * i + 3)) for i, name in
                             enumerate(m.name for m in sorted(members, key=lambda m: "cab"[members.index(m)]))}
        leaving = next(m["id"] for m in now["members"] if m["client_id"] == members[2].name)
        final = settled_as(now, f"member_leave:{leaving}")
        await members.pop(2).stop()  # (its session ends 6 s on)
        assert await settle(members, 9, timeout=30) == final
    finally:
        for m in members:
            await m.stop()

    # Static and dynamic members together: librdkafka orders two members by instance id only when
    # both are static, else by member id (`rd_kafka_group_member_cmp`), where Java deals to static
    # members first: `librdkafka-range` plans what they hold, and so does `range` on the same
    # members without their instance ids.
    mixed = f"{group}-mixed"
    members = [await member(f"{mixed}.a", mixed).start()]
    members += [await member(f"{mixed}.s{i}", mixed, **{"group.instance.id": f"{mixed}.s{i}"}).start()
                for i in range(2)]
    try:
        await settle(members, 9)
        now = await snap(broker, mixed)
        by_id = {m["id"]: {tuple(tp) for tp in m["owned"]} for m in now["members"]}
        dynamic = group_from_json({**now, "members": [{k: v for k, v in m.items() if k != "group_instance_id"}
                                                      for m in now["members"]]})
        assert by_id == planned("range", dynamic) != planned("range", group_from_json(now))
        assert by_id == planned("librdkafka-range", group_from_json(now))
    finally:
        for m in members:
            await m.stop()

    # The same members on librdkafka's roundrobin: dealt in the same order.
    turns = f"{group}-roundrobin"
    members = [await member(f"{turns}.a", turns, **{"partition.assignment.strategy": "roundrobin"}).start()]
    members += [await member(f"{turns}.s{i}", turns, **{"group.instance.id": f"{turns}.s{i}",
                                                       "partition.assignment.strategy": "roundrobin"}).start()
                for i in range(2)]
    try:
        await settle(members, 9)
        now = await snap(broker, turns)
        assert now["assignor"] == "roundrobin"
        by_id = {m["id"]: {tuple(tp) for tp in m["owned"]} for m in now["members"]}
        assert by_id == planned("librdkafka-roundrobin", group_from_json(now)) != planned(
            "roundrobin", group_from_json(now))
    finally:
        for m in members:
            await m.stop()

async def test_a_librdkafka_cooperative_sticky_group(broker):
    """librdkafka members on ``cooperative-sticky``: librdkafka's own sticky assignor
    (``librdkafka-cooperative-sticky``) planned on the snapshot for a leave, then new partitions,
    then a join, is what the group settles on after each; Java's (what the group's assignor
    names for Java's clients) would split the leaver's partitions the other way round."""
    from bench.rebalance import LibrdkafkaMember
    from tests.ownership import Timeline

    topic = await create_topic(broker.bootstrap, 12)
    group = f"snap-rdk-coop-{topic[-8:]}"

    def member(name: str) -> LibrdkafkaMember:
        return LibrdkafkaMember(name, broker.bootstrap, group, topic, Timeline(), settings={
            "client.id": name, "topic.metadata.refresh.interval.ms": 1000})

    members = [await member(f"{group}.m{i}").start() for i in range(3)]
    try:
        await settle(members, 12)
        now = await snap(broker, group)
        assert (now["protocol"], now["assignor"]) == ("classic", "cooperative-sticky")
        leaving = f"member_leave:{next(m['id'] for m in now['members'] if m['client_id'] == members[1].name)}"
        assert settled_after(now, leaving, "librdkafka-cooperative-sticky") != settled_after(
            now, leaving, "java-cooperative-sticky")
        await leave_grow_join(broker, group, members, topic, 12, 17, lambda: member(f"{group}.m3").start(),
                              "librdkafka-cooperative-sticky")
    finally:
        for m in members:
            await m.stop()


async def test_librdkafka_cooperative_sticky_over_topics_of_other_subscriptions(broker):
    """librdkafka members subscribed to different topics (three topics; the general algorithm's
    other path, partitions sorted by how few members may take them): joins, leaves and new
    partitions one after another, each planned with ``librdkafka-cooperative-sticky`` on the
    snapshot before it, are what the group settles on, partition for partition."""
    from bench.rebalance import LibrdkafkaMember
    from tests.ownership import Timeline

    a, b, c = [await create_topic(broker.bootstrap, n) for n in (5, 3, 2)]
    group = f"snap-rdk-mixed-{a[-8:]}"
    counts = {a: 5, b: 3, c: 2}

    def member(name: str, topics: list[str]) -> LibrdkafkaMember:
        return LibrdkafkaMember(name, broker.bootstrap, group, topics, Timeline(), settings={
            "client.id": name, "topic.metadata.refresh.interval.ms": 1000})

    sticky = "librdkafka-cooperative-sticky"

    async def settled() -> dict:
        return await settled_group(broker.bootstrap, group, sum(counts.values()))

    def holding(snapshot: dict) -> dict[str, set[tuple[str, int]]]:
        return {m["id"]: {tuple(tp) for tp in m["owned"]} for m in snapshot["members"]}

    subscriptions = {"m0": [a, b], "m1": [a], "m2": [b, c], "m3": [a, b, c], "m4": [a, c]}
    members = {name: await member(f"{group}.{name}", subscriptions[name]).start() for name in ("m0", "m1", "m2")}
    try:
        now = await settled()
        steps = [("join", "m3"), ("leave", "m1"), ("grow", b), ("join", "m4"), ("leave", "m0")]
        for kind, what in steps:
            if kind == "leave":
                leaving = next(m["id"] for m in now["members"] if m["client_id"] == f"{group}.{what}")
                expected = settled_pairs(now, f"member_leave:{leaving}", sticky)
                await members.pop(what).stop()
                now = await settled()
            elif kind == "grow":
                counts[what] += 2
                expected = settled_pairs(now, f"partitions_added:{what}:{counts[what]}", sticky)
                await asyncio.to_thread(_grow, broker.bootstrap, what, counts[what])
                now = await settled()
            else:
                before = now
                members[what] = await member(f"{group}.{what}", subscriptions[what]).start()
                now = await settled()
                joiner = next(m["id"] for m in now["members"] if m["client_id"] == f"{group}.{what}")
                expected = settled_pairs(before, f"member_join:{joiner}:{','.join(subscriptions[what])}", sticky)
            assert holding(now) == expected, (kind, what)
    finally:
        for m in members.values():
            await m.stop()


async def test_librdkafka_cooperative_sticky_over_two_topics_subscribed_alike(broker):
    """librdkafka members subscribed alike to two topics, listed last name first: a leave's
    partitions are dealt from the last topic in name order back (the leader takes the topics in
    name order), which ``librdkafka-cooperative-sticky`` on the snapshot predicts, for a member
    whose leave would be dealt otherwise were the topics taken the other way round."""
    from bench.rebalance import LibrdkafkaMember
    from tests.ownership import Timeline

    suffix = uuid.uuid4().hex[:8]
    first, last = [await create_topic(broker.bootstrap, 3, name=f"alike-{suffix}-{name}") for name in ("aa", "zz")]
    group = f"snap-rdk-alike-{suffix}"
    members: list[Any] = []
    try:
        for i in range(3):  # (one at a time: a state some member's leave tells the two orders apart in)
            members.append(await LibrdkafkaMember(f"{group}.m{i}", broker.bootstrap, group, [last, first], Timeline(),
                                                  settings={"client.id": f"{group}.m{i}"}).start())
            now = await settled_group(broker.bootstrap, group, 6)
            while len(now["members"]) < len(members):
                now = await settled_group(broker.bootstrap, group, 6)

        def predicted(leaving: str) -> dict[str, set[tuple[str, int]]]:
            return settled_pairs(now, f"member_leave:{leaving}", "librdkafka-cooperative-sticky")

        # (a member whose leave would be dealt otherwise were the topics taken the other way round)
        leaving = next(m["id"] for m in now["members"]
                       if predicted(m["id"]) != _planned_with_topics_swapped(now, m["id"]))
        expected = predicted(leaving)
        name = next(m["client_id"] for m in now["members"] if m["id"] == leaving)
        await members.pop(next(i for i, m in enumerate(members) if m.name == name)).stop()
        after = await settled_group(broker.bootstrap, group, 6)
        assert {m["id"]: {tuple(tp) for tp in m["owned"]} for m in after["members"]} == expected
    finally:
        for member in members:
            await member.stop()


async def test_librdkafka_cooperative_sticky_over_six_topics_subscribed_alike(broker, monkeypatch):
    """librdkafka members subscribed alike to six topics: the leader deals the topics in the order
    its Metadata response lists them, which for more than four topics is the broker's (Scala's set
    order, `metadata_order.response_order`), not the names'. The broker lists these six as the model
    says; five members joining one at a time, then a leave whose partitions name order would deal
    otherwise, each planned with ``librdkafka-cooperative-sticky`` on the snapshot before it, are
    what the group settles on. (Taken in name order, such a leave was predicted wrong.)"""
    from assignor.strategies import librdkafka_sticky
    from bench.rebalance import LibrdkafkaMember
    from tests.ownership import Timeline

    topics = [await create_topic(broker.bootstrap, 3, name=f"six-alike-{name}") for name in "abcdef"]
    async with Cluster(settings_of(broker.bootstrap)) as cluster:
        answer = await cluster.metadata(topics)
    assert [t[1] for t in answer["topics"]] == response_order(sorted(topics)) != sorted(topics)
    group, sticky = "snap-rdk-six-alike", "librdkafka-cooperative-sticky"

    def holding(snapshot: dict) -> dict[str, set[tuple[str, int]]]:
        return {m["id"]: {tuple(tp) for tp in m["owned"]} for m in snapshot["members"]}

    members: list[Any] = []
    now: dict = {}
    try:
        for i in range(5):  # (one at a time: each join is planned from the state before it)
            name = f"{group}.m{i}"
            members.append(await LibrdkafkaMember(name, broker.bootstrap, group, list(reversed(topics)), Timeline(),
                                                  settings={"client.id": name}).start())
            before, now = now, await settled_group(broker.bootstrap, group, 18)
            while len(now["members"]) < len(members):
                now = await settled_group(broker.bootstrap, group, 18)
            if before:
                joiner = next(m["id"] for m in now["members"] if m["client_id"] == name)
                assert holding(now) == settled_pairs(before, f"member_join:{joiner}:{','.join(topics)}", sticky), i

        def dealt_in(order: Callable[[list[str]], list[str]], leaving: str) -> dict[str, set[tuple[str, int]]]:
            with monkeypatch.context() as patch:
                patch.setattr(librdkafka_sticky, "eligible_topics", lambda group: order(sorted(group.topics)))
                return settled_pairs(now, f"member_leave:{leaving}", sticky)

        leaving = next((m["id"] for m in now["members"]
                        if dealt_in(response_order, m["id"]) != dealt_in(list, m["id"])), None)
        assert leaving is not None, "no member's leave is dealt otherwise in name order"
        expected = settled_pairs(now, f"member_leave:{leaving}", sticky)
        name = next(m["client_id"] for m in now["members"] if m["id"] == leaving)
        await members.pop(next(i for i, m in enumerate(members) if m.name == name)).stop()
        assert holding(await settled_group(broker.bootstrap, group, 18)) == expected
    finally:
        for member in members:
            await member.stop()


def _planned_with_topics_swapped(snapshot: dict, leaving: str) -> dict[str, set[tuple[str, int]]]:
    """What the leave plans if librdkafka dealt the topics in the other name order: the plan
    of the group whose topic names sort the other way round, names mapped back."""
    names = sorted(snapshot["topics"])
    renamed = dict(zip(names, reversed(names)))
    flipped = {**snapshot, "topics": {renamed[t]: n for t, n in snapshot["topics"].items()},
               "members": [{**m, "topics": [renamed[t] for t in m["topics"]],
                            "owned": [[renamed[t], p] for t, p in m["owned"]]} for m in snapshot["members"]]}
    for key in ("topic_ids", "partition_racks"):
        flipped.pop(key, None)
    final = settled_pairs(flipped, f"member_leave:{leaving}", "librdkafka-cooperative-sticky")
    return {m: {(renamed[t], p) for t, p in pairs} for m, pairs in final.items()}

async def test_an_aiokafka_group_with_our_sticky_assignor_static_members_the_cli_and_the_service(broker, capsys,
                                                                                                  tmp_path):
    """aiokafka members with our eager ``sticky`` assignor (owned partitions and generation in its
    user data), static: the snapshot decodes them; the CLI prints the same group, and answers
    ``plan`` and ``whatif`` for it by name; the service reads it by its cluster's alias; a group
    that does not exist is said so; a static member's leave, made to happen, leaves the others
    holding what the what-if of it said."""
    from aiokafka import AIOKafkaConsumer

    from api.app import create_app
    from assignor import cli
    from assignor.integrations.aiokafka import StickyAssignor
    from bench.rebalance import create_topic
    from tests.api.test_api import client_for, settings
    from tests.broker import CONSUMER_SETTINGS

    topic = await create_topic(broker.bootstrap, 6)
    group = f"snap-aiokafka-{topic[-8:]}"
    consumers = []
    try:
        for name in ("a", "b", "c"):
            consumer = AIOKafkaConsumer(topic, bootstrap_servers=broker.bootstrap, group_id=group, client_id=name,
                                        group_instance_id=f"instance-{name}",
                                        partition_assignment_strategy=(StickyAssignor(),), **CONSUMER_SETTINGS)
            await consumer.start()
            consumers.append(consumer)
        deadline = asyncio.get_running_loop().time() + 30
        while sorted(len(c.assignment()) for c in consumers) != [2, 2, 2]:
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.2)
        await asyncio.sleep(1.5)  # (the last rebalance's SyncGroup is done everywhere)
        now = await snap(broker, group)
        assert (now["protocol"], now["assignor"]) == ("classic", "sticky")
        assert held(now) == {c._client._client_id: {tp.partition for tp in c.assignment()} for c in consumers}
        assert {m["client_id"]: m["group_instance_id"] for m in now["members"]} == {
            n: f"instance-{n}" for n in "abc"}
        assert {m["generation"] for m in now["members"]} == {consumers[0]._coordinator.generation}

        args = ["--bootstrap-server", broker.bootstrap, "--group", group]
        assert await asyncio.to_thread(cli.main, ["snapshot", *args]) == 0
        assert json.loads(capsys.readouterr().out) == as_json(now)
        assert await asyncio.to_thread(cli.main, ["snapshot", *args, "--summary"]) == 0
        assert json.loads(capsys.readouterr().out) == {"group_id": group, "protocol": "classic", "assignor": "sticky",
                                                       "state": "Stable", "member_count": 3}
        assert await asyncio.to_thread(cli.main, ["plan", *args, "--strategy", "sticky", "--compact"]) == 0
        plan = json.loads(capsys.readouterr().out)
        assert {m: {p for _t, p in tps} for m, tps in plan["assignment"].items()} == {
            m["id"]: {p for _t, p in m["owned"]} for m in now["members"]}  # balanced already: nothing moves
        leave = f"member_leave:{now['members'][0]['id']}"
        assert await asyncio.to_thread(cli.main, ["whatif", *args, "--strategy", "sticky", "--event", leave,
                                                  "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["strategies"]["sticky"]["summary"]["moved"] == 0
        assert await asyncio.to_thread(cli.main, ["plan", "--bootstrap-server", broker.bootstrap, "--group",
                                                  "no-such-group"]) == 2
        assert capsys.readouterr().err == "assignor: error: group 'no-such-group': no such group\n"

        # The fleet job's rows, and the fleet job planning the cluster's group.
        from pipeline.cli import run as pipeline

        rows = tmp_path / "rows"
        assert await asyncio.to_thread(pipeline, ["snapshot", *args, "--out", str(rows)]) == 0
        import pandas as pd

        members = pd.read_parquet(rows / "groups.parquet")
        assert list(members["member_id"]) == [m["id"] for m in now["members"]]
        assert pd.read_parquet(rows / "topics.parquet").to_dict("records") == [
            {"cluster": broker.bootstrap, "topic": topic, "partitions": 6}]
        fleet = tmp_path / "fleet"
        assert await asyncio.to_thread(pipeline, ["fleet-whatif", *args, "--local", "--strategy", "sticky",
                                                  "--event", leave, "--out", str(fleet)]) == 0
        results = pd.read_parquet(fleet / "results")
        assert results[["group_id", "strategy", "moved"]].to_dict("records") == [
            {"group_id": group, "strategy": "sticky", "moved": 0}]
        capsys.readouterr()

        # The service, for the cluster its settings name "local".
        app = create_app(settings(tmp_path, clusters={"local": {"bootstrap.servers": broker.bootstrap}}))
        try:
            async with await client_for(app) as service:
                assert (await service.get(f"/v1/clusters/local/groups/{group}")).json() == as_json(now)
                listed = (await service.get("/v1/clusters/local/groups")).json()
                assert as_json(now) in listed["groups"]
                answer = await service.post("/v1/whatif", json={"cluster": "local", "group_id": group,
                                                                "strategies": ["sticky"], "events": [leave]})
                assert answer.status_code == 200 and answer.json()["strategies"]["sticky"]["summary"]["moved"] == 0
                posted = await service.post("/v1/plans", json={**now, "strategy": "sticky"})
                live = await service.get(f"/v1/clusters/local/groups/{group}/plan", params={"strategy": "sticky"})
                assert posted.status_code == live.status_code == 200
                assert {**live.json(), "plan_seconds": 0} == {**posted.json(), "plan_seconds": 0}
                answer = await service.get("/v1/clusters/local/groups/no-such-group/plan")
                assert (answer.status_code, answer.json()["detail"]) == (
                    404, "cluster 'local', group 'no-such-group': no such group")
                answer = await service.get("/v1/clusters/local/groups/no-such-group")
                assert (answer.status_code, answer.json()["detail"]) == (
                    404, "cluster 'local', group 'no-such-group': no such group")
        finally:
            app.state.planner.close()

        # The leave made to happen: the static member stops (no LeaveGroup, KIP-345), the
        # coordinator drops it when its session ends, and the others hold what the what-if said.
        final = settled_pairs(now, leave, "sticky")
        names = {m["id"]: m["client_id"] for m in now["members"]}
        leaving = next(c for c in consumers if c._client._client_id == names[now["members"][0]["id"]])
        consumers.remove(leaving)
        await leaving.stop()
        deadline = asyncio.get_running_loop().time() + 30
        while sorted(len(c.assignment()) for c in consumers) != [3, 3]:
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.2)
        assert {c._client._client_id: {tp.partition for tp in c.assignment()} for c in consumers} == {
            names[m]: {p for _t, p in pairs} for m, pairs in final.items()}
    finally:
        for consumer in consumers:
            await consumer.stop()


async def test_what_cannot_be_read_is_said_so():
    """An address nothing listens on: one error naming the cluster and the address, at once."""
    with pytest.raises(ClusterError, match=r"cluster 127\.0\.0\.1:1: cannot connect to 127\.0\.0\.1:1"):
        await read_snapshot(settings_of("127.0.0.1:1"), ["g"])


async def test_librdkafka_javas_eager_sticky_and_a_range_consumer_group(broker, java_members):
    """librdkafka's ``cooperative-sticky`` and Java's eager ``StickyAssignor`` (owned partitions
    in its user data) as classic groups, and a KIP-848 group on the broker's ``range``: each
    snapshot holds what the members hold (and, on the range group, each member's rack); a leave
    planned on the Java group with ``java-sticky`` and on the range group with ``kip848-range`` is
    what the group then settles on (the broker's next target, on the range group), and so is a
    static member's join on the range group, planned before it comes. (A librdkafka
    group's leave is predicted by librdkafka's own strategy:
    `test_a_librdkafka_cooperative_sticky_group`.)"""
    from bench.java_members import CLASSIC
    from bench.rebalance import LibrdkafkaMember, create_topic
    from tests.ownership import Timeline

    topic = await create_topic(broker.bootstrap, 12)
    group = f"snap-rdkafka-{topic[-8:]}"
    rdk = [await LibrdkafkaMember(n, broker.bootstrap, group, topic, Timeline()).start() for n in "abc"]
    try:
        owned = await settle(rdk, 12)
        now = await snap(broker, group)
        assert (now["protocol"], now["assignor"]) == ("classic", "cooperative-sticky")
        assert sorted(map(sorted, held_by_id(now).values())) == sorted(map(sorted, owned.values()))
    finally:
        for member in rdk:
            await member.stop()

    java = await JavaGroup(broker, java_members, "snap-eager", 12).create()
    sticky = {**CLASSIC, "partition.assignment.strategy": "org.apache.kafka.clients.consumer.StickyAssignor"}
    members, owned_by = await java.classic(3, sticky)
    try:
        now = await snap(broker, java.group)
        assert (now["protocol"], now["assignor"]) == ("classic", "sticky")
        assert held(now) == {m.name: owned_by[i] for i, m in enumerate(members)}
        leaving = next(m["id"] for m in now["members"] if m["client_id"] == members[1].name)
        final = settled_after(now, f"member_leave:{leaving}", "java-sticky")
        names = {m["id"]: m["client_id"] for m in now["members"]}
        await members.pop(1).stop()
        after = await settle(members, 12)
        assert after == {names[m]: partitions for m, partitions in final.items()}
    finally:
        for member in members:
            await member.stop()

    ranged = await JavaGroup(broker, java_members, "snap-range", 12).create()
    settings = {**UNIFORM, "group.remote.assignor": "range"}
    # (two members on racks: their heartbeats' rack id, which the broker's assignors do not read in 4.3)
    members = [await ranged.start(i, {**settings, **({"client.rack": f"rack-{i}"} if i else {})}) for i in range(3)]
    try:
        await settle(members, 12)
        now = await until_target(broker, ranged.group, 3, 12)
        assert now["assignor"] == "range"
        assert {m["client_id"]: m["rack"] for m in now["members"]} == {
            member.name: f"rack-{i}" if i else None for i, member in enumerate(members)}
        leaving = next(m for m in now["members"] if m["client_id"] == members[1].name)
        predicted = planned("kip848-range", group_from_json({**now, "members": [
            m for m in now["members"] if m is not leaving]}))
        await members.pop(1).stop()
        after = await until_target(broker, ranged.group, 2, 12)
        assert targets(after) == predicted

        # A static member joins: range deals to it first, by its instance id, so its join is
        # planned before it comes, under a member id it has not drawn yet (KIP-345, KIP-1082;
        # "~joining" sorts after any id drawn, where a dynamic member would get the last range).
        instance = f"static-{ranged.group}"
        expected = settled_pairs(after, f"member_join:~joining:{ranged.topic}::{instance}", "kip848-range")
        members.append(await ranged.start(3, {**settings, "group.instance.id": instance}))
        joined = await until_target(broker, ranged.group, 3, 12)
        joiner = next(m["id"] for m in joined["members"] if m.get("group_instance_id") == instance)
        expected[joiner] = expected.pop("~joining")
        assert targets(joined) == expected and {p for _t, p in expected[joiner]} == {0, 1, 2, 3}
    finally:
        for member in members:
            await member.stop()


async def settled_group(bootstrap: str, group: str, partitions: int, timeout: float = 60.0) -> dict:
    """The group's snapshot once its members hold `partitions` partitions and nothing has moved
    for 2 s (what members hold read from the group: members of several topics)."""
    deadline, previous, since = asyncio.get_running_loop().time() + timeout, None, 0.0
    while True:
        found = await read_snapshot(settings_of(bootstrap), [group])
        now = found["groups"][0] if found["groups"] else None
        holding = None if now is None else {m["id"]: {tuple(tp) for tp in m["owned"]} for m in now["members"]}
        clock = asyncio.get_running_loop().time()
        if holding != previous:
            previous, since = holding, clock
        elif holding is not None and sum(map(len, holding.values())) == partitions and clock - since >= 2:
            return now
        assert clock < deadline, (found, holding)
        await asyncio.sleep(0.3)


def held_by_id(snapshot_group: dict) -> dict[str, set[int]]:
    return {m["id"]: {p for _t, p in m["owned"]} for m in snapshot_group["members"]}


def settled_pairs(snapshot_group: dict, event: str, strategy: str) -> dict[str, set[tuple[str, int]]]:
    """What each member holds once `event` on the snapshot has settled under `strategy` (the
    what-if's last step), by member id, as (topic, partition)."""
    run = whatif.run(group_from_json(snapshot_group), [whatif.parse_event(event)], [strategy], include_plans=True)
    return {m: {(t, p) for t, p in tps} for m, tps in run["strategies"][strategy]["steps"][-1]["assignment"].items()}


def settled_after(snapshot_group: dict, event: str, strategy: str) -> dict[str, set[int]]:
    """`settled_pairs`' partitions (groups of one topic)."""
    return {m: {p for _t, p in pairs} for m, pairs in settled_pairs(snapshot_group, event, strategy).items()}


async def leave_grow_join(broker, group: str, members: list[Any], topic: str, partitions: int, grown: int,
                          join: Callable[[], Awaitable[Any]], strategy: str, leaver: int = 1) -> None:
    """Member `leaver` leaves, `topic` grows from `partitions` to `grown` partitions, then a member joins
    (`join` starts it; its id is the broker's, known once it joined): each, planned with
    `strategy` on the snapshot before it (`settled_after`), is what the members then hold."""
    names: dict[str, str] = {}

    def settled_as(snapshot: dict, event: str) -> dict[str, set[int]]:
        names.update({m["id"]: m["client_id"] for m in snapshot["members"]})
        return {names[m]: ps for m, ps in settled_after(snapshot, event, strategy).items()}

    now = await snap(broker, group)
    leaving = next(m["id"] for m in now["members"] if m["client_id"] == members[leaver].name)
    final = settled_as(now, f"member_leave:{leaving}")
    await members.pop(leaver).stop()
    assert await settle(members, partitions) == final

    before = await snap(broker, group)
    await asyncio.to_thread(_grow, broker.bootstrap, topic, grown)
    assert await settle(members, grown) == settled_as(before, f"partitions_added:{topic}:{grown}")

    before = await snap(broker, group)
    members.append(await join())
    after = await settle(members, grown)
    joined = await snap(broker, group)
    joiner = next(m["id"] for m in joined["members"] if m["client_id"] == members[-1].name)
    names[joiner] = members[-1].name
    assert after == held(joined) == settled_as(before, f"member_join:{joiner}:{topic}")


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
async def test_through_a_sasl_listener(broker, mechanism, tmp_path):
    """The broker's SASL_PLAINTEXT listener (`bench.broker`), with each mechanism a snapshot
    takes, given as Kafka's tools take it (``--command-config``): the same group as through
    PLAINTEXT; a wrong password is refused, naming the cluster, the mechanism and the user."""
    from assignor.cluster import read_properties
    from bench.broker import SASL_PASSWORD, SASL_USER
    from bench.rebalance import commit_offsets, create_topic

    topic = await create_topic(broker.bootstrap, 2)
    group = f"snap-sasl-{topic[-8:]}"
    commit_offsets(broker.bootstrap, [group], topic)
    module = "plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule"

    def properties(password: str) -> dict[str, str]:
        path = tmp_path / f"{password}.properties"
        path.write_text(f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism={mechanism}\n"
                        f"sasl.jaas.config=org.apache.kafka.common.security.{module} required \\\n"
                        f'    username="{SASL_USER}" password="{password}";\n')
        return read_properties(path)

    plain = await read_snapshot(settings_of(broker.bootstrap), [group])
    sasl = await read_snapshot(settings_of(broker.sasl_bootstrap, properties(SASL_PASSWORD)), [group])
    assert sasl == plain and plain["groups"][0]["group_id"] == group
    with pytest.raises(ClusterError, match=f"refused SASL {mechanism} for 'snapshot'"):
        await read_snapshot(settings_of(broker.sasl_bootstrap, properties("wrong")), [group])


async def test_a_cluster_of_two_brokers_on_two_racks(tmp_path, java_members):
    """Two brokers, one per rack, and two partitions of ``__consumer_offsets``, one led by
    each: ``snapshot --all`` reads the groups of both coordinators, each from its own broker.
    Java's ``RangeAssignor`` in a Java leader, its members on the two racks, the topic's
    partitions led on both: Java deals by rack (``RangeAssignor.assignPartitions``, KIP-881),
    every member reads its own rack's partitions, and our ``range`` on the snapshot (its
    ``partition_racks`` from both brokers' metadata) plans what the members hold. With the
    second broker down, the groups it coordinates are said unavailable and the others read; every
    group of the cluster cannot be listed without it, and that is said, naming it."""
    from assignor.cluster.client import Cluster
    from assignor.ordering import string_hash
    from bench.broker import Broker
    from bench.java_members import CLASSIC, RANGE
    from bench.rebalance import commit_offsets, create_topic

    spread = {"offsets.topic.num.partitions": "2"}
    first = Broker(tmp_path / "a", settings={**spread, "broker.rack": "rack-a"})
    second = None
    java: list = []
    try:
        second = Broker(tmp_path / "b", settings={**spread, "broker.rack": "rack-b"}, joins=first)
        # Partitions 0 and 2 on rack-b, 1 and 3 on rack-a: plain ranges would give the member on
        # rack-b (first by member id) partitions 0 and 1, one of them on the other rack.
        topic = await create_topic(first.bootstrap, 4, replicas={0: [2], 1: [1], 2: [2], 3: [1]})
        # Group ids on each offsets partition (`GroupCoordinatorService.partitionFor`:
        # Utils.abs(groupId.hashCode()) % partitions; `string_hash` is the hash unsigned).
        by_partition: dict[int, list[str]] = {}
        for name in (f"two-{topic[-8:]}-{i}" for i in range(100)):
            unsigned = string_hash(name)
            signed = unsigned - (1 << 32) if unsigned >= 1 << 31 else unsigned
            by_partition.setdefault((0 if signed == -(1 << 31) else abs(signed)) % 2, []).append(name)
        groups = by_partition[0][:2] + by_partition[1][:2]
        commit_offsets(first.bootstrap, groups, topic)
        async with Cluster(settings_of(second.bootstrap)) as cluster:
            await cluster.metadata([])
            coordinator = await cluster.coordinators(groups)
            assert set(coordinator.values()) == {1, 2}
        ranged = f"two-range-{topic[-8:]}"
        for name, rack in ((f"{ranged}.x0", "rack-b"), (f"{ranged}.x1", "rack-a")):
            java.append(await java_members.member(name, first.bootstrap, ranged, [topic], {
                **CLASSIC, "partition.assignment.strategy": RANGE, "client.rack": rack}).start())
        await settle(java, 4)
        everything = await read_snapshot(settings_of(second.bootstrap), None)
        for member in java:
            await member.stop()
        java = []
        racked = await _librdkafka_on_racks(first.bootstrap, topic)
        # The second broker down (still in the metadata until the controller fences it, 9 s on):
        # the groups it coordinates are said unavailable, naming it; the first broker's are read.
        second.stop()
        partly = await read_snapshot(settings_of(first.bootstrap), groups)
        with pytest.raises(ClusterError, match=r"^cluster 127\.0\.0\.1:\d+: broker 2 cannot be reached to list the "
                                               r"groups it coordinates \(cannot connect to 127\.0\.0\.1:\d+ "):
            await read_snapshot(settings_of(first.bootstrap), None)  # (every group: its groups are not known)
    finally:
        for member in java:
            await member.stop()
        if second is not None:
            second.stop()
        first.stop()
    assert [g["group_id"] for g in partly["groups"]] == [g for g in groups if coordinator[g] == 1]
    assert [s["group_id"] for s in partly["skipped"]] == [g for g in groups if coordinator[g] == 2]
    assert all(s["kind"] == "unavailable" and re.match(
        r"its coordinator, broker 2, cannot be reached \(cannot connect to 127\.0\.0\.1:\d+ ", s["reason"])
        for s in partly["skipped"]), partly["skipped"]
    assert everything["skipped"] == []
    found = {g["group_id"]: g for g in everything["groups"]}
    assert set(found) == {*groups, ranged}
    by_rack = found[ranged]
    assert by_rack["partition_racks"][topic] == [["rack-b"], ["rack-a"], ["rack-b"], ["rack-a"]]
    assert {m["rack"]: {p for _t, p in m["owned"]} for m in by_rack["members"]} == {"rack-b": {0, 2},
                                                                                    "rack-a": {1, 3}}
    snapshot = group_from_json(by_rack)
    assert planned("range", snapshot) == {m["id"]: {tuple(tp) for tp in m["owned"]} for m in by_rack["members"]}
    assert racked["predicted"] == racked["settled"]


async def _librdkafka_on_racks(bootstrap: str, topic: str) -> dict[str, dict[str, set[int]]]:
    """librdkafka ``cooperative-sticky`` members joining one at a time, on rack-a, rack-b and
    rack-a, over `topic` (its partitions led on both racks), then the first leaves: librdkafka
    deals by rack (``rd_kafka_rack_info_new``, KIP-881), and ``librdkafka-cooperative-sticky``
    on the snapshot before each predicts what the group settles on after it (the leave's
    prediction is not what the same plan without racks gives). Predicted and settled, by client
    id, after each."""
    from bench.rebalance import LibrdkafkaMember
    from tests.ownership import Timeline

    group = f"two-rdk-{topic[-8:]}"
    names: dict[str, str] = {}
    predicted, settled = {}, {}
    members: list[LibrdkafkaMember] = []
    strategy = "librdkafka-cooperative-sticky"
    try:
        before = None
        for i, rack in enumerate(("rack-a", "rack-b", "rack-a")):
            members.append(await LibrdkafkaMember(f"{group}.{i}", bootstrap, group, topic, Timeline(), settings={
                "client.id": f"{group}.{i}", "client.rack": rack}).start())
            settled[f"join {i}"] = await settle(members, 4)
            now = await snap_at(bootstrap, group)
            names.update({m["id"]: m["client_id"] for m in now["members"]})
            if before is not None:
                joiner = next(m for m in now["members"] if m["client_id"] == members[-1].name)
                predicted[f"join {i}"] = {names[m]: ps for m, ps in settled_after(
                    before, f"member_join:{joiner['id']}:{topic}:{rack}", strategy).items()}
            else:
                predicted[f"join {i}"] = settled[f"join {i}"]
            before = now
        assert {m["client_id"]: m["rack"] for m in before["members"]} == {
            f"{group}.0": "rack-a", f"{group}.1": "rack-b", f"{group}.2": "rack-a"}
        leaving = next(m for m, name in names.items() if name == members[0].name)
        predicted["leave"] = {names[m]: ps for m, ps in settled_after(before, f"member_leave:{leaving}",
                                                                       strategy).items()}
        rackless = {k: v for k, v in before.items() if k != "partition_racks"}
        assert predicted["leave"] != {names[m]: ps for m, ps in settled_after(
            rackless, f"member_leave:{leaving}", strategy).items()}
        await members.pop(0).stop()
        settled["leave"] = await settle(members, 4)
    finally:
        for member in members:
            await member.stop()
    return {"predicted": predicted, "settled": settled}


async def test_through_a_tls_listener_and_the_wrong_listener_said_so(broker, tmp_path, capsys):
    """The broker's SSL listener (`bench.broker`: a certificate its own test CA signed), trusted
    through a PEM truststore as Kafka's tools take it (``ssl.truststore.location``): the same
    group as through PLAINTEXT, from the CLI (``--command-config``) and the service (a cluster
    alias with those properties); and through a listener that requires a client certificate,
    with one (``ssl.keystore.location``). A request in the clear at the SSL listener (Kafka
    answers with a TLS alert), TLS at the plaintext listener, the broker's certificate without its
    CA, and no client certificate where one is required are each one line naming the cure; from
    the service, a 503 naming the alias and the group."""
    from api.app import create_app
    from assignor import cli
    from bench.broker import TLS_CA, TLS_CLIENT
    from bench.rebalance import commit_offsets, create_topic
    from tests.api.test_api import client_for, settings

    topic = await create_topic(broker.bootstrap, 2)
    group = f"snap-tls-{topic[-8:]}"
    commit_offsets(broker.bootstrap, [group], topic)
    plain = await read_snapshot(settings_of(broker.bootstrap), [group])
    trusted = {"security.protocol": "SSL", "ssl.truststore.location": str(TLS_CA)}
    assert await read_snapshot(settings_of(broker.ssl_bootstrap, trusted), [group]) == plain
    mutual = {**trusted, "ssl.keystore.location": str(TLS_CLIENT)}
    assert await read_snapshot(settings_of(broker.mtls_bootstrap, mutual), [group]) == plain
    cases = [(broker.ssl_bootstrap, {}, "answers in TLS: set security.protocol=SSL"),
             (broker.mtls_bootstrap, trusted, "the broker refused the client certificate, or the lack of one"),
             (broker.bootstrap, trusted, "the TLS handshake failed: is it a TLS listener?"),
             (broker.ssl_bootstrap, {"security.protocol": "SSL"},
              "self-signed certificate in certificate chain: ssl.truststore.location names the CA")]
    for bootstrap, properties, said in cases:
        with pytest.raises(ClusterError, match=f"^cluster {bootstrap}: .*{re.escape(said)}"):
            await read_snapshot(settings_of(bootstrap, properties), [group])

    config = tmp_path / "client.properties"
    config.write_text("".join(f"{key}={value}\n" for key, value in trusted.items()))
    command = ["snapshot", "--bootstrap-server", broker.ssl_bootstrap, "--command-config", str(config)]
    assert await asyncio.to_thread(cli.main, [*command, "--group", group]) == 0
    assert json.loads(capsys.readouterr().out) == as_json(plain["groups"][0])
    app = create_app(settings(tmp_path, clusters={"secure": {"bootstrap.servers": broker.ssl_bootstrap, **trusted},
                                                  "clear": {"bootstrap.servers": broker.ssl_bootstrap}}))
    try:
        async with await client_for(app) as service:
            assert (await service.get(f"/v1/clusters/secure/groups/{group}")).json() == as_json(plain["groups"][0])
            answer = await service.get(f"/v1/clusters/clear/groups/{group}")
            assert answer.status_code == 503 and answer.json()["detail"].startswith(
                f"group '{group}': cluster clear: {broker.ssl_bootstrap} answers in TLS")
    finally:
        app.state.planner.close()


# A bare classic member, written for the tests that need a group no client makes: JoinGroup v5 and
# SyncGroup v3 (not flexible), through our own connection (`assignor.cluster.connection`).
JOIN = Api(11, "JoinGroup", 5, 5, Message("JoinGroupRequest", (
    Field("group_id", STRING), Field("session_timeout_ms", INT32), Field("rebalance_timeout_ms", INT32),
    Field("member_id", STRING), Field("group_instance_id", NULLABLE_STRING), Field("protocol_type", STRING),
    Field("protocols", Array((Field("name", STRING), Field("metadata", BYTES))))), versioned=False, highest_version=5),
    Message("JoinGroupResponse", (
        Field("throttle_time_ms", INT32), Field("error_code", INT16), Field("generation_id", INT32),
        Field("protocol_name", STRING), Field("leader", STRING), Field("member_id", STRING),
        Field("members", Array((Field("member_id", STRING), Field("group_instance_id", NULLABLE_STRING),
                                Field("metadata", BYTES))))), versioned=False, highest_version=5))
SYNC = Api(14, "SyncGroup", 3, 3, Message("SyncGroupRequest", (
    Field("group_id", STRING), Field("generation_id", INT32), Field("member_id", STRING),
    Field("group_instance_id", NULLABLE_STRING),
    Field("assignments", Array((Field("member_id", STRING), Field("assignment", BYTES))))), versioned=False,
    highest_version=3),
    Message("SyncGroupResponse", (Field("throttle_time_ms", INT32), Field("error_code", INT16),
                                  Field("assignment", BYTES)), versioned=False, highest_version=3))


async def join(connection: Connection, group: str, protocol_type: str, metadata: bytes) -> dict:
    """JoinGroup as a new member (the first answer, MEMBER_ID_REQUIRED, gives it its id)."""
    request = {"group_id": group, "session_timeout_ms": 30000, "rebalance_timeout_ms": 30000, "member_id": "",
               "group_instance_id": None, "protocol_type": protocol_type, "protocols": [("range", metadata)]}
    deadline = asyncio.get_running_loop().time() + 30
    while (answer := await connection.send(JOIN, request))["error_code"] in (14, 15, 16):
        assert asyncio.get_running_loop().time() < deadline, answer  # (the offsets topic may be new)
        await asyncio.sleep(0.2)
    assert answer["error_code"] == 79, answer  # MEMBER_ID_REQUIRED
    return await connection.send(JOIN, {**request, "member_id": answer["member_id"]})


async def test_a_group_of_another_protocol_type_and_a_group_mid_rebalance(broker):
    """A group whose members speak another protocol (a Connect worker's ``connect``) and a share
    group (KIP-932: Kafka's own console share consumer) are not consumer groups; a consumer
    group whose second member is waiting for the first to rejoin is rebalancing: each is
    skipped, saying so, by ``--group`` and by ``--all``; its summary lists it, in its state."""
    from assignor.protocol import Subscription, encode_subscription
    from bench.broker import classpath, java
    from bench.rebalance import create_topic

    settings = settings_of(broker.bootstrap, {"request.timeout.ms": "60000"})
    topic = await create_topic(broker.bootstrap, 2)
    metadata = encode_subscription(Subscription([topic]), version=3)
    async with Cluster(settings) as cluster:  # (FindCoordinator makes the offsets topic on a new broker)
        await cluster.metadata([])
        assert await cluster.coordinators([f"connect-{topic}", f"busy-{topic}"]) == {
            f"connect-{topic}": 1, f"busy-{topic}": 1}
    connections = [await Connection.open("127.0.0.1", broker.port, settings) for _ in range(3)]
    waiting = None
    sharing = await asyncio.create_subprocess_exec(
        java(), "-cp", classpath(), "org.apache.kafka.tools.consumer.ConsoleShareConsumer", "--bootstrap-server",
        broker.bootstrap, "--topic", topic, "--group", f"share-{topic}", stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL)
    try:
        async with Cluster(settings) as cluster:  # (the share consumer's JVM starts, then its group is there)
            deadline = asyncio.get_running_loop().time() + 60
            while f"share-{topic}" not in await cluster.list_groups():
                assert asyncio.get_running_loop().time() < deadline, "the share group never appeared"
                await asyncio.sleep(0.3)
        worker = await join(connections[0], f"connect-{topic}", "connect", b"\x00\x01")
        synced = await connections[0].send(SYNC, {"group_id": f"connect-{topic}", "member_id": worker["member_id"],
                                                  "generation_id": worker["generation_id"], "group_instance_id": None,
                                                  "assignments": [(worker["member_id"], b"\x00\x01")]})
        assert synced["error_code"] == 0
        first = await join(connections[1], f"busy-{topic}", "consumer", metadata)
        assert (await connections[1].send(SYNC, {
            "group_id": f"busy-{topic}", "member_id": first["member_id"], "generation_id": first["generation_id"],
            "group_instance_id": None, "assignments": [(first["member_id"], b"")]}))["error_code"] == 0
        # A second member joins: the group waits for the first to rejoin (it never will here).
        waiting = asyncio.create_task(join(connections[2], f"busy-{topic}", "consumer", metadata))
        deadline = asyncio.get_running_loop().time() + 15
        while True:
            found = await read_snapshot(settings, [f"connect-{topic}", f"share-{topic}", f"busy-{topic}"])
            if len(found["skipped"]) == 3 or asyncio.get_running_loop().time() > deadline:
                break
            await asyncio.sleep(0.2)
        # (a share group was said to be missing: DescribeGroups answers Dead for a group not classic)
        assert found["groups"] == [] and sorted((s["kind"], s["reason"]) for s in found["skipped"]) == [
            ("not-consumer", "not a consumer group (classic, protocol type 'connect')"),
            ("not-consumer", "not a consumer group (share, protocol type 'share')"),
            ("rebalancing", "rebalancing (PreparingRebalance): its members' metadata is not one generation's; snapshot "
                            "it again once it is Stable")]
        everything = await read_snapshot(settings, None)
        reasons = {s["group_id"]: s["reason"] for s in everything["skipped"]}
        assert reasons[f"connect-{topic}"] == "not a consumer group (classic, protocol type 'connect')"
        assert reasons[f"share-{topic}"] == "not a consumer group (share, protocol type 'share')"
        assert reasons[f"busy-{topic}"].startswith("rebalancing (PreparingRebalance)")
        # Summaries list the rebalancing group (its members not read), and skip the others alike.
        listed = await read_summaries(settings, [f"connect-{topic}", f"share-{topic}", f"busy-{topic}"])
        assert listed["groups"] == [{"group_id": f"busy-{topic}", "protocol": "classic", "assignor": None,
                                     "state": "PreparingRebalance", "member_count": 2}]
        assert listed["skipped"] == [s for s in found["skipped"] if s["kind"] != "rebalancing"]
    finally:
        sharing.kill()
        await sharing.wait()
        if waiting is not None:
            waiting.cancel()
        for connection in connections:
            connection.close()


async def test_replica_racks_and_member_racks_of_a_broker_with_a_rack(tmp_path, java_members):
    """A broker of its own with ``broker.rack`` set: the snapshot's ``partition_racks`` name that
    rack for every partition's replica (KIP-881), the members' racks are the ``client.rack`` they
    sent, and a plan of our rack-aware ``sticky`` for the snapshot puts on the member of that rack
    as many partitions as balance allows, where the member of another rack can have none local.

    Then Java's ``RangeAssignor`` in a Java leader, its members on two racks, the member on the
    other rack sorting first: with every replica on one rack, Java does not deal by rack
    (``AbstractPartitionAssignor.useRackAwareAssignment``: every partition has the same racks,
    KIP-881), so that member holds partitions 0 and 1 in plain ranges; our ``range`` on the
    snapshot (racks and all) plans what the members hold.

    Then librdkafka members on librdkafka's range over two topics alike, the one without a rack
    sorting first: librdkafka deals the two topics together by rack all the same
    (``rd_kafka_assign_co_partitioned``), where a member without a rack takes nothing, so that
    member holds only what is left; ``librdkafka-range`` on the snapshot plans what they hold, and
    Java's ``range`` does not."""
    from aiokafka import AIOKafkaConsumer

    from assignor.integrations.aiokafka import StickyAssignor
    from assignor.validate import report
    from bench.broker import Broker
    from bench.java_members import CLASSIC, RANGE
    from bench.rebalance import LibrdkafkaMember, create_topic
    from tests.broker import CONSUMER_SETTINGS
    from tests.ownership import Timeline

    racked = Broker(tmp_path / "kafka", settings={"broker.rack": "rack-a"})
    consumers = []
    java: list = []
    try:
        topic = await create_topic(racked.bootstrap, 4)
        group = f"snap-racks-{topic[-8:]}"
        for name, rack in (("a", "rack-a"), ("b", "rack-b")):
            consumer = AIOKafkaConsumer(topic, bootstrap_servers=racked.bootstrap, group_id=group, client_id=name,
                                        partition_assignment_strategy=(StickyAssignor(rack=rack),),
                                        **CONSUMER_SETTINGS)
            await consumer.start()
            consumers.append(consumer)
        deadline = asyncio.get_running_loop().time() + 30
        while sorted(len(c.assignment()) for c in consumers) != [2, 2]:
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.2)
        found = await snap(racked, group)

        ranged = f"snap-range-racks-{topic[-8:]}"
        for name, rack in ((f"{ranged}.x0", "rack-b"), (f"{ranged}.x1", "rack-a")):  # (member ids sort as names)
            java.append(await java_members.member(name, racked.bootstrap, ranged, [topic], {
                **CLASSIC, "partition.assignment.strategy": RANGE, "client.rack": rack}).start())
        await settle(java, 4)
        by_rack = await snap(racked, ranged)
        for member in java:
            await member.stop()
        java = []

        # librdkafka on its default strategies (range) over two topics alike, two members on
        # rack-a and one without a rack, sorting first: librdkafka deals topics alike by rack
        # even where racks cannot help, and its member without a rack takes only what is left.
        other = await create_topic(racked.bootstrap, 4)
        rdk = f"snap-rdk-racks-{topic[-8:]}"
        java = [await LibrdkafkaMember(f"{rdk}.m{i}", racked.bootstrap, rdk, [topic, other], Timeline(), strategy=None,
                                       settings={"client.id": f"{rdk}.m{i}", **({"client.rack": "rack-a"} if i else {})}
                                       ).start() for i in range(3)]
        librdkafka = await settled_group(racked.bootstrap, rdk, 8)
    finally:
        for consumer in consumers:
            await consumer.stop()
        for member in java:
            await member.stop()
        racked.stop()
    assert found["partition_racks"] == {topic: [["rack-a"]] * 4}
    assert {m["client_id"]: m["rack"] for m in found["members"]} == {"a": "rack-a", "b": "rack-b"}
    snapshot = group_from_json(found)
    checked = report(snapshot, assign("sticky", snapshot))
    assert checked["valid"] and checked["rack_local"] == 2 and checked["rack_locality"] == 0.5

    assert by_rack["assignor"] == "range"
    assert {m["rack"]: {p for _t, p in m["owned"]} for m in by_rack["members"]} == {"rack-b": {0, 1},
                                                                                    "rack-a": {2, 3}}
    assert planned("range", group_from_json(by_rack)) == {m["id"]: {tuple(tp) for tp in m["owned"]}
                                                           for m in by_rack["members"]}

    assert librdkafka["assignor"] == "range"
    holding = {m["id"]: {tuple(tp) for tp in m["owned"]} for m in librdkafka["members"]}
    assert {m["client_id"][-2:]: sorted(p for t, p in m["owned"] if t == topic) for m in librdkafka["members"]} == {
        "m0": [3], "m1": [0, 1], "m2": [2]}
    assert planned("librdkafka-range", group_from_json(librdkafka)) == holding
    assert planned("range", group_from_json(librdkafka)) != holding
