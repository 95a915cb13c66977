"""Property tests of the HTTP API from its own OpenAPI schema: no 5xx, answers as documented.

Every check runs except "schema-valid request accepted": the schema cannot say that
``metadata_b64`` must hold a decodable subscription or that an event must name a member of the
group, and a 422 naming the field is the right answer to those.
"""

import asyncio
import atexit
import json
import shutil
import tempfile
from pathlib import Path
from urllib.parse import quote

import httpx
import pydantic
import pytest
import schemathesis
from hypothesis import HealthCheck, example, given
from hypothesis import strategies as st
from schemathesis.specs.openapi.checks import positive_data_acceptance

from api.app import create_app
from api.handlers import plans as plans_handlers
from api.models import EXAMPLE_GROUP, PlanRequest
from api.settings import Settings
from assignor.limits import Limits
from tests.budget import examples

_directory = tempfile.mkdtemp(prefix="assignor-schema-")  # (the app is made at import, for schemathesis)
atexit.register(shutil.rmtree, _directory, ignore_errors=True)
_registry = Path(_directory) / "registry.sqlite3"
#: Limits lowered so that generated input meets them often (and each case stays quick).
FUZZ_LIMITS = Limits(max_members=50, max_partitions=5_000, max_topics=50, max_events=20, max_steps=200,
                     max_sim_records=5_000, max_sim_seconds=30, max_keys=1_000)
TOKEN = "fuzz-token"
app = create_app(Settings(registry=str(_registry), workers=0, limits=FUZZ_LIMITS, token=TOKEN, request_seconds=20))
schema = schemathesis.openapi.from_asgi("/openapi.json", app)


@schema.parametrize()
@examples(40, suppress_health_check=list(HealthCheck))
def test_api_never_fails_on_generated_input(case):
    """Every endpoint, with the token (schemathesis also checks that a wrong or missing one is
    refused): no 5xx, answers as the schema says."""
    case.call_and_validate(headers={"Authorization": f"Bearer {TOKEN}"}, excluded_checks=[positive_data_acceptance])


_AUTH = {"Authorization": f"Bearer {TOKEN}"}
#: Free-form strings as someone hostile would write them.
HOSTILE = ["", " ", ":", "::::", "a" * 10_000, "\x00", "\r\n", "\u202e", "\ufffd", "😀", "%FF", "../../etc/passwd",
           "'; DROP TABLE generations; --", "${jndi:ldap://x}", "1e309", "-0", "NaN", "²", "٣", "9" * 400]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_strings_get_4xx_never_5xx(text):
    """Events, topic names, member ids and group ids made of hostile strings: every answer is
    200 or a 4xx, and planning works afterwards."""
    asyncio.run(_hostile(text))


async def _hostile(text: str) -> None:
    group = {"topics": {text: 3, "t": 2}, "members": [{"id": text, "topics": [text, "t"]}]}
    path = quote(text, safe="")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test",
                                 headers=_AUTH) as client:
        answers = [
            await client.post("/v1/whatif", json={"group": EXAMPLE_GROUP, "events": [
                text, f"partitions_added:orders:{text}", f"topic_created:{text}:{text}", f"member_join:{text}:{text}",
                f"member_leave:{text}"]}),
            await client.post("/v1/whatif", json={"group": group, "events": [f"subscribe:{text}:t"]}),
            await client.post("/v1/plans", json=group),
            await client.post("/v1/partitions", json={"keys": [text], "partitions": 3}),
            await client.post("/v1/partitions", json={"keys": [text], "encoding": "base64", "partitions": 3}),
            await client.post("/v1/protocol/decode", json={"type": "subscription", "data_b64": text}),
            await client.get(f"/v1/groups/{path}"),
            await client.post(f"/v1/groups/{path}/sync", json={"protocol": "range", "generation": 1, "topics": {},
                                                                "members": []}),
        ]
        for rate in (1e-300, 1e-8, 1e300):
            answers.append(await client.post("/v1/simulations",
                                             json={"runs": [{"records": 1000, "rate": rate, "label": text}]}))
        assert all(a.status_code < 500 for a in answers), [(a.request.url.path, a.status_code, a.text)
                                                           for a in answers if a.status_code >= 500]
        assert (await client.post("/v1/plans", json=EXAMPLE_GROUP)).status_code == 200


# --- One verdict for a body: the documented schema (`PlanRequest`) and the worker ------------

_ID = st.sampled_from(["AAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAQ", "short", "NHvsffp9Ed3fxWJQh+gJsQ", 7, None])
_INT = st.one_of(st.integers(-3, 5), st.sampled_from([2**31 - 1, 2**31, -(2**31), -(2**31) - 1, True, 1.0, "1", None]))
_TOPIC = st.sampled_from(["a", "b", "c", 3, None])
#: Partition counts: small (so that no body meets the service's limits, a 413 of its own), or wrong.
_COUNT = st.one_of(st.integers(-1, 5), st.sampled_from([2**31, True, 1.0, "1", None]))


