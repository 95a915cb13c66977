"""The two steps of Java's sticky assignor that look at every claim or every partition of a
large group, in columns: whether the members' claims can all be kept as they are
(`member_data._all_whole`), and which partitions the constrained builder still has to deal
(`constrained._Builder._unassigned`). A claim becomes its partition's place in a flat numbering
(topic by topic in Java's order, partitions ascending) and one mark per partition answers both:
no set of a million `TopicPartition` tuples, each hashed as a tuple, and only the partitions
left over made as objects. The marks the first step makes serve the second (what the builder
keeps is what was claimed, less what it did not keep). At 2,000 members and a million
partitions (the uniform leave10 row of the java bench) the two steps took 0.68 s in sets.

Each answers only what columns can tell for sure, and None otherwise: a claim that is not
exactly a `TopicPartition` of a str and an int, or one of a partition its topic does not have
(Java's walk then does something of its own). The caller then takes its plain steps, which the
property tests in ``tests/consumer/test_java_sticky.py`` hold these to.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np

from assignor.model import TopicPartition, claim_columns, topic_partitions_at

__all__ = ["COLUMNS_FROM", "Marks", "claimed", "every_partition", "unclaimed"]

#: From this many claims on, the columns answer (below it numpy's fixed cost, tens of
#: microseconds, is more than the sets take: a what-if step of a small group).
COLUMNS_FROM = 4096

#: One mark per partition of the group's topics, numbered topic by topic in Java's order
#: (`ordering.java_sorted`), partitions ascending.
Marks = np.ndarray


def _offsets(order: list[str], topics: dict[str, int]) -> np.ndarray:
    """Where each topic of `order` starts in the flat numbering, and (last) the total."""
    return np.concatenate(([0], np.cumsum(np.array([topics[name] for name in order], dtype=np.int64))))


def _made(order: list[str], offsets: np.ndarray, flat: np.ndarray) -> list[TopicPartition]:
    """The partitions at places `flat` of the numbering (`_offsets`), as objects."""
    topic = np.searchsorted(offsets, flat, side="right") - 1
    return topic_partitions_at(order, topic, flat - offsets[topic])


def every_partition(order: list[str], topics: dict[str, int]) -> list[TopicPartition]:
    """Every partition of `topics`, topic by topic in `order`, partitions ascending."""
    offsets = _offsets(order, topics)
    return _made(order, offsets, np.arange(int(offsets[-1])))


def _flat(claims: Sequence[Sequence[object]], order: list[str], offsets: np.ndarray) -> np.ndarray | None:
    """Each claim's place in the numbering (`_offsets` of `order`; -1 for a topic not there);
    None when a claim is not a plain `TopicPartition` or names a partition its topic does not
    have."""
    read = claim_columns(list(claims), {name: i for i, name in enumerate(order)})
    if read is None:
        return None
    topic, partition = read
    counts = np.diff(offsets)
    known = topic >= 0
    if (partition[known] < 0).any() or (partition[known] >= counts[topic[known]]).any():
        return None
    return np.where(known, offsets[np.where(known, topic, 0)] + partition, -1)


def claimed(owned: Sequence[Sequence[object]], order: list[str], topics: dict[str, int]
            ) -> Marks | Literal[False] | None:
    """The partitions claimed (`owned`: each member's claims, or the builder's kept ones as
    one list; `order`: `topics` in Java's order) when every claim is of a topic in `topics` and
    none twice; False when one is not, or one is twice; None where columns cannot tell (see
    the module)."""
    offsets = _offsets(order, topics)
    flat = _flat(owned, order, offsets)
    if flat is None:
        return None
    if (flat < 0).any():
        return False
    marks = np.zeros(int(offsets[-1]), dtype=bool)
    marks[flat] = True
    return marks if int(np.count_nonzero(marks)) == len(flat) else False


def unclaimed(marks: Marks, order: list[str], topics: dict[str, int],
              given_back: Iterable[TopicPartition] = ()) -> list[TopicPartition] | None:
    """Every partition not marked, or `given_back` (claimed, not kept), in the numbering's
    order; None where columns cannot tell (see the module)."""
    offsets = _offsets(order, topics)
    free = ~marks
    back = list(given_back)
    if back:
        flat = _flat([back], order, offsets)
        if flat is None or (flat < 0).any():
            return None
        free[flat] = True
    return _made(order, offsets, np.flatnonzero(free))
