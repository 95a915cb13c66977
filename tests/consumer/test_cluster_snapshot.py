"""The snapshot's pure parts (`assignor.cluster`): group JSON from described groups as the
broker's responses hold them, what is skipped and why, and the connection settings by Kafka's
names. The live side is tests/integration/test_snapshot.py."""

from __future__ import annotations

import asyncio
import copy
import importlib
import json
import random
import re
import ssl
from collections.abc import Callable

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignor import TopicPartition
from assignor.cluster.sasl import plain_message, scram_client
from assignor.cluster.settings import read_properties, settings_of
from assignor.cluster.snapshot import SkipKind, Skipped, classic_group, consumer_group, summary_of, topics_of
from assignor.errors import ClusterError
from assignor.json_format import group_from_json
from assignor.protocol import Assignment, Subscription, encode_assignment, encode_subscription
from assignor.wire import admin, codec, compiled
from assignor.wire.rows import Rows
from tests.budget import examples

snapshot = importlib.import_module("assignor.cluster.snapshot")  # (the package's `snapshot` is its function)

T_ID = "NHvsffp9Ed3fxWJQh-gJsQ"
METADATA = {"brokers": [(1, "h1", 9092, "r1"), (2, "h2", 9092, "r2"), (3, "h3", 9092, None)],
            "topics": [(0, "t", T_ID, False, [(0, 1, 1, 0, [2, 1], [1], []), (0, 0, 1, 0, [1, 3], [1], [])], -1),
                       (3, "gone", "AAAAAAAAAAAAAAAAAAAAAA", False, [], -1),
                       (0, "u", "AAAAAAAAAAAAAAAAAAAAAQ", False, [(0, 0, 1, 0, [3], [3], [])], -1)]}


def test_topics_from_metadata_with_replica_racks():
    assert topics_of(METADATA) == {"topics": {"t": 2, "u": 1}, "topic_ids": {"t": T_ID, "u": "AAAAAAAAAAAAAAAAAAAAAQ"},
                                   "partition_racks": {"t": [["r1"], ["r2", "r1"]], "u": [[]]}}
    no_racks = {**METADATA, "brokers": [(1, "h1", 9092, None)]}
    assert "partition_racks" not in topics_of(no_racks)


def test_replica_racks_of_partitions_read_in_columns_equal_those_read_one_by_one():
    """A long partitions array the compiled reader gives in columns (`Rows`), shuffled in index
    order and on replica sets of brokers with and without racks: the same racks."""
    rng = random.Random(7)
    partitions = [(0, p, 1, 0, rng.sample([1, 2, 3], 2), [1], []) for p in range(300)]
    rng.shuffle(partitions)
    metadata = {"throttle_time_ms": 0, "brokers": METADATA["brokers"], "cluster_id": None, "controller_id": 1,
                "topics": [(0, "t", T_ID, False, partitions, -1)]}
    raw = codec.encode(admin.METADATA.response, metadata, admin.METADATA.version)
    columns = compiled.decode(admin.METADATA.response, raw, admin.METADATA.version)
    assert isinstance(columns["topics"][0][4], Rows)
    assert topics_of(columns) == topics_of(metadata)


def _member(member_id, owned, generation=4, instance=None, rack=None, protocol_version=3, user_data=None):
    metadata = encode_subscription(Subscription(["t"], owned_partitions=[TopicPartition("t", p) for p in owned],
                                                generation_id=generation, rack_id=rack), version=protocol_version)
    assignment = encode_assignment(Assignment([TopicPartition("t", p) for p in owned], user_data))
    return (member_id, instance, f"client-{member_id}", "/127.0.0.1", metadata, assignment)


def test_assignments_with_user_data_are_said():
    """Kafka converts no classic group whose members' assignments carry user data (KAFKA-18134):
    the snapshot says whether any does, in groups read member by member and in columns (more than
    a kilobyte of messages), empty user data not counting."""
    for members in (2, 80):
        for user_data, said in ((None, False), (b"", False), (b"\x00\x01", True)):
            rows = [_member(f"m{i}", [i % 2], user_data=user_data if i == members - 1 else None)
                    for i in range(members)]
            described = (0, "g", "Stable", "consumer", "cooperative-sticky", rows, -2147483648)
            assert classic_group(described, topics_of(METADATA))["assignment_user_data"] is said, (members, user_data)


