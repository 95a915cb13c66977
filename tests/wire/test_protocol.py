"""Wire formats against the Java client's golden bytes, round trips, and hostile bytes."""

from __future__ import annotations

import json
import random
import re
import struct
import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignor import Group, Member, Plan, TopicPartition, protocol
from assignor.leader import LeaderCache
from assignor.model import Claims
from assignor.protocol import Messages, ProtocolError
from assignor.strategies import strategy_named
from assignor.wire import arrays, codec, columnar, schema
from assignor.wire import cache as wire_cache
from assignor.wire.cache import DecodeCache
from assignor.wire.messages import sticky_topic_order
from tests import golden
from tests.budget import examples


@pytest.fixture(autouse=True)
def _columns_at_every_size(monkeypatch):
    """These tests hold the columnar readers to the plain codec at every size, though
    `read_join_group` and `read_assignments` read a small group with the plain codec itself
    (`columnar.PLAIN_UP_TO_BYTES`; `tests/wire/test_small_groups.py` holds the two together)."""
    monkeypatch.setattr(columnar, "PLAIN_UP_TO_BYTES", -1)


USERDATA = golden.GOLDEN / "userdata"


def _load(name):
    return json.loads((USERDATA / name).read_text())


def _tps(pairs):
    return [TopicPartition(t, p) for t, p in pairs]


def _unhex(text):
    return None if text is None else bytes.fromhex(text)


STICKY = _load("sticky_userdata.json")
COOPERATIVE = _load("cooperative_userdata.json")
CONSUMER = _load("consumer_protocol.json")


@pytest.mark.parametrize("case", STICKY["cases"], ids=lambda c: c["name"])
def test_sticky_user_data_golden(case):
    given_ = case["input"]
    generation = given_["generation"] if given_["generation_present"] else None
    if "error" in case:
        # Java cannot write V1 without a generation; generation=None writes V0 instead.
        assert protocol.decode_sticky_user_data(protocol.encode_sticky_user_data(_tps(given_["partitions"])))\
            == protocol.StickyUserData(_tps(given_["partitions"]), None)
        return
    # Java writes topics in the order of the HashMap it groups them in: the same bytes from
    # the partitions as Java was given them, by both encoders.
    partitions = _tps(given_["partitions"])
    encoded = protocol.encode_sticky_user_data(partitions, generation)
    assert encoded.hex() == case["hex"]
    if generation is not None:
        assert protocol.user_data_for(Plan("sticky", {"m": partitions}), "sticky", generation)["m"] == encoded
    decoded = protocol.decode_sticky_user_data(bytes.fromhex(case["hex"]))
    assert sorted(decoded.partitions) == sorted(_tps(case["decoded"]["partitions"]))
    assert decoded.generation == (case["decoded"]["generation"] if case["decoded"]["generation_present"] else None)


def test_sticky_user_data_of_golden_scenarios_is_javas_bytes():
    """Every sticky member's user data Java wrote in the recorded rebalances (multi-topic ones
    included) is what our encoder writes for the partitions the member was assigned before, in
    the order its SyncGroup assignment listed them (grouped by topic as they first appear)."""
    checked = multi_topic = 0
    for name in golden.scenario_names():
        before = None
        for r in golden.scenario(name)["rounds"]:
            result = r["results"]["sticky"]
            for j, call in enumerate(result["calls"]):
                assigned = before if j == 0 else result["calls"][j - 1]["output"]
                for sub in call["input"]["subscriptions"]:
                    if not sub["user_data_hex"] or assigned is None or sub["member_id"] not in assigned:
                        continue
                    by_topic: dict[str, list[TopicPartition]] = {}
                    for tp in _tps(assigned[sub["member_id"]]):
                        by_topic.setdefault(tp.topic, []).append(tp)
                    partitions = [tp for tps in by_topic.values() for tp in tps]
                    generation = sub["member_data"]["generation"]
                    assert protocol.encode_sticky_user_data(partitions, generation).hex() == sub["user_data_hex"]
                    checked += 1
                    multi_topic += len(by_topic) > 1
            before = result["final"]["assignment"]
    assert checked > 300 and multi_topic > 100


@pytest.mark.parametrize("case", STICKY["decode_only_cases"], ids=lambda c: c["name"])
def test_sticky_user_data_decode_only_golden(case):
    decoded = protocol.decode_sticky_user_data(_unhex(case["hex"]))
    expected = case["decoded"]
    assert decoded.partitions == _tps(expected["partitions"])
    assert decoded.generation == (expected["generation"] if expected["generation_present"] else None)


def test_strict_sticky_user_data_raises_on_garbage():
    with pytest.raises(ProtocolError, match="previous_assignment"):
        protocol.decode_sticky_user_data(b"\xff", strict=True)


@pytest.mark.parametrize("case", COOPERATIVE["cases"], ids=lambda c: str(c["generation"]))
def test_cooperative_user_data_golden(case):
    assert protocol.encode_cooperative_user_data(case["generation"]).hex() == case["hex"]
    assert protocol.decode_cooperative_user_data(bytes.fromhex(case["hex"])) == case["decoded_generation"]


def _version_cases(kind):
    """(input, version, golden entry) for every case of `kind` at every version Java wrote."""
    return [pytest.param(case["input"], int(version), entry, id=f"{case['name']}-v{version}")
            for case in CONSUMER[kind] for version, entry in case["versions"].items()]


@pytest.mark.parametrize(("given_", "version", "entry"), _version_cases("subscriptions"))
def test_subscription_golden(given_, version, entry):
    sub = protocol.Subscription(
        topics=given_["topics"], user_data=_unhex(given_["user_data_hex"]),
        owned_partitions=_tps(given_["owned_partitions"]), generation_id=given_["generation_id"],
        rack_id=given_["rack_id"],
    )
    assert protocol.encode_subscription(sub, version=version).hex() == entry["hex"]
    decoded = protocol.decode_subscription(bytes.fromhex(entry["hex"]))
    expected = entry["decoded"]
    assert decoded.version == version
    assert list(decoded.topics) == expected["topics"]
    assert decoded.user_data == _unhex(expected["user_data_hex"])
    assert list(decoded.owned_partitions) == _tps(expected["owned_partitions"])
    assert decoded.generation_id == (-1 if expected["generation_id"] is None else expected["generation_id"])
    assert decoded.rack_id == expected["rack_id"]


@pytest.mark.parametrize(("given_", "version", "entry"), _version_cases("assignments"))
def test_assignment_golden(given_, version, entry):
    asg = protocol.Assignment(_tps(given_["partitions"]), _unhex(given_["user_data_hex"]))
    assert protocol.encode_assignment(asg, version=version).hex() == entry["hex"]
    decoded = protocol.decode_assignment(bytes.fromhex(entry["hex"]))
    assert sorted(decoded.partitions) == sorted(_tps(entry["decoded"]["partitions"]))
    assert decoded.user_data == _unhex(entry["decoded"]["user_data_hex"])


