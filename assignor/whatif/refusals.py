"""When Kafka refuses to convert a classic group online, and what to change.

The first member that comes back under the consumer protocol converts the classic group
(``GroupMetadataManager.getOrMaybeCreateConsumerGroup`` -> ``convertToConsumerGroup``), unless,
in Apache Kafka 4.3.1:

- ``group.consumer.migration.policy`` does not allow upgrades (``disabled`` or ``downgrade``;
  the default ``bidirectional`` and ``upgrade`` do): ``validateOnlineUpgrade``;
- the classic group has more members than ``group.consumer.max.size`` allows (default
  ``Integer.MAX_VALUE``): ``validateOnlineUpgrade``;
- a member's assignment (what the classic leader sent it in SyncGroup) carries user data, which
  the consumer protocol has no place for (KAFKA-18134): ``ConsumerGroup.fromClassicGroup``. Java's
  assignors write none; ours writes none unless asked (``leader.sync(...,
  assignment_user_data=True)``); librdkafka's leader writes each member's subscription user data
  back, which under ``cooperative-sticky`` is the sticky user data of a member assigned before
  (so a rehearsal from ``librdkafka-cooperative-sticky`` is refused once the classic group has
  rebalanced: `Strategy.assignment_user_data`); a custom assignor may. A snapshot says whether
  a classic group's assignments carry user data today (``assignment_user_data``).

The member is then answered ``GROUP_ID_NOT_FOUND`` (a Java consumer's poll fails) and the group
stays classic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, TypedDict

from assignor.errors import WhatIfError
from assignor.model import INT32_MAX

__all__ = ["DEFAULT_CONVERSION", "MAX_SIZE_BOUNDS", "POLICIES", "Conversion", "Refusal", "conversion_of"]

#: ``group.consumer.migration.policy``'s values, and whether each allows an online upgrade and
#: an online downgrade (``ConsumerGroupMigrationPolicy``: ``isUpgradeEnabled``,
#: ``isDowngradeEnabled``).
POLICIES = {"bidirectional": (True, True), "upgrade": (True, False), "downgrade": (False, True),
            "disabled": (False, False)}


#: ``group.consumer.max.size``'s range (``atLeast(1)``, an INT config); the service's schema
#: says the same with it.
MAX_SIZE_BOUNDS = (1, INT32_MAX)


class Refusal(TypedDict):
    """Why Kafka refuses the conversion, at which step, and what to change."""

    step: str
    reason: str
    change: str


@dataclass(frozen=True)
class Conversion:
    """What the coordinator checks before converting a classic group.

    Attributes
    ----------
    migration_policy : str
        The broker's ``group.consumer.migration.policy`` (default ``bidirectional``).
    consumer_max_size : int
        The broker's ``group.consumer.max.size`` (default ``Integer.MAX_VALUE``).
    assignment_user_data : bool
        The classic group's leader writes user data into the members' assignments.
    """

    migration_policy: str = "bidirectional"
    consumer_max_size: int = INT32_MAX
    assignment_user_data: bool = False

    def __post_init__(self) -> None:
        if self.migration_policy not in POLICIES:
            raise WhatIfError(f"migration_policy: expected one of {', '.join(POLICIES)}, got "
                              f"{self.migration_policy!r}")
        size, (low, high) = self.consumer_max_size, MAX_SIZE_BOUNDS
        if isinstance(size, bool) or not isinstance(size, int) or not low <= size <= high:
            raise WhatIfError(f"consumer_max_size: expected members in [{low}, {high}] (Kafka's range), got {size!r}")
        if not isinstance(self.assignment_user_data, bool):
            raise WhatIfError(f"assignment_user_data: expected true or false, got {self.assignment_user_data!r}")

    def with_assignment_user_data(self) -> Conversion:
        """These rules, the classic group's assignments carrying user data."""
        return replace(self, assignment_user_data=True)

    def as_described(self, described: Mapping[str, Any] | None) -> Conversion:
        """These rules, the assignments carrying user data where a snapshot of the group
        (`described`: its group JSON) says they do (``assignment_user_data``)."""
        carried = described is not None and described.get("assignment_user_data") is True
        return self.with_assignment_user_data() if carried else self

    @property
    def upgrades(self) -> bool:
        """The policy allows an online upgrade."""
        return POLICIES[self.migration_policy][0]

    @property
    def downgrades(self) -> bool:
        """The policy allows an online downgrade."""
        return POLICIES[self.migration_policy][1]

    def refusal(self, step: str, classic_members: int) -> Refusal | None:
        """Why converting a classic group of `classic_members` members at `step` is refused, or
        None (module docstring, in the coordinator's order of checks)."""
        if not self.upgrades:
            return Refusal(step=step, reason=f"group.consumer.migration.policy={self.migration_policy} allows no "
                                             "online upgrade",
                           change="set group.consumer.migration.policy to upgrade or bidirectional on the brokers")
        if classic_members > self.consumer_max_size:
            return Refusal(step=step, reason=f"the classic group has {classic_members} members, more than "
                                             f"group.consumer.max.size={self.consumer_max_size}",
                           change=f"raise group.consumer.max.size to at least {classic_members}, or shrink the group")
        if self.assignment_user_data:
            return Refusal(step=step, reason="the classic leader writes user data into assignments, which the "
                                             "consumer protocol would lose (KAFKA-18134)",
                           change="move the classic group to an assignor that writes none first (Java's, ours "
                                  "without assignment_user_data, or librdkafka's range or roundrobin)")
        return None


#: Kafka's defaults: a conversion that nothing refuses.
DEFAULT_CONVERSION = Conversion()

#: Each of `Conversion`'s fields and what it is (the CLI's flags, the service's and the fleet
#: job's fields are made from, or held by tests to, these).
SETTINGS: dict[str, str] = {
    "migration_policy": "the brokers' group.consumer.migration.policy (default bidirectional)",
    "consumer_max_size": "the brokers' group.consumer.max.size (default 2147483647)",
    "assignment_user_data": "the classic leader writes user data into assignments (a custom assignor may; "
                            "ours when asked; a snapshot says whether the assignments carry some today), which "
                            "refuses the conversion (KAFKA-18134)",
}


def conversion_of(values: Mapping[str, Any], migrating: bool = True,
                  described: Mapping[str, Any] | None = None) -> Conversion:
    """A `Conversion` from settings by name, those missing or None at Kafka's defaults, but for
    ``assignment_user_data``, which a snapshot of the group (`described`: its group JSON) says
    when not given (``assignment_user_data``: what the members' assignments carry today). Given
    when not `migrating` (a run that converts nothing), a setting is refused: it would be
    silently ignored.

    Examples
    --------
    >>> conversion_of({}, described={"protocol": "classic", "assignment_user_data": True}).assignment_user_data
    True
    >>> conversion_of({"assignment_user_data": False}, described={"assignment_user_data": True}).assignment_user_data
    False
    """
    unknown = sorted(set(values) - set(SETTINGS))
    if unknown:
        raise WhatIfError(f"{unknown[0]}: not a conversion setting (known: {', '.join(SETTINGS)})")
    given = {name: value for name, value in values.items() if value is not None}
    if given and not migrating:
        raise WhatIfError(f"{next(iter(given))}: only in a migration rehearsal (migrate): it decides whether Kafka "
                          "converts the group")
    conversion = Conversion(**given)
    return conversion.as_described(described) if migrating and "assignment_user_data" not in given else conversion
