"""The HTTP service, through ASGI (no sockets): planning, leader syncs, the registry, what-if,
protocol encode/decode, partitioning, limits, auth and metrics."""

import asyncio
import base64
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from api.app import create_app
from api.protocol_io import MESSAGES, json_fields
from api.settings import Settings
from assignor.limits import DEFAULT_LIMITS
from assignor.model import TopicPartition
from assignor.partitioners import partition_for_key
from assignor.protocol import (
    Subscription,
    decode_assignment,
    decode_sticky_user_data,
    encode_sticky_user_data,
    encode_subscription,
)

pytestmark = pytest.mark.anyio


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def settings(tmp_path, **overrides) -> Settings:
    """Settings for a test; ``max_*`` overrides go into its `Limits`."""
    limits = {name: overrides.pop(name) for name in list(overrides) if name in vars(DEFAULT_LIMITS)}
    # (the in-process client's Host is "test")
    return Settings(**{"registry": str(tmp_path / "registry.sqlite3"), "workers": 0, "allowed_hosts": ("test",),
                       "limits": replace(DEFAULT_LIMITS, **limits), **overrides})


async def client_for(app):
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, base_url="http://test")


async def test_healthz_readyz_and_metrics(client):
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    assert (await client.get("/readyz")).json() == {"status": "ready"}
    text = (await client.get("/metrics")).text
    assert 'assignor_http_requests_total{method="GET",route="/healthz",status="200"} 1.0' in text


async def test_plan_returns_assignment_wire_bytes_and_report(client):
    body = {"strategy": "sticky", "topics": {"t0": 4},
            "members": [{"id": "a", "topics": ["t0"], "owned": [["t0", 0], ["t0", 1], ["t0", 2]], "generation": 1},
                        {"id": "b", "topics": ["t0"]}]}
    response = await client.post("/v1/plans", json=body)
    assert response.status_code == 200
    data = response.json()
    assert data["assignment"] == {"a": [["t0", 0], ["t0", 1]], "b": [["t0", 2], ["t0", 3]]}
    assert data["metrics"]["moved"] == 1 and data["metrics"]["valid"] and data["generation"] == 2
    wire = decode_assignment(base64.b64decode(data["members"]["b"]["assignment_b64"]))
    assert wire.partitions == [TopicPartition("t0", 2), TopicPartition("t0", 3)]
    user_data = decode_sticky_user_data(base64.b64decode(data["members"]["a"]["user_data_b64"]), strict=True)
    assert (user_data.generation, user_data.partitions) == (2, [TopicPartition("t0", 0), TopicPartition("t0", 1)])
    metrics = (await client.get("/metrics")).text
    assert "assignor_plan_partitions_count 1.0" in metrics


async def test_java_strategies_over_http(client):
    """A plan as Java's StickyAssignor makes it, with a Java leader's bytes; where Java's
    assignor fails, a 422 saying what Java would do."""
    body = {"strategy": "java-sticky", "topics": {"t": 3},
            "members": [{"id": "a", "topics": ["t"]}, {"id": "b", "topics": ["t"]}]}
    data = (await client.post("/v1/plans", json=body)).json()
    assert data["assignment"] == {"a": [["t", 0], ["t", 2]], "b": [["t", 1]]} and data["metrics"]["valid"]
    wire = decode_assignment(base64.b64decode(data["members"]["a"]["assignment_b64"]))
    assert wire.user_data is None and wire.partitions == [TopicPartition("t", 0), TopicPartition("t", 2)]
    failing = {"strategy": "java-sticky", "topics": {"t": 1},
               "members": [{"id": "m0", "topics": ["t"], "generation": 2},
                           {"id": "m1", "topics": ["t"], "generation": 2},
                           {"id": "m2", "topics": ["t"], "owned": [["t", 2]], "generation": 2}]}
    response = await client.post("/v1/plans", json=failing)
    assert response.status_code == 422 and "IllegalStateException" in response.json()["detail"]
    group = {"topics": body["topics"], "members": body["members"]}
    answer = (await client.post("/v1/whatif", json={"group": group, "events": ["member_leave:b"]})).json()
    assert set(answer["strategies"]) >= {"java-sticky", "java-cooperative-sticky"}
    assert set(answer["comparisons"]) == {"java-sticky vs sticky", "java-cooperative-sticky vs cooperative-sticky"}


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [({"topics": {"t": -1}, "members": []}, 422, "partition count"),
     ({"strategy": "nope", "topics": {}, "members": []}, 422, "unknown strategy"),
     ({"topics": {"t": 1}, "members": [{"topics": ["t"]}]}, 422, "members[0].id: required"),
     ({"topics": {"t": 1}, "members": [], "generation": -5}, 422, "generation"),
     ({"topics": {"t": 1}}, 422, "members: required"),
     ({"topics": {"t": 6}, "members": [], "partition_racks": {"t": [["a"]]}}, 422,
      "partition_racks.t: 1 lists for 6 partitions"),
     ([1, 2], 422, "expected a JSON object")],
)
async def test_bad_plans_are_4xx_with_a_reason(client, body, status, message):
    response = await client.post("/v1/plans", json=body)
    assert response.status_code == status and message in response.json()["detail"]


