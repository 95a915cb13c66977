"""The tests' broker: `bench.broker` (the rebalance bench starts the same one)."""

from bench.broker import CONSUMER_SETTINGS, Broker, BrokerError, free_port

__all__ = ["CONSUMER_SETTINGS", "Broker", "BrokerError", "free_port"]
