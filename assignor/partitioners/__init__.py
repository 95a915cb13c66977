"""Producer partitioners: Java-exact keyed partitioning (murmur2), round-robin, KIP-480 sticky,
KIP-794's built-in partitioner, librdkafka's partitioners, and a plug-in interface
(`assignor.partitioners.plugin`, examples in `assignor.partitioners.examples`)."""

from assignor.partitioners.builtin import BuiltInPartitioner
from assignor.partitioners.keyless import DefaultPartitioner, RoundRobinPartitioner, StickyPartitioner
from assignor.partitioners.librdkafka import LibrdkafkaPartitioner, fnv1a, partition_function
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
    "LibrdkafkaPartitioner",
    "PartitionerError",
    "RoundRobinPartitioner",
    "StickyPartitioner",
    "fnv1a",
    "murmur2",
    "murmur2_many",
    "partition_for_key",
    "partition_function",
    "partitions_for_keys",
]
