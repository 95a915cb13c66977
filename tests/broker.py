"""The tests' broker: `bench.broker` (the rebalance bench starts the same one), and a group's own
settings on it."""

from bench.broker import CONSUMER_SETTINGS, Broker, BrokerError, free_port

__all__ = ["CONSUMER_SETTINGS", "Broker", "BrokerError", "free_port", "set_assignment_interval"]


def set_assignment_interval(bootstrap: str, group: str, ms: int) -> None:
    """The group's own ``consumer.assignment.interval.ms`` (a group config, KIP-848: the broker's
    ``group.consumer.assignment.interval.ms`` for this group), through librdkafka's admin client."""
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    admin = AdminClient({"bootstrap.servers": bootstrap, "broker.address.family": "v4"})
    entry = ConfigEntry("consumer.assignment.interval.ms", str(ms), incremental_operation=AlterConfigOpType.SET)
    for future in admin.incremental_alter_configs([ConfigResource(ResourceType.GROUP, group,
                                                                  incremental_configs=[entry])]).values():
        future.result(timeout=30)
