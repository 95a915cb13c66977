"""``POST /v1/protocol/decode`` and ``/encode`` in a planning process.
"""

from __future__ import annotations

import logging

from api import protocol_io
from api.handlers.answers import Answer, Handled, answer, validated
from api.protocol_io import b64, unb64

log = logging.getLogger("api")

def protocol_decode(body: bytes) -> Answer:
    """`body` is validated here with `DecodeRequest`."""
    return answer(_protocol_decode, body)


def _protocol_decode(body: bytes) -> Handled:
    from api.models import DecodeRequest

    request = validated(DecodeRequest, body)
    data = unb64(request.data_b64, "data_b64")
    return {"type": request.type, "value": protocol_io.decode(request.type, data)}, {}


def protocol_encode(body: bytes) -> Answer:
    """`body` is validated here with `EncodeRequest`."""
    return answer(_protocol_encode, body)


def _protocol_encode(body: bytes) -> Handled:
    from api.models import EncodeRequest

    request = validated(EncodeRequest, body)
    data, version = protocol_io.encode(request.type, request.version, request.value)
    return {"type": request.type, "version": version, "data_b64": b64(data)}, {}
