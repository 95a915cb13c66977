"""What every aiokafka consumer of ours does to its partitions, whatever its protocol: the
coordinator both `assignor.integrations.aiokafka_cooperative` (KIP-429 under the classic protocol)
and `assignor.integrations.aiokafka_consumer_protocol` (KIP-848) build on. A partition given up
stops returning records, is committed, then revoked through the listener (`_revoke`); a new
assignment keeps each retained partition's fetch state (`_install`); a member fenced, stale or
whose session ran out on its own clock loses its partitions without a commit (`_lose`,
`lose_if_expired`); the listener's callbacks, plain or coroutines, never break the member
(`_call`).

aiokafka internals this relies on are listed in `assignor.integrations.aiokafka_cooperative`'s
docstring; `SUPPORTED_AIOKAFKA` is checked on import.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import aiokafka
from aiokafka.consumer.group_coordinator import GroupCoordinator
from aiokafka.errors import KafkaError
from aiokafka.structs import OffsetAndMetadata

from assignor.errors import AssignorError

__all__ = ["SUPPORTED_AIOKAFKA", "MemberCoordinator"]

log = logging.getLogger(__name__)

#: The aiokafka versions whose internals this module was written against and tested with.
SUPPORTED_AIOKAFKA = ((0, 11), (0, 14))


def _version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


if not SUPPORTED_AIOKAFKA[0] <= _version(aiokafka.__version__) <= SUPPORTED_AIOKAFKA[1]:
    raise AssignorError(f"our aiokafka consumers need aiokafka {SUPPORTED_AIOKAFKA[0][0]}.{SUPPORTED_AIOKAFKA[0][1]}"
                        f" to {SUPPORTED_AIOKAFKA[1][0]}.{SUPPORTED_AIOKAFKA[1][1]}.x (it relies on their coordinator's"
                        f" internals); aiokafka {aiokafka.__version__} is installed")


class MemberCoordinator(GroupCoordinator):  # type: ignore[misc]  # aiokafka ships no types
    """aiokafka's group coordinator with what every member of ours does to its partitions
    (module docstring); the protocol is the subclass's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._lost = False  # fenced or stale: the partitions go without a commit
        # When the broker last knew this member (a heartbeat answered, a join completed): see
        # `session_expired`.
        self._alive_at: float | None = None
        super().__init__(*args, **kwargs)

    def session_expired(self) -> bool:
        """Whether the session has run out here, whatever the broker has said yet (the subclass
        knows when the broker holds the member)."""
        return False

    def _expire(self) -> None:
        """The session ran out here: forget the membership (the subclass's way)."""

    async def lose_if_expired(self) -> bool:
        """When `session_expired`: the partitions are lost at once (``on_partitions_lost``, no
        commit, nothing more returned from them) and the member rejoins as new. A consumer whose
        event loop was blocked past its session (a GC pause, a blocking call) otherwise returned
        records of partitions other members already had."""
        if not self.session_expired():
            return False
        log.warning("The session of group %s expired here (no heartbeat answered for %.1f s): partitions lost",
                    self.group_id, time.monotonic() - (self._alive_at or 0.0))
        self._alive_at = None
        self._expire()
        await self._lose()
        return True

    def _owned(self) -> frozenset[Any]:
        subscription = self._subscription.subscription
        assignment = getattr(subscription, "assignment", None)
        return frozenset(assignment.tps) if assignment is not None and assignment.active else frozenset()

    async def _lose(self) -> None:
        """KIP-429: partitions of a fenced or stale member are lost, not revoked: nothing is
        committed (another member may own them already) and the next JoinGroup claims none."""
        self._lost = False
        lost = self._owned()
        for assignor in self._assignors:
            forget = getattr(assignor, "on_partitions_lost", None)
            if callable(forget):
                forget()
        if not lost:
            return
        self._install(set())
        log.info("Lost partitions %s of group %s (fenced or stale generation)", set(lost), self.group_id)
        listener = self._subscription.listener
        lost_hook = getattr(listener, "on_partitions_lost", None)
        await self._call(lost_hook if callable(lost_hook) else getattr(listener, "on_partitions_revoked", None),
                         set(lost), "on_partitions_lost")

    async def _revoke(self, current: Any, revoked: set[Any]) -> None:
        """Stop returning the records of `revoked` (paused partitions' fetched records are
        dropped), commit how far they were consumed, then tell the listener while they are
        still assigned (so its own commit of them works)."""
        for tp in revoked:
            current.state_value(tp).pause()
        if self._enable_auto_commit:
            offsets = {tp: OffsetAndMetadata(current.state_value(tp).position, "") for tp in revoked
                       if current.state_value(tp).has_valid_position}
            try:
                await self.commit_offsets(current, offsets)
            except KafkaError as error:
                log.warning("offset commit of revoked partitions of group %s failed: %s", self.group_id, error)
        log.info("Revoking partitions %s of group %s", revoked, self.group_id)
        await self._call(getattr(self._subscription.listener, "on_partitions_revoked", None), revoked,
                         "on_partitions_revoked")

    def _install(self, partitions: set[Any]) -> None:
        """Assign `partitions`, keeping each retained partition's state (its fetch position,
        committed point and pause): aiokafka makes a fresh state per partition for every new
        assignment, which would send every retained partition back to its committed offset."""
        subscription = self._subscription.subscription
        previous = subscription.assignment
        kept = {}
        if previous is not None and previous.active:
            kept = {tp: previous.state_value(tp) for tp in partitions if previous.state_value(tp) is not None}
        self._subscription.assign_from_subscribed(partitions)
        fresh = subscription.assignment
        for tp, state in kept.items():
            state._assignment = fresh
            fresh._tp_state[tp] = state

    async def _call(self, hook: Any, partitions: set[Any], name: str) -> None:
        if hook is None:
            return
        try:
            result = hook(partitions)
            if asyncio.iscoroutine(result):
                await result
        except Exception:
            log.exception("listener %s of group %s failed in %s", self._subscription.listener, self.group_id, name)