def test_a_stable_classic_group():
    described = (0, "g", "Stable", "consumer", "cooperative-sticky",
                 [_member("m2", [1], instance="i2", rack="r1"), _member("m1", [0])], -2147483648)
    group = classic_group(described, topics_of(METADATA))
    assert group == {
        "group_id": "g", "protocol": "classic", "assignor": "cooperative-sticky", "assignment_user_data": False,
        "topics": {"t": 2}, "topic_ids": {"t": T_ID}, "partition_racks": {"t": [["r1"], ["r2", "r1"]]},
        "members": [{"id": "m2", "topics": ["t"], "owned": [("t", 1)], "generation": 5, "rack": "r1",
                     "group_instance_id": "i2", "client_id": "client-m2"},
                    {"id": "m1", "topics": ["t"], "owned": [("t", 0)], "generation": 5, "rack": None,
                     "client_id": "client-m1"}]}
    # (pairs held as tuples, written as the group JSON's [topic, partition] by json and orjson alike)
    assert json.loads(json.dumps(group))["members"][0]["owned"] == [["t", 1]]
    assert orjson.loads(orjson.dumps(group)) == json.loads(json.dumps(group))
    read = group_from_json(group)  # what plan and whatif read
    assert [m.id for m in read.members] == ["m2", "m1"] and read.members[0].group_instance_id == "i2"


TOPICS = {"topics": {"t": 2, "u": 3, "v": 1, "w": 1}, "topic_ids": {name: T_ID for name in "tuvw"}}


@pytest.mark.parametrize("members", [1, 60])  # (60 members' metadata is read in columns: over 1,024 bytes)
def test_the_topics_kept_are_those_members_read_or_hold(members):
    """A topic a member holds but no longer reads (u), is to get (v: a consumer-protocol target,
    what the group is planned from), or reads but holds nothing of (t), is kept; one no member
    reads, holds or is to get (w) is not."""
    def classic(member_id: str) -> tuple[object, ...]:
        metadata = encode_subscription(Subscription(["t"], generation_id=4), version=3)
        return (member_id, None, "c", "h", metadata, encode_assignment(Assignment([TopicPartition("u", 2)])))

    described = (0, "g", "Stable", "consumer", "cooperative-sticky", [classic(f"m{i}") for i in range(members)], 0)
    assert classic_group(described, TOPICS)["topics"] == {"t": 2, "u": 3}
    member = ("m1", None, None, 7, "c1", "h", ["t"], None, ([(T_ID, "u", [2])],), ([(T_ID, "v", [0])],), 1)
    group = consumer_group((0, None, "g", "Stable", 7, 7, "uniform", [member] * members, 0), TOPICS)
    assert group["topics"] == {"t": 2, "u": 3, "v": 1}


@pytest.mark.parametrize(("described", "kind", "reason"), [
    ((0, "g", "PreparingRebalance", "consumer", "", [_member("m1", [0])], 0), SkipKind.REBALANCING,
     "rebalancing (PreparingRebalance)"),
    ((0, "g", "CompletingRebalance", "consumer", "range", [_member("m1", [0])], 0), SkipKind.REBALANCING,
     "rebalancing"),
    ((0, "g", "Stable", "connect", "default", [("w1", None, "c", "h", b"\x00", b"\x00")], 0), SkipKind.NOT_CONSUMER,
     "not a consumer group (protocol type 'connect')"),
    ((0, "g", "Dead", "", "", [], 0), SkipKind.MISSING, "no such group"),
    ((69, "g", "", "", "", [], 0), SkipKind.MISSING, "no such group"),
    ((30, "g", "", "", "", [], 0), SkipKind.UNAUTHORIZED, "not authorized to describe it (GROUP_AUTHORIZATION_FAILED)"),
    ((14, "g", "", "", "", [], 0), SkipKind.UNAVAILABLE, "COORDINATOR_LOAD_IN_PROGRESS"),
    ((0, "g", "Stable", "consumer", "range", [("m1", None, "c", "h", b"\x00\x07", b"")], 0), SkipKind.UNREADABLE,
     "a member's metadata does not decode (member 'm1': topics: needs 4 bytes"),
    ((0, "g", "Stable", "consumer", "range", [_member("m1", [0])[:5] + (b"\x00\x01",)], 0), SkipKind.UNREADABLE,
     "a member's assignment does not decode (member 'm1'"),
])
def test_classic_groups_skipped_and_why(described, kind, reason):
    skipped = classic_group(described, topics_of(METADATA))
    assert isinstance(skipped, Skipped) and skipped.kind == kind and skipped.reason.startswith(reason)


