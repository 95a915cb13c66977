"""The group registry: every generation a leader synced through the service.

One row per (group, generation), in SQLite (a file path or ``sqlite:///`` URL, the default) or
PostgreSQL (a ``postgresql://`` URL, for several service instances sharing one registry). A row
is written in one transaction, so a crash mid-request leaves either the whole generation or none
of it; a retried sync of the same generation replaces its row. SQLite runs in WAL mode so
readers (the page, ``GET`` endpoints) are not blocked by a sync that writes. The service
serialises syncs of one group (plan and write) with a per-group lock, so two leaders racing for
one group cannot interleave their generations.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from assignor.json_format import unpack_group, unpack_plan

_COLUMNS = "group_id, generation, protocol, recorded, members, moved, balance, state, plan, metrics"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS generations (
    group_id   TEXT    NOT NULL,
    generation BIGINT  NOT NULL,
    protocol   TEXT    NOT NULL,
    recorded   {real}  NOT NULL,
    members    BIGINT  NOT NULL,
    moved      BIGINT  NOT NULL,
    balance    BIGINT  NOT NULL,
    state      TEXT    NOT NULL,  -- the group as JSON (assignor.json_format, packed or not)
    plan       TEXT    NOT NULL,  -- the plan as JSON (packed or not)
    metrics    TEXT    NOT NULL,  -- the oracle's report as JSON
    PRIMARY KEY (group_id, generation)
)
"""

# Both databases read this upsert (SQLite since 3.24); ``{p}`` is the driver's placeholder.
_UPSERT = (f"INSERT INTO generations ({_COLUMNS}) VALUES ({{p}}, {{p}}, {{p}}, {{p}}, {{p}}, {{p}}, {{p}}, {{p}}, "
           f"{{p}}, {{p}}) ON CONFLICT (group_id, generation) DO UPDATE SET "
           + ", ".join(f"{c} = excluded.{c}" for c in _COLUMNS.split(", ")[2:]))
# The groups after `{p}` (a group id; "" for the first page), `{p}` of them, each with its latest
# generation, that generation's time and how many are kept.
_GROUPS = ("SELECT g.group_id, g.generation, c.generations, g.recorded FROM generations g JOIN "
           "(SELECT group_id, MAX(generation) AS generation, COUNT(*) AS generations FROM generations "
           "WHERE group_id > {p} GROUP BY group_id ORDER BY group_id LIMIT {p}) c "
           "ON g.group_id = c.group_id AND g.generation = c.generation ORDER BY g.group_id")
_NEWEST = "SELECT MAX(generation) AS generation FROM generations WHERE group_id = {p}"
_DELETE = "DELETE FROM generations WHERE group_id = {p}"
_COUNT_GROUPS = "SELECT COUNT(DISTINCT group_id) AS groups FROM generations"
_LATEST = "SELECT * FROM generations WHERE group_id = {p} ORDER BY generation DESC LIMIT 1"
# Keeps a group's newest {p} generations: deletes those at or below the one just past them.
_PRUNE = ("DELETE FROM generations WHERE group_id = {p} AND generation <= (SELECT generation FROM generations "
          "WHERE group_id = {p} ORDER BY generation DESC LIMIT 1 OFFSET {p})")
_HISTORY = ("SELECT generation, protocol, recorded, members, moved, balance FROM generations "
            "WHERE group_id = {p} ORDER BY generation")


class RegistryError(ValueError):
    """A registry location that cannot be used (unknown scheme, missing driver, unreachable)."""


class OlderGenerationError(Exception):
    """A generation older than the group's latest: the registry moves forward only (a leader of
    an older generation is a zombie, KAFKA-12984; its sync must not rewrite the history)."""

    def __init__(self, group_id: str, generation: int, latest: int) -> None:
        super().__init__(f"generation: {generation} is older than group {group_id!r}'s latest generation {latest}")
        self.latest = latest


class RegistryFullError(Exception):
    """A new group while the registry holds its maximum of groups."""

    def __init__(self, groups: int) -> None:
        super().__init__(f"max_groups: the registry holds {groups} groups, the limit; a new group is not recorded")


