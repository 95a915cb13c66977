"""``POST /v1/protocol/decode`` and ``/encode``: consumer-protocol bytes and their JSON views,
made in a planning worker (a million-partition assignment is CPU work)."""

from __future__ import annotations

from fastapi import APIRouter, Response

from api import work
from api.models import DecodeRequest, EncodeRequest
from api.service import PlannerDep, reply

router = APIRouter(tags=["protocol"])


@router.post("/protocol/decode")
async def protocol_decode(body: DecodeRequest, planner: PlannerDep) -> Response:
    """Decode consumer-protocol bytes (base64) into JSON."""
    status, payload, _stats = await planner.run(work.protocol_decode, body.model_dump())
    return reply(status, payload)


@router.post("/protocol/encode")
async def protocol_encode(body: EncodeRequest, planner: PlannerDep) -> Response:
    """Encode JSON (the fields `decode` returns) into consumer-protocol bytes, base64."""
    status, payload, _stats = await planner.run(work.protocol_encode, body.model_dump())
    return reply(status, payload)
