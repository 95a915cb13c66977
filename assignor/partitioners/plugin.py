"""The plug-in partitioner interface and registry, by the path the README has always shown
(`assignor.producer.plugin` is where it lives)."""

from assignor.producer.plugin import Cluster, Partitioner, Record, choose, create, names, register

__all__ = ["Cluster", "Partitioner", "Record", "choose", "create", "names", "register"]
