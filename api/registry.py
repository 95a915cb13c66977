"""The group registry: every generation a leader synced through the service, in SQLite.

One row per (group, generation). A row is written in one transaction, so a crash mid-request
leaves either the whole generation or none of it. WAL mode lets readers (the page, ``GET``
endpoints) run while a sync writes. The service serialises syncs of one group (plan and write)
with a per-group lock, so two leaders racing for one group cannot interleave their generations.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS generations (
    group_id   TEXT    NOT NULL,
    generation INTEGER NOT NULL,
    protocol   TEXT    NOT NULL,
    recorded   REAL    NOT NULL,
    members    INTEGER NOT NULL,
    moved      INTEGER NOT NULL,
    balance    INTEGER NOT NULL,
    state      TEXT    NOT NULL,  -- the group as JSON (assignor.json_format)
    plan       TEXT    NOT NULL,  -- the plan as JSON
    metrics    TEXT    NOT NULL,  -- the oracle's report as JSON
    PRIMARY KEY (group_id, generation)
);
"""


def sqlite_path(location: str) -> str:
    """A file path, or a ``sqlite:///relative.db`` / ``sqlite:////absolute.db`` URL."""
    if "://" not in location:
        return location
    if not location.startswith("sqlite:///"):
        scheme = location.split("://", 1)[0]
        raise ValueError(f"registry: only SQLite is supported (a path or sqlite:/// URL), got a {scheme!r} URL")
    return location[len("sqlite:///"):]


class Registry:
    """Thread-safe: one connection per thread."""

    def __init__(self, path: str | Path) -> None:
        self.path = sqlite_path(str(path))
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._connection() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)

    def _connection(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.execute("PRAGMA busy_timeout=30000")
            db.row_factory = sqlite3.Row
            self._local.db = db
        return db

    def ping(self) -> bool:
        try:
            self._connection().execute("SELECT 1 FROM generations LIMIT 1").fetchall()
            return True
        except sqlite3.Error:
            return False

    def record(self, group_id: str, generation: int, protocol: str, state: dict, plan: dict, metrics: dict) -> None:
        """Store one generation (replacing a retried sync of the same generation), atomically."""
        db = self._connection()
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(
                "INSERT OR REPLACE INTO generations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (group_id, generation, protocol, time.time(), metrics.get("members", 0), metrics.get("moved", 0),
                 metrics.get("balance_score", 0), json.dumps(state), json.dumps(plan), json.dumps(metrics)))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def groups(self) -> list[dict[str, Any]]:
        rows = self._connection().execute(
            "SELECT group_id, MAX(generation) AS generation, COUNT(*) AS generations, MAX(recorded) AS recorded "
            "FROM generations GROUP BY group_id ORDER BY group_id").fetchall()
        return [dict(row) for row in rows]

    def latest(self, group_id: str) -> dict[str, Any] | None:
        row = self._connection().execute(
            "SELECT * FROM generations WHERE group_id = ? ORDER BY generation DESC LIMIT 1", (group_id,)).fetchone()
        if row is None:
            return None
        out = dict(row)
        for field in ("state", "plan", "metrics"):
            out[field] = json.loads(out[field])
        return out

    def history(self, group_id: str) -> list[dict[str, Any]]:
        rows = self._connection().execute(
            "SELECT generation, protocol, recorded, members, moved, balance FROM generations "
            "WHERE group_id = ? ORDER BY generation", (group_id,)).fetchall()
        return [dict(row) for row in rows]