def test_an_empty_classic_group_is_a_group_without_members():
    group = classic_group((0, "g", "Empty", "consumer", "", [], 0), topics_of(METADATA))
    assert group["members"] == [] and group["topics"] == {} and group["assignor"] is None


def test_a_consumer_group_its_targets_and_a_regex():
    assignment = ([(T_ID, "t", [1, 0])],)
    target = ([(T_ID, "t", [0])],)
    members = [("m1", None, "r1", 7, "c1", "h", ["t"], None, assignment, target, 1),
               ("m2", "i2", None, 7, "c2", "h", [], "t|u", ([],), ([(T_ID, "t", [1])],), 0),
               ("m3", None, None, 7, "c3", "h", ["t"], None, ([],), ([],), -1)]  # (a v0 answer: no type)
    group = consumer_group((0, None, "g", "Stable", 7, 7, "uniform", members, 0), topics_of(METADATA))
    assert group["members"][0] == {"id": "m1", "topics": ["t"], "owned": [("t", 0), ("t", 1)], "target": [("t", 0)],
                                   "generation": 7, "member_epoch": 7, "member_type": "consumer", "rack": "r1",
                                   "client_id": "c1"}
    assert group["members"][1]["member_type"] == "classic" and "member_type" not in group["members"][2]
    assert group["members"][1]["topics"] == ["t", "u"] and group["members"][1]["group_instance_id"] == "i2"
    assert group["members"][1]["topic_regex"] == "t|u" and "topic_regex" not in group["members"][0]
    assert (group["protocol"], group["assignor"], group["group_epoch"]) == ("consumer", "uniform", 7)
    read = group_from_json(group)  # planned from the targets
    assert [list(m.owned) for m in read.members] == [[TopicPartition("t", 0)], [TopicPartition("t", 1)], []]
    assert consumer_group((69, "Group g is not a consumer group.", "g", "", 0, 0, "", [], 0), {}) == Skipped(
        SkipKind.MISSING, "no such group")
    negative = [("m1", None, None, 7, "c1", "h", ["t"], None, ([(T_ID, "t", [1, -1])],), ([],), 1)]
    assert consumer_group((0, None, "g", "Stable", 7, 7, "uniform", negative, 0), topics_of(METADATA)) == Skipped(
        SkipKind.UNREADABLE, "member 'm1': its assignment holds partition -1 of topic 't', which no topic has")


def _described_member(i: int, current: tuple[object, ...], target: tuple[object, ...]) -> tuple[object, ...]:
    return (f"m{i}", None, None, 7, f"c{i}", "h", ["t", "u"], None, current, target, 1)


_ASSIGNMENT = st.builds(lambda entries: ([(T_ID, name, parts) for name, parts in entries],), st.lists(
    st.tuples(st.sampled_from(["t", "u", "vv"]), st.lists(st.integers(-1, 40), max_size=6)), max_size=4))


@examples(200)
@pytest.mark.parametrize("in_c", [pytest.param(True, id="c", marks=pytest.mark.skipif(
    snapshot._in_c is None, reason="built without a C compiler")), pytest.param(False, id="plain")])
@given(st.lists(st.tuples(_ASSIGNMENT, st.one_of(st.none(), _ASSIGNMENT)), max_size=6))
def test_a_consumer_groups_pairs_are_its_members_partitions_in_order(in_c, drawn):
    """Each member's assignment and target as ``(topic, partition)`` tuples of an exact str and
    int, each topic's partitions in order (the coordinator lists them from a set), topics as
    listed; the topics held; a member whose target is its assignment (None drawn: an equal
    copy) gets an equal list of its own; a negative partition names its member. Made in C
    (``entry_pairs``) and by the plain reference alike."""
    saved = snapshot._in_c
    snapshot._in_c = saved if in_c else None
    try:
        _assert_pairs_are_partitions_in_order(drawn)
    finally:
        snapshot._in_c = saved


