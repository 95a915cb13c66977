"""Producer partitioners: Java-exact keyed partitioning (murmur2), round-robin, KIP-480 sticky,
KIP-794's built-in partitioner, librdkafka's partitioners, and a plug-in interface
(`assignor.producer.plugin`, examples in `assignor.producer.examples`)."""

from assignor.producer.builtin import BuiltInPartitioner
from assignor.producer.keyless import DefaultPartitioner, RoundRobinPartitioner, StickyPartitioner
from assignor.producer.librdkafka import LibrdkafkaPartitioner, fnv1a, partition_function
from assignor.producer.murmur import (
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
