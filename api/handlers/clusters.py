"""Live groups of the clusters named in the service's settings (`api.settings.Settings.clusters`):
the alias a request names, a snapshot of its groups (`assignor.cluster`), and the HTTP status of
each way that fails. Read in a planning process (``/v1/clusters/{alias}/groups``, a what-if of a
live group): a large group's responses take a fraction of a second to decode and build (2,000
members over a million partitions: 0.3 s), which the event loop must not wait on."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from api.errors import Rejected
from api.handlers.answers import Answer, Handled, answer
from assignor.cluster import ClientSettings, read_snapshot, read_summaries, settings_of
from assignor.cluster.snapshot import SkipKind
from assignor.errors import ClusterError

__all__ = ["cluster_settings", "group_answer", "groups_answer", "live_group", "live_groups", "read_live_group",
           "SKIPPED_STATUS"]


def cluster_settings(clusters: Mapping[str, Mapping[str, str]], alias: str) -> ClientSettings:
    """The connection settings of `alias`; an alias not in the settings is a 404 (no address
    from a request is ever connected to)."""
    if alias not in clusters:
        known = ", ".join(sorted(clusters)) or "none: set ASSIGNOR_CLUSTERS"
        raise Rejected(404, f"cluster {alias!r}: not one of this service's clusters (known: {known})")
    return settings_of(None, clusters[alias], name=alias)


#: The status of a group the snapshot skipped, by its kind: 404 (no such group), 403 (not
#: authorized), 503 (its coordinator cannot answer now), 409 (rebalancing, not a consumer group,
#: undecodable: it is there, but not now or not ours to read).
SKIPPED_STATUS = {SkipKind.MISSING: 404, SkipKind.UNAUTHORIZED: 403, SkipKind.UNAVAILABLE: 503,
                  SkipKind.REBALANCING: 409, SkipKind.NOT_CONSUMER: 409, SkipKind.UNREADABLE: 409}


def _one(found: dict[str, Any], alias: str, group_id: str) -> dict[str, Any]:
    if found["groups"]:
        group: dict[str, Any] = found["groups"][0]
        return group
    skipped = found["skipped"][0]
    raise Rejected(SKIPPED_STATUS[SkipKind(skipped["kind"])],
                   f"cluster {alias!r}, group {group_id!r}: {skipped['reason']}")


def live_group(clusters: Mapping[str, Mapping[str, str]], alias: str, group_id: str) -> dict[str, Any]:
    """`read_live_group` in a planning process (no event loop of its own)."""
    return asyncio.run(read_live_group(clusters, alias, group_id))


def group_answer(clusters: Mapping[str, Mapping[str, str]], alias: str, group_id: str) -> Answer:
    """``GET /v1/clusters/{alias}/groups/{group_id}`` in a planning process."""
    return answer(_group, clusters, alias, group_id)


def _group(clusters: Mapping[str, Mapping[str, str]], alias: str, group_id: str) -> Handled:
    return live_group(clusters, alias, group_id), {}


def groups_answer(clusters: Mapping[str, Mapping[str, str]], alias: str, summary: bool = False) -> Answer:
    """``GET /v1/clusters/{alias}/groups`` in a planning process."""
    return answer(_groups, clusters, alias, summary)


def _groups(clusters: Mapping[str, Mapping[str, str]], alias: str, summary: bool) -> Handled:
    return asyncio.run(live_groups(clusters, alias, summary)), {}


async def read_live_group(clusters: Mapping[str, Mapping[str, str]], alias: str, group_id: str) -> dict[str, Any]:
    """The group JSON of `group_id` on `alias`. A cluster that cannot be read is a 503 naming it
    and the group."""
    settings = cluster_settings(clusters, alias)
    try:
        return _one(await read_snapshot(settings, [group_id]), alias, group_id)
    except ClusterError as error:
        raise Rejected(503, f"group {group_id!r}: {error}") from None


async def live_groups(clusters: Mapping[str, Mapping[str, str]], alias: str, summary: bool = False
                      ) -> dict[str, Any]:
    """Every consumer group of `alias` (``{"groups", "skipped"}``): each one's snapshot, or with
    `summary` its summary (`assignor.cluster.snapshot.summary_of`)."""
    settings = cluster_settings(clusters, alias)
    try:
        return await (read_summaries if summary else read_snapshot)(settings, None)
    except ClusterError as error:
        raise Rejected(503, str(error)) from None
