"""The producer side: where a producer puts each record. Java-exact keyed partitioning
(`murmur`), round-robin and KIP-480 sticky (`keyless`), KIP-794's built-in partitioner
(`builtin`), librdkafka's partitioners (`librdkafka`), the plug-in interface and registry
(`interface`, `plugin`, `examples`), and a discrete-event simulator of a producer and its
brokers (`simulate`, `simulate_plot`). It imports nothing of the consumer side."""

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
