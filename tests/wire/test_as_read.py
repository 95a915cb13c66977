"""What a leader and its members read from the bytes they send, without the bytes
(`columnar.join_group_as_read`, `columnar.assignments_as_read`; the what-if engine replays every
rebalance through them), held to the round trip through the encoders and the readers."""

from __future__ import annotations

import contextlib
from unittest import mock

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from assignor.model import Claims, Member, TopicPartition
from assignor.protocols import PROTOCOLS
from assignor.wire import columnar
from tests.budget import examples

NAMES = ["a", "bb", "c\x00", "dé", "orders"]
MEMBER = st.tuples(
    st.lists(st.sampled_from(NAMES), max_size=4, unique=True),
    # Partitions out of order, topics interleaved, a partition twice: all travel as given.
    st.lists(st.builds(TopicPartition, st.sampled_from(NAMES), st.integers(0, 5)), max_size=12),
    st.integers(-3, 9),
    st.sampled_from([None, "", "r1", "rack-é"]),
)


def _claims(owned: list[list[TopicPartition]], rng: np.random.Generator) -> Claims:
    """Each member's partitions as claims, members' rows interleaved at random (each member's
    own in its order) and names in an order of their own, as a caller may hand them over."""
    turns = [i for i, mine in enumerate(owned) for _ in mine]
    rng.shuffle(turns)
    left = [iter(mine) for mine in owned]
    rows = [(i, next(left[i])) for i in turns]
    names = sorted({tp.topic for _, tp in rows}, key=lambda _: rng.random())
    return Claims(np.array([i for i, _ in rows], dtype=np.int64),
                  np.array([names.index(tp.topic) for _, tp in rows], dtype=np.int64),
                  np.array([tp.partition for _, tp in rows], dtype=np.int64), names)


def _per_member(claims: Claims, members: int) -> list[list[tuple[str, int]]]:
    out: list[list[tuple[str, int]]] = [[] for _ in range(members)]
    for m, t, p in zip(claims.member.tolist(), claims.topic.tolist(), claims.partition.tolist()):
        out[m].append((claims.names[t], p))
    return out


def _read(columns: bool) -> contextlib.AbstractContextManager[object]:
    """Both readers: small groups' (the plain codec, `columns` false) and the columns'."""
    return mock.patch.object(columnar, "PLAIN_UP_TO_BYTES", -1) if columns else contextlib.nullcontext()


@examples(200)
@given(specs=st.lists(MEMBER, max_size=12), protocol=st.sampled_from(sorted(PROTOCOLS)), seed=st.integers(0, 99),
       columns=st.booleans())
# A topic in two runs of a member's sticky user data (a partition owned twice): written grouped.
@example(specs=[(["a"], [TopicPartition("a", 0), TopicPartition("c", 0), TopicPartition("a", 0)], 1, None)],
         protocol="sticky", seed=0, columns=False)
def test_join_group_as_read_is_the_round_trip(specs, protocol, seed, columns):
    members = [Member(f"m{i}", topics, rack=rack) for i, (topics, _, _, rack) in enumerate(specs)]
    owned = _claims([spec[1] for spec in specs], np.random.default_rng(seed))
    generations = [spec[2] for spec in specs]
    ids = [m.id for m in members]
    with _read(columns):
        read = columnar.read_join_group(ids, columnar.encode_join_group(members, owned, generations, protocol),
                                        protocol)
    direct = columnar.join_group_as_read(members, owned, generations, protocol)
    assert direct.members == read.members
    assert [type(m.topics) for m in direct.members] == [type(m.topics) for m in read.members]
    assert _per_member(direct.claims, len(members)) == _per_member(read.claims, len(members))


@examples(200)
@given(owned=st.lists(st.lists(st.builds(TopicPartition, st.sampled_from(NAMES), st.integers(0, 5)), max_size=12),
                      max_size=12),
       protocol=st.sampled_from(sorted(PROTOCOLS)), as_java=st.booleans(), user_data=st.booleans(),
       seed=st.integers(0, 99), columns=st.booleans())
def test_assignments_as_read_are_the_round_trip(owned, protocol, as_java, user_data, seed, columns):
    assigned = _claims(owned, np.random.default_rng(seed))
    sent = columnar.encode_assignments(assigned, len(owned), protocol, 7, as_java=as_java, user_data=user_data)
    direct = columnar.assignments_as_read(assigned, protocol, as_java=as_java, user_data=user_data)
    with _read(columns):
        read = columnar.read_assignments(sent)
    assert _per_member(direct, len(owned)) == _per_member(read, len(owned))


LONG = "x" * 40_000


@pytest.mark.parametrize(("members", "owned", "generations"), [
    ([Member("a", ["t"])], Claims.empty(), [2**31]),
    ([Member("a", [LONG])], Claims.empty(), [1]),
    ([Member("a", ["t"], rack=LONG)], Claims.empty(), [1]),
    ([Member("a", ["t"], rack="\udc80")], Claims.empty(), [1]),
    ([Member("a", ["t"])], Claims.of_lists([[(LONG, 0)]]), [1]),
    ([Member("a", [LONG], rack=LONG)], Claims.of_lists([[("t", 0)]]), [2**31]),
], ids=["generation", "topic", "rack", "rack-not-utf8", "owned-topic", "several"])
def test_what_the_wire_cannot_carry_is_refused_as_the_encoder_refuses_it(members, owned, generations):
    """A group the wire cannot carry gets the encoder's error, the first it would meet."""
    with pytest.raises(columnar.ProtocolError) as written:
        columnar.encode_join_group(members, owned, generations, "cooperative-sticky")
    with pytest.raises(columnar.ProtocolError) as read:
        columnar.join_group_as_read(members, owned, generations, "cooperative-sticky")
    assert str(read.value) == str(written.value)


def test_a_kept_cache_gives_each_list_as_one_tuple_at_every_rebalance():
    """The planner finds subscriptions by identity (`dense.build`): a leader's cache kept across
    rebalances hands out one tuple per distinct list, as `read_join_group`'s does."""
    cache = columnar.DecodeCache()
    first = [Member("a", ["z", "b"]), Member("b", ["b", "z"])]
    again = [Member("a", ["z", "b"]), Member("c", ["b"])]
    one = columnar.join_group_as_read(first, Claims.empty(), [1, 1], "range", cache)
    two = columnar.join_group_as_read(again, Claims.empty(), [2, 2], "range", cache)
    assert one.members[0].topics == ("b", "z")
    assert one.members[0].topics is one.members[1].topics is two.members[0].topics
