"""JSON views of the consumer-protocol messages for ``/v1/protocol/decode`` and ``/encode``.

A value of the wrong JSON shape is the API's error (`Rejected`, 422); bytes or values the wire
cannot hold are the core's (`ProtocolError`, which the route answers with 422 too)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from typing import Any

from api.errors import Rejected
from assignor import protocol
from assignor.errors import InvalidGroupError
from assignor.json_format import pairs_json, partitions_from_json
from assignor.model import TopicPartition
from assignor.wire.schema import (
    ASSIGNMENT,
    COOPERATIVE_USER_DATA,
    NULLABLE_BYTES,
    STICKY_USER_DATA_V1,
    SUBSCRIPTION,
    Message,
)

#: The JSON name of each layout field whose name the views change: bytes travel as base64 text,
#: and a partition list is ``partitions`` whatever the layout calls it.
_JSON_NAMES = {"assigned_partitions": "partitions", "previous_assignment": "partitions"}


def json_fields(message: Message) -> frozenset[str]:
    """The fields of `message`'s JSON view (``value`` of an encode, the answer of a decode
    without its ``version``), named from its layout (`assignor.wire.schema`)."""
    return frozenset(_JSON_NAMES.get(f.name, f.name + "_b64" if f.type == NULLABLE_BYTES else f.name)
                     for f in message.fields)


#: The message each JSON view shows (sticky user data: V1's fields; V0 has all but one).
MESSAGES = {"subscription": SUBSCRIPTION, "assignment": ASSIGNMENT, "sticky_user_data": STICKY_USER_DATA_V1,
            "cooperative_user_data": COOPERATIVE_USER_DATA}
#: The newest version of any versioned message (the encode request's bound).
HIGHEST_VERSION = max(m.highest_version for m in MESSAGES.values() if m.versioned)


def _pairs(partitions: Iterable[TopicPartition]) -> list[list[str | int]]:
    return [[tp.topic, tp.partition] for tp in partitions]


def _partitions(value: Any, where: str) -> list[TopicPartition]:
    try:
        return partitions_from_json(value, where)
    except InvalidGroupError as error:  # a JSON shape: the API's error
        raise Rejected(422, str(error)) from None


def decode(kind: str, data: bytes) -> dict[str, Any]:
    if kind == "subscription":
        s = protocol.decode_subscription(data)
        return {"version": s.version, "topics": list(s.topics), "user_data_b64": b64(s.user_data),
                "owned_partitions": _pairs(s.owned_partitions), "generation_id": s.generation_id,
                "rack_id": s.rack_id}
    if kind == "assignment":
        # In columns (`read_assignment`), not a TopicPartition per partition: a 64 MiB body holds
        # 11.5 million of them (the whole request in a worker: 6.9 -> 1.9 s, peak 2.5 -> 2.0 GB).
        version, claims, user_data = protocol.read_assignment(data)
        partitions = pairs_json(claims.names, claims.topic, claims.partition.tolist())
        return {"version": version, "partitions": partitions, "user_data_b64": b64(user_data)}
    if kind == "sticky_user_data":
        u = protocol.decode_sticky_user_data(data, strict=True)
        return {"version": 0 if u.generation is None else 1, "partitions": _pairs(u.partitions),
                "generation": u.generation}
    # The leader reads short user data as generation -1 (as Java does); asked to decode, we say why.
    if len(data) < 4:
        raise Rejected(422, f"cooperative user data: expected 4 bytes (INT32 generation), got {len(data)}")
    return {"generation": protocol.decode_cooperative_user_data(data)}


#: The Subscription version each optional field appeared in (`assignor.wire.schema.SUBSCRIPTION`):
#: asked for an older version, the service refuses the field rather than drop it unsaid.
_SUBSCRIPTION_FIELD_SINCE = {f.name: f.since for f in SUBSCRIPTION.fields if f.since}


def encode(kind: str, version: int, value: dict[str, Any]) -> tuple[bytes, int | None]:
    """The bytes, and the version written: `version` for a subscription or an assignment; for
    sticky user data V1 with a generation, else V0; None for cooperative user data (one INT32,
    no version)."""
    try:
        if kind == "subscription":
            _no_unknown(set(value) - json_fields(SUBSCRIPTION))
            for name, since in _SUBSCRIPTION_FIELD_SINCE.items():
                if version < since and value.get(name) not in (None, [], -1):
                    raise Rejected(422, f"value.{name}: Subscription v{version} has no {name} (it appeared in "
                                        f"v{since}); leave it out or encode v{since} or later")
            return protocol.encode_subscription(protocol.Subscription(
                topics=value.get("topics", []), user_data=_unb64(value.get("user_data_b64")),
                owned_partitions=_partitions(value.get("owned_partitions", []), "value.owned_partitions"),
                generation_id=value.get("generation_id", -1), rack_id=value.get("rack_id")), version), version
        if kind == "assignment":
            _no_unknown(set(value) - json_fields(ASSIGNMENT))
            return protocol.encode_assignment(protocol.Assignment(
                _partitions(value.get("partitions", []), "value.partitions"),
                _unb64(value.get("user_data_b64"))), version), version
        if kind == "sticky_user_data":
            _no_unknown(set(value) - json_fields(STICKY_USER_DATA_V1))
            generation = value.get("generation")
            return protocol.encode_sticky_user_data(_partitions(value.get("partitions", []), "value.partitions"),
                                                    generation), 0 if generation is None else 1
        _no_unknown(set(value) - json_fields(COOPERATIVE_USER_DATA))
        # (type checked there)
        return protocol.encode_cooperative_user_data(value.get("generation")), None  # type: ignore[arg-type]
    except (TypeError, AttributeError) as error:  # a field of the wrong JSON type
        raise Rejected(422, f"value: {error}") from None


def _no_unknown(unknown: set[str]) -> None:
    if unknown:
        raise Rejected(422, f"value: unknown field(s) {sorted(unknown)}")


def _unb64(text: Any) -> bytes | None:
    if text is None:
        return None
    return unb64(text, "user_data_b64")


def b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def unb64(text: Any, where: str) -> bytes:
    if not isinstance(text, str):
        raise Rejected(422, f"{where}: expected a base64 string")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as error:
        raise Rejected(422, f"{where}: not valid base64 ({error})") from None

