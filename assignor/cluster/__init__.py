"""Reading live groups from a running cluster, read-only: connection settings by Kafka's names
(`assignor.cluster.settings`), a client of the few requests it needs (`assignor.cluster.client`)
and the snapshot they make, in the group JSON this project reads (`assignor.cluster.snapshot`)."""

from assignor.cluster.settings import ClientSettings, read_properties, settings_of
from assignor.cluster.snapshot import read_snapshot, read_summaries, snapshot

__all__ = ["ClientSettings", "read_properties", "read_snapshot", "read_summaries", "settings_of", "snapshot"]