def test_scenario_wire_bytes_decode_to_what_java_saw():
    """Every JoinGroup metadata recorded in the golden scenarios (v3 subscriptions with sticky or
    cooperative user data) decodes to the member Java's assignor worked with."""
    checked = 0
    for strategy in ("sticky", "cooperative-sticky", "range", "roundrobin"):
        for call_id, call in golden.calls(strategy):
            for sub in call["input"]["subscriptions"]:
                data = bytes.fromhex(sub["wire_v3_hex"])
                decoded = protocol.decode_subscription(data)
                assert sorted(decoded.topics) == sorted(sub["topics"]), call_id
                assert decoded.user_data == _unhex(sub["user_data_hex"]), call_id
                assert sorted(decoded.owned_partitions) == sorted(_tps(sub["owned_partitions"])), call_id
                member = protocol.member_from_metadata(sub["member_id"], data, strategy)
                if strategy in ("sticky", "cooperative-sticky"):
                    expected = sub["member_data"]
                    assert sorted(member.owned) == sorted(_tps(expected["partitions"])), call_id
                    if expected["generation"] is not None:
                        assert member.generation == expected["generation"], call_id
                checked += 1
    assert checked > 100


def test_member_from_metadata_generation_rule():
    """Java's rules: for "sticky" the user data's generation alone, even against a v2+ field
    (StickyAssignor.memberData); for other protocols the v2+ field when known, else user data."""
    owned = [TopicPartition("t", 0)]
    user_data = protocol.encode_sticky_user_data(owned, generation=4)
    v2 = protocol.encode_subscription(protocol.Subscription(["t"], user_data, generation_id=6), version=2)
    v1 = protocol.encode_subscription(protocol.Subscription(["t"], user_data), version=1)
    unknown = protocol.encode_subscription(protocol.Subscription(["t"], user_data, generation_id=-1), version=3)
    assert protocol.member_from_metadata("m", v2, "sticky") == Member("m", ["t"], owned, 4)
    assert protocol.member_from_metadata("m", v1, "sticky") == Member("m", ["t"], owned, 4)
    assert protocol.member_from_metadata("m", unknown, "sticky").generation == 4
    v0_data = protocol.encode_subscription(
        protocol.Subscription(["t"], protocol.encode_sticky_user_data(owned), generation_id=6), version=2)
    assert protocol.member_from_metadata("m", v0_data, "sticky") == Member("m", ["t"], owned, -1)
    no_data = protocol.encode_subscription(protocol.Subscription(["t"], None, generation_id=6), version=2)
    assert protocol.member_from_metadata("m", no_data, "sticky") == Member("m", ["t"], [], -1)
    coop = protocol.encode_subscription(
        protocol.Subscription(["t"], protocol.encode_cooperative_user_data(9), owned_partitions=owned), version=1)
    assert protocol.member_from_metadata("m", coop, "cooperative-sticky") == Member("m", ["t"], owned, 9)
    assert protocol.member_from_metadata("m", coop, "range").generation == -1


def test_assignments_carry_no_user_data_unless_asked_and_then_v1_sticky_user_data():
    """By default a SyncGroup answer is what a Java leader sends (no user data, the plan's
    order). Asked for it, sticky assignments carry V1 sticky user data, both lists in the order
    Java's sticky user data lists topics (t0 before t1 here)."""
    plan = Plan("sticky", {"a": _tps([("t1", 1), ("t0", 0)]), "b": []})
    plain = protocol.decode_assignment(protocol.assignments_for(plan, "sticky", generation=12)["a"])
    assert plain.partitions == _tps([("t1", 1), ("t0", 0)]) and plain.user_data is None
    out = protocol.assignments_for(plan, "sticky", generation=12, user_data=True)
    decoded = protocol.decode_assignment(out["a"])
    assert decoded.partitions == _tps([("t0", 0), ("t1", 1)])
    assert protocol.decode_sticky_user_data(decoded.user_data) == protocol.StickyUserData(
        _tps([("t0", 0), ("t1", 1)]), 12)
    assert protocol.decode_assignment(protocol.assignments_for(plan, "range", 3)["b"]).user_data is None


def test_newer_versions_and_trailing_bytes_are_read_with_known_fields():
    sub = protocol.Subscription(["t0"], b"x", _tps([("t0", 1)]), 3, "r1")
    v3 = protocol.encode_subscription(sub, version=3)
    v9 = b"\x00\x09" + v3[2:] + b"future-fields"
    decoded = protocol.decode_subscription(v9)
    assert decoded.version == 9 and decoded.rack_id == "r1" and decoded.generation_id == 3
    asg = protocol.encode_assignment(protocol.Assignment(_tps([("t0", 1)]), b"u"))
    assert protocol.decode_assignment(b"\x00\x07" + asg[2:] + b"\x00").partitions == _tps([("t0", 1)])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "version: needs 2 bytes at offset 0"),
        (b"\xff\xff", "unsupported version -1 of ConsumerProtocolSubscription"),
        (b"\x00\x00\x7f\xff\xff\xff", "topics: 2147483647 elements need at least"),
        (b"\x00\x00\x00\x00\x00\x01\x00\x02\xff\xfe\xff\xff\xff\xff", "topics: invalid UTF-8 at offset 8"),
        (b"\x00\x00\x00\x00\x00\x01\xff\xfe", "topics: negative string length -2 at offset 6"),
        (b"\x00\x00\x00\x00\x00\x00\xff\xff\xff\xfe", "user_data: invalid bytes length -2"),
        (b"\x00\x01\x00\x00\x00\x00\xff\xff\xff\xff\x00\x00\x00\x01\x00\x01t\x00\x00\x00\x01\xff\xff\xff\xff",
         "owned_partitions.partitions: negative partition -1"),
        (b"\x00\x00\xff\xff\xff\xff", "topics: invalid array length -1"),
    ],
)
def test_hostile_subscriptions_raise_protocol_error(data, message):
    with pytest.raises(ProtocolError, match=message):
        protocol.decode_subscription(data)


def test_bad_values_to_encode():
    with pytest.raises(ProtocolError, match="version"):
        protocol.encode_subscription(protocol.Subscription(["t"]), version=4)
    with pytest.raises(ProtocolError, match="partitions"):
        protocol.encode_sticky_user_data([TopicPartition("t", -1)], 1)
    with pytest.raises(ProtocolError, match="generation"):
        protocol.encode_cooperative_user_data(2**31)
    with pytest.raises(ProtocolError, match="STRING"):
        protocol.encode_assignment(protocol.Assignment([TopicPartition("x" * 40000, 0)]))
    assert issubclass(ProtocolError, ValueError)


@pytest.mark.parametrize("generations", [[1, 2**31], [1.0, 2], [None, 1], [2**70, 1],
                                         np.array([2**31, 1]), np.array([2**64 - 1, 1], dtype=np.uint64)])
def test_group_encoding_rejects_generations_that_are_not_int32(generations):
    members = [Member("a", ["t"]), Member("b", ["t"])]
    with pytest.raises(ProtocolError, match="32-bit integer"):
        protocol.encode_join_group(members, Claims.empty(), generations, "sticky")


def test_group_encoding_takes_generations_as_ints_or_an_integer_array():
    members = [Member("a", ["t"]), Member("b", ["t"])]
    expected = protocol.encode_join_group(members, Claims.empty(), [3, -1], "cooperative-sticky").messages()
    for generations in ([3, -1], np.array([3, -1], dtype=np.int32), np.array([3, -1])):
        got = protocol.encode_join_group(members, Claims.empty(), generations, "cooperative-sticky")
        assert got.messages() == expected


