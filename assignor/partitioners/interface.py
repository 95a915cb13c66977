"""What a plug-in partitioner implements and sees: the `Partitioner` base class, the `Record`
it places and the `Cluster` it may know of (the registry is `assignor.partitioners.plugin`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assignor.partitioners.murmur import PartitionerError

__all__ = ["Cluster", "Partitioner", "Record"]


@dataclass(frozen=True)
class Record:
    topic: str
    key: bytes | None = None
    value: Any = None


@dataclass(frozen=True)
class Cluster:
    """What a partitioner may know of the cluster: partition counts and, per topic, the
    partitions whose leader is available (all of them when a topic is not listed)."""

    partitions: Mapping[str, int]
    available: Mapping[str, Sequence[int]] = field(default_factory=dict)

    def partition_count(self, topic: str) -> int:
        count = self.partitions.get(topic)
        if count is None:
            raise PartitionerError(f"topic {topic!r} has no metadata")
        if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
            raise PartitionerError(f"topic {topic!r}: a topic needs at least one partition, got {count!r}")
        return count

    def available_partitions(self, topic: str) -> Sequence[int] | None:
        return self.available.get(topic)


class Partitioner(ABC):
    """Base class of plug-in partitioners (state per instance)."""

    def configure(self, config: Mapping[str, Any]) -> None:
        """Read settings; raise PartitionerError naming a bad one."""

    @abstractmethod
    def partition(self, record: Record, cluster: Cluster) -> int:
        """The partition for `record`."""

    def on_new_batch(self, topic: str, cluster: Cluster, prev_partition: int) -> None:
        """Called before the producer opens a new batch for `topic` (KIP-480)."""

    def close(self) -> None:
        """Release resources."""
