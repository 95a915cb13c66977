"""``POST /v1/protocol/decode`` and ``/encode``: consumer-protocol bytes and their JSON views."""

from __future__ import annotations

import base64

from fastapi import APIRouter, HTTPException

from api import protocol_io, work
from api.errors import Rejected
from api.models import DecodeRequest, EncodeRequest
from assignor.protocol import ProtocolError

router = APIRouter(tags=["protocol"])


@router.post("/protocol/decode")
async def protocol_decode(body: DecodeRequest) -> dict:
    """Decode consumer-protocol bytes (base64) into JSON."""
    try:
        return {"type": body.type, "value": protocol_io.decode(body.type, work.unb64(body.data_b64, "data_b64"))}
    except Rejected as error:
        raise HTTPException(error.status, error.detail) from None
    except ProtocolError as error:
        raise HTTPException(422, str(error)) from None


@router.post("/protocol/encode")
async def protocol_encode(body: EncodeRequest) -> dict:
    """Encode JSON (the fields `decode` returns) into consumer-protocol bytes, base64."""
    try:
        data = protocol_io.encode(body.type, body.version, body.value)
    except Rejected as error:
        raise HTTPException(error.status, error.detail) from None
    except ProtocolError as error:
        raise HTTPException(422, str(error)) from None
    return {"type": body.type, "version": body.version, "data_b64": base64.b64encode(data).decode()}
