"""Producer partitioners: Java-exact keyed partitioning (murmur2), round-robin, KIP-480 sticky and
KIP-794's built-in partitioner."""

from assignor.partitioners.builtin import BuiltInPartitioner
from assignor.partitioners.keyless import DefaultPartitioner, RoundRobinPartitioner, StickyPartitioner
from assignor.partitioners.murmur import (
    PartitionerError,
    murmur2,
    murmur2_many,
    partition_for_key,
    partitions_for_keys,
)

__all__ = [
    "BuiltInPartitioner",
    "DefaultPartitioner",
    "PartitionerError",
    "RoundRobinPartitioner",
    "StickyPartitioner",
    "murmur2",
    "murmur2_many",
    "partition_for_key",
    "partitions_for_keys",
]
