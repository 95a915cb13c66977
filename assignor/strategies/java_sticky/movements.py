"""Java's ``AbstractStickyAssignor.PartitionMovements``: the moves made so far in one rebalance,
by partition and by topic and (source, destination) pair. When a partition is to move from A to
B while another partition of its topic already moved from B to A, Java moves that one back
instead (so that no topic's partitions swap between two members); which one it takes is the
first of a ``HashSet<TopicPartition>``, so `JavaHashSet` keeps Java's iteration order.
"""

from __future__ import annotations

from assignor.model import TopicPartition
from assignor.ordering import partition_hash_of, spread, string_hash

__all__ = ["JavaHashSet", "Movements"]


class JavaHashSet:
    """A ``java.util.HashSet<TopicPartition>`` reduced to what the movements need: add, remove
    and the first element in Java's iteration order (by bucket, then insertion within a
    bucket). The table starts at 16 and doubles past three quarters full, or early when a
    bucket reaches nine entries in a table under 64 (treeifyBin); it never shrinks.
    """

    __slots__ = ("_entries", "_seq", "_size", "_counts", "_topic_hashes")

    def __init__(self, topic_hashes: dict[str, int] | None = None) -> None:
        # topic -> String.hashCode, shared by the sets of one rebalance (`Movements`)
        self._topic_hashes = {} if topic_hashes is None else topic_hashes
        self._entries: dict[TopicPartition, tuple[int, int]] = {}  # tp -> (spread hash, insertion)
        self._seq = 0
        self._size = 16
        self._counts: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, tp: object) -> bool:
        return tp in self._entries

    def add(self, tp: TopicPartition) -> None:
        if tp in self._entries:
            return
        topic_hash = self._topic_hashes.get(tp.topic)
        if topic_hash is None:
            topic_hash = self._topic_hashes[tp.topic] = string_hash(tp.topic)
        h = spread(partition_hash_of(topic_hash, tp.partition))
        self._entries[tp] = (h, self._seq)
        self._seq += 1
        bucket = h & (self._size - 1)
        self._counts[bucket] = self._counts.get(bucket, 0) + 1
        if self._counts[bucket] > 8 and self._size < 64:
            self._grow()
        if len(self._entries) > self._size * 3 // 4:
            self._grow()

    def discard(self, tp: TopicPartition) -> None:
        found = self._entries.pop(tp, None)
        if found is not None:
            self._counts[found[0] & (self._size - 1)] -= 1

    def first(self) -> TopicPartition:
        """The element ``iterator().next()`` returns."""
        mask = self._size - 1
        entries = self._entries
        return min(entries, key=lambda tp: (entries[tp][0] & mask, entries[tp][1]))

    def _grow(self) -> None:
        self._size *= 2
        mask = self._size - 1
        counts: dict[int, int] = {}
        for h, _ in self._entries.values():
            counts[h & mask] = counts.get(h & mask, 0) + 1
        self._counts = counts


class Movements:
    """Moves so far: partition -> (source, destination), and per topic per pair the partitions."""

    def __init__(self) -> None:
        self.pair_of: dict[TopicPartition, tuple[str, str]] = {}
        self.by_topic: dict[str, dict[tuple[str, str], JavaHashSet]] = {}
        self._topic_hashes: dict[str, int] = {}  # this rebalance's topics, hashed once each

    def _forget(self, tp: TopicPartition) -> tuple[str, str]:
        pair = self.pair_of.pop(tp)
        pairs = self.by_topic[tp.topic]
        pairs[pair].discard(tp)
        if not len(pairs[pair]):
            del pairs[pair]
        if not pairs:
            del self.by_topic[tp.topic]
        return pair

    def _record(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self.pair_of[tp] = pair
        pairs = self.by_topic.setdefault(tp.topic, {})
        found = pairs.get(pair)
        if found is None:
            found = pairs[pair] = JavaHashSet(self._topic_hashes)
        found.add(tp)

    def move(self, tp: TopicPartition, old: str, new: str) -> None:
        """Java's ``movePartition``: a partition moving back to where it came from leaves no record."""
        if tp in self.pair_of:
            source, _ = self._forget(tp)
            if source != new:
                self._record(tp, (source, new))
        else:
            self._record(tp, (old, new))

    def to_move(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        """Java's ``getTheActualPartitionToBeMoved``: `tp`, or a partition of its topic that
        already moved from `new` to (the original owner of) `tp`."""
        pairs = self.by_topic.get(tp.topic)
        if pairs is None:
            return tp
        if tp in self.pair_of:
            old = self.pair_of[tp][0]
        back = pairs.get((new, old))
        return tp if back is None else back.first()