def _assert_pairs_are_partitions_in_order(drawn: list[tuple[tuple[list[tuple[str, str, list[int]]]], object]]
                                          ) -> None:
    members = [_described_member(i, current, copy.deepcopy(current) if target is None else target)
               for i, (current, target) in enumerate(drawn)]

    def expected(assignment: tuple[list[tuple[str, str, list[int]]]]) -> list[tuple[type, type, type, str, int]]:
        return [(tuple, str, int, name, p) for _id, name, ps in assignment[0] for p in sorted(ps)]

    negative = next((f"member 'm{i}'" for i, m in enumerate(members)
                     if any(p < 0 for field in (m[8], m[9]) for _id, _name, ps in field[0] for p in ps)), None)
    try:
        made, held = snapshot._assignments(members)
    except snapshot._NotAPartition as error:
        assert negative is not None and str(error).startswith(negative)
        return
    assert negative is None
    for (owned, target), member, (_current, drawn_target) in zip(made, members, drawn, strict=True):
        exactly = [[(type(pair), type(pair[0]), type(pair[1]), *pair) for pair in pairs] for pairs in (owned, target)]
        assert exactly == [expected(member[8]), expected(member[9])]
        if drawn_target is None:
            assert target == owned and target is not owned
    assert held == {name for m in members for field in (m[8], m[9]) for _id, name, ps in field[0] if ps}


@pytest.mark.skipif(snapshot._in_c is None, reason="built without a C compiler")
def test_pairs_made_in_c_are_untracked_tuples_of_the_partitions_own_ints():
    """``entry_pairs``: plain tuples the cyclic collector never tracks (its first pass over a
    million tracked ones was a third of a snapshot), each holding the entry's own name and int
    objects; anything but a decoded assignment's exact types (a partition past an INT32, a
    negative one, an entry of another shape) is left to the plain reference, which reads it or
    names what is wrong."""
    import gc

    big = 2**20 + 1  # (an int no cache shares)
    entries = [(T_ID, "t", [3, big, 1, 3]), (T_ID, "u", []), (T_ID, "vv", [big])]
    held: set[str] = set()
    made = snapshot._in_c.entry_pairs(tuple, entries, held)
    assert made == [("t", 1), ("t", 3), ("t", 3), ("t", big), ("vv", big)] and held == {"t", "vv"}
    assert made == snapshot._assigned_plainly(entries, set(), "assignment")
    assert not any(gc.is_tracked(pair) for pair in made) and all(type(pair) is tuple for pair in made)
    assert made[3][1] is entries[0][2][1] and made[0][0] is entries[0][1]
    for odd in ([(T_ID, "t", [2**31])], [(T_ID, "t", [0, -1])], [(T_ID, "t", (1, 2))], [["id", "t", [1]]],
                [(T_ID, b"t", [1])], [(T_ID, "t", [1.0])], [(T_ID, "t", [True])]):
        assert snapshot._in_c.entry_pairs(tuple, odd, set()) is None


def test_summaries_list_a_rebalancing_group_and_skip_what_a_snapshot_skips():
    """`summary_of`: what ``kafka-consumer-groups.sh --describe --state`` says of a group, its
    members not decoded (undecodable metadata is not read: the group is listed); a rebalancing
    classic group is listed in its state; not a consumer group, missing or refused, skipped with
    the snapshot's words."""
    undecodable = [("m1", None, "c", "h", b"\x00\x07", b"")]
    assert summary_of("classic", (0, "g", "Stable", "consumer", "range", undecodable, 0)) == {
        "group_id": "g", "protocol": "classic", "assignor": "range", "state": "Stable", "member_count": 1}
    assert summary_of("classic", (0, "g", "PreparingRebalance", "consumer", "", [_member("m1", [0])] * 2, 0)) == {
        "group_id": "g", "protocol": "classic", "assignor": None, "state": "PreparingRebalance", "member_count": 2}
    for described in ((0, "g", "Stable", "connect", "default", [("w1", None, "c", "h", b"\x00", b"\x00")], 0),
                      (0, "g", "Dead", "", "", [], 0), (30, "g", "", "", "", [], 0)):
        assert summary_of("classic", described) == classic_group(described, {})
    member = ("m1", None, None, 7, "c1", "h", ["t"], None, ([],), ([],), 1)
    assert summary_of("consumer", (0, None, "g", "Reconciling", 8, 7, "uniform", [member] * 3, 0)) == {
        "group_id": "g", "protocol": "consumer", "assignor": "uniform", "state": "Reconciling", "member_count": 3}
    for described in ((69, "Group g is not a consumer group.", "g", "", 0, 0, "", [], 0),
                      (0, None, "g", "Dead", 0, 0, "", [], 0), (15, "moved", "g", "", 0, 0, "", [], 0)):
        assert summary_of("consumer", described) == consumer_group(described, {})