@st.composite
def plan_bodies(draw) -> dict:
    """Group bodies near the rules: each field often right, sometimes wrong in one of the ways a
    client gets it wrong (types, ranges, shapes, nulls, unknown keys)."""
    body: dict = {"topics": draw(st.dictionaries(st.sampled_from(["a", "b", "c"]), _COUNT, max_size=3))}
    members = []
    for i in range(draw(st.integers(0, 3))):
        member: dict = {"id": draw(st.sampled_from([f"m{i}", "m0", 5, None]))}
        if draw(st.booleans()):
            member["topics"] = draw(st.one_of(st.lists(_TOPIC, max_size=3), st.just("a")))
        if draw(st.booleans()):
            member["owned"] = draw(st.lists(st.one_of(st.tuples(_TOPIC, _INT).map(list), st.just(["a", 1, 2]),
                                                      st.just("a-1")), max_size=3))
        if draw(st.booleans()):
            member["generation"] = draw(_INT)
        if draw(st.booleans()):
            member["rack"] = draw(st.sampled_from(["r1", None, 3]))
        if draw(st.integers(0, 2)) == 0:
            member["group_instance_id"] = draw(st.sampled_from(["static-1", "static-2", "", "a b", "x" * 250, 3,
                                                                None]))
        if draw(st.integers(0, 9)) == 0:
            member["extra"] = 1
        if draw(st.integers(0, 3)) == 0:  # a snapshot's member fields, right or wrong
            member["target"] = draw(st.one_of(st.lists(st.tuples(_TOPIC, _INT).map(list), max_size=2), st.none()))
        if draw(st.integers(0, 3)) == 0:
            member["member_epoch"] = draw(st.one_of(_INT, st.none(), st.just(True), st.just("7")))
        if draw(st.integers(0, 3)) == 0:
            member["member_type"] = draw(st.sampled_from(["classic", "consumer", "Classic", None, 0]))
        if draw(st.integers(0, 3)) == 0:
            member["client_id"] = draw(st.sampled_from(["c1", "", None, 3]))
        if draw(st.integers(0, 3)) == 0:
            member["topic_regex"] = draw(st.sampled_from(["a|b", r"\Qa\E", None, 3]))
        members.append(member)
    if draw(st.integers(0, 9)):
        body["members"] = members
    if draw(st.booleans()):
        body["topic_ids"] = draw(st.dictionaries(st.sampled_from(["a", "b", "x"]), _ID, max_size=2))
    if draw(st.integers(0, 3)) == 0:
        body["partition_racks"] = {"a": draw(st.lists(st.lists(st.sampled_from(["r1", "r2"]), max_size=2),
                                                      max_size=3))}
    if draw(st.integers(0, 4)) == 0:
        body["strategy"] = draw(st.sampled_from(["sticky", "range", "nope", 3]))
    if draw(st.integers(0, 4)) == 0:
        body["generation"] = draw(_INT)
    for key, values in (("group_id", st.sampled_from(["g", "", None, 3])),
                        ("protocol", st.sampled_from(["classic", "consumer", "eager", None])),
                        ("assignor", st.sampled_from(["range", None, 3])),
                        ("group_epoch", st.one_of(_INT, st.none(), st.just(False))),
                        ("assignment_epoch", st.one_of(_INT, st.just("1"))),
                        ("assignment_user_data", st.sampled_from([True, False, None, "true", 1]))):
        if draw(st.integers(0, 5)) == 0:  # a snapshot's group fields, right or wrong
            body[key] = draw(values)
    return body


@examples(400)
@given(plan_bodies())
@example({"topics": {"a": 2}, "members": [{"id": "m", "owned": [["a", 2**31]]}]})
@example({"topics": {"a": 2}, "members": [{"id": "m", "generation": None}]})
@example({"topics": {"a": 2}, "members": [{"id": "m"}], "topic_ids": {"a": "AAAAAAAAAAAAAAAAAAAAAA"}})
@example({"topics": {"a": 2, "b": 1}, "members": [], "topic_ids": {"a": "AAAAAAAAAAAAAAAAAAAAAA",
                                                                   "b": "AAAAAAAAAAAAAAAAAAAAAA"}})
@example({"group_id": "g", "protocol": "consumer", "assignor": "uniform", "group_epoch": 3, "assignment_epoch": 3,
          "topics": {"a": 2}, "members": [{"id": "m", "topics": ["a"], "owned": [["a", 0]], "target": [["a", 1]],
                                           "member_epoch": 3, "rack": None, "client_id": "c", "topic_regex": "a"}]})
@example({"topics": {"a": 2}, "members": [{"id": "m"}, {"id": "m"}]})
@example({"topics": {"a": 2}, "members": [{"id": "m", "group_instance_id": "s"},
                                          {"id": "n", "group_instance_id": "s"}]})
def test_the_documented_body_and_the_worker_give_one_verdict(body):
    """What the OpenAPI document promises for ``/v1/plans`` is what the worker does: a body the
    documented model (`PlanRequest`, with its validators) accepts is planned, one it refuses is
    refused (routes/plans.py)."""
    text = json.dumps(body)
    try:
        PlanRequest.model_validate_json(text)
        documented = True
    except pydantic.ValidationError:
        documented = False
    status, payload, _ = plans_handlers.plan(text.encode(), Limits())
    assert status in (200, 422), (body, status, payload)
    assert (status == 200) == documented, (body, status, payload)


def test_the_openapi_document_resolves_every_reference():
    """Every ``$ref`` names a schema of ``components.schemas`` (schema-driven clients and fuzzers
    skip bodies whose references they cannot resolve), and the errors a call can meet are listed."""
    document = app.openapi()
    schemas = document["components"]["schemas"]
    references: set[str] = set()

    def walk(node) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                references.add(node["$ref"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(document)
    assert {"PlanMember", "TopicSpec", "SimulationConfig", "SyncMember"} <= set(schemas)
    assert all(ref.removeprefix("#/components/schemas/") in schemas for ref in references), references
    responses = document["paths"]["/v1/plans"]["post"]["responses"]
    assert {"200", "401", "413", "415", "422", "500", "503", "504", "507"} <= set(responses)
    body = document["paths"]["/v1/plans"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert "topic_ids" in body["properties"] and "$defs" not in body