async def test_malformed_json_is_422(client):
    response = await client.post("/v1/plans", content=b"{not json", headers={"content-type": "application/json"})
    assert response.status_code == 422 and "not valid JSON" in response.json()["detail"]


async def test_limits_are_413_naming_the_limit(tmp_path):
    app = create_app(settings(tmp_path, max_members=2, max_partitions=10, max_body_bytes=2000))
    async with await client_for(app) as c:
        many = {"topics": {"t": 1}, "members": [{"id": f"m{i}", "topics": ["t"]} for i in range(3)]}
        response = await c.post("/v1/plans", json=many)
        assert response.status_code == 413 and "max_members" in response.json()["detail"]
        response = await c.post("/v1/plans", json={"topics": {"t": 11}, "members": []})
        assert response.status_code == 413 and "max_partitions" in response.json()["detail"]
        response = await c.post("/v1/plans", content=b" " * 3000, headers={"content-type": "application/json"})
        assert response.status_code == 413 and "max_body_bytes" in response.json()["detail"]


async def test_bearer_token_guards_v1_only(tmp_path):
    app = create_app(settings(tmp_path, token="s3cret"))
    async with await client_for(app) as c:
        assert (await c.get("/v1/groups")).status_code == 401
        assert (await c.get("/v1/groups", headers={"Authorization": "Bearer wrong"})).status_code == 401
        assert (await c.get("/v1/groups", headers={"Authorization": "Bearer s3cret"})).status_code == 200
        assert (await c.get("/healthz")).status_code == 200
        assert (await c.get("/metrics")).status_code == 200  # by default, no token for the counts


async def test_metrics_can_need_the_token(tmp_path):
    app = create_app(settings(tmp_path, token="s3cret", metrics_need_token=True))
    async with await client_for(app) as c:
        assert (await c.get("/metrics")).status_code == 401
        assert (await c.get("/metrics", headers={"Authorization": "Bearer s3cret"})).status_code == 200
        assert (await c.get("/healthz")).status_code == 200


async def test_full_planning_queue_is_503_with_retry_after(tmp_path):
    app = create_app(settings(tmp_path, max_pending=0))
    planner = app.state.planner
    async with await client_for(app) as c:
        planner.in_flight = planner.capacity  # as if every slot were taken
        response = await c.post("/v1/plans", json={"topics": {}, "members": []})
        planner.in_flight = 0
    assert response.status_code == 503 and response.headers["retry-after"] == "1"


def join_metadata(topics, owned=None, generation=-1) -> str:
    user_data = None if owned is None else encode_sticky_user_data(owned, generation)
    return b64(encode_subscription(Subscription(topics, user_data, (), generation)))


async def test_leader_sync_records_each_generation(client):
    first = {"protocol": "sticky", "generation": 1, "topics": {"t": {"partitions": 6}},
             "members": [{"member_id": m, "metadata_b64": join_metadata(["t"])} for m in ("a", "b")]}
    response = await client.post("/v1/groups/g1/sync", json=first)
    assert response.status_code == 200, response.text
    owned = {m: decode_assignment(base64.b64decode(data)).partitions
             for m, data in response.json()["assignments"].items()}
    assert sorted(map(len, owned.values())) == [3, 3]

    second = {"protocol": "sticky", "generation": 2, "topics": {"t": {"partitions": 6}},
              "members": [{"member_id": m, "metadata_b64": join_metadata(["t"], owned[m], 1)} for m in owned]
              + [{"member_id": "c", "metadata_b64": join_metadata(["t"])}]}
    response = await client.post("/v1/groups/g1/sync", json=second)
    assert response.json()["metrics"]["moved"] == 2

    assert (await client.get("/v1/groups")).json()["groups"][0]["group_id"] == "g1"
    latest = (await client.get("/v1/groups/g1")).json()
    assert latest["generation"] == 2 and len(latest["state"]["members"]) == 3
    history = (await client.get("/v1/groups/g1/history")).json()["generations"]
    assert [(row["generation"], row["members"], row["moved"]) for row in history] == [(1, 2, 0), (2, 3, 2)]
    assert (await client.get("/v1/groups/nope")).status_code == 404


