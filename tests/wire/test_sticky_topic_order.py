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
