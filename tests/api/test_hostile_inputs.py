"""What a careless user or an attacker on the service's network sends, and what it must get:
a 4xx naming the field or the limit, bounded memory, and a service that goes on."""

import subprocess
import sys

import pytest

from api.app import create_app
from api.models import EXAMPLE_GROUP
from tests.api.test_api import client_for, join_metadata, settings

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("event", "status", "words"),
    [
        # A planning worker allocated 23.6 GB for this one and the kernel killed it.
        ("topic_created:x:2147483647", 413, "max_partitions: partitions after event 1 (topic_created:x:2147483647)"),
        ("partitions_added:orders:3000000", 413, "3000003, the limit is 2000000"),
        ("partitions_added:orders:99999999999", 422, "events[0]: partitions_added: partition count must be an "
                                                     "integer from 0 to 2147483647"),
        ("partitions_added:orders:²", 422, "events[0]"),
    ],
)
async def test_events_past_the_limits_are_refused_before_any_work(client, event, status, words):
    response = await client.post("/v1/whatif", json={"group": EXAMPLE_GROUP, "events": [event]})
    assert response.status_code == status and words in response.json()["detail"], response.text


async def test_a_rolling_restart_counts_its_rebalances(tmp_path):
    app = create_app(settings(tmp_path, max_steps=5))
    async with await client_for(app) as c:
        response = await c.post("/v1/whatif", json={"group": EXAMPLE_GROUP, "events": ["rolling_restart"]})
    app.state.planner.close()
    assert response.status_code == 413
    assert response.json()["detail"] == "max_steps: rebalances by event 1 (rolling_restart) 7, the limit is 5"


async def test_work_that_multiplies_past_the_budget_is_refused_up_front(client):
    """Each count under its limit, the product not: 9,999 members restarted in turn under every
    strategy (a 339 KB body) held a worker 120 s and ended in 504; a 463-byte migration of
    300,000 partitions with its plans wrote an 83 MB answer in 62 s. Both are 413s naming the
    budget, answered at once."""
    members = [{"id": f"m{i}", "topics": ["t"]} for i in range(9_999)]
    response = await client.post("/v1/whatif", json={"group": {"topics": {"t": 9}, "members": members},
                                                     "events": ["rolling_restart"]})
    assert response.status_code == 413, response.text
    assert response.json()["detail"].startswith("max_work: rebalance work (partitions + 5 x members, summed over "
                                                "rebalances and 8 strategies) by event 1 (rolling_restart) ")
    group = {"topics": {f"t{i}": 30_000 for i in range(10)},
             "members": [{"id": f"m{i}", "topics": [f"t{j}" for j in range(10)]} for i in range(3)]}
    response = await client.post("/v1/whatif", json={"group": group, "migrate": "kip848-uniform",
                                                     "include_plans": True})
    assert response.status_code == 413 and response.json()["detail"].startswith("max_work: "), response.text
    small = {"topics": {"t": 300_000}, "members": [{"id": m, "topics": ["t"]} for m in "abc"]}
    response = await client.post("/v1/whatif", json={"group": small, "strategies": ["range"], "include_plans": True,
                                                     "events": ["rolling_restart"]})
    assert response.status_code == 413, response.text[:300]
    assert response.json()["detail"] == ("max_plan_pairs: partitions of the plans answered (every step, 1 strategy) "
                                         "by event 1 (rolling_restart) 2100000, the limit is 2000000")


async def test_a_simulation_spanning_years_is_refused(client):
    """``rate: 1e-8`` ran a worker at 100% CPU for more than five minutes (a loop over every
    simulated second) and held SIGTERM up; now it is a 413 naming the limit."""
    response = await client.post("/v1/simulations", json={"runs": [{"records": 1000, "rate": 0.00000001}]})
    assert response.status_code == 413
    assert response.json()["detail"].startswith("max_sim_seconds: simulated seconds of sends in run 'run' "
                                                "(records / rate) 100000000000, the limit is 3600")


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        # records / rate overflowed to infinity: int(inf) raised in the limit's message, a plain-text 500.
        ({"runs": [{"records": 1000, "rate": 5e-324}]}, 413, "max_sim_seconds: simulated seconds of sends in run "
                                                               "'run' (records / rate) inf, the limit is 3600"),
        # Seeds past 64 bits: the run went through, then its answer could not be written (a 500).
        ({"runs": [{"records": 1000, "seed": 2**64}]}, 422, "runs[0].seed"),
        ({"preset": "kip480", "records": 1000, "seed": -(2**70)}, 422, "seed"),
    ],
)
async def test_simulations_of_extreme_numbers_are_refused_by_name(client, body, status, words):
    response = await client.post("/v1/simulations", json=body)
    assert response.status_code == status and words in response.json()["detail"], response.text