async def test_leader_sync_deals_range_to_static_members_first_and_keeps_their_instance_ids(client):
    """The JoinGroup response's instance ids (v5+) go with each member: Java's range deals to the
    static member first however the member ids sort, and the registry keeps the ids for a
    later what-if. Two members of one instance are a 422 naming the field."""
    members = [{"member_id": "consumer-b", "metadata_b64": join_metadata(["t"]), "group_instance_id": "instance1"},
               {"member_id": "consumer-a", "metadata_b64": join_metadata(["t"])}]
    body = {"protocol": "range", "generation": 1, "topics": {"t": {"partitions": 3}}, "members": members}
    response = await client.post("/v1/groups/static/sync", json=body)
    assert response.status_code == 200, response.text
    owned = {m: [tp.partition for tp in decode_assignment(base64.b64decode(data)).partitions]
             for m, data in response.json()["assignments"].items()}
    assert owned == {"consumer-b": [0, 1], "consumer-a": [2]}
    kept = (await client.get("/v1/groups/static")).json()["state"]["members"]
    assert [m.get("group_instance_id") for m in kept] == ["instance1", None]
    members[1]["group_instance_id"] = "instance1"
    response = await client.post("/v1/groups/static/sync", json={**body, "generation": 2})
    assert response.status_code == 422 and "share group_instance_id 'instance1'" in response.text


async def test_dropped_claims_are_reported_logged_once_and_counted(client, caplog):
    """A zombie and a stale member: the sync's report lists what it dropped, by reason; the log
    has one warning for the generation (not one per retry); /metrics counts by reason."""
    tp = TopicPartition
    body = {"protocol": "sticky", "generation": 5, "topics": {"t": {"partitions": 4}},
            "members": [
                {"member_id": "a", "metadata_b64": join_metadata(["t"], [tp("t", 0), tp("t", 9)], 4)},
                {"member_id": "b", "metadata_b64": join_metadata(["t"], [tp("t", 0), tp("u", 1)], 4)},
                {"member_id": "c", "metadata_b64": join_metadata(["t"], [tp("t", 1)], 2)},
                {"member_id": "d", "metadata_b64": join_metadata(["t"], [tp("t", 1)], 3)}]}
    with caplog.at_level("WARNING", logger="api"):
        for _ in range(2):  # the leader retries the same generation
            response = await client.post("/v1/groups/zombies/sync", json=body)
            assert response.status_code == 200, response.text
    dropped = response.json()["metrics"]["dropped_claims"]
    assert dropped["count"] == 5
    assert {reason: entry["count"] for reason, entry in dropped["by_reason"].items()} == {
        "unknown_topic": 1, "no_such_partition": 1, "same_generation_conflict": 2, "older_generation": 1}
    assert dropped["by_reason"]["older_generation"]["first"] == [{"member": "c", "claim": ["t", 1]}]
    warnings = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert len(warnings) == 1 and "'zombies' generation 5: dropped 5" in warnings[0]
    text = (await client.get("/metrics")).text
    assert 'assignor_dropped_claims_total{reason="same_generation_conflict"} 4.0' in text  # both syncs
    assert 'assignor_dropped_claims_total{reason="not_subscribed"} 0.0' in text


async def test_the_registry_keeps_the_newest_generations(tmp_path):
    app = create_app(settings(tmp_path, history=3))
    async with await client_for(app) as c:
        for generation in range(1, 7):
            body = {"protocol": "range", "generation": generation, "topics": {"t": {"partitions": 2}},
                    "members": [{"member_id": "a", "metadata_b64": join_metadata(["t"])}]}
            assert (await c.post("/v1/groups/g/sync", json=body)).status_code == 200
        rows = (await c.get("/v1/groups/g/history")).json()["generations"]
        assert [r["generation"] for r in rows] == [4, 5, 6]
    app.state.planner.close()


async def test_concurrent_syncs_of_one_group_are_serialised(client):
    bodies = [{"protocol": "range", "generation": g, "topics": {"t": {"partitions": 4}},
               "members": [{"member_id": "a", "metadata_b64": join_metadata(["t"])}]} for g in range(1, 9)]
    answers = await asyncio.gather(*(client.post("/v1/groups/busy/sync", json=b) for b in bodies))
    assert all(a.status_code == 200 for a in answers)
    history = (await client.get("/v1/groups/busy/history")).json()["generations"]
    assert [row["generation"] for row in history] == list(range(1, 9))


@pytest.mark.parametrize(
    ("member", "message"),
    [({"member_id": "a", "metadata_b64": "!!!"}, "not valid base64"),
     ({"member_id": "a", "metadata_b64": b64(b"\x00\x01\x00")}, "member 'a'")],
)
async def test_sync_rejects_bad_metadata_with_the_reason(client, member, message):
    body = {"protocol": "sticky", "generation": 1, "topics": {"t": {"partitions": 1}}, "members": [member]}
    response = await client.post("/v1/groups/g/sync", json=body)
    assert response.status_code == 422 and message in response.json()["detail"]


