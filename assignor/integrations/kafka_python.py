"""Our assignors for kafka-python 3 (extra ``[kafka-python]``), as the assignor instances it takes::

    KafkaConsumer("orders", group_id="g", client_rack="eu-1a",
                  partition_assignment_strategy=[CooperativeStickyAssignor()])

kafka-python 3 (KIP-429 since 3.0) rebalances cooperatively when every assignor offered supports
``COOPERATIVE`` (``supported_protocols()``), calls ``on_assignment(assignment, generation)`` with
the generation, and hands a leader each member's Subscription decoded at its own version (v0-v3:
owned partitions, generation, rack), which we re-encode byte for byte for the core's leader.

- `StickyAssignor` (``sticky``, eager): our globally balanced, fewest-moves plan; the previous
  assignment travels in the sticky user data as Java's ``StickyAssignor`` sends it.
- `CooperativeStickyAssignor` (``cooperative-sticky``): Subscription v3 with the owned
  partitions and the generation; as a leader it withholds a partition that moves until its
  owner has revoked it (the second KIP-429 round).
- ``strategy="java-sticky"`` / ``"java-cooperative-sticky"``: the same protocols planned exactly
  as Java's assignors plan them, so a group mixing these members with Java members plans the
  same whoever leads.

The rack (KIP-881): kafka-python does not hand its ``client_rack`` to assignors (nor keep it
anywhere its coordinator can reach), so give it to ours: ``rack=``, or once after building the
consumer, before its first poll, `adopt_client_rack` (which sets each of our assignors' rack from
the consumer's ``client_rack``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor, RebalanceProtocol
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

from assignor.member_side import COOPERATIVE, EAGER, MemberSide
from assignor.model import UNKNOWN_GENERATION
from assignor.protocols import COOPERATIVE_STICKY, STICKY, Protocol

__all__ = ["CooperativeStickyAssignor", "StickyAssignor", "adopt_client_rack"]


class StickyAssignor(MemberSide, AbstractPartitionAssignor):  # type: ignore[misc]  # kafka-python ships no types
    """Our ``sticky`` (KIP-54/KIP-341) assignor for kafka-python 3, one instance per consumer.

    Parameters
    ----------
    strategy:
        Ours (default) or the Java-faithful strategy of the same protocol.
    rack:
        The consumer's rack; by default the ``client_rack`` of the consumer that joins.
    """

    name = STICKY.name
    protocol: Protocol = STICKY

    def __init__(self, *, strategy: str | None = None, rack: str | None = None) -> None:
        MemberSide.__init__(self, self.protocol, strategy, rack or None)

    def supported_protocols(self) -> list[RebalanceProtocol]:
        """Eager only; `CooperativeStickyAssignor` supports both, as Java's does."""
        return [_REBALANCE_PROTOCOLS[name] for name in self.rebalance_protocols]

    def assign(self, cluster: Any, members: Sequence[Any]) -> dict[str, Any]:
        """Plan the group (leader only): ``{member_id: ConsumerProtocolAssignment}``."""
        raw = {m.member_id: _raw(m.metadata) for m in members}
        subscribed = {topic for m in members for topic in m.metadata.topics}
        topics = {}
        for topic in sorted(subscribed):
            partitions = cluster.partitions_for_topic(topic)
            if partitions:  # no metadata yet: skipped, as Java's assignors do
                topics[topic] = len(partitions)
        generations = [getattr(m.metadata, "generation_id", UNKNOWN_GENERATION) for m in members]
        generation = max([g for g in generations if isinstance(g, int)], default=UNKNOWN_GENERATION) + 1
        # JoinGroupResponseMember carries the static members' instance ids (v5+)
        instance_ids = {m.member_id: m.group_instance_id for m in members
                        if isinstance(getattr(m, "group_instance_id", None), str)}
        return {member: ConsumerProtocolAssignment.decode(data) for member, data in
                self.lead(generation, topics, raw, instance_ids).assignments.items()}

    def on_assignment(self, assignment: Any, generation: int) -> None:
        """Remember our partitions and the generation for the next JoinGroup (KIP-341)."""
        self.assigned(((tp.topic, tp.partition) for tp in assignment.partitions()),
                      generation if isinstance(generation, int) else UNKNOWN_GENERATION)

    def on_partitions_lost(self) -> None:
        """Forget what was lost (fenced, stale generation): the next JoinGroup claims nothing."""
        self.lost()


class CooperativeStickyAssignor(StickyAssignor):
    """Our ``cooperative-sticky`` (KIP-429) assignor for kafka-python 3 (module docstring)."""

    name = COOPERATIVE_STICKY.name
    protocol = COOPERATIVE_STICKY


#: kafka-python's names of KIP-429's rebalance protocols.
_REBALANCE_PROTOCOLS = {EAGER: RebalanceProtocol.EAGER, COOPERATIVE: RebalanceProtocol.COOPERATIVE}


def _raw(metadata: Any) -> bytes:
    """A member's Subscription bytes: kafka-python decoded them at their version and encodes
    them back the same."""
    return bytes(metadata) if isinstance(metadata, bytes | bytearray) else bytes(metadata.encode())


def adopt_client_rack(consumer: Any) -> None:
    """Give each of `consumer`'s assignors of ours without a rack the consumer's ``client_rack``."""
    rack = consumer.config.get("client_rack") or None
    for assignor in consumer.config.get("partition_assignment_strategy", ()):
        if isinstance(assignor, StickyAssignor) and assignor.rack is None:
            assignor.rack = rack
