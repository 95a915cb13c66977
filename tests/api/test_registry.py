"""The group registry on both databases: SQLite (a file) and a real PostgreSQL server."""

import re
import threading

import httpx
import pytest

from api.app import create_app
from api.registry import (
    OlderGenerationError,
    PostgresRegistry,
    RegistryError,
    RegistryFullError,
    SQLiteRegistry,
    open_registry,
)
from api.settings import Settings
from tests.api.test_api import join_metadata

STATE = {"topics": {"t": 2}, "members": [{"id": "a", "topics": ["t"]}]}
PLAN = {"strategy": "range", "assignment": {"a": [["t", 0], ["t", 1]]}}


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.external)])
def location(request, tmp_path):
    """A fresh registry location of each kind."""
    if request.param == "sqlite":
        return str(tmp_path / "registry.sqlite3")
    return request.getfixturevalue("postgres").new_database()


def metrics(moved: int) -> dict:
    return {"members": 1, "moved": moved, "balance_score": 0}


def test_kinds_by_location(location):
    registry = open_registry(location)
    assert isinstance(registry, PostgresRegistry if location.startswith("postgresql://") else SQLiteRegistry)
    assert registry.ping()


def test_generations_round_trip_and_a_retry_replaces_its_row(location):
    registry = open_registry(location)
    registry.record("g", 1, "range", STATE, PLAN, metrics(0))
    registry.record("g", 2, "range", STATE, PLAN, metrics(5))
    registry.record("g", 2, "range", STATE, PLAN, metrics(3))  # the leader retried generation 2
    registry.record("other", 7, "sticky", STATE, PLAN, metrics(1))
    assert [(r["generation"], r["moved"]) for r in registry.history("g")] == [(1, 0), (2, 3)]
    latest = registry.latest("g")
    assert latest["generation"] == 2 and latest["state"] == STATE and latest["plan"] == PLAN
    assert latest["metrics"] == metrics(3)
    assert [(r["group_id"], r["generation"], r["generations"]) for r in registry.groups()] == [
        ("g", 2, 2), ("other", 7, 1)]
    assert registry.latest("missing") is None and registry.history("missing") == []


def test_a_generation_kept_packed_reads_back_in_the_documented_forms(location):
    """Syncs keep the group and plan packed (`SyncResult.packed_json`); `latest` unpacks them,
    and rows written in the documented forms read back as they were."""
    from assignor import TopicPartition, protocol
    from assignor.json_format import group_to_json, plan_to_json
    from assignor.leader import sync

    mine = protocol.encode_sticky_user_data([TopicPartition("t", 1)], 1)
    metadata = {"a": protocol.encode_subscription(protocol.Subscription(["t"], mine)),
                "b": protocol.encode_subscription(protocol.Subscription(["t"]))}
    result = sync("sticky", 2, {"t": 3}, metadata)
    registry = open_registry(location)
    registry.record("g", 2, "sticky", *result.packed_json(), metrics(0))
    latest = registry.latest("g")
    assert latest["state"] == group_to_json(result.group) and latest["plan"] == plan_to_json(result.plan)
    assert latest["state"]["members"][0]["owned"] == [["t", 1]]


def test_a_failed_write_leaves_nothing_behind(location):
    registry = open_registry(location)
    registry.record("g", 1, "range", STATE, PLAN, metrics(0))
    with pytest.raises(Exception):
        registry.record("g", 2, None, STATE, PLAN, metrics(0))  # protocol is NOT NULL
    assert [r["generation"] for r in registry.history("g")] == [1]
    registry.record("g", 2, "range", STATE, PLAN, metrics(0))  # the connection is usable again
    assert [r["generation"] for r in registry.history("g")] == [1, 2]


def test_the_history_keeps_the_newest_generations_of_each_group(location):
    registry = open_registry(location)
    for generation in (1, 3, 5, 7, 9):
        registry.record("g", generation, "range", STATE, PLAN, metrics(0), keep=3)
    registry.record("other", 1, "range", STATE, PLAN, metrics(0), keep=3)
    assert [r["generation"] for r in registry.history("g")] == [5, 7, 9]
    assert [r["generation"] for r in registry.history("other")] == [1]


def test_the_registry_moves_forward_only(location):
    """A sync of generation 3 after generation 5 was recorded with the time of its write under
    generation 5's row in the list of groups: the history went backwards. An older generation
    is now refused (its leader is a zombie), naming the latest; a retry of the latest replaces
    it, and times are ISO-8601 UTC."""
    registry = open_registry(location)
    registry.record("g", 5, "range", STATE, PLAN, metrics(0))
    with pytest.raises(OlderGenerationError, match="3 is older than group 'g''s latest generation 5"):
        registry.record("g", 3, "range", STATE, PLAN, metrics(0))
    registry.record("g", 5, "range", STATE, PLAN, metrics(2))
    assert [(r["generation"], r["moved"]) for r in registry.history("g")] == [(5, 2)]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", registry.groups()[0]["recorded"])
    assert registry.latest("g")["recorded"] == registry.history("g")[0]["recorded"]