async def test_whatif_inline_and_from_the_registry(client):
    group = {"topics": {"t": 6}, "members": [{"id": "a", "topics": ["t"]}, {"id": "b", "topics": ["t"]}]}
    response = await client.post("/v1/whatif", json={"group": group, "events": ["member_join:c:t"],
                                                      "strategies": ["sticky", "range"]})
    assert response.status_code == 200, response.text
    result = response.json()["strategies"]
    assert set(result) == {"sticky", "range"} and len(result["sticky"]["steps"]) == 2

    sync = {"protocol": "sticky", "generation": 3, "topics": {"t": {"partitions": 6}},
            "members": [{"member_id": m, "metadata_b64": join_metadata(["t"])} for m in ("a", "b")]}
    await client.post("/v1/groups/reg/sync", json=sync)
    response = await client.post("/v1/whatif", json={"group_id": "reg", "events": ["member_leave:a"],
                                                      "strategies": ["sticky"]})
    steps = response.json()["strategies"]["sticky"]["steps"]
    assert steps[0]["moved"] == 0 and steps[1]["moved"] == 0 and steps[1]["reassigned"] == 3
    assert (await client.post("/v1/whatif", json={"events": []})).status_code == 422
    bad = await client.post("/v1/whatif", json={"group": group, "events": ["explode:now"]})
    assert bad.status_code == 422


async def test_whatif_on_a_classic_cooperative_sticky_snapshot_compares_librdkafkas_too(client):
    """Without strategies named, the service compares what the CLI does (`whatif.compared_for`):
    librdkafka's beside every other on a snapshot of a classic ``cooperative-sticky`` group."""
    group = {"topics": {"t": 6}, "members": [{"id": "a", "topics": ["t"]}, {"id": "b", "topics": ["t"]}]}
    for described, librdkafka in (({**group, "protocol": "classic", "assignor": "cooperative-sticky"}, True),
                                  (group, False)):
        response = await client.post("/v1/whatif", json={"group": described, "events": ["member_leave:a"]})
        assert response.status_code == 200, response.text
        assert ("librdkafka-cooperative-sticky" in response.json()["strategies"]) is librdkafka


async def test_whatif_takes_the_timing_settings_by_kafkas_names(client):
    """``restart_seconds`` and Kafka's settings in snake case (`assignor.whatif.timing`): members
    back before the rebalance their leave starts are one step each, and move nothing; a value
    Kafka would refuse is a 422 naming the field and the limit."""
    group = {"topics": {"t": 6}, "members": [{"id": m, "topics": ["t"], "owned": [["t", 2 * i], ["t", 2 * i + 1]],
                                              "generation": 2} for i, m in enumerate("abc")]}
    body = {"group": group, "events": ["rolling_restart"], "strategies": ["cooperative-sticky"]}
    quick = await client.post("/v1/whatif", json={**body, "restart_seconds": 1, "classic_heartbeat_ms": 3000})
    assert quick.status_code == 200, quick.text
    steps = quick.json()["strategies"]["cooperative-sticky"]["steps"]
    assert len(steps) == 4 and [s["moved"] for s in steps] == [0, 0, 0, 0]
    assert len((await client.post("/v1/whatif", json=body)).json()["strategies"]["cooperative-sticky"]["steps"]) == 7
    for field, value, limit in (("restart_seconds", -1, "greater than or equal to 0"),
                                ("consumer_heartbeat_ms", 0, "greater than or equal to 1"),
                                ("assignment_interval_ms", 2**31, "less than or equal to 2147483647")):
        bad = await client.post("/v1/whatif", json={**body, field: value})
        assert bad.status_code == 422 and field in bad.text and limit in bad.text, bad.text


async def test_whatif_says_when_kafka_refuses_the_conversion(client):
    """``migration_policy``, ``consumer_max_size``, ``assignment_user_data`` (Kafka's names):
    the answer's ``refused`` says where, why and what to change; without ``migrate`` they are a
    422 naming the field."""
    group = {"topics": {"t": 6}, "members": [{"id": m, "topics": ["t"]} for m in "abc"]}
    body = {"group": group, "migrate": "kip848-uniform", "strategies": ["cooperative-sticky"]}
    response = await client.post("/v1/whatif", json={**body, "assignment_user_data": True})
    assert response.status_code == 200, response.text
    refused = response.json()["migration"]["refused"]
    assert "KAFKA-18134" in refused["reason"] and refused["step"].startswith("restart a: rejoin as")
    assert (await client.post("/v1/whatif", json=body)).json()["migration"]["refused"] is None
    bad = await client.post("/v1/whatif", json={"group": group, "migration_policy": "disabled"})
    assert bad.status_code == 422 and "migration_policy: only in a migration rehearsal" in bad.text
    bad = await client.post("/v1/whatif", json={**body, "migration_policy": "never"})
    assert bad.status_code == 422 and "migration_policy" in bad.text


