"""Time as the group coordinator keeps it, for restarts: whether a restarted member is back before
the coordinator acts on its leave. Then the leave and the return are one rebalance (one target
computation, or one classic generation) in which the new member takes the place of the old one,
and, where the strategy keeps what others hold, gets exactly what its predecessor held.

The inputs are Kafka's settings, with Kafka 4.3's defaults, and how long a restarted member is
away (`Timing.restart_seconds`: from its leave to its first heartbeat or JoinGroup; unset, a
restart is slower than anything here, and its leave is a rebalance of its own).

The rules, read in Apache Kafka 4.3.1's group coordinator (``GroupMetadataManager``):

- **Consumer protocol** (KIP-848). A leave bumps the group epoch and computes nothing
  (``consumerGroupFenceMembers``); the next target is computed at the next heartbeat of a
  consumer-protocol member (``consumerGroupHeartbeat`` -> ``maybeUpdateTargetAssignment``), and
  no earlier than ``group.consumer.assignment.interval.ms`` after the last computation
  (``canComputeNextTargetAssignment``). A classic member's heartbeat never computes one
  (``classicGroupHeartbeatToConsumerGroup``), nor does it rejoin before one is computed. So the
  member is back in time when no other member speaks the consumer protocol, or when it is back
  before both the interval has run out and the first of the other consumer-protocol members'
  heartbeats is expected (``k`` members heartbeating every ``group.consumer.heartbeat.interval.ms``
  with independent phases: the first after the leave is expected after ``interval / (k + 1)``).
  A rolling restart goes on as soon as a member is back with its partitions: right after the
  target that gave them, so each restart finds the interval just started, but the first of a
  run's first event: the group as given is at rest (its last target long ago). A later event
  likewise follows the step before as soon as the group has that step's assignment.
- **Classic protocol**. A LeaveGroup starts a rebalance that completes when every other member
  has rejoined, each after its next heartbeat (the consumer's ``heartbeat.interval.ms``): the
  last of ``k`` expected after ``interval * k / (k + 1)``. A member whose JoinGroup comes before
  joins that rebalance.

These are expectations over heartbeat phases, not bounds: a restart near the threshold goes
either way on a real cluster.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from assignor.errors import WhatIfError
from assignor.model import INT32_MAX

__all__ = ["BOUNDS", "DEFAULT_TIMING", "SETTINGS", "Timing", "timing_of"]


#: Each setting's range: Kafka's for the milliseconds (``atLeast(1)`` for heartbeat intervals,
#: ``atLeast(0)`` for the assignment interval, INT config), and for a restart up to a day (longer
#: is slower than anything here).
BOUNDS: dict[str, tuple[int, int]] = {"restart_seconds": (0, 86_400), "consumer_heartbeat_ms": (1, INT32_MAX),
                                      "classic_heartbeat_ms": (1, INT32_MAX), "assignment_interval_ms": (0, INT32_MAX),
                                      "session_timeout_ms": (1, INT32_MAX)}


@dataclass(frozen=True)
class Timing:
    """How long a restarted member is away, and the settings that decide what happens meanwhile.

    Attributes
    ----------
    restart_seconds : float or None
        From a member's leave to its first heartbeat (consumer protocol) or JoinGroup (classic)
        after it restarts; None: slower than any rebalance (each leave rebalances on its own).
    consumer_heartbeat_ms : int
        The broker's ``group.consumer.heartbeat.interval.ms`` (default 5000).
    classic_heartbeat_ms : int
        The classic consumers' ``heartbeat.interval.ms`` (default 3000).
    assignment_interval_ms : int
        The broker's ``group.consumer.assignment.interval.ms`` (default 1000; 0 computes at
        once).
    session_timeout_ms : int
        How long the coordinator waits for a member that stopped heartbeating: the classic
        consumer's ``session.timeout.ms`` and the broker's ``group.consumer.session.timeout.ms``
        (both 45000 by default). A static member away longer is removed, and its return is a
        join (``GroupMetadataManager``'s session timeout, ``consumerGroupFenceMember``).
    """

    restart_seconds: float | None = None
    consumer_heartbeat_ms: int = 5000
    classic_heartbeat_ms: int = 3000
    assignment_interval_ms: int = 1000
    session_timeout_ms: int = 45000

    def __post_init__(self) -> None:
        seconds = self.restart_seconds
        low, high = BOUNDS["restart_seconds"]
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int | float)
                                    or not math.isfinite(seconds) or not low <= seconds <= high):
            raise WhatIfError(f"restart_seconds: expected seconds in [{low}, {high:,}], got {seconds!r}")
        for name in ("consumer_heartbeat_ms", "classic_heartbeat_ms", "assignment_interval_ms", "session_timeout_ms"):
            value, (low, high) = getattr(self, name), BOUNDS[name]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise WhatIfError(f"{name}: expected milliseconds in [{low}, {high}] (Kafka's range), got {value!r}")

    def within_session(self) -> bool:
        """Whether a static member that restarts is back before its session expires (unless told
        how long it is away, it is taken to be)."""
        return self.restart_seconds is None or self.restart_seconds * 1000 <= self.session_timeout_ms

    def back_in_time(self, *, classic: bool, others: int, consumer_others: int, at_rest: bool) -> bool:
        """Whether a member restarting now is back before the coordinator acts on its leave
        (module docstring). `classic`: the group is a classic group; `others`: the members left
        in it; `consumer_others`: those of them that speak the consumer protocol; `at_rest`: no
        target was computed just before (the first restart of a rolling restart)."""
        if self.restart_seconds is None:
            return False
        if classic:
            return self.restart_seconds < self.classic_heartbeat_ms / 1000 * others / (others + 1)
        if consumer_others == 0:
            return True
        # the restart finds the interval just started, unless at rest (module docstring)
        return self.restart_seconds < cast(float, self.until_target(consumer_others, None if at_rest else 0.0))

    def until_target(self, consumer_members: int, since_last: float | None) -> float | None:
        """Seconds from a leave to the consumer group's next target computation (module
        docstring): the first heartbeat of the `consumer_members` left (None when none is left:
        nothing computes one until a member joins), and not before the assignment interval since
        the last computation, `since_last` seconds before the leave (None: long before)."""
        if consumer_members == 0:
            return None
        first = self.consumer_heartbeat_ms / 1000 / (consumer_members + 1)
        if since_last is None:
            return first
        return max(first, self.assignment_interval_ms / 1000 - since_last)


#: Kafka's defaults, restarts slower than any rebalance: what a run assumes when not told.
DEFAULT_TIMING = Timing()


#: Each of `Timing`'s fields and what it is: the CLI's flags (``--restart-seconds``, ...), the
#: service's fields and the fleet job's flags are made from (or held by tests to) these.
SETTINGS: dict[str, str] = {
    "restart_seconds": "how long a restarted member is away: from its leave to its first heartbeat or "
                       "JoinGroup (default: longer than any rebalance)",
    "consumer_heartbeat_ms": "the broker's group.consumer.heartbeat.interval.ms (default 5000)",
    "classic_heartbeat_ms": "the classic consumers' heartbeat.interval.ms (default 3000)",
    "assignment_interval_ms": "the broker's group.consumer.assignment.interval.ms (default 1000)",
    "session_timeout_ms": "the members' session timeout: session.timeout.ms (classic) and the broker's "
                          "group.consumer.session.timeout.ms (both 45000 by default); a static member away longer "
                          "is removed, and its return is a join",
}

def timing_of(values: Mapping[str, Any]) -> Timing:
    """A `Timing` from settings by name, those missing or None at Kafka's defaults; a name that
    is not a setting is refused (WhatIfError)."""
    unknown = sorted(set(values) - set(SETTINGS))
    if unknown:
        raise WhatIfError(f"{unknown[0]}: not a timing setting (known: {', '.join(SETTINGS)})")
    return Timing(**{name: value for name, value in values.items() if value is not None})
