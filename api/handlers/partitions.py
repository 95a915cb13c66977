"""``POST /v1/partitions`` in a planning process.
"""

from __future__ import annotations

import base64
import binascii
import logging
import time

from api.errors import Rejected
from api.handlers.answers import Answer, Handled, answer, validated
from assignor.limits import Limits
from assignor.partitioners.librdkafka import partitions_for_keys_as

log = logging.getLogger("api")

def partitions(body: bytes, limits: Limits) -> Answer:
    return answer(_partitions, body, limits)


def _partitions(body: bytes, limits: Limits) -> Handled:
    """``POST /v1/partitions`` in a worker: validate with the documented model, decode the keys,
    hash them all at once (`partitions_for_keys_as`)."""
    from api.models import PartitionsRequest

    request = validated(PartitionsRequest, body)
    limits.check_keys(len(request.keys))
    if request.encoding == "base64":
        try:
            keys = [base64.b64decode(k, validate=True) for k in request.keys]
        except (binascii.Error, ValueError):
            raise Rejected(422, _first_bad_base64(request.keys)) from None
    else:
        keys = [k.encode("utf-8") for k in request.keys]  # (valid JSON text is valid UTF-8)
    started = time.perf_counter()
    placed = partitions_for_keys_as(request.partitioner, keys, request.partitions).tolist() if keys else []
    return {"partitions": placed}, {"seconds": time.perf_counter() - started}


def _first_bad_base64(keys: list[str]) -> str:
    """The reason naming the first key that is not base64 (looked for once a decode failed)."""
    for i, key in enumerate(keys):
        try:
            base64.b64decode(key, validate=True)
        except (binascii.Error, ValueError) as error:
            return f"keys[{i}]: not valid base64 ({error})"
    return "keys: not valid base64"