async def test_whatif_migration_rehearsal(client):
    """``migrate``: the classic strategy today (the first of ``strategies``), the conversion to
    KIP-848's consumer protocol, the rolling upgrade and each later event; a classic strategy as
    the target, or a consumer-protocol one as the classic, is a 422 naming the field."""
    group = {"topics": {"t": 6}, "members": [{"id": "a", "topics": ["t"]}, {"id": "b", "topics": ["t"]}],
             "topic_ids": {"t": "NHvsffp9Ed3fxWJQh-gJsQ"}}
    response = await client.post("/v1/whatif", json={"group": group, "events": ["member_join:c:t"],
                                                      "strategies": ["range"], "migrate": "kip848-uniform"})
    assert response.status_code == 200, response.text
    migration = response.json()["migration"]
    assert migration["classic"] == "range" and migration["upgrade"]["restarts"] == 2
    assert migration["events"][0]["saved"]["range"]["classic_paused_members"] == 3
    for body, field in (({"migrate": "sticky"}, "migrate"),
                        ({"migrate": "kip848-range", "strategies": ["kip848-uniform"]}, "migrate")):
        bad = await client.post("/v1/whatif", json={"group": group, "events": [], **body})
        assert bad.status_code == 422 and field in bad.text, bad.text
    plan = await client.post("/v1/plans", json={**group, "strategy": "kip848-range"})
    assert plan.status_code == 200 and "members" not in plan.json()  # no SyncGroup bytes: no classic protocol
    # A snapshot: from the strategy its assignor stands for; on the consumer protocol already, refused.
    snapshot = {**group, "group_id": "g", "protocol": "classic", "assignor": "sticky"}
    response = await client.post("/v1/whatif", json={"group": snapshot, "migrate": "kip848-uniform"})
    assert response.status_code == 200 and response.json()["migration"]["classic"] == "java-sticky"
    response = await client.post("/v1/whatif", json={"group": {**snapshot, "protocol": "consumer", "assignor": "range"},
                                                      "migrate": "kip848-uniform"})
    assert (response.status_code, response.json()["detail"]) == (
        422, "migrate: group 'g' is on KIP-848's consumer protocol already (assignor 'range'): nothing to rehearse; "
             "replay events without migrating")


async def test_protocol_encode_decode_round_trip(client):
    value = {"topics": ["a", "b"], "user_data_b64": None, "owned_partitions": [["a", 1]], "generation_id": 5,
             "rack_id": "r1"}
    encoded = (await client.post("/v1/protocol/encode", json={"type": "subscription", "version": 3,
                                                               "value": value})).json()
    decoded = (await client.post("/v1/protocol/decode", json={"type": "subscription",
                                                               "data_b64": encoded["data_b64"]})).json()
    assert decoded["value"] == {**value, "version": 3}
    sticky = (await client.post("/v1/protocol/encode", json={"type": "sticky_user_data",
                                                              "value": {"partitions": [["t", 0]], "generation": 2}}))
    assert sticky.json()["data_b64"] == b64(encode_sticky_user_data([TopicPartition("t", 0)], 2))
    # The version written, not the request's default 3 (sticky user data has V0 and V1 only).
    assert sticky.json()["version"] == 1
    v0 = await client.post("/v1/protocol/encode", json={"type": "sticky_user_data", "value": {"partitions": []}})
    assert v0.json()["version"] == 0
    cooperative = await client.post("/v1/protocol/encode", json={"type": "cooperative_user_data",
                                                                  "value": {"generation": 3}})
    assert cooperative.json()["version"] is None
    # A field the version asked for cannot hold is refused, not dropped without a word.
    older = await client.post("/v1/protocol/encode", json={"type": "subscription", "version": 0, "value": value})
    assert older.status_code == 422
    assert older.json()["detail"].startswith("value.owned_partitions: Subscription v0 has no owned_partitions")
    two = await client.post("/v1/protocol/encode", json={"type": "subscription", "version": 2,
                                                          "value": {**value, "rack_id": None}})
    assert two.status_code == 200 and two.json()["version"] == 2
    for body in ({"type": "assignment", "data_b64": b64(b"\x00")}, {"type": "subscription", "data_b64": "%%"},
                 {"type": "cooperative_user_data", "data_b64": b64(b"\x00\x01")}):
        response = await client.post("/v1/protocol/decode", json=body)
        assert response.status_code == 422, body
    response = await client.post("/v1/protocol/encode", json={"type": "assignment", "value": {"partitions": [1]}})
    assert response.status_code == 422 and "value.partitions[0]" in response.json()["detail"]


@pytest.mark.parametrize("kind", sorted(MESSAGES))
async def test_each_protocol_view_has_the_fields_of_its_layout(client, kind):
    """The JSON views name the fields `assignor.wire.schema` lays out (one place): a field added
    there shows in the decode answer, and encode accepts exactly those fields."""
    fields = json_fields(MESSAGES[kind])
    value = {"subscription": {"topics": ["a"], "owned_partitions": [["a", 0]], "generation_id": 2, "rack_id": "r"},
             "assignment": {"partitions": [["a", 0]], "user_data_b64": b64(b"x")},
             "sticky_user_data": {"partitions": [["a", 0]], "generation": 2},
             "cooperative_user_data": {"generation": 2}}[kind]
    encoded = await client.post("/v1/protocol/encode", json={"type": kind, "value": value})
    assert encoded.status_code == 200, encoded.text
    decoded = (await client.post("/v1/protocol/decode", json={"type": kind, "data_b64": encoded.json()["data_b64"]}))
    assert set(decoded.json()["value"]) - {"version"} == fields
    unknown = await client.post("/v1/protocol/encode", json={"type": kind, "value": {**value, "extra": 1}})
    assert unknown.status_code == 422 and "'extra'" in unknown.json()["detail"]


