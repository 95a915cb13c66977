"""A small group's JoinGroup metadata and SyncGroup assignments are read by the plain codec
(`columnar.PLAIN_UP_TO_BYTES`), a larger one's in columns: the same answers either way, held
here on the groups `tests/wire/test_protocol.py` garbles (where the columnar readers are held to
the plain codec at every size)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignor import Claims, TopicPartition, protocol
from assignor.protocol import Messages, ProtocolError
from assignor.wire import columnar
from tests.budget import examples
from tests.wire.test_protocol import GROUP_MEMBER, LONG_PARTITIONS, PARTITIONS, assignment_blobs, group_metadata


def _outcome(read):
    try:
        return read()
    except ProtocolError as error:
        return str(error)


def _claims(claims) -> list[tuple[int, str, int]]:
    return [(int(m), claims.names[t], int(p)) for m, t, p in zip(claims.member, claims.topic, claims.partition)]


@examples(150)
@given(st.lists(GROUP_MEMBER, max_size=12), st.sampled_from(["sticky", "cooperative-sticky", "range"]),
       st.randoms(use_true_random=False), st.floats(0, 0.2))
def test_a_small_groups_metadata_reads_as_in_columns(specs, protocol_name, rng, garble):
    metadata = group_metadata(specs, rng, garble)
    ids, joined = list(metadata), Messages.of(list(metadata.values()))

    def plainly():
        roster = columnar._read_join_group_plainly(ids, joined, columnar.resolve(protocol_name))
        return roster.owning(), _claims(roster.claims)

    def in_columns():
        roster = columnar._read_join_group(ids, joined, columnar.resolve(protocol_name), None)
        return roster.owning(), _claims(roster.claims)

    assert _outcome(plainly) == _outcome(in_columns)


@examples(150)
@given(st.lists(LONG_PARTITIONS | PARTITIONS, max_size=12), st.randoms(use_true_random=False), st.floats(0, 0.2))
def test_small_assignments_read_as_in_columns(partition_lists, rng, garble):
    blobs = assignment_blobs(partition_lists, rng, garble)
    joined = Messages.of(blobs)
    small = _outcome(lambda: _claims(Claims.of_lists(
        [protocol.decode_assignment(joined.message(i)).partitions for i in range(len(blobs))])))
    assert small == _outcome(lambda: _claims(columnar._read_assignments(joined, None)[1]))


@pytest.mark.parametrize("members", [3, 40])
def test_the_plain_codec_reads_small_groups_and_columns_the_others(monkeypatch, members):
    """Which reader runs is the size's business only (the answers are the same, above)."""
    ran = []
    monkeypatch.setattr(columnar, "_read_join_group_plainly",
                        lambda *a, real=columnar._read_join_group_plainly: ran.append("plain") or real(*a))
    monkeypatch.setattr(columnar, "_read_join_group",
                        lambda *a, real=columnar._read_join_group: ran.append("columns") or real(*a))
    owned = [TopicPartition("orders", p) for p in range(4)]
    metadata = {f"member-{i}": protocol.encode_subscription(protocol.Subscription(["orders"], None, owned, 3))
                for i in range(members)}
    joined = Messages.of(list(metadata.values()))
    small = int((joined.limit - joined.base).sum()) <= columnar.PLAIN_UP_TO_BYTES
    assert small == (members == 3)
    roster = protocol.read_join_group(list(metadata), joined, "cooperative-sticky")
    assert ran == ["plain" if small else "columns"]
    assert [m.generation for m in roster.members] == [3] * members
    assert len(roster.claims.member) == 4 * members
