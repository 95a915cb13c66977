"""A small plug-in interface for custom partitioners, shaped like Java's ``Partitioner``.

A partitioner is a class with ``partition(record, cluster) -> int`` and optional
``configure(config)``, ``on_new_batch(topic, cluster, prev_partition)`` and ``close()``.
Register it under a name and create it by name with its configuration::

    @register("by-tenant")
    class TenantPartitioner(Partitioner):
        def partition(self, record, cluster):
            return hash_of(record.value["tenant"]) % cluster.partition_count(record.topic)

    partitioner = create("by-tenant", {"some.setting": "x"})
    partition = choose(partitioner, Record("orders", b"key", value), cluster)

`choose` is how callers should ask: it checks the answer is a partition of the topic and names
the partitioner when it is not. The built-in partitioners are registered too (`names()`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from assignor.partitioners import examples
from assignor.partitioners.builtin import BuiltInPartitioner
from assignor.partitioners.interface import Cluster, Partitioner, Record
from assignor.partitioners.keyless import DefaultPartitioner, RoundRobinPartitioner, StickyPartitioner
from assignor.partitioners.librdkafka import LIBRDKAFKA_PARTITIONERS, LibrdkafkaPartitioner
from assignor.partitioners.murmur import PartitionerError

__all__ = ["Cluster", "Partitioner", "Record", "choose", "create", "names", "register"]


_REGISTRY: dict[str, Callable[[], Partitioner]] = {}


def register(name: str) -> Callable[[type[Partitioner]], type[Partitioner]]:
    """Class decorator: make the partitioner available to `create` under `name`."""

    def decorate(cls: type[Partitioner]) -> type[Partitioner]:
        if name in _REGISTRY:
            raise PartitionerError(f"a partitioner named {name!r} is already registered")
        _REGISTRY[name] = cls
        return cls

    return decorate


def names() -> list[str]:
    return sorted(_REGISTRY)


def create(name: str, config: Mapping[str, Any] | None = None) -> Partitioner:
    """A configured instance of the partitioner registered as `name`."""
    factory = _REGISTRY.get(name)
    if factory is None:
        raise PartitionerError(f"unknown partitioner {name!r}; registered: {', '.join(names())}")
    partitioner = factory()
    partitioner.configure(dict(config or {}))
    return partitioner


def choose(partitioner: Partitioner, record: Record, cluster: Cluster) -> int:
    """Ask `partitioner` for `record`'s partition and check the answer."""
    count = cluster.partition_count(record.topic)
    partition = partitioner.partition(record, cluster)
    if not isinstance(partition, int) or isinstance(partition, bool) or not 0 <= partition < count:
        raise PartitionerError(f"partitioner {type(partitioner).__name__} returned {partition!r} for topic "
                               f"{record.topic!r}, which has partitions 0..{count - 1}")
    return partition


# -- the built-in partitioners, under their usual names -----------------------------------------


def _seed(config: Mapping[str, Any]) -> int | None:
    seed = config.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise PartitionerError(f"seed: expected an integer, got {seed!r}")
    return seed


@register("default")
class _JavaDefault(Partitioner):
    """Java's DefaultPartitioner (KIP-480): murmur2 for keys, sticky without."""

    def configure(self, config: Mapping[str, Any]) -> None:
        self._inner = DefaultPartitioner(seed=_seed(config))

    def partition(self, record: Record, cluster: Cluster) -> int:
        return self._inner.partition(record.topic, record.key, cluster.partition_count(record.topic),
                                     cluster.available_partitions(record.topic))

    def on_new_batch(self, topic: str, cluster: Cluster, prev_partition: int) -> None:
        self._inner.on_new_batch(topic, cluster.partition_count(topic), prev_partition,
                                 cluster.available_partitions(topic))


@register("uniform_sticky")
class _UniformSticky(Partitioner):
    """Java's UniformStickyPartitioner: sticky for every record, keys ignored."""

    def configure(self, config: Mapping[str, Any]) -> None:
        self._inner = StickyPartitioner(seed=_seed(config))

    def partition(self, record: Record, cluster: Cluster) -> int:
        return self._inner.partition(record.topic, cluster.partition_count(record.topic),
                                     cluster.available_partitions(record.topic))

    def on_new_batch(self, topic: str, cluster: Cluster, prev_partition: int) -> None:
        self._inner.on_new_batch(topic, cluster.partition_count(topic), prev_partition,
                                 cluster.available_partitions(topic))


@register("roundrobin")
class _RoundRobin(Partitioner):
    """Java's RoundRobinPartitioner (without the KAFKA-9965 double count)."""

    def configure(self, config: Mapping[str, Any]) -> None:
        self._inner = RoundRobinPartitioner()

    def partition(self, record: Record, cluster: Cluster) -> int:
        return self._inner.partition(record.topic, cluster.partition_count(record.topic),
                                     cluster.available_partitions(record.topic))


@register("builtin")
class _BuiltIn(Partitioner):
    """KIP-794's built-in partitioner; config keys as Java's: ``batch.size``,
    ``partitioner.adaptive.partitioning.enable``, ``partitioner.availability.timeout.ms``,
    ``partitioner.ignore.keys``. Feed it appends and load through `inner`."""

    def configure(self, config: Mapping[str, Any]) -> None:
        self.inner = BuiltInPartitioner(
            int(config.get("batch.size", 16384)),
            adaptive=bool(config.get("partitioner.adaptive.partitioning.enable", True)),
            availability_timeout_ms=float(config.get("partitioner.availability.timeout.ms", 0)),
            ignore_keys=bool(config.get("partitioner.ignore.keys", False)), seed=_seed(config))

    def partition(self, record: Record, cluster: Cluster) -> int:
        return self.inner.partition(record.topic, record.key, cluster.partition_count(record.topic),
                                    cluster.available_partitions(record.topic))


def _librdkafka(name: str) -> type[Partitioner]:
    class _Librdkafka(Partitioner):
        __doc__ = f"librdkafka's {name!r} partitioner (``sticky.partitioning.linger.ms`` for NULL keys)."

        def configure(self, config: Mapping[str, Any]) -> None:
            self._inner = LibrdkafkaPartitioner(name, seed=_seed(config),
                                                sticky_linger_ms=float(config.get("sticky.partitioning.linger.ms",
                                                                                  10.0)))

        def partition(self, record: Record, cluster: Cluster) -> int:
            return self._inner.partition(record.topic, record.key, cluster.partition_count(record.topic),
                                         cluster.available_partitions(record.topic))

    _Librdkafka.__name__ = f"Librdkafka_{name}"
    return _Librdkafka


for _name in LIBRDKAFKA_PARTITIONERS:
    register(f"librdkafka:{_name}")(_librdkafka(_name))

# The example partitioners ("region", "priority"), as a user's plug-ins would be registered.
for _name, _example in examples.EXAMPLES.items():
    register(_name)(_example)
