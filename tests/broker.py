"""The tests' broker: `bench.broker` (the rebalance bench starts the same one)."""

from bench.broker import BINARY, CONSUMER_SETTINGS, Broker, free_port

__all__ = ["BINARY", "CONSUMER_SETTINGS", "Broker", "free_port"]
