"""The classic consumer protocols a group rebalances under, as data: what each one *is*.

A member names its protocols in JoinGroup; the broker picks one for the group, and the leader
plans under it. What differs between protocols is written here once, as fields, and the rest of
the code (the wire, the leader, what-if, the oracle, the service) reads those fields; it never
compares a protocol's name (Kafka's ``AbstractStickyAssignor`` puts every difference between
its two sticky protocols behind one hook, ``memberData(Subscription)``; this is that hook as
data).

==========================  ========  ==================  =====================  ==============
protocol                    KIP-429   user data           owned partitions       generation
==========================  ========  ==================  =====================  ==============
``range``, ``roundrobin``   eager     none                subscription (empty)   subscription
``sticky``                  eager     sticky (KIP-54)     sticky user data       user data only
``cooperative-sticky``      yes       INT32 generation    subscription (v1+)     subscription,
                                                                                 else user data
==========================  ========  ==================  =====================  ==============

Examples
--------
>>> protocol_named("cooperative-sticky").cooperative
True
>>> protocol_named("sticky").owned_in
<Carrier.USER_DATA: 'user_data'>
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

from assignor.errors import UnknownProtocolError
from assignor.model import UNKNOWN_GENERATION

__all__ = ["CONSUMER", "COOPERATIVE_STICKY", "PROTOCOLS", "RANGE", "ROUNDROBIN", "STICKY", "Carrier", "Protocol",
           "UserData",
           "protocol_named", "resolve"]


class UserData(Enum):
    """What a protocol's members put in their Subscription's user data."""

    #: Nothing (null).
    NONE = "none"
    #: KIP-54's sticky user data: the previous assignment (V0), then its generation (V1, KIP-341).
    STICKY = "sticky"
    #: KIP-429's cooperative-sticky user data: the generation, one INT32.
    GENERATION = "generation"


class Carrier(Enum):
    """Where in a JoinGroup subscription a value travels."""

    SUBSCRIPTION = "subscription"  # its own field (owned partitions v1+, generation v2+)
    USER_DATA = "user_data"  # inside the protocol's user data


@dataclass(frozen=True, slots=True)
class Protocol:
    """One consumer protocol.

    Parameters
    ----------
    name : str
        The name members send in JoinGroup.
    cooperative : bool
        KIP-429: members keep what they own while the group rebalances, and a partition reaches
        its new owner only once its old owner revoked it (a second round). Else eager: every
        member revokes everything before it joins.
    user_data : UserData
        What members put in the Subscription's user data.
    owned_in : Carrier
        Where the leader reads what a member owned. Eager members revoked everything before
        joining, so a Subscription's own owned partitions are empty from them; the sticky user
        data carries the previous assignment all the same (KIP-54).
    generation_in : tuple of Carrier
        Where the leader reads a member's generation, first choice first: a carrier that says
        nothing (absent, or negative: Java's ``Optional.empty()``) passes to the next.
    assignment_user_data : bool
        A leader of ours can write each member's sticky user data into its SyncGroup assignment
        too, when asked (``leader.sync(..., assignment_user_data=True)``), so a member learns its
        generation from it (KIP-341). By default it writes none, as Java's leaders.
    classic : bool
        A classic protocol: members join with JoinGroup, a leader plans, SyncGroup carries the
        plan. False for KIP-848's consumer protocol (`CONSUMER`): the broker plans the target
        assignment and members converge to it through heartbeats, a partition reaching its new
        owner only after its previous owner revoked it. Nothing is planned on the wire for it.
    """

    name: str
    cooperative: bool
    user_data: UserData
    owned_in: Carrier
    generation_in: tuple[Carrier, ...]
    assignment_user_data: bool = False
    classic: bool = True

    def __str__(self) -> str:
        return self.name

    @property
    def owned_sent_in(self) -> Carrier | None:
        """Where a member puts what it owns when it joins: None for an eager protocol whose user
        data has no room for it (its members revoked everything before joining)."""
        if self.owned_in is Carrier.USER_DATA or self.cooperative:
            return self.owned_in
        return None

    def generation(self, subscribed: np.ndarray | int, from_user_data: np.ndarray | int) -> np.ndarray:
        """Each member's generation from the two places it can travel, by `generation_in`: the
        Subscription's ``generation_id`` and the one in the user data (-1 where it has none).
        Negative reads as unknown (-1).

        Examples
        --------
        >>> protocol_named("cooperative-sticky").generation(np.array([-1, 4]), np.array([3, 3])).tolist()
        [3, 4]
        >>> protocol_named("sticky").generation(np.array([-1, 4]), np.array([3, -1])).tolist()
        [3, -1]
        """
        found = np.empty(subscribed.shape if isinstance(subscribed, np.ndarray) else (), dtype=np.int64)
        found.fill(UNKNOWN_GENERATION)  # (np.full and np.shape: twice the time, every rebalance of a what-if)
        for carrier in reversed(self.generation_in):
            value = subscribed if carrier is Carrier.SUBSCRIPTION else from_user_data
            found = np.where(np.asarray(value) >= 0, value, found)
        return found


RANGE = Protocol("range", cooperative=False, user_data=UserData.NONE, owned_in=Carrier.SUBSCRIPTION,
                 generation_in=(Carrier.SUBSCRIPTION,))
ROUNDROBIN = Protocol("roundrobin", cooperative=False, user_data=UserData.NONE, owned_in=Carrier.SUBSCRIPTION,
                      generation_in=(Carrier.SUBSCRIPTION,))
#: StickyAssignor.memberData: owned partitions and the generation from the user data alone, even
#: where a Subscription v2+ generation says otherwise.
STICKY = Protocol("sticky", cooperative=False, user_data=UserData.STICKY, owned_in=Carrier.USER_DATA,
                  generation_in=(Carrier.USER_DATA,), assignment_user_data=True)
#: CooperativeStickyAssignor.memberData: the Subscription's generation when known, else the user
#: data's (KIP-429, KIP-792).
COOPERATIVE_STICKY = Protocol("cooperative-sticky", cooperative=True, user_data=UserData.GENERATION,
                              owned_in=Carrier.SUBSCRIPTION, generation_in=(Carrier.SUBSCRIPTION, Carrier.USER_DATA))

#: KIP-848's consumer rebalance protocol (``group.protocol=consumer``): not a classic protocol (no
#: JoinGroup, no leader, no user data), so not in `PROTOCOLS`. Its plans are targets the broker's
#: reconciliation hands over safely, so the oracle reads them as complete plans (not cooperative).
CONSUMER = Protocol("consumer", cooperative=False, user_data=UserData.NONE, owned_in=Carrier.SUBSCRIPTION,
                    generation_in=(Carrier.SUBSCRIPTION,), classic=False)

#: Every classic consumer protocol we plan for, by name: the one place their names are written.
PROTOCOLS: dict[str, Protocol] = {p.name: p for p in (RANGE, ROUNDROBIN, STICKY, COOPERATIVE_STICKY)}


def protocol_named(name: object) -> Protocol:
    """The registered protocol of this name.

    Raises
    ------
    UnknownProtocolError
        When no protocol has this name.
    """
    found = PROTOCOLS.get(name) if isinstance(name, str) else None
    if found is None:
        raise UnknownProtocolError(f"unknown protocol {name!r}; known: {', '.join(sorted(PROTOCOLS))}")
    return found


def resolve(protocol: Protocol | str) -> Protocol:
    """`protocol` as an object: a registered one by name, or, for a name we do not know (a
    client's own assignor), a protocol read by its Subscription's fields alone: eager, no user
    data, owned partitions and generation where the Subscription carries them."""
    if isinstance(protocol, Protocol):
        return protocol
    if isinstance(protocol, str) and protocol not in PROTOCOLS:
        return Protocol(protocol, cooperative=False, user_data=UserData.NONE, owned_in=Carrier.SUBSCRIPTION,
                        generation_in=(Carrier.SUBSCRIPTION,))
    return protocol_named(protocol)

