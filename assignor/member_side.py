"""The member side of a classic consumer group, written once for every client adapter: what one
consumer of ours keeps across rebalances (what it owns, and at which generation), what it sends
when it joins (its Subscription, carrying the owned partitions and the generation where its
protocol carries them: `assignor.protocols`), what it forgets when it loses its partitions, and
how it plans when it leads (its protocol's strategy, `assignor.strategies.strategy_for`, with a
leader cache kept across the rebalances it leads).

The aiokafka and kafka-python assignors are this class and their client's base class: they only
translate their client's calls (`assignor.integrations`).

>>> from assignor.protocol import decode_subscription
>>> from assignor.protocols import COOPERATIVE_STICKY
>>> side = MemberSide(COOPERATIVE_STICKY)
>>> side.strategy, side.rebalance_protocols
('cooperative-sticky', ('eager', 'cooperative'))
>>> side.assigned([("orders", 1), ("orders", 0)], 4)
>>> decode_subscription(side.metadata(["orders"])).owned_partitions
[TopicPartition(topic='orders', partition=0), TopicPartition(topic='orders', partition=1)]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from assignor import leader
from assignor.model import UNKNOWN_GENERATION, TopicPartition
from assignor.protocol import (
    Subscription,
    encode_cooperative_user_data,
    encode_sticky_user_data,
    encode_subscription,
)
from assignor.protocols import Carrier, Protocol, UserData
from assignor.strategies import strategy_for

__all__ = ["COOPERATIVE", "EAGER", "MemberSide"]

#: KIP-429's rebalance protocols, by the names Java's ``RebalanceProtocol`` and kafka-python 3
#: give them: an assignor lists those it supports, and a consumer rebalances cooperatively only
#: when every assignor it offers supports ``cooperative`` (Java's ``ConsumerCoordinator``).
EAGER, COOPERATIVE = "eager", "cooperative"


class MemberSide:
    """One consumer's side of its group under `protocol`.

    Parameters
    ----------
    protocol:
        The protocol the member joins with (``sticky``, ``cooperative-sticky``, ...).
    strategy:
        How it plans when it leads: ours for the protocol (default) or another strategy of the
        same protocol (Java's, to plan as Java's members would); another protocol's is refused.
    rack:
        Its ``client.rack`` (KIP-881), sent in Subscription v3.
    """

    protocol: Protocol

    def __init__(self, protocol: Protocol, strategy: str | None = None, rack: str | None = None) -> None:
        self.protocol = protocol
        self.strategy = strategy_for(protocol, strategy).name
        self.rack = rack
        self.generation = UNKNOWN_GENERATION  # of the last assignment received
        self.owned: list[TopicPartition] | None = None  # None until the first assignment
        # Kept across the rebalances this member leads (the same members, topics and names).
        self.cache = leader.LeaderCache()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(generation={self.generation}, owned={len(self.owned or ())})"

    @property
    def rebalance_protocols(self) -> tuple[str, ...]:
        """The rebalance protocols it supports (KIP-429): eager, and cooperative when its
        protocol is."""
        return (EAGER, COOPERATIVE) if self.protocol.cooperative else (EAGER,)

    def metadata(self, topics: Iterable[str], *, eager: bool = False) -> bytes:
        """JoinGroup metadata: Subscription v3 with its topics, generation and rack; what it owns
        where its protocol carries it: in the sticky user data (KIP-54: an eager member revoked
        everything, and a member never assigned sends none), in the subscription under a
        cooperative protocol, with the generation as user data (KIP-429). `eager`: it joins a
        rebalance its client runs eagerly (it revoked everything first), and claims nothing."""
        owned: list[TopicPartition] = []
        if self.protocol.cooperative and self.protocol.owned_in is Carrier.SUBSCRIPTION and not eager:
            owned = sorted(self.owned or ())
        user_data = None
        if self.protocol.user_data is UserData.STICKY and self.owned is not None:
            user_data = encode_sticky_user_data(self.owned, self.generation)
        elif self.protocol.user_data is UserData.GENERATION:
            user_data = encode_cooperative_user_data(self.generation)
        return encode_subscription(Subscription(sorted(topics), user_data, owned, self.generation, self.rack))

    def assigned(self, partitions: Iterable[tuple[str, int]], generation: int) -> None:
        """Its new assignment, and the generation it came with, for the next JoinGroup (KIP-341)."""
        self.owned = [TopicPartition(topic, partition) for topic, partition in partitions]
        self.generation = generation

    def lost(self) -> None:
        """It lost its partitions (fenced, or its generation went stale): the next JoinGroup
        claims nothing (KIP-429), as Java's ``ConsumerCoordinator`` resets it."""
        self.owned = []
        self.generation = UNKNOWN_GENERATION

    def lead(self, generation: int, topics: Mapping[str, int], metadata: Mapping[str, bytes],
             instance_ids: Mapping[str, str] | None = None) -> leader.SyncResult:
        """Plan the group as its leader (`leader.sync`), from every member's metadata as sent and
        the static members' ``group.instance.id`` as the JoinGroup response lists them (v5+)."""
        return leader.sync(self.protocol.name, generation, topics, metadata, cache=self.cache, strategy=self.strategy,
                           instance_ids=instance_ids)
