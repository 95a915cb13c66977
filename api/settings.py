"""Service settings, from the environment (``ASSIGNOR_*``) or given to `create_app`."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

from assignor.limits import DEFAULT_LIMITS, Limits


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise SystemExit(f"{name} must be an integer, got {value!r}") from None


def _env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        number = float(value)
    except ValueError:
        raise SystemExit(f"{name} must be a number, got {value!r}") from None
    if not 0 <= number < float("inf"):
        raise SystemExit(f"{name} must be a finite number >= 0, got {value!r}")
    return number


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name, "").strip().lower()
    if value == "":
        return default
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise SystemExit(f"{name} must be true or false, got {value!r}")


#: A cluster's alias in ``ASSIGNOR_CLUSTERS`` and in request paths.
ALIAS = re.compile(r"[A-Za-z0-9._-]{1,64}")


def _env_clusters(name: str) -> dict[str, dict[str, str]]:
    value = os.environ.get(name, "").strip()
    if not value:
        return {}
    try:
        clusters = json.loads(value)
    except ValueError:
        raise SystemExit(f"{name} must be a JSON object of alias -> client properties") from None
    if not isinstance(clusters, dict) or not all(
            isinstance(props, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in props.items())
            for props in clusters.values()):
        raise SystemExit(f"{name} must be a JSON object of alias -> {{property: string value}}")
    return clusters


@dataclass(frozen=True)
class Settings:
    #: The group registry: a SQLite file (created with its folder), a ``sqlite:///`` URL or a
    #: ``postgresql://`` URL (see `api.registry.open_registry`).
    registry: str = "./var/registry.sqlite3"
    #: When set, every /v1 call needs ``Authorization: Bearer <token>``.
    token: str | None = None
    #: Whether ``/metrics`` needs the token too (it holds counts and timings, no group data, so
    #: by default a Prometheus scraper needs no secret).
    metrics_need_token: bool = False
    #: Generations the registry keeps per group (the newest); older ones are deleted as new ones
    #: are recorded.
    history: int = 1000
    #: Groups the registry holds; a sync of a new group past it answers 507.
    max_groups: int = 100_000
    #: Planning processes; 0 plans in threads of this process (tests, tiny machines).
    workers: int = field(default_factory=lambda: os.cpu_count() or 1)
    #: Planning requests allowed to wait for a worker at most, however short their expected
    #: wait; past this, 503 with Retry-After.
    max_pending: int = 256
    #: A planning request is queued while it would start within this many seconds (the queue
    #: ahead of it times the recent planning time per request, over the workers); past it, 503
    #: with ``Retry-After`` the expected wait (`api.pool.Planner.admit`).
    max_wait_seconds: float = 5.0
    max_body_bytes: int = 64 * 1024 * 1024
    #: Request body bytes the service holds at once (in memory or spooled to a file), taken from
    #: the declared Content-Length before a body is read; past it, 503 with Retry-After.
    body_budget_bytes: int = 1024 * 1024 * 1024
    #: Seconds a client has to send a request's line and headers (`api.slow_clients`; 0: no limit).
    header_seconds: float = 10.0
    #: Seconds a client may be silent in the middle of a body (0: no limit).
    body_idle_seconds: float = 30.0
    #: Host names the service answers to (``*.example.com`` matches subdomains, ``*`` any);
    #: another Host is a 400, so a DNS-rebinding page cannot reach it under its own name. By
    #: default: the loopback names without a token; any name with one (a page elsewhere cannot
    #: send the token).
    allowed_hosts: tuple[str, ...] | None = None
    #: Proxies whose ``X-Forwarded-For``/``-Proto`` are believed (uvicorn's list: addresses,
    #: networks, ``*``); empty: none, the peer's own address is the client's.
    forwarded_allow_ips: str = ""
    #: Seconds one request may plan; past it, 504 (0: no limit).
    request_seconds: float = 120.0
    #: Data memory of one planning process in MB; an allocation past it is a 507 for that
    #: request, not the kernel's out-of-memory killer (0: no ceiling). Default: three quarters
    #: of the machine's memory shared among the workers (`api.transport.memory_ceiling_mb`).
    worker_memory_mb: int = -1
    #: What one request may build (`assignor.limits.Limits`: members, partitions, topics, what-if
    #: events and rebalances, simulated records and seconds, keys); past a limit, 413 naming it.
    #: ``ASSIGNOR_MAX_<FIELD>`` sets each, e.g. ``ASSIGNOR_MAX_PARTITIONS``.
    limits: Limits = DEFAULT_LIMITS
    #: The clusters the service reads live groups from, by alias: each alias's client properties
    #: by Kafka's names (`assignor.cluster.settings`), ``bootstrap.servers`` among them.
    #: ``ASSIGNOR_CLUSTERS`` holds them as a JSON object (``{"prod": {"bootstrap.servers":
    #: "kafka-1:9092"}}``). A request names an alias, never an address: the service connects to
    #: these and nowhere else.
    clusters: dict[str, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def from_env(cls) -> Settings:
        defaults = cls()
        return cls(
            registry=os.environ.get("ASSIGNOR_REGISTRY", defaults.registry),
            token=os.environ.get("ASSIGNOR_API_TOKEN") or None,
            metrics_need_token=_env_bool("ASSIGNOR_METRICS_NEED_TOKEN", defaults.metrics_need_token),
            history=_env_int("ASSIGNOR_HISTORY", defaults.history),
            max_groups=_env_int("ASSIGNOR_MAX_GROUPS", defaults.max_groups),
            workers=_env_int("ASSIGNOR_WORKERS", defaults.workers),
            max_pending=_env_int("ASSIGNOR_MAX_PENDING", defaults.max_pending),
            max_wait_seconds=_env_float("ASSIGNOR_MAX_WAIT_SECONDS", defaults.max_wait_seconds),
            max_body_bytes=_env_int("ASSIGNOR_MAX_BODY_BYTES", defaults.max_body_bytes),
            body_budget_bytes=_env_int("ASSIGNOR_BODY_BUDGET_BYTES", defaults.body_budget_bytes),
            header_seconds=_env_float("ASSIGNOR_HEADER_SECONDS", defaults.header_seconds),
            body_idle_seconds=_env_float("ASSIGNOR_BODY_IDLE_SECONDS", defaults.body_idle_seconds),
            allowed_hosts=tuple(h.strip() for h in os.environ["ASSIGNOR_ALLOWED_HOSTS"].split(",") if h.strip())
            if os.environ.get("ASSIGNOR_ALLOWED_HOSTS", "").strip() else None,
            forwarded_allow_ips=os.environ.get("ASSIGNOR_FORWARDED_ALLOW_IPS", defaults.forwarded_allow_ips).strip(),
            request_seconds=_env_int("ASSIGNOR_REQUEST_SECONDS", int(defaults.request_seconds)),
            worker_memory_mb=_env_int("ASSIGNOR_WORKER_MEMORY_MB", defaults.worker_memory_mb),
            limits=Limits(**{name: _env_int(f"ASSIGNOR_{name.upper()}", value)
                             for name, value in vars(defaults.limits).items()}),
            clusters=_env_clusters("ASSIGNOR_CLUSTERS"),
        )

    def __post_init__(self) -> None:
        from assignor.cluster import settings_of
        from assignor.errors import ClusterError

        for alias, properties in self.clusters.items():
            if not ALIAS.fullmatch(alias):
                raise SystemExit(f"ASSIGNOR_CLUSTERS: {alias!r} is not an alias (1-64 of letters, digits, ., _ and -)")
            try:
                settings_of(None, properties, name=alias)
            except ClusterError as error:
                raise SystemExit(f"ASSIGNOR_CLUSTERS[{alias!r}]: {error}") from None
        if self.history < 1:
            raise SystemExit(f"ASSIGNOR_HISTORY must be at least 1, got {self.history}")
        if self.allowed_hosts is None:
            loopback = ("localhost", "127.0.0.1", "::1")
            object.__setattr__(self, "allowed_hosts", ("*",) if self.token else loopback)
        if self.worker_memory_mb < 0:  # (the default: sized from this machine)
            from api.transport import memory_ceiling_mb

            object.__setattr__(self, "worker_memory_mb", memory_ceiling_mb(self.workers))