DECODERS = [protocol.decode_subscription, protocol.decode_assignment,
            lambda b: protocol.decode_sticky_user_data(b, strict=True), protocol.decode_sticky_user_data,
            protocol.decode_cooperative_user_data,
            lambda b: protocol.member_from_metadata("m", b, "sticky"),
            lambda b: protocol.member_from_metadata("m", b, "cooperative-sticky")]


def _golden_blobs():
    blobs = [bytes.fromhex(c["hex"]) for c in STICKY["cases"] if "hex" in c]
    for case in CONSUMER["subscriptions"] + CONSUMER["assignments"]:
        blobs += [bytes.fromhex(v["hex"]) for v in case["versions"].values()]
    return blobs


def test_fuzz_mutated_golden_bytes_only_raise_protocol_error():
    rng = random.Random(20241025)
    blobs = _golden_blobs()
    for _ in range(4000):
        data = bytearray(rng.choice(blobs))
        for _ in range(rng.randint(1, 4)):
            action = rng.randrange(3)
            if action == 0 and data:
                data[rng.randrange(len(data))] = rng.randrange(256)
            elif action == 1 and data:
                del data[rng.randrange(len(data)):]
            else:
                data.insert(rng.randrange(len(data) + 1), rng.randrange(256))
        for decode in DECODERS:
            try:
                decode(bytes(data))
            except ProtocolError:
                pass


@examples(300)
@given(st.binary(max_size=200))
def test_random_bytes_only_raise_protocol_error(data):
    for decode in DECODERS:
        try:
            decode(data)
        except ProtocolError:
            pass