@pytest.mark.parametrize(
    ("path", "body", "words"),
    [
        # Answered 200, and the bytes decoded to the topics d, e, o, r, r, s.
        ("/v1/protocol/encode", {"type": "subscription", "value": {"topics": "orders"}},
         "topics: expected a list of topic names, got str 'orders'"),
        ("/v1/protocol/encode", {"type": "assignment", "value": {"partitions": "t0"}}, "value.partitions"),
        ("/v1/groups/g/sync", {"protocol": "sticky", "generation": 1, "topics": {"t": {"partitions": 6,
                                                                                       "racks": [["a"]]}},
                               "members": []}, "topics.t: racks: 1 lists for 6 partitions"),
        ("/v1/groups/g/sync", {"protocol": "sticky", "generation": 1, "topics": {"t": {"partitions": 1}},
                               "members": [{"member_id": "a", "metadata_b64": "%%"}]},
         "members[0].metadata_b64: not valid base64"),
        ("/v1/groups/g/sync", {"protocol": "sticky", "generation": 1, "topics": {}, "members": [{}]},
         "members[0].member_id: Field required"),
        ("/v1/partitions", {"keys": ["YQ==", "bad!"], "encoding": "base64", "partitions": 3},
         "keys[1]: not valid base64"),
        ("/v1/whatif", {"group": EXAMPLE_GROUP, "events": "member_leave:c1"}, "events: Input should be a valid array"),
    ],
)
async def test_wrong_shapes_are_422_naming_the_field(client, path, body, words):
    response = await client.post(path, json=body)
    assert response.status_code == 422 and words in response.json()["detail"], response.text


_MEASURE = """
import resource, sys
from api.handlers.answers import validated
from api.models import SyncRequest, WhatIfRequest
validated(SyncRequest, b'{"protocol":"sticky","generation":1,"topics":{},"members":[]}')  # (warm)
body = {body}
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    validated({model}, body)
except Exception as error:
    print(type(error).__name__, file=sys.stderr)
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)
"""


@pytest.mark.external
@pytest.mark.parametrize(
    ("model", "body"),
    [("SyncRequest", "b'{\"protocol\":\"sticky\",\"generation\":1,\"topics\":{},\"members\":[' + b','.join([b'{}'] "
                     "* 4_000_000) + b']}'"),
     ("WhatIfRequest", "b'{\"events\":[' + b','.join([b'1'] * 6_000_000) + b']}'"),
     ("SyncRequest", "b'{\"protocol\":\"sticky\",\"generation\":1,\"topics\":{' + b','.join(b'\"%d\":1' % i for i "
                     "in range(1_000_000)) + b'},\"members\":[]}'")],
)
@pytest.mark.filterwarnings("ignore")
def test_an_invalid_body_costs_less_memory_than_itself(model, body):
    """A 1 MiB body of ``[{}, {}, ...]`` cost its worker 824 MiB to answer 422: pydantic kept
    one error per bad item. Validation now stops at the first, reading the JSON itself."""
    script = _MEASURE.replace("{model}", model).replace("{body}", body)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    size = len(eval(body))  # noqa: S307  (our own literal)
    assert out.stderr.strip() == "Rejected" and int(out.stdout) < 2 * size, (out.stdout, size)


async def test_made_up_methods_do_not_grow_the_metrics(client):
    """9,000 requests with made-up 8-12 KB methods grew ``/metrics`` to 194 MB: each method was
    a label. Methods outside the standard ones are counted as ``other``."""
    sizes = []
    for batch in range(3):
        for i in range(50):
            await client.request(f"X{batch}{i:04d}" + "M" * 2000, "/healthz")
        sizes.append(len((await client.get("/metrics")).text))
    text = (await client.get("/metrics")).text
    assert 'method="other",route="/healthz",status="405"} 150.0' in text
    assert sizes[2] - sizes[1] < 50 and "MMMM" not in text, sizes