@pytest.mark.timeout(30)  # (Python's `re` would still be at the last regex)
@pytest.mark.parametrize(("regex", "taken"), [
    (r"\Qorders.v1\E", ["orders.v1"]),  # RE2/J's quoting: `re` has none (an error)
    (r"orders\.v[[:digit:]]+", ["orders.v1", "orders.v22"]),  # a POSIX class: `re` reads a set of ':', 'd', ...
    (r"\p{Lu}.*", ["Payments"]),  # a Unicode class: `re` has none
    (r".*", ["__consumer_offsets", "a" * 83, "orders.v1", "orders.v22", "orders_v1", "Payments"]),  # internal too
    (r"(a+)+b", []),  # linear time: Python's `re` backtracks for ever on 83 a's
    (r"(?<=x)y", []),  # RE2 refuses lookbehind: so does the broker (no topic)
])
def test_a_regex_subscription_is_resolved_as_the_brokers_re2j_resolves_it(regex, taken):
    names = ["orders.v1", "orders.v22", "orders_v1", "Payments", "__consumer_offsets", "a" * 83]
    metadata = {"brokers": [], "topics": [(0, name, T_ID, name.startswith("__"), [(0, 0, 1, 0, [1], [1], [])], -1)
                                          for name in names]}
    member = ("m1", None, None, 3, "c1", "h", [], regex, ([],), ([],), 1)
    group = consumer_group((0, None, "g", "Stable", 3, 3, "uniform", [member], 0), topics_of(metadata))
    assert group["members"][0]["topics"] == sorted(taken)  # (in name order, not the metadata's)