async def test_partitions_are_java_exact(client):
    keys = [f"user-{i}" for i in range(50)]
    response = await client.post("/v1/partitions", json={"keys": keys, "partitions": 12})
    assert response.json()["partitions"] == [partition_for_key(k.encode(), 12) for k in keys]
    raw = [b"\x00\xff", b""]
    response = await client.post("/v1/partitions", json={"keys": [b64(k) for k in raw], "encoding": "base64",
                                                          "partitions": 5})
    assert response.json()["partitions"] == [partition_for_key(k, 5) for k in raw]
    assert (await client.post("/v1/partitions", json={"keys": ["x"], "partitions": 0})).status_code == 422
    response = await client.post("/v1/partitions", json={"keys": ["kafka"], "partitions": 7, "partitioner": "fnv1a"})
    assert response.json()["partitions"] == [0xD33C4E1 % 7]


async def test_planning_in_worker_processes(tmp_path):
    app = create_app(settings(tmp_path, workers=1))
    try:
        async with await client_for(app) as c:
            response = await c.post("/v1/plans", json={"topics": {"t": 3}, "members": [{"id": "a", "topics": ["t"]}]})
        assert response.status_code == 200 and response.json()["metrics"]["assigned"] == 3
    finally:
        app.state.planner.close()


async def test_every_planning_process_starts_with_the_service(tmp_path):
    """Started with the service, not by the first requests (starting one holds the event loop)."""
    app = create_app(settings(tmp_path, workers=2))
    try:
        async with app.router.lifespan_context(app):
            pool = app.state.planner._pool()
            assert len(pool._processes) == 2  # (the standard pool's own record of its processes)
    finally:
        app.state.planner.close()


async def test_history_survives_a_restart(tmp_path):
    body = {"protocol": "roundrobin", "generation": 1, "topics": {"t": {"partitions": 2}},
            "members": [{"member_id": "a", "metadata_b64": join_metadata(["t"])}]}
    first = create_app(settings(tmp_path))
    async with await client_for(first) as c:
        assert (await c.post("/v1/groups/kept/sync", json=body)).status_code == 200
    url = "sqlite:///" + str(tmp_path / "registry.sqlite3")
    second = create_app(settings(tmp_path, registry=url))
    async with await client_for(second) as c:
        history = (await c.get("/v1/groups/kept/history")).json()["generations"]
    assert [row["generation"] for row in history] == [1]


def test_unsupported_registry_urls_are_refused():
    with pytest.raises(ValueError, match="unsupported database URL scheme 'mysql'"):
        create_app(Settings(registry="mysql://db/assignor", workers=0))


async def test_simulations_preset_and_own_runs(client):
    response = await client.post("/v1/simulations", json={"preset": "kip480", "records": 2000})
    assert response.status_code == 200, response.text
    runs = response.json()["runs"]
    assert [r["label"] for r in runs] == ["round-robin per record", "sticky (KIP-480)"]
    assert runs[1]["batches"] < runs[0]["batches"]
    own = {"runs": [{"label": "mine", "records": 1000, "brokers": [0.0, 5.0], "partitions": 4}]}
    response = await client.post("/v1/simulations", json=own)
    assert response.json()["runs"][0]["records"] == 1000 and len(response.json()["runs"][0]["bytes_per_broker"]) == 2
    for bad in ({}, {"preset": "kip480", "runs": own["runs"]}, {"preset": "kip480", "records": 10**9}):
        assert (await client.post("/v1/simulations", json=bad)).status_code == 422


async def test_simulated_records_are_limited(tmp_path):
    app = create_app(settings(tmp_path, max_sim_records=1000))
    async with await client_for(app) as c:
        response = await c.post("/v1/simulations", json={"preset": "kip480", "records": 600})
    assert response.status_code == 413 and "max_sim_records" in response.json()["detail"]


async def test_strings_that_are_not_utf8_are_422_not_500(client):
    """JSON can carry lone surrogates (``"\\ud800"``), which no wire format can encode."""
    bodies = [("/v1/protocol/encode", '{"type":"subscription","value":{"topics":["\\ud800"]}}'),
              ("/v1/protocol/encode", '{"type":"subscription","value":{"topics":["a"],"rack_id":"\\ud800"}}'),
              ("/v1/plans", '{"topics":{"\\ud800":2},"members":[{"id":"a","topics":["\\ud800"]}]}'),
              ("/v1/whatif", '{"group":{"topics":{"\\ud800":2},"members":[{"id":"a","topics":["\\ud800"]}]},'
                             '"events":[]}'),
              ("/v1/partitions", '{"keys":["\\ud800"],"partitions":3}')]
    for path, body in bodies:
        response = await client.post(path, content=body, headers={"content-type": "application/json"})
        assert response.status_code == 422 and "UTF-8" in response.json()["detail"], (path, response.text)


