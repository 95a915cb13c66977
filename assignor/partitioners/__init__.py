"""Producer partitioners: Java-exact keyed partitioning (murmur2), round-robin and KIP-480 sticky."""

from assignor.partitioners.keyless import DefaultPartitioner, RoundRobinPartitioner, StickyPartitioner
from assignor.partitioners.murmur import (
    PartitionerError,
    murmur2,
    murmur2_many,
    partition_for_key,
    partitions_for_keys,
)

__all__ = [
    "DefaultPartitioner",
    "PartitionerError",
    "RoundRobinPartitioner",
    "StickyPartitioner",
    "murmur2",
    "murmur2_many",
    "partition_for_key",
    "partitions_for_keys",
]
