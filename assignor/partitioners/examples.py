"""Two custom partitioners built on the plug-in interface: routing by region and by priority.

Both keep Java's placement *within* their slice of partitions (murmur2 of the key), so records
with one key stay in order inside their region or priority band.

Examples
--------
>>> from assignor.partitioners.plugin import Cluster, Record, choose, create
>>> region = create("region", {"region.partition.mapping": "US:0-2,EU:3-5,APAC:6-8"})
>>> choose(region, Record("orders", b"user-1", {"region": "EU"}), Cluster({"orders": 9})) in (3, 4, 5)
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assignor.partitioners.interface import Cluster, Partitioner, Record
from assignor.partitioners.murmur import PartitionerError, partition_for_key

__all__ = ["EXAMPLES", "PriorityPartitioner", "RegionPartitioner", "parse_mapping"]


def parse_mapping(text: Any, setting: str) -> dict[str, list[int]]:
    """``"US:0-2,EU:3-5"`` -> ``{"US": [0, 1, 2], "EU": [3, 4, 5]}`` (ranges inclusive, or single ids)."""
    if not isinstance(text, str) or not text.strip():
        raise PartitionerError(f"{setting}: expected NAME:FIRST-LAST,..., got {text!r}")
    mapping: dict[str, list[int]] = {}
    for item in text.split(","):
        name, _, spec = item.strip().partition(":")
        try:
            first, _, last = spec.partition("-")
            low, high = int(first), int(last or first)
        except ValueError:
            raise PartitionerError(f"{setting}: {item.strip()!r} is not NAME:FIRST-LAST") from None
        if not name or low < 0 or high < low:
            raise PartitionerError(f"{setting}: {item.strip()!r} is not NAME:FIRST-LAST with 0 <= FIRST <= LAST")
        if name in mapping:
            raise PartitionerError(f"{setting}: {name!r} appears twice")
        mapping[name] = list(range(low, high + 1))
    return mapping


def _field(value: Any, name: str) -> Any:
    """`name` from a record value that is a mapping or an object with that attribute."""
    if isinstance(value, Mapping):
        return value.get(name)
    return getattr(value, name, None)


def _slot(key: bytes | None, size: int) -> int:
    return 0 if key is None else partition_for_key(key, size)


def _check_fits(mapping: dict[str, list[int]], count: int, setting: str, topic: str) -> None:
    highest = max(p for partitions in mapping.values() for p in partitions)
    if highest >= count:
        raise PartitionerError(f"{setting}: partition {highest} does not exist in topic {topic!r} "
                               f"({count} partitions)")


class RegionPartitioner(Partitioner):
    """Records carry a ``region``; each region owns a range of partitions
    (``region.partition.mapping``). A record of an unknown or missing region may go to any
    partition. Keys hash within the region's range; keyless records take turns over it."""

    def configure(self, config: Mapping[str, Any]) -> None:
        self.mapping = parse_mapping(config.get("region.partition.mapping"), "region.partition.mapping")
        self._turns: dict[tuple[str, str], int] = {}

    def partition(self, record: Record, cluster: Cluster) -> int:
        count = cluster.partition_count(record.topic)
        _check_fits(self.mapping, count, "region.partition.mapping", record.topic)
        region = _field(record.value, "region")
        partitions = self.mapping.get(region) if isinstance(region, str) else None
        if partitions is None:
            partitions = list(range(count))
        if record.key is not None:
            return partitions[_slot(record.key, len(partitions))]
        turn = self._turns.get((record.topic, str(region)), 0)
        self._turns[(record.topic, str(region))] = turn + 1
        return partitions[turn % len(partitions)]


class PriorityPartitioner(Partitioner):
    """Records carry a ``priority``; each priority owns a band of partitions
    (``priority.partition.mapping``, default ``HIGH:0-1,NORMAL:2-7,LOW:8-9``), so consumers of
    the high band are never stuck behind a backlog of low-priority records. Keys hash within the
    band (a keyless record takes the band's first partition, as hash 0); an unknown priority
    hashes over the whole topic."""

    DEFAULT = "HIGH:0-1,NORMAL:2-7,LOW:8-9"

    def configure(self, config: Mapping[str, Any]) -> None:
        self.mapping = parse_mapping(config.get("priority.partition.mapping", self.DEFAULT),
                                     "priority.partition.mapping")

    def partition(self, record: Record, cluster: Cluster) -> int:
        count = cluster.partition_count(record.topic)
        _check_fits(self.mapping, count, "priority.partition.mapping", record.topic)
        priority = _field(record.value, "priority")
        band = self.mapping.get(str(priority).upper()) if priority is not None else None
        if band is None:
            return _slot(record.key, count)
        return band[_slot(record.key, len(band))]


#: The examples by the name the registry (`assignor.partitioners.plugin`) gives them.
EXAMPLES: dict[str, type[Partitioner]] = {"region": RegionPartitioner, "priority": PriorityPartitioner}