def test_the_registry_holds_at_most_max_groups(location):
    registry = open_registry(location)
    for name in ("a", "b"):
        registry.record(name, 1, "range", STATE, PLAN, metrics(0), max_groups=2)
    registry.record("a", 2, "range", STATE, PLAN, metrics(0), max_groups=2)  # a known group goes on
    with pytest.raises(RegistryFullError, match="max_groups: the registry holds 2 groups"):
        registry.record("c", 1, "range", STATE, PLAN, metrics(0), max_groups=2)
    registry.delete("a")
    registry.record("c", 1, "range", STATE, PLAN, metrics(0), max_groups=2)
    assert [r["group_id"] for r in registry.groups()] == ["b", "c"]


def test_groups_are_listed_a_page_at_a_time(location):
    registry = open_registry(location)
    for i in range(5):
        registry.record(f"g{i}", 1, "range", STATE, PLAN, metrics(0))
    registry.record("g1", 2, "range", STATE, PLAN, metrics(0))
    first = registry.groups(limit=2)
    second = registry.groups(after=first[-1]["group_id"], limit=2)
    third = registry.groups(after=second[-1]["group_id"], limit=2)
    assert [[(r["group_id"], r["generation"], r["generations"]) for r in page] for page in (first, second, third)] == [
        [("g0", 1, 1), ("g1", 2, 2)], [("g2", 1, 1), ("g3", 1, 1)], [("g4", 1, 1)]]


def test_history_survives_reopening(location):
    open_registry(location).record("g", 4, "range", STATE, PLAN, metrics(0))
    assert [r["generation"] for r in open_registry(location).history("g")] == [4]


def test_concurrent_writers_lose_nothing(location):
    registry = open_registry(location)

    def write(first: int) -> None:
        for generation in range(first, first + 20):
            registry.record(f"own{first}", generation, "range", STATE, PLAN, metrics(generation))
            try:
                registry.record("g", generation, "range", STATE, PLAN, metrics(generation))
            except OlderGenerationError as error:
                assert error.latest > generation

    threads = [threading.Thread(target=write, args=(start,)) for start in (0, 100, 200, 300)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for first in (0, 100, 200, 300):
        assert [r["generation"] for r in registry.history(f"own{first}")] == list(range(first, first + 20))
    # Racing writers of one group: what each wrote is kept unless a newer one had landed first.
    kept = [r["generation"] for r in registry.history("g")]
    assert kept == sorted(kept) and kept[-1] == 319


def test_unusable_locations_say_why(postgres):
    with pytest.raises(RegistryError, match="unsupported database URL scheme 'mysql'"):
        open_registry("mysql://db/assignor")
    # Nothing listens on the server's port + 1 (it is free: the server bound only its own).
    url = f"postgresql://assignor:secret@127.0.0.1:{postgres.port + 1}/nowhere"
    with pytest.raises(RegistryError, match="cannot use") as raised:
        open_registry(url)
    assert "secret" not in str(raised.value) and "assignor:***@" in str(raised.value)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_service_on_postgresql(postgres, anyio_backend):
    """Leader syncs from worker processes land in PostgreSQL; reads, what-if and /readyz use it."""
    app = create_app(Settings(registry=postgres.new_database(), workers=1, allowed_hosts=("test",)))
    body = {"protocol": "sticky", "topics": {"t": {"partitions": 6}},
            "members": [{"member_id": m, "metadata_b64": join_metadata(["t"])} for m in ("a", "b")]}
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            for generation in (1, 2):
                response = await client.post("/v1/groups/pg/sync", json={**body, "generation": generation})
                assert response.status_code == 200, response.text
            assert (await client.get("/readyz")).json() == {"status": "ready"}
            history = (await client.get("/v1/groups/pg/history")).json()["generations"]
            assert [row["generation"] for row in history] == [1, 2]
            latest = (await client.get("/v1/groups/pg")).json()
            assert sorted(latest["state"]["members"][i]["id"] for i in range(2)) == ["a", "b"]
            response = await client.post("/v1/whatif", json={"group_id": "pg", "events": ["member_leave:a"],
                                                               "strategies": ["sticky"]})
            assert response.status_code == 200, response.text
    finally:
        app.state.planner.close()


@pytest.mark.external
def test_not_ready_while_the_server_is_down():
    from tests.postgres import Postgres

    server = Postgres()
    try:
        registry = open_registry(server.new_database())
        assert registry.ping()
    finally:
        server.stop()
    assert not registry.ping()  # /readyz answers 503 from this