async def test_group_locks_exclude_per_group_and_are_forgotten_after():
    """One sync at a time per group; no lock kept for a group once its syncs are done (the
    service sees every group id that ever synced)."""
    import asyncio

    from api.dependencies import GroupLocks

    locks, inside, most = GroupLocks(), {}, {}

    async def sync(group: str) -> None:
        async with locks.hold(group):
            inside[group] = inside.get(group, 0) + 1
            most[group] = max(most.get(group, 0), inside[group])
            await asyncio.sleep(0.001)
            inside[group] -= 1

    await asyncio.gather(*(sync(f"g{i % 50}") for i in range(500)))
    assert set(most.values()) == {1} and len(most) == 50
    assert len(locks) == 0


async def test_large_bodies_and_answers_cross_processes_as_files_and_leave_none(tmp_path, monkeypatch):
    """A body past `transport.SPOOL_BYTES` reaches the worker as a file, an answer past it comes
    back as one (`transport.handed_over`); the answer is the worker's own, and no file is left."""
    import orjson

    from api import transport
    from api.handlers import plans as plans_handlers
    from assignor.json_format import group_to_json
    from assignor.workloads import java_large

    def spooled_files() -> set[str]:  # where the worker spools (its defaults: this process's are patched)
        with transport.spool_file() as probe:
            pass
        transport.discard(transport.Spooled(probe.name, 0))
        folder = Path(probe.name).parent
        return {p.name for p in folder.glob("kafka-sticky-assignor-*")}

    before = spooled_files()
    spool = tmp_path / "spool"
    spool.mkdir()
    monkeypatch.setattr(transport.tempfile, "tempdir", str(spool))
    monkeypatch.setattr(transport.os, "access", lambda *_: False)  # no /dev/shm: the temporary folder
    monkeypatch.setattr(transport, "SPOOL_BYTES", 1000)  # this process's, for bodies; the worker keeps 8 MiB
    made, spool_file = [], transport.spool_file
    monkeypatch.setattr(transport, "spool_file", lambda: made.append(1) or spool_file())
    body = orjson.dumps({**group_to_json(java_large("uniform", 100, 4000, 100)), "strategy": "sticky"})
    app = create_app(settings(tmp_path, workers=1))
    try:
        async with await client_for(app) as c:
            response = await c.post("/v1/plans", content=body, headers={"content-type": "application/json"})
    finally:
        app.state.planner.close()
    assert response.status_code == 200
    assert len(response.content) > 8 << 20  # past the worker's SPOOL_BYTES: it came back as a file
    got = orjson.loads(response.content)
    direct = orjson.loads(plans_handlers.plan(body, settings(tmp_path).limits)[1])
    assert {**got, "plan_seconds": 0} == {**direct, "plan_seconds": 0}
    for _ in range(500):  # the body's file is removed in the background, off the event loop
        if not list(spool.glob("kafka-sticky-assignor-*")):
            break
        await asyncio.sleep(0.01)
    assert made and list(spool.glob("kafka-sticky-assignor-*")) == []  # the body went as a file, now gone
    monkeypatch.undo()
    assert spooled_files() == before


async def test_a_spooled_body_is_removed_whatever_becomes_of_its_request(tmp_path):
    """Refused (503), answered or failed: the file of a spooled body does not outlive the call."""
    from fastapi import HTTPException

    from api import transport
    from api.handlers import plans as plans_handlers
    from api.pool import Planner

    planner = Planner(settings(tmp_path, max_pending=0))
    try:
        for crowded in (True, False):
            path = tmp_path / "body.json"
            path.write_bytes(b'{"topics": {"t": 1}, "members": [{"id": "a", "topics": ["t"]}]}')
            planner.in_flight = planner.capacity if crowded else 0
            if crowded:
                with pytest.raises(HTTPException):
                    await planner.run(plans_handlers.plan, transport.Spooled(str(path), path.stat().st_size), {})
            else:
                status, answer, _ = await planner.run(plans_handlers.plan,
                                                      transport.Spooled(str(path), path.stat().st_size),
                                                      settings(tmp_path).limits)
                assert status == 200 and b'"assigned":1' in answer
            for _ in range(500):  # removed in the background, off the event loop
                if not path.exists():
                    break
                await asyncio.sleep(0.01)
            assert not path.exists()
    finally:
        planner.close()