def test_a_megabyte_of_random_bytes_is_rejected_fast():
    """Garbage is refused at its first impossible length, not after walking it: every decoder
    together takes less than a tenth of the time one valid megabyte takes to decode in this run."""
    data = random.Random(1).randbytes(1 << 20)
    start = time.perf_counter()
    for decode in DECODERS:
        try:
            decode(data)
        except ProtocolError:
            pass
    rejected = time.perf_counter() - start
    valid = protocol.encode_assignment(protocol.Assignment(
        [TopicPartition(f"t{i % 100}", i // 100) for i in range(250_000)]))
    assert len(valid) > 900_000
    start = time.perf_counter()
    protocol.decode_assignment(valid)
    assert rejected < (time.perf_counter() - start) / 10


TOPIC = st.text(min_size=0, max_size=8)
PARTITIONS = st.lists(st.builds(TopicPartition, TOPIC, st.integers(0, 2**31 - 1)), max_size=8)


@examples(300)
@given(st.lists(TOPIC, max_size=5), st.none() | st.binary(max_size=20), PARTITIONS,
       st.integers(-1, 2**31 - 1), st.none() | TOPIC, st.integers(0, 3))
def test_subscription_round_trip(topics, user_data, owned, generation, rack, version):
    sub = protocol.Subscription(topics, user_data, owned, generation, rack)
    decoded = protocol.decode_subscription(protocol.encode_subscription(sub, version))
    assert decoded.version == version
    assert sorted(decoded.topics) == sorted(topics) and decoded.user_data == user_data
    assert sorted(decoded.owned_partitions) == (sorted(owned) if version >= 1 else [])
    assert decoded.generation_id == (generation if version >= 2 else -1)
    assert decoded.rack_id == (rack if version >= 3 else None)


@examples(300)
@given(PARTITIONS, st.none() | st.binary(max_size=20), st.integers(0, 3))
def test_assignment_round_trip(partitions, user_data, version):
    encoded = protocol.encode_assignment(protocol.Assignment(partitions, user_data), version)
    decoded = protocol.decode_assignment(encoded)
    assert sorted(decoded.partitions) == sorted(partitions) and decoded.user_data == user_data


@examples(300)
@given(PARTITIONS, st.none() | st.integers(-(2**31), 2**31 - 1))
def test_sticky_user_data_round_trip(partitions, generation):
    decoded = protocol.decode_sticky_user_data(protocol.encode_sticky_user_data(partitions, generation))
    assert sorted(decoded.partitions) == sorted(partitions)
    assert decoded.generation == generation


# -- the run-at-a-stride decoder: long messages of repeated entry shapes ----------------------

def _entries(names_and_counts):
    return [TopicPartition(name, 7 + i) for name, n in names_and_counts for i in range(n)]


@pytest.mark.parametrize(
    "layout",
    [
        pytest.param([(f"t{i:03d}", 1) for i in range(500)], id="one-shape-500"),
        pytest.param([(f"t{i}", 1 + i % 3) for i in range(60)], id="mixed-lengths-and-counts"),
        pytest.param([(f"topic-{i:02d}", 2) for i in range(20)] + [("x" * 300, 1)] * 1
                     + [(f"u{i:02d}", 0) for i in range(12)], id="runs-long-name-and-empty"),
        pytest.param([("ab\x00", 1)] * 12 + [("\x00", 2)] * 9, id="names-ending-in-nul"),
        pytest.param([("", 1)] * 10 + [("é" * 3, 1)] * 10, id="empty-and-non-ascii-names"),
    ],
)
def test_long_messages_round_trip(layout):
    partitions = _entries(layout)
    data = protocol.encode_sticky_user_data(partitions, 3)
    decoded = protocol.decode_sticky_user_data(data, strict=True)
    assert decoded.partitions == _in_sticky_order(partitions) and decoded.generation == 3
    assert protocol.decode_assignment(protocol.encode_assignment(protocol.Assignment(partitions))).partitions \
        == partitions


def _encoded_at_once(groups, name="partitions"):
    """Arrays of many messages written by the columnar framer."""
    return arrays.frame_tp_columns(*arrays.tp_columns_of(groups, name), len(groups)).messages()


def _assigned_at_once(blobs, cache=None):
    """Each assignment's partitions as the columnar reader reads them."""
    claims = protocol.read_assignments(Messages.of(blobs), cache)
    out = [[] for _ in blobs]
    for m, t, p in zip(claims.member.tolist(), claims.topic.tolist(), claims.partition.tolist()):
        out[m].append(TopicPartition(claims.names[t], p))
    return out


def _assigned_one_by_one(blobs):
    return [list(protocol.decode_assignment(b).partitions) for b in blobs]


def _plain_array(partitions) -> bytes:
    """``[Topic STRING, Partitions [INT32]]`` written by the reference codec (sticky user
    data V0 is that array alone), topics in first-appearance order."""
    entries: dict[str, list[int]] = {}
    for tp in partitions:
        entries.setdefault(tp.topic, []).append(tp.partition)
    return codec.encode(schema.STICKY_USER_DATA_V0, {"previous_assignment": list(entries.items())})


@examples(40)
@given(st.lists(st.lists(st.tuples(st.sampled_from(["a", "bb", "dé", "t" * 40, ""]), st.integers(1, 3)), max_size=30),
                min_size=1, max_size=60),
       st.integers(0, 2**31 - 1))
def test_many_arrays_at_once_equal_plain_encoding(shapes, seed):
    """Enough entries of one shape that they are written as records, mixed with others written
    field by field: every array comes out as the plain encoder writes it."""
    rng = random.Random(seed)
    groups = [[TopicPartition(f"{name}{j}", rng.randrange(2**31)) for j, (name, count) in enumerate(layout)
               for _ in range(count)] for layout in shapes]
    groups += [[TopicPartition(f"t{j:03d}", j) for j in range(300)]] * 2  # 600 entries of one shape
    assert _encoded_at_once(groups) == [_plain_array(g) for g in groups]


@pytest.mark.parametrize("groups", [
    [[TopicPartition(f"t{j:03d}", j) for j in range(300)]] * 2,  # every entry of one shape
    [[TopicPartition("", i)] for i in range(300)],  # empty names, one shape
    [[TopicPartition("", i), TopicPartition("ab", 1), TopicPartition("ab", 2)] for i in range(300)],  # two shapes
])
def test_arrays_of_few_shapes_equal_plain_encoding(groups):
    assert _encoded_at_once(groups) == [_plain_array(g) for g in groups]


def test_invalid_utf8_inside_a_run_is_an_error():
    data = bytearray(protocol.encode_sticky_user_data(_entries([(f"t{i:02d}", 1) for i in range(20)])))
    entry = 2 + 3 + 4 + 4
    data[4 + 10 * entry + 2] = 0xFF  # first byte of the 11th topic name
    with pytest.raises(ProtocolError, match=r"previous_assignment.topic: invalid UTF-8 at offset 136"):
        protocol.decode_sticky_user_data(bytes(data), strict=True)


def test_negative_partition_inside_a_run_is_an_error():
    data = bytearray(protocol.encode_sticky_user_data(_entries([(f"t{i:02d}", 1) for i in range(20)])))
    data[4 + 5 * 13 + 9 : 4 + 5 * 13 + 13] = b"\xff\xff\xff\xfe"
    with pytest.raises(ProtocolError, match="negative partition -2"):
        protocol.decode_sticky_user_data(bytes(data), strict=True)


def test_fuzz_long_messages_only_raise_protocol_error():
    rng = random.Random(7)
    base = [protocol.encode_sticky_user_data(_entries([(f"t{i:03d}", 1 + (i // 10) % 2) for i in range(40)]), 9),
            protocol.encode_assignment(protocol.Assignment(_entries([(f"q{i}", 2) for i in range(30)])))]
    for _ in range(1500):
        data = bytearray(rng.choice(base))
        for _ in range(rng.randint(1, 3)):
            spot = rng.randrange(len(data))
            if rng.random() < 0.7:
                data[spot] = rng.choice([0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)])
            else:
                del data[spot:]
                break
        for decode in DECODERS:
            try:
                decode(bytes(data))
            except ProtocolError:
                pass


LONG_PARTITIONS = st.lists(st.builds(TopicPartition, st.sampled_from(["a", "bb", "c\x00", "dé", ""]),
                                     st.integers(0, 3)), min_size=8, max_size=60)


@examples(200)
@given(LONG_PARTITIONS, st.integers(-1, 99))
def test_long_sticky_user_data_round_trip(partitions, generation):
    decoded = protocol.decode_sticky_user_data(protocol.encode_sticky_user_data(partitions, generation), strict=True)
    assert decoded.partitions == _in_sticky_order(partitions) and decoded.generation == generation


BATCH_BLOB = st.one_of(
    st.builds(lambda ps, g: protocol.encode_sticky_user_data(ps, g), LONG_PARTITIONS | PARTITIONS,
              st.none() | st.integers(-1, 9)),
    st.binary(max_size=40),
    st.just(b""),
)


@examples(200)
@given(st.lists(BATCH_BLOB, max_size=6))
def test_batch_decoding_equals_one_by_one(blobs):
    """The lockstep readers give what reading each message alone gives (or the same error)."""
    metadata = {f"m{i}": protocol.encode_subscription(protocol.Subscription(["t"], blob or None), 0)
                for i, blob in enumerate(blobs)}
    assert protocol.members_from_metadata(metadata, "sticky") == [
        protocol.member_from_metadata(m, data, "sticky") for m, data in metadata.items()]
    assignments = [protocol.encode_assignment(protocol.Assignment(protocol.decode_sticky_user_data(b).partitions, b))
                   for b in blobs]
    assert _assigned_at_once(assignments) == _assigned_one_by_one(assignments)
    garbage = [*assignments, b"\x00\x01\x00\x00\x00\x05"]
    with pytest.raises(ProtocolError):
        _assigned_at_once(garbage)


@pytest.mark.parametrize("protocol_name", ["sticky", "cooperative-sticky", "range"])
@pytest.mark.parametrize("bad", [b"\x00", "not bytes"])
def test_group_decoding_names_the_member(protocol_name, bad):
    good = protocol.encode_subscription(protocol.Subscription(["t"]), 0)
    with pytest.raises(ProtocolError, match="member 'm2': "):
        protocol.members_from_metadata({"m1": good, "m2": bad}, protocol_name)


def _garbled(data: bytes, rng) -> bytes:
    data = bytearray(data)
    if data and rng.random() < 0.5:
        data[rng.randrange(len(data))] = rng.choice([0, 0x7F, 0x80, 0xFF])
    else:
        del data[rng.randrange(len(data) + 1):]
    return bytes(data)


GROUP_MEMBER = st.tuples(
    st.lists(st.sampled_from(["a", "bb", "c\x00", "dé", "orders", "t" * 40]), max_size=4, unique=True),
    st.lists(st.builds(TopicPartition, st.sampled_from(["a", "bb", "c\x00", "dé", "orders"]), st.integers(0, 5)),
             max_size=12),
    st.integers(-1, 9), st.sampled_from([None, "r1", "rack-é"]), st.integers(0, 3),
    st.sampled_from(["sticky-data", "cooperative-data", "none", "junk"]))


def group_metadata(specs, rng, garble: float) -> dict[str, bytes]:
    """Member id -> JoinGroup metadata of `GROUP_MEMBER` specs, some garbled."""
    metadata = {}
    for i, (topics, owned, generation, rack, version, data_kind) in enumerate(specs):
        user_data = {"sticky-data": protocol.encode_sticky_user_data(owned, generation if generation >= 0 else None),
                     "cooperative-data": protocol.encode_cooperative_user_data(generation),
                     "none": None, "junk": bytes(rng.randrange(256) for _ in range(rng.randrange(9)))}[data_kind]
        data = protocol.encode_subscription(protocol.Subscription(topics, user_data, owned, generation, rack), version)
        metadata[f"m{i}"] = _garbled(data, rng) if rng.random() < garble else data
    return metadata


@examples(150)
@given(st.lists(GROUP_MEMBER, max_size=45), st.sampled_from(["sticky", "cooperative-sticky", "range"]),
       st.randoms(use_true_random=False), st.floats(0, 0.2))
def test_group_decoding_at_once_equals_one_member_at_a_time(specs, protocol_name, rng, garble):
    """Many members (so the lockstep readers and their per-message tails run), every version,
    some bytes garbled: the whole-group decoder gives each member exactly what the one-member
    reader gives, or raises the error the first bad member raises."""
    metadata = group_metadata(specs, rng, garble)
    expected, error = [], None
    for member_id, data in metadata.items():
        try:
            expected.append(protocol.member_from_metadata(member_id, data, protocol_name))
        except ProtocolError as e:
            error = f"member {member_id!r}: {e}"
            break
    if error is None:
        assert protocol.members_from_metadata(metadata, protocol_name) == expected
    else:
        with pytest.raises(ProtocolError) as raised:
            protocol.members_from_metadata(metadata, protocol_name)
        assert str(raised.value) == error


@examples(150)
@given(st.lists(GROUP_MEMBER, max_size=30), st.sampled_from(["sticky", "cooperative-sticky", "range"]))
def test_group_encoding_at_once_equals_one_member_at_a_time(specs, protocol_name):
    """The whole-group encoder (one buffer for every member) writes each member's metadata
    exactly as the one-subscription encoder does for what that client sends."""
    members = [Member(f"m{i}", topics, rack=rack) for i, (topics, _, _, rack, _, _) in enumerate(specs)]
    generations = [spec[2] for spec in specs]
    rows = [(i, tp) for i in reversed(range(len(specs))) for tp in specs[i][1]]  # claims in any member order
    names = list(dict.fromkeys(tp.topic for _, tp in rows))
    claims = Claims(np.array([i for i, _ in rows], dtype=np.int64),
                    np.array([names.index(tp.topic) for _, tp in rows], dtype=np.int64),
                    np.array([tp.partition for _, tp in rows], dtype=np.int64), names)
    expected = []
    for (topics, owned, generation, rack, _, _) in specs:
        if protocol_name == "sticky":
            user_data = protocol.encode_sticky_user_data(owned, generation) if generation >= 0 or owned else None
            subscription = protocol.Subscription(topics, user_data, [], generation, rack)
        elif protocol_name == "cooperative-sticky":
            subscription = protocol.Subscription(topics, protocol.encode_cooperative_user_data(generation), owned,
                                                 generation, rack)
        else:
            subscription = protocol.Subscription(topics, None, [], generation, rack)
        expected.append(protocol.encode_subscription(subscription))
    assert protocol.encode_join_group(members, claims, generations, protocol_name).messages() == expected


def test_bad_text_in_one_members_user_data_costs_no_other_member_its_partitions():
    """Names are decoded for all members at once; one that is not UTF-8 sends every member to
    the one-member reader, which must still give the others what they own."""
    good = protocol.encode_sticky_user_data([TopicPartition("a", 0), TopicPartition("b", 1)], 3)
    bad = bytearray(protocol.encode_sticky_user_data([TopicPartition("zz", 0)], 3))
    bad[bad.index(b"zz")] = 0xFF
    metadata = {f"m{i}": protocol.encode_subscription(protocol.Subscription(["a", "b"], data), 0)
                for i, data in enumerate([good, bytes(bad), good])}
    members = protocol.members_from_metadata(metadata, "sticky")
    assert members == [protocol.member_from_metadata(m, data, "sticky") for m, data in metadata.items()]
    assert [len(m.owned) for m in members] == [2, 0, 2]
    assert [m.generation for m in members] == [3, -1, 3]


def test_a_kept_encode_cache_finds_members_by_identity():
    """Members' topics tuples and racks are found by identity in a kept cache: equal values
    held as different objects, and a member list that changes between rebalances, all encode
    as the one-subscription encoder does."""
    cache = protocol.EncodeCache()
    everyone = [Member(f"m{i}", [f"t{i % 3}", "x"], rack=None if i % 4 == 0 else f"r{i % 2}") for i in range(12)]
    for start in (0, 3, 0, 7):  # rebalances with part of the group, some members seen before
        members = everyone[start : start + 5]
        expected = [protocol.encode_subscription(protocol.Subscription(m.topics, None, [], 2, m.rack))
                    for m in members]
        assert protocol.encode_join_group(members, Claims.empty(), [2] * len(members), "range", cache).messages() \
            == expected
    assert len(cache.member_topic_lists.encodings) <= 3  # equal lists share one encoding


def test_a_kept_encode_cache_writes_changing_topic_sets_as_a_new_one_would():
    """Name tables kept between rebalances give the bytes a fresh cache gives, as topics come
    and go."""
    kept = protocol.EncodeCache()
    for topics in ({"a": 2, "bb": 3}, {"a": 2, "bb": 3, "dé": 1}, {"bb": 3}, {"a": 2, "bb": 3}, {"zz": 4, "a": 1}):
        group = Group(topics=topics, members=[Member("m1", list(topics)), Member("m2", ["bb", "a"])])
        planned = strategy_named("sticky").planned(group)
        layout, owner = planned.layout, planned.owner
        claims, members = layout.owned_claims(owner), len(layout.members)
        assert protocol.encode_assignments(claims, members, "sticky", 4, cache=kept).messages() == \
            protocol.encode_assignments(claims, members, "sticky", 4, cache=protocol.EncodeCache()).messages()


@examples(100)
@given(st.lists(st.tuples(st.lists(st.sampled_from(["a", "bb", "dé", "orders", "t" * 40]), min_size=1, max_size=4,
                                   unique=True)), min_size=1, max_size=30),
       st.sampled_from(["sticky", "range", "roundrobin"]), st.integers(0, 9))
def test_group_assignments_at_once_equal_one_member_at_a_time(subscriptions, protocol_name, generation):
    group = Group(topics={"a": 3, "bb": 7, "dé": 2, "orders": 12, "t" * 40: 5},
                  members=[Member(f"m{i}", topics) for i, (topics,) in enumerate(subscriptions)])
    planned = strategy_named(protocol_name).planned(group)
    layout, owner = planned.layout, planned.owner
    plan = layout.assignment(owner)
    for asked in (False, True):
        messages = protocol.encode_assignments(layout.owned_claims(owner), len(layout.members), protocol_name,
                                               generation, user_data=asked)
        got = dict(zip([m.id for m in layout.members], messages.messages()))
        assert got == protocol.assignments_for(Plan(protocol_name, plan), protocol_name, generation, user_data=asked)
        for member_id, partitions in plan.items():
            carried = asked and protocol_name == "sticky"
            if carried:  # both lists in sticky user data order
                partitions = _in_sticky_order(partitions)
            user_data = protocol.encode_sticky_user_data(partitions, generation) if carried else None
            assert got[member_id] == protocol.encode_assignment(protocol.Assignment(partitions, user_data))


def assignment_blobs(partition_lists, rng, garble: float) -> list[bytes]:
    """SyncGroup assignments of these partitions, with or without user data, some garbled."""
    blobs = [protocol.encode_assignment(protocol.Assignment(ps, rng.choice([None, b"", b"xyz"])))
             for ps in partition_lists]
    return [_garbled(b, rng) if rng.random() < garble else b for b in blobs]


@examples(100)
@given(st.lists(LONG_PARTITIONS | PARTITIONS, max_size=40), st.randoms(use_true_random=False), st.floats(0, 0.2))
def test_assignments_at_once_equal_one_at_a_time(partition_lists, rng, garble):
    blobs = assignment_blobs(partition_lists, rng, garble)
    try:
        expected = [protocol.decode_assignment(b) for b in blobs]
    except ProtocolError as e:
        with pytest.raises(ProtocolError, match=re.escape(str(e))):
            _assigned_at_once(blobs)
    else:
        assert _assigned_at_once(blobs) == [list(a.partitions) for a in expected]
        claims = protocol.read_assignments(Messages.of(blobs))
        assert [(claims.member[j], claims.names[claims.topic[j]], claims.partition[j])
                for j in range(len(claims.member))] \
            == [(i, tp.topic, tp.partition) for i, a in enumerate(expected) for tp in a.partitions]


@examples(300)
@given(LONG_PARTITIONS | PARTITIONS, st.none() | st.binary(max_size=12), st.integers(0, 3), st.integers(0, 9),
       st.binary(max_size=6), st.randoms(use_true_random=False), st.floats(0, 0.3))
def test_one_assignment_in_columns_reads_as_the_object_reader_does(partitions, user_data, version, newer, trailing,
                                                                   rng, garble):
    """`read_assignment` against `decode_assignment`, its reference: versions the schema knows and
    newer ones (read with the fields known), trailing bytes, and garbled bytes (the same error)."""
    blob = protocol.encode_assignment(protocol.Assignment(partitions, user_data), version=version)
    if newer:  # a version past the highest known, and whatever a newer client adds after the fields
        blob = (protocol.HIGHEST_VERSION + newer).to_bytes(2, "big") + blob[2:] + trailing
    if rng.random() < garble:
        blob = _garbled(blob, rng)
    try:
        expected = protocol.decode_assignment(blob)
    except ProtocolError as e:
        with pytest.raises(ProtocolError, match=re.escape(str(e))):
            protocol.read_assignment(blob)
        return
    got_version, claims, got_user_data = protocol.read_assignment(blob)
    assert (got_version, got_user_data) == (expected.version, expected.user_data)
    assert [claims.names[t] for t in claims.topic] == [tp.topic for tp in expected.partitions]
    assert claims.partition.tolist() == [tp.partition for tp in expected.partitions]
    assert set(claims.member.tolist()) <= {0}


def test_one_long_message_among_many_short_ones():
    """Lockstep rounds stop when few messages are left; the long ones finish on their own."""
    short = [[TopicPartition(f"t{i % 7}", i)] for i in range(40)]
    long = [TopicPartition(f"topic-{i % 300}", i) for i in range(5000)]
    blobs = [protocol.encode_assignment(protocol.Assignment(ps)) for ps in [*short, long, *short]]
    assert _assigned_at_once(blobs) == _assigned_one_by_one(blobs)


def test_long_topic_names_that_hash_alike_are_told_apart(monkeypatch):
    """Names longer than 8 bytes are found by a 64-bit hash; two names with one hash must
    still decode as themselves."""
    real = wire_cache._name_keys

    def colliding(buffer, at, size):
        keys, rows = real(buffer, at, size)
        return (np.zeros_like(keys), rows) if rows is not None else (keys, rows)

    monkeypatch.setattr(wire_cache, "_name_keys", colliding)
    monkeypatch.setattr(arrays, "_in_c", None)  # (the numpy reader's table; C compares the bytes themselves)
    blobs = [protocol.encode_assignment(protocol.Assignment([TopicPartition(f"long-topic-{i % 5}", i)]))
             for i in range(40)]
    assert _assigned_at_once(blobs) == _assigned_one_by_one(blobs)


_MASK = (1 << 64) - 1


def _mixed(h: int) -> int:
    """One step of the C reader's name hash between two words (`hash_of` in
    assignor/wire/_tp_arrays.c): a multiply, then the high half folded in."""
    h = h * 0xFF51AFD7ED558CCD & _MASK
    return h ^ (h >> 32)


def _colliding_names(rng: random.Random) -> tuple[bytes, bytes]:
    """Two ASCII names of 24 bytes with one first word and one hash in the C reader: the third
    word of the second undoes what its second word changed."""
    head = b"colliding"[:8]
    first_a = b"a" * 8
    h0 = (0x9E3779B97F4A7C15 ^ 24) + int.from_bytes(head, "little") & _MASK
    while True:
        first_b = bytes(rng.randrange(0x20, 0x7F) for _ in range(8))
        last_a = bytes(rng.randrange(0x20, 0x7F) for _ in range(8))
        after_a = _mixed(h0) ^ int.from_bytes(first_a, "little")
        after_b = _mixed(h0) ^ int.from_bytes(first_b, "little")
        last_b = (_mixed(after_a) ^ _mixed(after_b) ^ int.from_bytes(last_a, "little")).to_bytes(8, "little")
        if all(0x20 <= c < 0x7F for c in last_b) and first_b != first_a:
            return head + first_a + last_a, head + first_b + last_b


@pytest.mark.skipif(arrays._in_c is None, reason="built without a C compiler")
def test_names_whose_hashes_collide_in_c_are_told_apart():
    """The C reader finds each name by its hash, its length and its first 8 bytes, then compares
    the rest: two names alike in all three still read as themselves."""
    from assignor.wire import _tp_arrays

    one, other = _colliding_names(random.Random(7))
    assert _tp_arrays.name_hash(one) == _tp_arrays.name_hash(other) and one != other
    blobs = [protocol.encode_assignment(protocol.Assignment([TopicPartition(name.decode(), i)]))
             for i, name in enumerate([one, other] * 20)]
    assert sum(map(len, blobs)) > columnar.PLAIN_UP_TO_BYTES  # (read in columns, not plainly)
    assert _assigned_at_once(blobs) == _assigned_one_by_one(blobs)


def test_a_leader_cache_starts_again_past_its_one_bound():
    """Every part of a leader's cache counts toward one bound: fresh topic names at every
    rebalance (a hostile or churning group) grow it until `settle` finds it past the bound and
    empties it; what it decodes meanwhile is what a fresh cache decodes."""
    cache = LeaderCache(max_entries=25)
    kept = []
    for round_ in range(6):
        blobs = [protocol.encode_assignment(protocol.Assignment([TopicPartition(f"t{round_}{i}", i)]))
                 for i in range(10)]
        claims = protocol.read_assignments(Messages.of(blobs), cache.decode)
        assert [claims.names[t] for t in claims.topic] == [f"t{round_}{i}" for i in range(10)]
        cache.settle()
        kept.append(cache.entries())
    if arrays._in_c is None:  # (the numpy reader: ten names, each in two tables; past 25 it starts again)
        assert kept == [20, 0, 20, 0, 20, 0]
    else:  # (in C: ten names in one table; past 25 it starts again)
        assert kept == [10, 20, 0, 10, 20, 0]


def test_a_leader_cache_of_few_but_long_names_starts_again_past_its_bytes():
    """Few entries can hold much: a name is whatever a member sends (the service's planning
    processes keep one cache across every group they plan). Past `max_bytes` by its own
    estimate the cache starts again, however few its entries."""
    cache = LeaderCache(max_entries=1_000, max_bytes=100_000)
    sizes = []
    for round_ in range(4):
        blobs = [protocol.encode_assignment(protocol.Assignment([TopicPartition(f"{round_}{i}-" + "x" * 9_000, i)]))
                 for i in range(3)]
        protocol.read_assignments(Messages.of(blobs), cache.decode)
        assert cache.entries() < 100 and cache.nbytes() >= 3 * 9_000
        sizes.append(cache.nbytes())
        cache.settle()
        sizes.append(cache.nbytes())
    assert sizes[1] > 0 and min(sizes[2 * k + 1] for k in range(4)) == 0  # kept a while, then emptied
    assert max(sizes) <= 100_000 + sizes[0]  # past the bound by at most one rebalance's worth


def test_a_kept_leader_cache_plans_and_encodes_as_a_fresh_one():
    """`leader.sync` with one kept cache, as topics, members and names change from one
    rebalance to the next, and through restarts of the cache: the bytes a fresh cache gives."""
    from assignor import leader

    kept = LeaderCache(max_entries=40)
    rng = random.Random(11)
    for generation in range(1, 12):
        topics = {f"t{j}": rng.randrange(1, 6) for j in rng.sample(range(8), rng.randrange(1, 6))}
        metadata = {f"m{i}": protocol.encode_subscription(protocol.Subscription(
            rng.sample(sorted(topics), rng.randrange(1, len(topics) + 1)))) for i in rng.sample(range(30), 6)}
        for name in ("sticky", "range", "cooperative-sticky"):
            assert leader.sync(name, generation, topics, metadata, cache=kept).assignments == \
                leader.sync(name, generation, topics, metadata).assignments


def test_a_kept_decode_cache_knows_short_topic_lists_by_the_list_alone():
    """One-topic subscriptions are shorter than the 64 bytes a topic list is keyed by; the key
    must stop at the list, or every rebalance's new generation and owned partitions (the bytes
    after it) would add keys for the same lists without end. Members with different one-topic
    lists still decode as themselves."""
    cache = DecodeCache()
    for generation in range(1, 30):
        metadata = {f"m{i}": protocol.encode_subscription(protocol.Subscription(
            [f"topic-{i % 3}"], protocol.encode_sticky_user_data([TopicPartition(f"topic-{i % 3}", generation + i)],
                                                                 generation), generation_id=generation))
            for i in range(12)}
        roster = protocol.read_join_group(list(metadata), Messages.of(list(metadata.values())), "sticky", cache)
        assert [m.topics for m in roster.members] == [(f"topic-{i % 3}",) for i in range(12)]
        assert roster.owning() == protocol.members_from_metadata(metadata, "sticky")
    assert len(cache.topic_lists) == 3


@pytest.mark.parametrize("collide", [False, True])
def test_a_subscription_each_decodes_as_member_by_member_again_and_again(monkeypatch, collide):
    """Members with a topic list each (random subscriptions), decoded at three rebalances with
    one kept cache: each time what decoding member by member gives. With every hash alike, the
    lists meet under one key, and every member but one is read alone."""
    if collide:
        monkeypatch.setattr(columnar, "row_hashes", lambda rows: np.zeros(len(rows), dtype=np.uint64))
    rng = random.Random(7)
    names = [f"topic-{i:02d}" for i in range(30)] + ["a", "bb"]
    lists = [rng.sample(names, rng.randrange(0, 12)) for _ in range(40)]
    cache = DecodeCache()
    for generation in (1, 2, 3):
        metadata = {f"m{i:02d}": protocol.encode_subscription(protocol.Subscription(
            topics, protocol.encode_sticky_user_data([], generation), generation_id=generation))
            for i, topics in enumerate(lists)}
        roster = protocol.read_join_group(list(metadata), Messages.of(list(metadata.values())), "sticky", cache)
        assert roster.owning() == protocol.members_from_metadata(metadata, "sticky")


def _wire_joined(blobs):
    return Messages.of(blobs)


def _entry_bytes(name: str, partitions: list[int]) -> bytes:
    raw = name.encode()
    return struct.pack(">h", len(raw)) + raw + struct.pack(">i", len(partitions)) + struct.pack(
        f">{len(partitions)}i", *partitions)


def _array_message(entries: list[tuple[str, list[int]]]) -> bytes:
    """A message of one byte, then the ``[Topic STRING, Partitions [INT32]]`` array of `entries`."""
    return b"\x07" + struct.pack(">i", len(entries)) + b"".join(_entry_bytes(*e) for e in entries)


def _array_read_field_by_field(data: bytes, at: int) -> tuple[list, int] | None:
    """The ``[Topic STRING, Partitions [INT32]]`` array at `at`, read by the reference codec
    (sticky user data V0 is that array alone), and where it ends; None when it does not read
    (or holds a negative partition)."""
    try:
        _, values = codec.decode(schema.STICKY_USER_DATA_V0, data[at:])
    except ProtocolError:
        return None
    entries = values["previous_assignment"]
    if any(p < 0 for _, partitions in entries for p in partitions):
        return None
    # The codec writes what it reads byte for byte, so the array's size is its encoding's.
    return [(t, list(ps)) for t, ps in entries], at + len(codec.encode(schema.STICKY_USER_DATA_V0, values))


RUN = st.tuples(st.sampled_from(["a", "bb", "orders", ""]), st.integers(0, 3), st.integers(1, 40))

#: The readers of many messages' arrays: `read_tp_columns` (in C where built) and the numpy one,
#: its reference and the fallback of a build without a compiler.
TP_READERS = [pytest.param(arrays.read_tp_columns_in_rounds, id="rounds"),
              pytest.param(arrays.read_tp_columns, id="c", marks=pytest.mark.skipif(
                  arrays._in_c is None, reason="built without a C compiler"))]


@examples(150)
@pytest.mark.parametrize("read", TP_READERS)
@given(st.lists(st.lists(RUN, max_size=6), max_size=40), st.randoms(use_true_random=False),
       st.sampled_from([None, 3, 50]))
def test_round_reader_equals_reading_each_array_alone(read, messages, rng, max_look):
    """Arrays made of runs of entries of one shape (name length, partition count), of any
    length, some cut short or with a negative partition: the round reader gives each message
    what reading it field by field gives. A small look-ahead bound forces many rounds."""

    blobs = []
    for runs in messages:
        entries = [(name, [rng.randrange(-1 if rng.random() < 0.02 else 0, 9) for _ in range(count)])
                   for name, count, repeat in runs for _ in range(repeat)]
        data = _array_message(entries)
        if rng.random() < 0.1:
            data = data[: rng.randrange(len(data) + 1)]
        blobs.append(data)
    saved = arrays._MAX_LOOK
    try:
        if max_look is not None:
            arrays._MAX_LOOK = max_look
        _assert_round_reader_reads_as_field_by_field(blobs, read)
    finally:
        arrays._MAX_LOOK = saved


@examples(100)
@pytest.mark.parametrize("read", TP_READERS)
@given(st.integers(16, 40), st.integers(10, 60), st.integers(0, 2**32))
def test_round_reader_where_shapes_change_at_every_entry(read, messages, longest, seed):
    """Entries of random shapes, so that runs are short and the reader takes single-entry
    steps between run rounds: still what reading each message field by field gives, with
    messages cut short or holding a negative partition among them. (The draws come from a
    seeded generator: thousands of hypothesis draws per example would be slow.)"""
    rng = random.Random(seed)
    blobs = []
    for _ in range(messages):
        entries = [(rng.choice(["a", "bb", "orders"]),
                    [rng.randrange(-1 if rng.random() < 0.005 else 0, 9) for _ in range(rng.randrange(5))])
                   for _ in range(rng.randrange(longest + 1))]
        data = _array_message(entries)
        if rng.random() < 0.1:
            data = data[: rng.randrange(len(data) + 1)]
        blobs.append(data)
    _assert_round_reader_reads_as_field_by_field(blobs, read)


def test_round_reader_steps_through_changing_shapes(monkeypatch):
    """Counts alternating 1, 2, 1, 2 in every message: run rounds read one entry each, so the
    reader steps (and reads exactly what the field-by-field reader does)."""

    steps = []
    step = arrays._read_step
    monkeypatch.setattr(arrays, "_read_step", lambda *args: steps.append(len(args[1])) or step(*args))
    blobs = [_array_message([(f"t{e % 7}", [m, e][: 1 + e % 2]) for e in range(50)]) for m in range(20)]
    _assert_round_reader_reads_as_field_by_field(blobs, arrays.read_tp_columns_in_rounds)
    assert steps and set(steps) == {20}


@examples(100)
@pytest.mark.parametrize("read", TP_READERS)
@given(st.lists(st.lists(st.tuples(st.sampled_from([b"orders", b"\xff\xfe", b"caf\xc3\xa9", b"x" * 300,
                                                    b"y" * 9 + b"\x00", b"y" * 9 + b"\x01"]),
                                   st.lists(st.integers(-2, 2**31 - 1), max_size=3)), max_size=8), max_size=12),
       st.randoms(use_true_random=False))
def test_arrays_of_many_messages_with_names_not_utf8_and_cut_anywhere(read, messages, rng):
    """Names that are not UTF-8 (or end in a NUL, or are long), negative partitions and
    messages cut short anywhere: each message the reader calls ok reads as the plain codec
    reads it; in C, the others are exactly those the plain codec refuses (the numpy reader,
    on a name that is not UTF-8, leaves every message to be read again alone)."""
    blobs = []
    for entries in messages:
        data = b"\x07" + struct.pack(">i", len(entries)) + b"".join(
            struct.pack(">h", len(name)) + name + struct.pack(f">i{len(ps)}i", len(ps), *ps) for name, ps in entries)
        blobs.append(data[: rng.randrange(len(data) + 1)] if rng.random() < 0.2 else data)
    in_rounds = read is arrays.read_tp_columns_in_rounds
    _assert_round_reader_reads_as_field_by_field(blobs, read, every_refusal=not in_rounds)


def _assert_round_reader_reads_as_field_by_field(blobs: list[bytes], read=arrays.read_tp_columns,
                                                 every_refusal: bool = True) -> None:

    columns = read(blobs, [1] * len(blobs), DecodeCache())
    bounds = np.searchsorted(columns.entry_message, np.arange(len(blobs) + 1)).tolist()
    first = np.r_[0, np.cumsum(columns.entry_count)].tolist()
    for i, data in enumerate(blobs):
        expected = _array_read_field_by_field(data, 1)
        assert bool(columns.ok[i]) == (expected is not None) or (not every_refusal and not columns.ok[i])
        if not columns.ok[i]:
            continue
        got = [(columns.names[columns.entry_topic[e]], columns.partitions[first[e] : first[e + 1]].tolist())
               for e in range(bounds[i], bounds[i + 1])]
        assert got == expected[0] and int(columns.end[i]) == expected[1]


@pytest.mark.parametrize("read", TP_READERS)
def test_round_reader_with_as_many_partitions_as_entries_but_not_one_each(read):
    """Counts 0 and 2 add up to one per entry: the partitions must still be read per entry."""

    blobs = [_array_message([("a", []), ("b", [5, 6])]), _array_message([("c", [9])])]
    columns = read(blobs, [1, 1], DecodeCache())
    assert columns.ok.tolist() == [True, True]
    assert [columns.names[t] for t in columns.entry_topic] == ["a", "b", "c"]
    assert columns.entry_count.tolist() == [0, 2, 1] and columns.partitions.tolist() == [5, 6, 9]


@examples(100)
@given(st.lists(LONG_PARTITIONS | PARTITIONS, max_size=30), st.sampled_from(["sticky", "cooperative-sticky", "range"]),
       st.integers(-1, 2**31 - 1))
def test_user_data_at_once_equals_one_member_at_a_time(partition_lists, protocol_name, generation):
    """The next JoinGroup's user data of every member, written at once (columnar), is what the
    one-message encoders write for each member."""
    plan = Plan(protocol_name, {f"m{i}": ps for i, ps in enumerate(partition_lists)})
    got = protocol.user_data_for(plan, protocol_name, generation)
    if protocol_name == "sticky":
        assert got == {m: protocol.encode_sticky_user_data(ps, generation) for m, ps in plan.assignment.items()}
    elif protocol_name == "cooperative-sticky":
        assert got == dict.fromkeys(plan.assignment, protocol.encode_cooperative_user_data(generation))
    else:
        assert got == {}


@examples(100)
@given(st.lists(LONG_PARTITIONS | PARTITIONS, max_size=30), st.sampled_from(["sticky", "cooperative-sticky", "range"]),
       st.integers(0, 2**31 - 1), st.booleans())
def test_plan_bytes_are_the_assignments_and_the_user_data(partition_lists, protocol_name, generation, as_java):
    """`plan_bytes` (one pass over the plan, the user data cut from the assignments that carry
    it) gives what `assignments_for` and `user_data_for` give apart."""
    plan = Plan(protocol_name, {f"m{i}": ps for i, ps in enumerate(partition_lists)})
    assert protocol.plan_bytes(plan, protocol_name, generation, as_java=as_java) == (
        protocol.assignments_for(plan, protocol_name, generation, as_java=as_java),
        protocol.user_data_for(plan, protocol_name, generation))


@examples(100)
@given(st.lists(LONG_PARTITIONS | PARTITIONS, max_size=30), st.sampled_from(["sticky", "cooperative-sticky", "range"]),
       st.integers(0, 2**31 - 1))
def test_plan_bytes_of_claims_are_plan_bytes_of_the_plan(partition_lists, protocol_name, generation):
    """A plan given as columns (members' blocks in any order, each member's partitions in its
    order) is written as `plan_bytes` writes the same plan given as objects."""
    members = [f"m{i}" for i in range(len(partition_lists))]
    names = sorted({tp.topic for ps in partition_lists for tp in ps})
    rows = [(i, names.index(tp.topic), tp.partition) for i in reversed(range(len(members)))
            for tp in partition_lists[i]]
    member, topic, partition = (np.array(column, dtype=np.int64) for column in zip(*rows)) if rows else (
        np.zeros(0, dtype=np.int64),) * 3
    plan = Plan(protocol_name, dict(zip(members, partition_lists)))
    assert protocol.plan_bytes_of_claims(Claims(member, topic, partition, names), members, protocol_name,
                                         generation) == protocol.plan_bytes(plan, protocol_name, generation)


def _in_sticky_order(partitions: list[TopicPartition]) -> list[TopicPartition]:
    """Grouped by topic in the order Java's sticky user data lists topics."""
    by_topic: dict[str, list[TopicPartition]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp)
    last = list(by_topic)[-1] if by_topic else None
    called_after = bool(partitions) and [tp.topic for tp in partitions].index(last) < len(partitions) - 1
    return [tp for topic in sticky_topic_order(list(by_topic), called_after) for tp in by_topic[topic]]