@pytest.mark.parametrize(("bootstrap", "properties", "message"), [
    (None, {}, "bootstrap.servers: give --bootstrap-server"),
    ("host", {}, "bootstrap.servers: 'host' is not HOST:PORT"),
    ("host:99999", {}, "is not HOST:PORT"),
    ("h:9092", {"security.protocol": "SASL_PLAINTEXT"}, "sasl.mechanism=GSSAPI: the snapshot authenticates with "
                                                        "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"),
    ("h:9092", {"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"}, "OAUTHBEARER are not supported"),
    ("h:9092", {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": "x required;"},
     'expected a login module with username="..." password="..."'),
    ("h:9092", {"security.protocol": "TLS"}, "expected PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"),
    ("h:9092", {"request.timeout.ms": "soon"}, "request.timeout.ms=soon: expected milliseconds"),
    ("h:9092", {"security.protocol": "SSL", "ssl.truststore.type": "JKS", "ssl.truststore.location": "/x.jks"},
     "only PEM stores are read here"),
    ("h:9092", {"security.protocol": "SSL", "ssl.truststore.location": "/no/such.pem"}, "cannot load the trust"),
])
def test_settings_kafka_would_not_take_or_we_cannot_use(bootstrap, properties, message):
    with pytest.raises(ClusterError, match=message):
        settings_of(bootstrap, properties)


def test_settings_by_kafkas_names(tmp_path):
    path = tmp_path / "client.properties"
    path.write_text("# a tool's file\nbootstrap.servers=a:1,[::1]:2\nclient.id = ops\nrequest.timeout.ms: 5000\n"
                    "linger.ms=5\nsasl.jaas.config=x \\\n  y\n")
    properties = read_properties(path)
    assert properties["sasl.jaas.config"] == "x y"
    settings = settings_of(None, properties)
    assert settings.bootstrap == (("a", 1), ("::1", 2)) and settings.client_id == "ops"
    # (a SASL login module without a SASL protocol: read, and unused)
    assert settings.request_timeout_ms == 5000 and settings.ignored == ("linger.ms",) and settings.sasl is None
    assert settings_of("b:3", properties).bootstrap == (("b", 3),)  # the flag wins
    assert settings.tls is None and settings.name == "a:1,::1:2"
    with pytest.raises(ClusterError, match="cannot read it"):
        read_properties(tmp_path / "missing")


def test_sasl_settings_and_messages():
    jaas = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="ops" password="p\\"w";'
    settings = settings_of("h:9092", {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "scram-sha-512",
                                      "sasl.jaas.config": jaas})
    assert settings.sasl == ("SCRAM-SHA-512", "ops", 'p"w') and "p\\\"w" not in repr(settings)
    assert plain_message("ops", "secret") == b"\0ops\0secret"


@pytest.mark.anyio
async def test_scram_sha_256_as_rfc_7677_shows_it():
    """RFC 7677 section 3's exchange, byte for byte, and a server whose signature is wrong."""
    server_first = (b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
    sent = []

    async def server(message: bytes, final=b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=") -> bytes:
        sent.append(message)
        return server_first if len(sent) == 1 else final

    await scram_client("SCRAM-SHA-256", "user", "pencil", server, nonce="rOprNGfwEbeRWgbNEkqO")
    assert sent == [b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
                    b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                    b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="]

    async def impostor(message: bytes) -> bytes:
        return await server(message, final=b"v=AAAA")

    sent.clear()
    with pytest.raises(ClusterError, match="signature is wrong: it does not know the password"):
        await scram_client("SCRAM-SHA-256", "user", "pencil", impostor, nonce="rOprNGfwEbeRWgbNEkqO")


# -- a port that is not a Kafka listener, said so ------------------------------------------------


async def _first_answer_of(answer: bytes | None) -> str:
    """The error opening a connection to a loopback port that reads the ApiVersions request and
    writes `answer` (None: closes without a word)."""
    from assignor.cluster.connection import Connection

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(4)
        if answer is not None:
            writer.write(answer)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        with pytest.raises(ClusterError) as raised:
            await Connection.open("127.0.0.1", port, settings_of(f"127.0.0.1:{port}"))
    finally:
        server.close()
    return str(raised.value)


@pytest.mark.anyio
@pytest.mark.parametrize(("answer", "said"), [
    (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", "answers HTTP, not Kafka's protocol"),
    (bytes([21, 3, 3, 0, 2, 2, 10]), r"answers in TLS: set security.protocol=SSL \(or SASL_SSL\) in --command-config"),
    (None, "closed the connection without answering ApiVersions: a TLS listener"),
    (b"\0\0", r"broke during ApiVersions \(2 bytes read on a total of 4"),
])
async def test_a_port_that_is_not_a_kafka_listener_is_said_so(answer, said):
    """A Kafka listener's first answer is an ApiVersions response: an HTTP status line (a REST
    proxy, a web console), a TLS alert (an SSL listener read in the clear, as Kafka's answers),
    a close without a word, or a cut answer are each said in one line, naming the port."""
    message = await _first_answer_of(answer)
    assert re.search(said, message) and message.startswith("cluster 127.0.0.1:"), message


def test_a_certificate_for_another_host_names_the_setting_that_skips_the_check():
    from assignor.cluster.connection import _why_not_connected

    mismatch = ssl.SSLCertVerificationError("certificate verify failed")
    mismatch.verify_code, mismatch.verify_message = 62, "Hostname mismatch, certificate is not valid for 'kafka'."
    tls = settings_of("kafka:9093", {"security.protocol": "SSL"})
    assert _why_not_connected(mismatch, tls) == ("Hostname mismatch, certificate is not valid for 'kafka'. "
                                                 "ssl.endpoint.identification.algorithm= (empty) turns the check off, "
                                                 "as Kafka's clients do")
    assert "is it a TLS listener?" in _why_not_connected(ConnectionResetError(), tls)
    assert _why_not_connected(ConnectionRefusedError(111, "refused"), tls) == "[Errno 111] refused"
    alert = ssl.SSLError(1, "[SSL: TLSV13_ALERT_CERTIFICATE_REQUIRED] tlsv13 alert certificate required")
    alert.reason = "TLSV13_ALERT_CERTIFICATE_REQUIRED"
    assert _why_not_connected(alert, tls).startswith("the broker refused the client certificate, or the lack of one")


# -- a coordinator still loading: asked again, within default.api.timeout.ms -----------------------


class _LoadingBroker:
    """A loopback Kafka listener of our own making: ApiVersions and Metadata (itself as node 1),
    FindCoordinator, ListGroups and DescribeGroups (`only` that one, if given) answering
    COORDINATOR_LOAD_IN_PROGRESS (14) for their first `loading` requests (None: always), then
    the group ``g``, empty."""

    LOADING = (admin.FIND_COORDINATOR, admin.LIST_GROUPS, admin.DESCRIBE_GROUPS)

    def __init__(self, loading: int | None, only: admin.Api | None = None) -> None:
        self.loading, self.only, self.asked = loading, only, {api.key: 0 for api in self.LOADING}
        self.port = 0

    async def __aenter__(self) -> _LoadingBroker:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()

    def _values(self, api: admin.Api) -> dict:
        still = self.loading is None or self.asked.get(api.key, 0) <= self.loading
        code = 14 if still and self.only in (None, api) else 0
        if api is admin.API_VERSIONS:
            served = (admin.METADATA, *self.LOADING)
            return {"error_code": 0, "api_keys": [(a.key, a.lowest, a.version) for a in served]}
        if api is admin.METADATA:
            return {"throttle_time_ms": 0, "brokers": [(1, "127.0.0.1", self.port, None)], "cluster_id": "c",
                    "controller_id": 1, "topics": []}
        if api is admin.FIND_COORDINATOR:
            return {"throttle_time_ms": 0, "coordinators": [("g", 1, "127.0.0.1", self.port, code, None)]}
        if api is admin.DESCRIBE_GROUPS:
            return {"throttle_time_ms": 0, "groups": [(code, "g", "Dead" if code else "Empty", "", "", [], -2**31)]}
        return {"throttle_time_ms": 0, "error_code": code, "groups": [] if code else [("g", "consumer", "Empty",
                                                                                        "classic")]}

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        def answer(api: admin.Api, _request: bytes) -> dict:
            self.asked[api.key] = self.asked.get(api.key, 0) + 1
            return self._values(api)

        await _serve_requests(reader, writer, (admin.API_VERSIONS, admin.METADATA, *self.LOADING), answer)


async def _serve_requests(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, apis: tuple[admin.Api, ...],
                          answer: Callable[[admin.Api, bytes], dict | None]) -> None:
    """A connection of a listener of ours: each request of `apis` answered with what `answer`
    gives for it (None: the connection closes, unanswered)."""
    by_key = {a.key: a for a in apis}
    try:
        while True:
            size = int.from_bytes(await reader.readexactly(4), "big", signed=True)
            request = await reader.readexactly(size)
            key, version, correlation = (int.from_bytes(request[i:j], "big") for i, j in ((0, 2), (2, 4), (4, 8)))
            api = by_key[key]
            values = answer(api, request)
            if values is None:
                break
            header = correlation.to_bytes(4, "big") + (b"\0" if api.response.flexible and api is not
                                                       admin.API_VERSIONS else b"")
            body = header + codec.encode(api.response, values, version)
            writer.write(len(body).to_bytes(4, "big") + body)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
        pass
    writer.close()


@pytest.mark.anyio
async def test_a_coordinator_still_loading_is_asked_again():
    """COORDINATOR_LOAD_IN_PROGRESS (a broker loading ``__consumer_offsets``, as every new one
    does) from FindCoordinator, ListGroups and DescribeGroups: each asked again until it answers."""
    from assignor.cluster import read_snapshot
    from assignor.cluster.client import Cluster

    async with _LoadingBroker(loading=2) as broker, Cluster(settings_of(f"127.0.0.1:{broker.port}")) as cluster:
        assert await cluster.list_groups() == {"g": ("consumer", "Empty", "classic", 1)}
        assert await cluster.coordinators(["g"]) == {"g": 1}
        assert broker.asked[admin.LIST_GROUPS.key] == broker.asked[admin.FIND_COORDINATOR.key] == 3

    async with _LoadingBroker(loading=2) as broker:  # (each asked once more, as above, by the snapshot)
        broker.asked[admin.LIST_GROUPS.key] = broker.asked[admin.FIND_COORDINATOR.key] = 3
        found = await read_snapshot(settings_of(f"127.0.0.1:{broker.port}"), ["g"])
        assert found["groups"][0]["group_id"] == "g" and broker.asked[admin.DESCRIBE_GROUPS.key] == 3


@pytest.mark.anyio
@pytest.mark.timeout(30)  # (asking again past the deadline would never end)
async def test_a_coordinator_that_never_loads_is_said_so_within_the_api_timeout():
    from assignor.cluster import read_snapshot
    from assignor.cluster.client import Cluster

    fast = {"default.api.timeout.ms": "600"}
    async with _LoadingBroker(loading=None) as broker, \
            Cluster(settings_of(f"127.0.0.1:{broker.port}", fast)) as cluster:
        with pytest.raises(ClusterError, match=r"broker 1 refused ListGroups \(COORDINATOR_LOAD_IN_PROGRESS\)"):
            await cluster.list_groups()
        assert await cluster.coordinators(["g"]) == {"g": (14, "COORDINATOR_LOAD_IN_PROGRESS")}
    async with _LoadingBroker(loading=None, only=admin.DESCRIBE_GROUPS) as broker:
        found = await read_snapshot(settings_of(f"127.0.0.1:{broker.port}", fast), ["g"])
        assert found["skipped"] == [{"group_id": "g", "kind": "unavailable", "reason": "COORDINATOR_LOAD_IN_PROGRESS"}]


class _Coordinator:
    """One of two loopback listeners of our own making, nodes 1 and 2 of one cluster: each
    coordinates the group named after it (``g1``, ``g2``) and lists it; node 2 closes the
    connection when asked to describe it (a broker failing mid-request)."""

    APIS = (admin.API_VERSIONS, admin.METADATA, admin.FIND_COORDINATOR, admin.LIST_GROUPS, admin.DESCRIBE_GROUPS)

    def __init__(self, node: int) -> None:
        self.node, self.ports = node, {}

    async def __aenter__(self) -> _Coordinator:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.ports[self.node] = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()

    def _values(self, api: admin.Api, request: bytes) -> dict | None:
        if api is admin.API_VERSIONS:
            return {"error_code": 0, "api_keys": [(a.key, a.lowest, a.version) for a in self.APIS[1:]]}
        if api is admin.METADATA:
            return {"throttle_time_ms": 0, "brokers": [(n, "127.0.0.1", port, None) for n, port in self.ports.items()],
                    "cluster_id": "c", "controller_id": 1, "topics": []}
        if api is admin.FIND_COORDINATOR:
            return {"throttle_time_ms": 0, "coordinators": [(f"g{n}", n, "127.0.0.1", port, 0, None)
                                                            for n, port in self.ports.items()
                                                            if f"g{n}".encode() in request]}
        if api is admin.LIST_GROUPS:
            return {"throttle_time_ms": 0, "error_code": 0,
                    "groups": [(f"g{self.node}", "consumer", "Empty", "classic")]}
        if self.node == 2:
            return None  # (DescribeGroups: the connection closes)
        return {"throttle_time_ms": 0, "groups": [(0, "g1", "Empty", "consumer", "", [], -2**31)]}

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _serve_requests(reader, writer, self.APIS, self._values)


@pytest.mark.anyio
@pytest.mark.timeout(30)
async def test_a_coordinator_failing_mid_request_loses_its_groups_only():
    """A coordinator whose connection breaks when asked to describe its group: that group is
    said unavailable, naming the broker and what happened; the other coordinator's is read."""
    from assignor.cluster import read_snapshot

    async with _Coordinator(1) as first, _Coordinator(2) as second:
        first.ports.update(second.ports)
        second.ports.update(first.ports)
        found = await read_snapshot(settings_of(f"127.0.0.1:{first.ports[1]}"), ["g2", "g1"])
    assert [g["group_id"] for g in found["groups"]] == ["g1"]
    [skipped] = found["skipped"]
    assert (skipped["group_id"], skipped["kind"]) == ("g2", "unavailable")
    assert re.fullmatch(r"its coordinator, broker 2, did not describe it \(the connection to 127\.0\.0\.1:\d+ broke "
                        r"during DescribeGroups \(.*\)\)", skipped["reason"]), skipped["reason"]