def iso_time(epoch: float) -> str:
    """A recorded time as ISO-8601 UTC (``2026-11-25T10:00:00.123Z``)."""
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _with_iso_times(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for row in rows:
        row["recorded"] = iso_time(row["recorded"])
    return rows


def open_registry(location: str | Path) -> Registry:
    """The registry at `location`: a SQLite file path, ``sqlite:///relative.db``,
    ``sqlite:////absolute.db``, or ``postgresql://user@host:port/database``.

    Raises
    ------
    RegistryError
        For another URL scheme, or a PostgreSQL URL without the driver or the server.
    """
    location = str(location)
    scheme = location.split("://", 1)[0].lower() if "://" in location else ""
    if scheme in ("postgresql", "postgres"):
        return PostgresRegistry(location)
    return SQLiteRegistry(sqlite_path(location))


def sqlite_path(location: str) -> str:
    """A file path, or a ``sqlite:///relative.db`` / ``sqlite:////absolute.db`` URL."""
    if "://" not in location:
        return location
    if not location.startswith("sqlite:///"):
        scheme = location.split("://", 1)[0]
        raise RegistryError(f"registry: unsupported database URL scheme {scheme!r}; use a SQLite path, "
                            "a sqlite:/// URL or a postgresql:// URL")
    return location[len("sqlite:///"):]


class Registry:
    """Reads and writes shared by the databases; a subclass opens connections (one per thread)
    and runs one statement in a transaction."""

    placeholder = "?"

    def __init__(self) -> None:
        self._local = threading.local()

    def _connection(self) -> Any:
        db = getattr(self._local, "db", None)
        if db is None or self._broken(db):
            db = self._local.db = self._connect()
        return db

    def _connect(self) -> Any:
        raise NotImplementedError

    def _broken(self, db: Any) -> bool:
        return False

    def _write(self, statements: list[tuple[str, tuple[Any, ...]]], check: Any = None, group_id: str = "") -> None:
        """Run `statements` (SQL with ``{p}`` placeholders, values) in one transaction, after
        `check(read)` (``read(sql, values)`` gives rows in that transaction, with the writes of
        `group_id` locked) has not raised."""
        raise NotImplementedError

    def _rows(self, sql: str, values: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        return [dict(row) for row in self._connection().execute(sql.format(p=self.placeholder), values).fetchall()]

    def ping(self) -> bool:
        try:
            self._rows("SELECT 1 FROM generations LIMIT 1")
            return True
        except Exception:  # any driver error means "not ready"; /readyz reports it
            self._local.db = None
            return False

    def record(self, group_id: str, generation: int, protocol: str, state: dict[str, Any], plan: dict[str, Any],
               metrics: Mapping[str, Any], keep: int | None = None, max_groups: int | None = None) -> None:
        """Store one generation (replacing a retried sync of the same generation), atomically;
        with `keep`, the group's older generations past its newest `keep` go in the same
        transaction (the history of a group that syncs forever stays bounded).

        Raises
        ------
        OlderGenerationError
            When the group has a newer generation (checked in the same transaction).
        RegistryFullError
            When the group is new and the registry holds `max_groups` groups.
        """
        values = (group_id, generation, protocol, time.time(), metrics.get("members", 0), metrics.get("moved", 0),
                  metrics.get("balance_score", 0), *(orjson.dumps(v).decode() for v in (state, plan, metrics)))
        statements = [(_UPSERT, values)]
        if keep is not None:
            statements.append((_PRUNE, (group_id, group_id, max(keep, 1))))

        def check(read: Any) -> None:
            self._check_forward(read(_NEWEST, (group_id,)), group_id, generation, max_groups, read)

        self._write([(sql.format(p=self.placeholder), args) for sql, args in statements], check, group_id)

    def _check_forward(self, newest: list[dict[str, Any]], group_id: str, generation: int, max_groups: int | None,
                       read: Any) -> None:
        latest = newest[0]["generation"] if newest else None
        if latest is not None and generation < latest:
            raise OlderGenerationError(group_id, generation, latest)
        if latest is None and max_groups is not None:
            groups = read(_COUNT_GROUPS, ())[0]["groups"]
            if groups >= max_groups:
                raise RegistryFullError(groups)

    def delete(self, group_id: str) -> int:
        """Forget a group (every generation kept); the number of generations deleted. A group
        that Kafka deleted and that starts again at generation 1 is recorded after this."""
        before = len(self._rows(_HISTORY, (group_id,)))
        self._write([(_DELETE.format(p=self.placeholder), (group_id,))], group_id=group_id)
        return before

    def newest_generation(self, group_id: str) -> int | None:
        """The group's latest recorded generation (None for a group never recorded)."""
        value = self._rows(_NEWEST, (group_id,))[0]["generation"]
        return None if value is None else int(value)

    def groups(self, after: str = "", limit: int = 1000) -> list[dict[str, Any]]:
        """A page of the groups after `after` in id order: id, latest generation, its time
        (ISO-8601 UTC) and the generations kept."""
        return _with_iso_times(self._rows(_GROUPS, (after, limit)))

    def latest(self, group_id: str) -> dict[str, Any] | None:
        rows = self._rows(_LATEST, (group_id,))
        if not rows:
            return None
        out = rows[0]
        for field in ("state", "plan", "metrics"):
            out[field] = orjson.loads(out[field])
        out["recorded"] = iso_time(out["recorded"])
        # Syncs keep the group and plan packed (`SyncResult.packed_json`); readers get the
        # documented forms.
        out["state"], out["plan"] = unpack_group(out["state"]), unpack_plan(out["plan"])
        return out

    def history(self, group_id: str) -> list[dict[str, Any]]:
        return _with_iso_times(self._rows(_HISTORY, (group_id,)))


class SQLiteRegistry(Registry):
    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        db = self._connection()
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(_SCHEMA.format(real="REAL"))

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        db.execute("PRAGMA busy_timeout=30000")
        db.row_factory = sqlite3.Row
        return db

    def _write(self, statements: list[tuple[str, tuple[Any, ...]]], check: Any = None, group_id: str = "") -> None:
        db = self._connection()
        db.execute("BEGIN IMMEDIATE")  # (the write lock from here: the check sees what it writes over)
        try:
            if check is not None:
                check(lambda sql, values: [dict(r) for r in db.execute(sql.format(p="?"), values).fetchall()])
            for sql, values in statements:
                db.execute(sql, values)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")


class PostgresRegistry(Registry):
    """PostgreSQL through psycopg 3 (the ``postgres`` extra). Connections that broke (a server
    restart) are replaced on next use."""

    placeholder = "%s"
    # Service instances starting together would race on CREATE TABLE IF NOT EXISTS (PostgreSQL
    # can fail it with a unique violation in its catalog), so schema creation takes a lock.
    _SCHEMA_LOCK = 0x6B736173  # any constant shared by every instance
    _WRITE_LOCK = 0x6B736174

    def __init__(self, url: str) -> None:
        super().__init__()
        try:
            import psycopg
            from psycopg.rows import dict_row
        except ImportError:
            raise RegistryError("registry: a postgresql:// URL needs psycopg; install "
                                "kafka-sticky-assignor[postgres]") from None
        self._psycopg, self._dict_row = psycopg, dict_row
        self.url = url
        try:
            db = self._connection()
            with db.transaction():
                db.execute("SELECT pg_advisory_xact_lock(%s)", (self._SCHEMA_LOCK,))
                db.execute(_SCHEMA.format(real="DOUBLE PRECISION"))
        except psycopg.Error as error:
            raise RegistryError(f"registry: cannot use {_without_password(url)}: {error}".strip()) from None

    def _connect(self) -> Any:
        return self._psycopg.connect(self.url, autocommit=True, row_factory=self._dict_row, connect_timeout=10)

    def _broken(self, db: Any) -> bool:
        return bool(db.closed or db.broken)

    def _write(self, statements: list[tuple[str, tuple[Any, ...]]], check: Any = None, group_id: str = "") -> None:
        db = self._connection()
        with db.transaction():  # rolled back on any error, committed on leaving
            if check is not None:
                # One writer per group at a time across instances sharing the registry: the
                # check must see what the write lands on.
                db.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (self._WRITE_LOCK, group_id))
                check(lambda sql, values: db.execute(sql.format(p="%s"), values).fetchall())
            for sql, values in statements:
                db.execute(sql, values)


def _without_password(url: str) -> str:
    """The URL as it may be logged: ``user:secret@`` becomes ``user:***@``."""
    scheme, _, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if at and ":" in credentials:
        credentials = credentials.split(":", 1)[0] + ":***"
    return f"{scheme}://{credentials}{at}{host}"
