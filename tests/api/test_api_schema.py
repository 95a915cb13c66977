"""Property tests of the HTTP API from its own OpenAPI schema: no 5xx, answers as documented.

Every check runs except "schema-valid request accepted": the schema cannot say that
``metadata_b64`` must hold a decodable subscription or that an event must name a member of the
group, and a 422 naming the field is the right answer to those.
"""

import copy
import json
import tempfile
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from pydantic import ValidationError
from schemathesis.specs.openapi.checks import positive_data_acceptance

from api.app import create_app
from api.handlers import plans as plans_handlers
from api.models import EXAMPLE_GROUP, PlanRequest
from api.settings import Settings
from assignor.limits import Limits

_registry = Path(tempfile.mkdtemp(prefix="assignor-schema-")) / "registry.sqlite3"
app = create_app(Settings(registry=str(_registry), workers=0, limits=Limits(max_sim_records=5_000)))
schema = schemathesis.openapi.from_asgi("/openapi.json", app)


@schema.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_never_fails_on_generated_input(case):
    case.call_and_validate(excluded_checks=[positive_data_acceptance])


def _plan_body(change=None) -> dict:
    body = {"strategy": "sticky", **copy.deepcopy(EXAMPLE_GROUP)}
    if change:
        change(body)
    return body


PLAN_BODIES = {
    "the example": _plan_body(),
    "no topics": _plan_body(lambda b: b.pop("topics")),
    "topics as a list": _plan_body(lambda b: b.__setitem__("topics", ["orders"])),
    "a negative partition count": _plan_body(lambda b: b["topics"].__setitem__("orders", -1)),
    "a count that is true": _plan_body(lambda b: b["topics"].__setitem__("orders", True)),
    "a member without id": _plan_body(lambda b: b["members"][0].pop("id")),
    "a member field unknown": _plan_body(lambda b: b["members"][0].__setitem__("x", 1)),
    "an owned entry that is no pair": _plan_body(lambda b: b["members"][0].__setitem__("owned", [["orders"]])),
    "a negative owned partition (refused, as by every reader of a group)": _plan_body(
        lambda b: b["members"][0].__setitem__("owned", [["orders", -1]])),
    "a hostile claim (dropped, not refused)": _plan_body(
        lambda b: b["members"][0].__setitem__("owned", [["orders", 99]])),
    "no members": _plan_body(lambda b: b.pop("members")),
    "racks one list short": _plan_body(lambda b: b.__setitem__("partition_racks", {"orders": [["r"]] * 5})),
    "racks of every partition": _plan_body(lambda b: b.__setitem__("partition_racks", {"orders": [["r"]] * 6})),
    "racks of an unknown topic": _plan_body(lambda b: b.__setitem__("partition_racks", {"x": []})),
    "a negative member generation (unknown)": _plan_body(lambda b: b["members"][0].__setitem__("generation", -2)),
    "a member generation past INT32": _plan_body(lambda b: b["members"][0].__setitem__("generation", 2**31)),
    "a rack that is a number": _plan_body(lambda b: b["members"][0].__setitem__("rack", 3)),
    "an unknown field": _plan_body(lambda b: b.__setitem__("x", 1)),
    "an unknown strategy": _plan_body(lambda b: b.__setitem__("strategy", "nope")),
    "a negative group generation": _plan_body(lambda b: b.__setitem__("generation", -1)),
    "topic names that are numbers": _plan_body(lambda b: b["members"][0].__setitem__("topics", [1])),
    "racks of the wrong shape": _plan_body(lambda b: b.__setitem__("partition_racks", {"orders": "r"})),
    "members null": _plan_body(lambda b: b.__setitem__("members", None)),
    "an id that is a number": _plan_body(lambda b: b["members"][0].__setitem__("id", 5)),
}


@pytest.mark.parametrize("name", PLAN_BODIES)
def test_the_plan_schema_and_the_worker_agree(name):
    """`/v1/plans` parses its body in a planning worker (off the event loop), with
    `json_format`, while `PlanRequest` documents it in OpenAPI: both give each body the same
    verdict. (A schema cannot say that member ids are unique; the worker adds that, 422.)"""
    body = PLAN_BODIES[name]
    try:
        PlanRequest.model_validate_json(json.dumps(body))
        documented = True
    except ValidationError:
        documented = False
    status = plans_handlers.plan(json.dumps(body).encode(), Settings().limits)[0]
    assert documented == (status == 200), (documented, status)