@pytest.mark.parametrize("spooled", [False, True])
async def test_a_large_answer_leaves_the_event_loop_a_turn_between_chunks(tmp_path, spooled):
    """Each megabyte of a large answer goes out in a step of its own: another task runs between
    any two, even when sending never had to wait (a fast reader on loopback), where a 167 MB
    answer otherwise went out in one step and held /healthz."""
    from api import transport
    from api.bodies import CHUNK, reply

    payload = b"x" * (5 * CHUNK + 7)
    if spooled:
        path = tmp_path / "answer.json"
        path.write_bytes(payload)
        response = reply(200, transport.Spooled(str(path), len(payload)))
    else:
        response = reply(200, payload)
    turns, seen = 0, []

    async def other() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    beside = asyncio.ensure_future(other())
    try:
        async for chunk in response.body_iterator:  # what the server sends, chunk after chunk
            seen.append((bytes(chunk), turns))
    finally:
        beside.cancel()
    assert b"".join(chunk for chunk, _ in seen) == payload and len(seen) == 6
    assert all(later > earlier for (_, earlier), (_, later) in zip(seen, seen[1:]))


@pytest.mark.external
async def test_spooled_files_of_processes_that_no_longer_run_are_swept_at_start(tmp_path, monkeypatch, caplog):
    """A service killed mid-request leaves its spooled files; the next one removes them when it
    starts, and leaves those of processes that still run."""
    import os
    import subprocess
    import sys

    from api import transport

    monkeypatch.setattr(transport, "_SHARED", str(tmp_path / "shm"))
    monkeypatch.setattr(transport.tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "shm").mkdir()
    (tmp_path / "tmp").mkdir()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    dead = int(gone.stdout)
    left = [tmp_path / "shm" / f"{transport.SPOOL_PREFIX}{dead}-abc.json",
            tmp_path / "tmp" / f"{transport.SPOOL_PREFIX}{dead}-x.json"]
    kept = [tmp_path / "shm" / f"{transport.SPOOL_PREFIX}{os.getpid()}-abc.json", tmp_path / "tmp" / "other.json",
            tmp_path / "tmp" / f"{transport.SPOOL_PREFIX}12345678.json"]  # (no PID in the name: not ours to judge)
    for path in left + kept:
        path.write_bytes(b"{}")
    app = create_app(settings(tmp_path, workers=0))
    try:
        with caplog.at_level("WARNING", logger="api"):
            async with app.router.lifespan_context(app):
                pass
    finally:
        app.state.planner.close()
    assert [p for p in left + kept if p.exists()] == kept
    assert sorted(r.args[0] for r in caplog.records if "no longer runs" in r.getMessage()) == sorted(map(str, left))


async def test_the_bearer_token_is_read_as_rfc_9110_says(tmp_path):
    """The scheme had to be ``Bearer`` in that case; with two Authorization headers only the
    first counted; a non-ASCII token could never match (the header read as Latin-1, the token
    as UTF-8)."""
    app = create_app(settings(tmp_path, token="sécret-token"))
    raw = "sécret-token".encode().decode("latin-1")  # what a client sending UTF-8 bytes puts on the wire
    async with await client_for(app) as c:
        for value, status in ((f"Bearer {raw}", 200), (f"bearer {raw}", 200), (f"BEARER  {raw}", 200),
                              (f"Basic {raw}", 401), ("Bearer sécret-token", 401), (f"Bearer {raw}x", 401)):
            response = await c.get("/v1/groups", headers=[("Authorization", value.encode("latin-1"))])
            assert response.status_code == status, value
        twice = await c.get("/v1/groups", headers=[("Authorization", f"Bearer {raw}".encode("latin-1")),
                                                   ("Authorization", b"Bearer other")])
        assert twice.status_code == 401 and twice.json()["detail"] == "send one Authorization header"
        assert "HTTPBearer" in (await c.get("/openapi.json")).json()["components"]["securitySchemes"]
    app.state.planner.close()


async def test_a_registered_group_whose_id_holds_a_slash(client):
    """A group id with '/' (legal in Kafka) comes as %2F: its sync, state and history are its
    own, and one whose id ends in ``/history`` is not the history of another."""
    body = {"protocol": "sticky", "generation": 1, "topics": {"t": {"partitions": 2}},
            "members": [{"member_id": "a", "metadata_b64": join_metadata(["t"])}]}
    for group in ("team/orders", "team/history"):
        encoded = group.replace("/", "%2F")
        response = await client.post(f"/v1/groups/{encoded}/sync", json=body)
        assert response.status_code == 200, response.text
    assert [g["group_id"] for g in (await client.get("/v1/groups")).json()["groups"]] == ["team/history",
                                                                                         "team/orders"]
    assert (await client.get("/v1/groups/team%2Forders")).json()["generation"] == 1
    assert [row["generation"] for row in (await client.get("/v1/groups/team%2Forders/history")).json()[
        "generations"]] == [1]
    assert (await client.get("/v1/groups/team%2Fhistory")).json()["generation"] == 1  # (its state)
    assert "state" in (await client.get("/v1/groups/team%2Fhistory")).json()
    assert (await client.get("/v1/groups/team/history")).status_code == 404  # (the history of "team")
    refused = await client.post("/v1/groups/x%2Fsync", json=body)
    assert (refused.status_code, refused.headers["allow"]) == (405, "GET, DELETE")
    assert (await client.delete("/v1/groups/team%2Forders")).status_code == 200
    assert (await client.get("/v1/groups/team%2Forders")).status_code == 404
