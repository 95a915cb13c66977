"""``POST /v1/protocol/decode`` and ``/encode``: consumer-protocol bytes and their JSON views,
made in a planning worker. The body is read as bytes and parsed there too (`DecodeRequest` and
`EncodeRequest` document it in OpenAPI, and the worker validates with them): a million-partition
assignment to encode is fifteen megabytes of JSON, whose parsing, validation and hand-over to a
worker held the event loop for three seconds."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from api.bodies import documented_body, read_body, reply
from api.dependencies import PlannerDep
from api.handlers import protocol as protocol_handlers
from api.models import DecodeRequest, EncodeRequest

router = APIRouter(tags=["protocol"])


@router.post("/protocol/decode", openapi_extra=documented_body(DecodeRequest))
async def protocol_decode(request: Request, planner: PlannerDep) -> Response:
    """Decode consumer-protocol bytes (base64) into JSON."""
    status, payload, _stats = await planner.run(protocol_handlers.protocol_decode, await read_body(request))
    return reply(status, payload)


@router.post("/protocol/encode", openapi_extra=documented_body(EncodeRequest))
async def protocol_encode(request: Request, planner: PlannerDep) -> Response:
    """Encode JSON (the fields `decode` returns) into consumer-protocol bytes, base64."""
    status, payload, _stats = await planner.run(protocol_handlers.protocol_encode, await read_body(request))
    return reply(status, payload)
