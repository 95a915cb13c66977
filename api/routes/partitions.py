"""``POST /v1/partitions``: the partition of each key, as a producer would choose it."""

from __future__ import annotations

import base64
import binascii

from fastapi import APIRouter, HTTPException

from api.models import PartitionsRequest
from assignor.partitioners import partition_function, partitions_for_keys

router = APIRouter(tags=["partitioning"])


@router.post("/partitions")
async def partitions(body: PartitionsRequest) -> dict:
    """The partition of each key: Java's producer formula (murmur2 over all partitions) or
    librdkafka's CRC32 or FNV-1a hash partitioner."""
    try:
        keys = [base64.b64decode(k, validate=True) if body.encoding == "base64" else k.encode("utf-8")
                for k in body.keys]
    except (binascii.Error, ValueError) as error:
        what = "base64" if body.encoding == "base64" else "UTF-8 (a lone surrogate?)"
        raise HTTPException(422, f"keys: not valid {what} ({error})") from None
    if body.partitioner != "murmur2":
        return {"partitions": [partition_function(body.partitioner, key, body.partitions) for key in keys]}
    return {"partitions": partitions_for_keys(keys, body.partitions).tolist() if keys else []}
