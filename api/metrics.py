"""The service's metrics (Prometheus) and the log of claims dropped per group (`ClaimWarnings`).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram

from assignor.solver.claims import DROP_REASONS

log = logging.getLogger("api")

class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("assignor_http_requests", "HTTP requests", ["method", "route", "status"],
                                registry=self.registry)
        self.latency = Histogram("assignor_http_request_seconds", "HTTP request latency", ["route"],
                                 registry=self.registry)
        self.plan_partitions = Histogram("assignor_plan_partitions", "Partitions per planned group",
                                         buckets=(10, 100, 1_000, 10_000, 100_000, 1_000_000, float("inf")),
                                         registry=self.registry)
        self.plan_seconds = Histogram("assignor_plan_seconds", "Time spent planning", ["strategy"],
                                      registry=self.registry)
        self.dropped_claims = Counter("assignor_dropped_claims", "Owned-partition claims leader syncs dropped "
                                      "(assignor.solver.claims.DROP_REASONS)", ["reason"], registry=self.registry)
        for reason in DROP_REASONS:  # every reason shows, at 0 until it happens
            self.dropped_claims.labels(reason)

    def observe(self, stats: dict[str, Any]) -> None:
        if "partitions" in stats:
            self.plan_partitions.observe(stats["partitions"])
            self.plan_seconds.labels(stats["strategy"]).observe(stats["seconds"])
        for reason, dropped in stats.get("dropped_claims", {}).get("by_reason", {}).items():
            self.dropped_claims.labels(reason).inc(dropped["count"])


class ClaimWarnings:
    """One log warning per group and generation whose sync dropped claims (Java's leader logs
    them too): an operator sees a KAFKA-12984 zombie or stale metadata. A retried sync of a
    generation already warned about stays quiet; the groups remembered are bounded."""

    def __init__(self, remember: int = 10_000) -> None:
        self._warned: OrderedDict[str, int] = OrderedDict()
        self._remember = remember

    def sync(self, group_id: str, generation: int, dropped: dict[str, Any]) -> bool:
        """Log `dropped` (a report's ``dropped_claims``) unless empty or already logged."""
        if not dropped.get("count") or self._warned.get(group_id) == generation:
            return False
        self._warned[group_id] = generation
        self._warned.move_to_end(group_id)
        while len(self._warned) > self._remember:
            self._warned.popitem(last=False)
        reasons = ", ".join(f"{entry['count']} {reason}" for reason, entry in dropped["by_reason"].items())
        example = next(iter(dropped["by_reason"].values()))["first"][0]
        log.warning("group %r generation %d: dropped %d owned-partition claim(s) (%s), e.g. %s of member %r",
                    group_id, generation, dropped["count"], reasons, example["claim"], example["member"])
        return True