@pytest.mark.parametrize(
    ("path", "words"),
    [("/v1/groups/%FF", "U+FFFD"), ("/v1/groups/%C0%AE%C0%AE", "U+FFFD"), ("/v1/groups/%ED%A0%80", "U+FFFD"),
     ("/v1/groups/a%00b", "character 1 (U+0000) is not printable"), ("/v1/groups/a%0D%0Ab", "not printable"),
     ("/v1/groups/%E2%80%AEevil", "U+202E"), ("/v1/groups/" + "g" * 256, "256 characters, the limit is 255")],
)
async def test_group_ids_that_would_collide_or_mislead_are_refused(client, path, words):
    """``%FF``, ``%C0%AE%C0%AE`` and ``%ED%A0%80`` were all stored as U+FFFD (different ids, one
    group); NUL, CR/LF and U+202E were stored as given."""
    for method, suffix in (("GET", ""), ("GET", "/history"), ("DELETE", ""), ("POST", "/sync")):
        body = {"protocol": "sticky", "generation": 1, "topics": {}, "members": []} if method == "POST" else None
        response = await client.request(method, path + suffix, json=body)
        assert response.status_code == 422 and words in response.json()["detail"], (method, suffix, response.text)


async def test_the_registry_moves_forward_and_a_group_can_be_forgotten(client):
    def sync(generation):
        return {"protocol": "sticky", "generation": generation, "topics": {"t": {"partitions": 2}},
                "members": [{"member_id": "a", "metadata_b64": join_metadata(["t"])}]}

    assert (await client.post("/v1/groups/g/sync", json=sync(5))).status_code == 200
    older = await client.post("/v1/groups/g/sync", json=sync(3))
    assert older.status_code == 409
    assert older.json()["detail"] == "generation: 3 is older than group 'g''s latest generation 5"
    assert (await client.post("/v1/groups/g/sync", json=sync(5))).status_code == 200  # a retry
    assert [r["generation"] for r in (await client.get("/v1/groups/g/history")).json()["generations"]] == [5]
    deleted = await client.delete("/v1/groups/g")
    assert deleted.json() == {"group_id": "g", "deleted_generations": 1}
    assert (await client.delete("/v1/groups/g")).status_code == 404
    assert (await client.post("/v1/groups/g/sync", json=sync(1))).status_code == 200  # starts again


async def test_a_full_registry_refuses_new_groups(tmp_path):
    app = create_app(settings(tmp_path, max_groups=1))
    body = {"protocol": "range", "generation": 1, "topics": {}, "members": []}
    async with await client_for(app) as c:
        assert (await c.post("/v1/groups/a/sync", json=body)).status_code == 200
        full = await c.post("/v1/groups/b/sync", json=body)
        assert (await c.post("/v1/groups/a/sync", json={**body, "generation": 2})).status_code == 200
    app.state.planner.close()
    assert full.status_code == 507 and full.json()["detail"].startswith("max_groups: the registry holds 1 groups")


async def test_groups_are_listed_in_pages(client):
    body = {"protocol": "range", "generation": 1, "topics": {}, "members": []}
    for name in ("a", "b", "c"):
        await client.post(f"/v1/groups/{name}/sync", json=body)
    first = (await client.get("/v1/groups", params={"limit": 2})).json()
    second = (await client.get("/v1/groups", params={"limit": 2, "after": first["next"]})).json()
    assert [g["group_id"] for g in first["groups"]] == ["a", "b"] and first["next"] == "b"
    assert [g["group_id"] for g in second["groups"]] == ["c"] and second["next"] is None
    assert (await client.get("/v1/groups", params={"limit": 5000})).status_code == 422


def test_the_library_says_the_same_words():
    """The CLI and the library meet the same limits with the same words, as our own error."""
    from assignor import whatif
    from assignor.errors import LimitExceededError, ProtocolError
    from assignor.json_format import group_from_json
    from assignor.partitioners import simulate
    from assignor.protocol import Subscription

    with pytest.raises(LimitExceededError, match="max_partitions: partitions after event 1"):
        whatif.run(group_from_json(EXAMPLE_GROUP), [whatif.parse_event("topic_created:x:2147483647")])
    with pytest.raises(LimitExceededError, match="max_sim_seconds"):
        simulate.run(simulate.Config(records=1000, rate=1e-8))
    with pytest.raises(ProtocolError, match="topics: expected a list of topic names"):
        Subscription("orders")
