"""Property tests of the HTTP API from its own OpenAPI schema: no 5xx, answers as documented.

Every check runs except "schema-valid request accepted": the schema cannot say that
``metadata_b64`` must hold a decodable subscription or that an event must name a member of the
group, and a 422 naming the field is the right answer to those.
"""

import asyncio
import tempfile
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from api.app import create_app
from api.models import EXAMPLE_GROUP
from api.settings import Settings
from assignor.limits import Limits

_registry = Path(tempfile.mkdtemp(prefix="assignor-schema-")) / "registry.sqlite3"
#: Limits lowered so that generated input meets them often (and each case stays quick).
FUZZ_LIMITS = Limits(max_members=50, max_partitions=5_000, max_topics=50, max_events=20, max_steps=200,
                     max_sim_records=5_000, max_sim_seconds=30, max_keys=1_000)
TOKEN = "fuzz-token"
app = create_app(Settings(registry=str(_registry), workers=0, limits=FUZZ_LIMITS, token=TOKEN, request_seconds=20))
schema = schemathesis.openapi.from_asgi("/openapi.json", app)


@schema.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
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
