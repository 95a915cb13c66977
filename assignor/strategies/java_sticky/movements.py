"""Java's ``AbstractStickyAssignor.PartitionMovements``: the moves made so far in one rebalance,
by partition and by topic and (source, destination) pair. When a partition is to move from A to
B while another partition of its topic already moved from B to A, Java moves that one back
instead (so that no topic's partitions swap between two members); which one it takes is the
first of a ``HashSet<TopicPartition>``, so each pair's partitions are a `JavaHashMap`, which
iterates as Java's set does, a bin of nine partitions a red-black tree included (nine
partitions of a topic 64 or 128 apart moved between one pair of members).
"""

from __future__ import annotations

from assignor.java_hash import JavaHashMap
from assignor.model import TopicPartition
from assignor.ordering import partition_hash_of, string_hash

__all__ = ["Movements"]


class Movements:
    """Moves so far: partition -> (source, destination), and per topic per pair the partitions."""

    def __init__(self) -> None:
        self.pair_of: dict[TopicPartition, tuple[str, str]] = {}
        self.by_topic: dict[str, dict[tuple[str, str], JavaHashMap[TopicPartition, None]]] = {}
        self._topic_hashes: dict[str, int] = {}  # this rebalance's topics, hashed once each

    def _hash(self, tp: TopicPartition) -> int:
        """``TopicPartition.hashCode``. (A set holds one topic's partitions, whose hashes all
        differ: its tree never compares two of them otherwise, where Java would by identity.)"""
        topic_hash = self._topic_hashes.get(tp.topic)
        if topic_hash is None:
            topic_hash = self._topic_hashes[tp.topic] = string_hash(tp.topic)
        return partition_hash_of(topic_hash, tp.partition)

    def state(self) -> tuple[object, ...]:
        """The moves as the next steps read them: each partition's pair, and each pair's set in
        its iteration order and table size (which partition `to_move` takes)."""
        return (tuple(sorted(self.pair_of.items())),
                tuple((topic, pair, table.capacity, tuple(table)) for topic, pairs in sorted(self.by_topic.items())
                      for pair, table in sorted(pairs.items())))

    def _forget(self, tp: TopicPartition) -> tuple[str, str]:
        pair = self.pair_of.pop(tp)
        pairs = self.by_topic[tp.topic]
        pairs[pair].remove(tp)
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
            found = pairs[pair] = JavaHashMap(self._hash)  # (``new HashSet<>()``)
        found.put(tp)

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
