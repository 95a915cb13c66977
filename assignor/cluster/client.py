"""A read-only client of one cluster: its brokers and topics (Metadata), each group's
coordinator (FindCoordinator, many groups per request), the groups each broker coordinates
(ListGroups) and what they are (DescribeGroups, ConsumerGroupDescribe), batched per coordinator
and sent to all coordinators at once. It never joins a group, commits or changes anything, and
asks Metadata not to create topics (``allow_auto_topic_creation`` false).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Iterable
from types import TracebackType
from typing import Any, TypeVar

from assignor.cluster.connection import RETRIABLE, Connection
from assignor.cluster.settings import ClientSettings
from assignor.errors import ClusterError
from assignor.wire.admin import (
    CONSUMER_GROUP_DESCRIBE,
    DESCRIBE_GROUPS,
    FIND_COORDINATOR,
    LIST_GROUPS,
    METADATA,
    metadata_request,
)
from assignor.wire.error_codes import error_name

__all__ = ["Cluster"]

T = TypeVar("T")

#: The wait before asking again after a retriable error (a coordinator loading or moving,
#: `connection.RETRIABLE`); no new attempt starts within it of ``default.api.timeout.ms``, so the
#: error said is the broker's last answer.
RETRY_SECONDS = 0.2

class Cluster:
    """``async with Cluster(settings) as cluster``: connections to the brokers, opened as needed
    and closed at the end."""

    def __init__(self, settings: ClientSettings) -> None:
        self.settings = settings
        self.brokers: dict[int, tuple[str, int]] = {}
        self._connections: dict[tuple[str, int], Connection] = {}
        self._deadline = 0.0

    async def __aenter__(self) -> Cluster:
        self._deadline = time.monotonic() + self.settings.api_timeout_ms / 1000
        problems = []
        for host, port in self.settings.bootstrap:
            try:
                self._bootstrap = await self._connect((host, port))
                return self
            except ClusterError as error:
                problems.append(str(error))
        raise ClusterError(problems[0] if len(problems) == 1 else
                           f"cluster {self.settings.name}: no bootstrap server answered ({'; '.join(problems)})")

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        for connection in self._connections.values():
            connection.close()

    async def _connect(self, address: tuple[str, int]) -> Connection:
        if address not in self._connections:
            self._connections[address] = await Connection.open(*address, self.settings)
        return self._connections[address]

    async def node(self, node_id: int) -> Connection:
        if node_id not in self.brokers:
            raise ClusterError(f"cluster {self.settings.name}: broker {node_id} is not in the cluster's metadata")
        return await self._connect(self.brokers[node_id])

    def reason(self, error: ClusterError) -> str:
        """`error`'s message without the cluster's name in front (for a message that names it
        already, or names a group of it)."""
        return str(error).removeprefix(f"cluster {self.settings.name}: ")

    async def unreachable(self, nodes: Iterable[int]) -> dict[int, str]:
        """The brokers of `nodes` that cannot be connected to (down, or not yet out of the
        metadata: a stopped broker stays there until the controller fences it), each with why;
        the others are connected to, all at once."""
        async def attempt(node: int) -> str | None:
            try:
                await self.node(node)
            except ClusterError as error:
                return self.reason(error)
            return None

        ordered = sorted(set(nodes))
        answers = await self.together([attempt(node) for node in ordered])
        return {node: why for node, why in zip(ordered, answers, strict=True) if why is not None}

    async def metadata(self, topics: Iterable[str] | None) -> dict[str, Any]:
        """Metadata for `topics` (None: every topic), brokers remembered for `node`."""
        answer = await self._bootstrap.send(METADATA, metadata_request(topics))
        self.brokers = {node: (host, port) for node, host, port, _rack in answer["brokers"]}
        return answer

    async def coordinators(self, groups: list[str]) -> dict[str, int | tuple[int, str]]:
        """Each group's coordinator (its node id), or why there is none (the error's code, and
        its name with the broker's message)."""
        found: dict[str, int | tuple[int, str]] = {}
        pending = list(groups)
        while pending:
            answer = await self._bootstrap.send(FIND_COORDINATOR, {"key_type": 0, "coordinator_keys": pending})
            retry = []
            for key, node, host, port, code, message in answer["coordinators"]:
                if code == 0:
                    found[key] = node
                    self.brokers.setdefault(node, (host, port))
                elif code in RETRIABLE and self.may_retry():
                    retry.append(key)
                else:
                    found[key] = code, error_name(code) + (f": {message}" if message else "")
            pending = retry
            if pending:
                await asyncio.sleep(RETRY_SECONDS)
        return found

    async def list_groups(self, nodes: Iterable[int] | None = None) -> dict[str, tuple[str, str, str, int]]:
        """The groups the brokers `nodes` coordinate (None: every broker, so every group of the
        cluster): group id -> (protocol type, state, type, coordinator)."""
        async def one(node: int) -> list[tuple[str, str, str, str, int]]:
            try:
                connection = await self.node(node)
            except ClusterError as error:  # (every group of the cluster needs every broker's list)
                raise ClusterError(f"cluster {self.settings.name}: broker {node} cannot be reached to list the groups "
                                   f"it coordinates ({self.reason(error)})") from None
            while True:
                answer = await connection.send(LIST_GROUPS, {"states_filter": [], "types_filter": []})
                code = answer["error_code"]
                if code == 0:
                    return [(*row, node) for row in answer["groups"]]
                if code not in RETRIABLE or not self.may_retry():
                    raise ClusterError(f"cluster {self.settings.name}: broker {node} refused ListGroups "
                                       f"({error_name(code)})")
                # (a broker loading its group coordinator's partitions answers so until it is done)
                await asyncio.sleep(RETRY_SECONDS)

        if not self.brokers:
            await self.metadata([])
        listed = await self.together([one(node) for node in sorted(self.brokers if nodes is None else set(nodes))])
        return {group: (protocol_type, state, kind, node) for rows in listed
                for group, protocol_type, state, kind, node in rows}

    async def describe(self, node: int, classic: list[str], consumer: list[str]) -> list[tuple[str, Any]]:
        """DescribeGroups of the `classic` groups and ConsumerGroupDescribe of the `consumer`
        ones, all coordinated by `node`: (``"classic"`` or ``"consumer"``, described group)."""
        connection = await self.node(node)
        out: list[tuple[str, Any]] = []
        if classic:
            answer = await connection.send(DESCRIBE_GROUPS, {"groups": classic, "include_authorized_operations": False})
            out += [("classic", group) for group in answer["groups"]]
        if consumer:
            answer = await connection.send(CONSUMER_GROUP_DESCRIBE, {"group_ids": consumer,
                                                                     "include_authorized_operations": False})
            out += [("consumer", group) for group in answer["groups"]]
        return out

    async def together(self, calls: list[Awaitable[T]]) -> list[T]:
        """The calls at once, within ``default.api.timeout.ms`` of entering the cluster."""
        try:
            return await asyncio.wait_for(asyncio.gather(*calls), max(self._time_left(), 0.001))
        except TimeoutError:
            raise ClusterError(f"cluster {self.settings.name}: no answer within default.api.timeout.ms "
                               f"({self.settings.api_timeout_ms})") from None

    def may_retry(self) -> bool:
        """Whether a retriable error (`connection.RETRIABLE`) may be asked again: more than
        `RETRY_SECONDS` left of ``default.api.timeout.ms``."""
        return self._time_left() > RETRY_SECONDS

    def _time_left(self) -> float:
        return self._deadline - time.monotonic()

