"""``POST /v1/partitions`` in a planning process.
"""

from __future__ import annotations

import base64
import binascii
import logging
import time

from api.errors import Rejected
from api.handlers.answers import Answer, Handled, answer, validated
from assignor.partitioners.librdkafka import partitions_for_keys_as

log = logging.getLogger("api")

def partitions(body: bytes) -> Answer:
    return answer(_partitions, body)


def _partitions(body: bytes) -> Handled:
    """``POST /v1/partitions`` in a worker: validate with the documented model, decode the keys,
    hash them all at once (`partitions_for_keys_as`)."""
    from api.models import PartitionsRequest

    request = validated(PartitionsRequest, body)
    try:
        if request.encoding == "base64":
            keys = [base64.b64decode(k, validate=True) for k in request.keys]
        else:
            keys = [k.encode("utf-8") for k in request.keys]  # (valid JSON text is valid UTF-8)
    except (binascii.Error, ValueError) as error:
        what = "base64" if request.encoding == "base64" else "UTF-8"
        raise Rejected(422, f"keys: not valid {what} ({error})") from None
    started = time.perf_counter()
    placed = partitions_for_keys_as(request.partitioner, keys, request.partitions).tolist() if keys else []
    return {"partitions": placed}, {"seconds": time.perf_counter() - started}
