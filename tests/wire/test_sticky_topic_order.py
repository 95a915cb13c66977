"""Sticky user data lists a member's topics in the order of the HashMap Java groups them in
(``CollectionUtils.groupPartitionsByTopic``: one ``computeIfAbsent`` per partition), checked
against a step-by-step model of Java's HashMap (`tests/java_hashmap.py`) on every path that
writes it: the objects' encoder and the columns' (the leader's)."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from assignor.model import Claims, TopicPartition
from assignor.ordering import hashmap_order
from assignor.protocol import decode_assignment, decode_sticky_user_data, encode_sticky_user_data
from assignor.wire import columnar
from tests.budget import examples
from tests.java_hashmap import JavaHashMap

TOPICS = [f"topic-{i}" for i in range(40)] + [f"orders-{i}" for i in range(13)] + ["orders", "payments", "dé", "t" * 30]


def _java_topic_order(partitions: list[TopicPartition]) -> list[str]:
    grouped = JavaHashMap()
    for tp in partitions:
        grouped.compute_if_absent(tp.topic)
    return grouped.keys()


THIRTEEN = [TopicPartition(f"orders-{i}", 0) for i in range(13)]
#: Nine topics in one bucket of a table of 16 (``treeifyBin`` grows it to 32 instead), two of it at 32.
CROWDED = [TopicPartition(name, 0) for name in ("crowd-40", "crowd-6", "crowd-51", "crowd-1509", "crowd-62",
                                               "crowd-1608", "crowd-73", "crowd-1619", "crowd-84")]


def test_a_call_after_the_thirteenth_topic_grows_the_table():
    """13 topics pass three quarters of 16: a 14th call, for a topic already there, grows the
    table to 32 before it runs (the recorded members with 13 or more topics whose bytes differed)."""
    alone = THIRTEEN
    followed = [*THIRTEEN, TopicPartition("orders-12", 1)]
    assert _java_topic_order(alone) == hashmap_order([tp.topic for tp in alone], computed=True)
    java = _java_topic_order(followed)
    assert java != _java_topic_order(alone)  # these names land in other buckets at 32
    assert java == hashmap_order([tp.topic for tp in alone], computed=True, called_after=True)
    assert _first_seen(decode_sticky_user_data(encode_sticky_user_data(followed, 1)).partitions) == java


@st.composite
def members_partitions(draw):
    topics = draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=30, unique=True))
    return [TopicPartition(draw(st.sampled_from(topics)), draw(st.integers(0, 5)))
            for _ in range(draw(st.integers(len(topics), len(topics) + 10)))] if draw(st.booleans()) else \
        [TopicPartition(t, p) for t in topics for p in range(draw(st.integers(1, 2)))]


def _first_seen(partitions: list[TopicPartition]) -> list[str]:
    return list(dict.fromkeys(tp.topic for tp in partitions))


@examples(400)
@given(members_partitions())
@example([*THIRTEEN, TopicPartition("orders-12", 1)])
@example(THIRTEEN)
@example(CROWDED)
def test_the_encoder_lists_topics_as_javas_hashmap_does(partitions):
    partitions = list(dict.fromkeys(partitions))  # a member owns each partition once
    decoded = decode_sticky_user_data(encode_sticky_user_data(partitions, 7)).partitions
    assert _first_seen(decoded) == _java_topic_order(partitions)


@examples(150)
@given(st.lists(members_partitions(), min_size=1, max_size=4))
@example([[*THIRTEEN, TopicPartition("orders-12", 1)], THIRTEEN])
@example([CROWDED, CROWDED[:8], [*CROWDED, TopicPartition("crowd-6", 1)]])
def test_the_columns_list_topics_as_javas_hashmap_does(members):
    members = [list(dict.fromkeys(partitions)) for partitions in members]
    names = sorted({tp.topic for partitions in members for tp in partitions})
    index = {t: i for i, t in enumerate(names)}
    rows = [(m, index[tp.topic], tp.partition) for m, partitions in enumerate(members) for tp in partitions]
    member, topic, partition = (np.array(column, dtype=np.int64) for column in zip(*rows))
    claims = Claims(member, topic, partition, names)
    messages = columnar.encode_assignments(claims, len(members), "sticky", 3, user_data=True).messages()
    for m, partitions in enumerate(members):
        user_data = decode_assignment(messages[m]).user_data
        decoded = decode_sticky_user_data(user_data).partitions
        assert _first_seen(decoded) == _java_topic_order(partitions), m


#: 30 topics in other buckets, then nine sharing one of 64 (``computeIfAbsent`` makes it a red-black
#: tree at the eighth): the order OpenJDK 17 iterated them in (`tests/consumer/test_ordering.py`'s
#: table has the same keys' tree with ``put``; `tests/integration/test_java_hash.py` checks more).
TREE = [f"m-{i}" for i in (0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 19, 20, 21, 22, 23, 24, 25, 26,
                           27, 29, 30, 31, 32, 5, 28, 919, 1006, 1028, 1105, 1127, 1149, 1204)]


def test_a_member_of_many_topics_in_one_bin_lists_them_as_the_tree_iterates():
    """Both writers (the objects' encoder and the leader's columns) list the topics in the
    tree's order, not the plain bin's, for a member alone and beside one of fewer topics."""
    partitions = [TopicPartition(name, 0) for name in TREE]
    java = hashmap_order(TREE, computed=True)
    assert java != _java_topic_order(partitions)  # (the tests' plain model: no trees)
    assert java == [f"m-{i}" for i in (31, 32, 10, 30, 24, 1, 25, 0, 22, 3, 23, 2, 1006, 1149, 1127, 1105, 1204, 1028,
                                        919, 28, 5, 29, 4, 26, 7, 27, 6, 9, 8, 20, 21, 13, 14, 11, 12, 18, 15, 16, 19)]
    assert _first_seen(decode_sticky_user_data(encode_sticky_user_data(partitions, 7)).partitions) == java
    members = [partitions, partitions[:20]]
    names = sorted(TREE)
    rows = [(m, names.index(tp.topic), tp.partition) for m, owned in enumerate(members) for tp in owned]
    member, topic, partition = (np.array(column, dtype=np.int64) for column in zip(*rows))
    messages = columnar.encode_assignments(Claims(member, topic, partition, names), 2, "sticky", 3,
                                           user_data=True).messages()
    listed = [_first_seen(decode_sticky_user_data(decode_assignment(m).user_data).partitions) for m in messages]
    assert listed == [java, hashmap_order(TREE[:20], computed=True)]
