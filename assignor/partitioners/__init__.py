"""Producer partitioners. This release: Java-exact keyed partitioning (murmur2)."""

from assignor.partitioners.murmur import (
    PartitionerError,
    murmur2,
    murmur2_many,
    partition_for_key,
    partitions_for_keys,
)

__all__ = ["PartitionerError", "murmur2", "murmur2_many", "partition_for_key", "partitions_for_keys"]
