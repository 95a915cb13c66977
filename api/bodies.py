"""Request bodies in and answers out: a body read (and spooled when large) as it arrives, an
answer sent a megabyte at a time, and a body documented in OpenAPI though parsed elsewhere.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator
from typing import Any, cast

from fastapi import HTTPException, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from api import transport
from api.pool import in_background, release

log = logging.getLogger("api")

async def read_body(request: Request) -> bytes | transport.Spooled:
    """The request's body as bytes or, once past `transport.SPOOL_BYTES`, written to a file a chunk
    at a time for the worker to read (`transport.handed_over`): a large body joined into one bytes
    object and pickled for a worker held the event loop 75 ms per 40 MB.

    First it asks the planning pool whether the request may join its queue
    (`api.pool.Planner.admit`): a request that would be refused is refused before its body is
    read, not after."""
    _json_only(request)
    request.app.state.planner.admit()
    chunks: list[bytes] = []
    size, file = 0, None
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if file is not None:
                file.write(chunk)
                continue
            chunks.append(chunk)
            if size > transport.SPOOL_BYTES:
                file = transport.spool_file()
                file.writelines(chunks)
                chunks = []
    except BaseException as error:
        if file is not None:
            file.close()
            release(transport.Spooled(file.name, size))
        if isinstance(error, OSError):  # no room for it where bodies are spooled
            raise HTTPException(503, f"cannot take the body now ({error.strerror}); retry shortly",
                                headers={"Retry-After": "1"}) from None
        raise
    if file is None:
        return b"".join(chunks)
    file.close()
    return transport.Spooled(file.name, size)


def _json_only(request: Request) -> None:
    """415 unless the body is declared JSON. Only JSON is read, and a browser sends JSON to
    another origin only after a CORS preflight, which this service never grants: a page
    elsewhere cannot post here with a "simple" request (``text/plain``, a form) that is then
    read as JSON."""
    declared = request.headers.get("content-type", "")
    media = declared.split(";", 1)[0].strip().lower()
    if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
        raise HTTPException(415, f"content-type: the body must be application/json, got {declared or 'none'!r}")


def documented_body(model: type[BaseModel]) -> dict[str, Any]:
    """The ``openapi_extra`` of a route that reads its body as bytes and has a worker parse and
    validate it (a large body is CPU work that must stay off the event loop): `model`, which the
    worker validates with, documents the body in OpenAPI."""
    extra = cast(dict[str, Any], model.model_config.get("json_schema_extra"))
    return {"requestBody": {"required": True, "content": {"application/json": {
        "schema": model.model_json_schema(ref_template="#/components/schemas/{model}"),
        "example": extra["examples"][0]}}},
        "responses": {"415": {"description": "the body is not declared `application/json`",
                              "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Problem"}}}}}}


def hoist_definitions(document: dict[str, Any]) -> dict[str, Any]:
    """`document` (an OpenAPI document) with the models that `documented_body` bodies nest
    (their ``$defs``: ``PlanMember``, ``TopicSpec``, ...) moved into ``components.schemas``, where
    the bodies' ``$ref``s point: left in place, schema-driven clients and fuzzers cannot resolve
    them and skip those bodies."""
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            content = operation.get("requestBody", {}).get("content", {}) if isinstance(operation, dict) else {}
            for media in content.values():
                for name, definition in media.get("schema", {}).pop("$defs", {}).items():
                    schemas.setdefault(name, definition)
    return document


#: Answers larger than this go out a piece at a time (see `reply`).
CHUNK = 1 << 20


def reply(status: int, payload: bytes | transport.Spooled) -> Response:
    """A JSON answer whose body is already bytes (made in a worker). A large one (a plan of a
    million partitions is 70 MB) is sent a megabyte at a time: written whole, its copy into the
    socket's buffer would hold the event loop for a tenth of a second. A spooled one (a worker
    left it in a file: `transport.handed_over`) is read from its file a megabyte at a time."""
    if isinstance(payload, transport.Spooled):
        return _spooled_reply(status, payload)
    if len(payload) <= CHUNK:
        return Response(payload, status_code=status, media_type="application/json")
    view = memoryview(payload)

    async def pieces() -> AsyncIterator[bytes | memoryview]:
        for start in range(0, len(view), CHUNK):
            yield view[start : start + CHUNK]
            await _others_turn()

    return StreamingResponse(pieces(), status_code=status, media_type="application/json",
                             headers={"Content-Length": str(len(payload))})


async def _others_turn() -> None:
    """Let the event loop run whatever else is ready before the next chunk. Sending a chunk
    suspends only when the socket's buffer is full; to a client that reads as fast as it comes
    (loopback) a whole answer went out in one step of the loop: a 167 MB one held /healthz
    60-140 ms."""
    await asyncio.sleep(0)


def _spooled_reply(status: int, spooled: transport.Spooled) -> Response:
    file = open(spooled.path, "rb")  # closed by the stream, or when the response is dropped
    os.unlink(spooled.path)  # the open file keeps the data: no file is left behind, whatever happens next

    async def pieces() -> AsyncIterator[bytes]:
        try:
            while chunk := file.read(CHUNK):
                yield chunk
                await _others_turn()
        finally:
            in_background(file.close)  # the last close frees the file's pages

    return StreamingResponse(pieces(), status_code=status, media_type="application/json",
                             headers={"Content-Length": str(spooled.size)})
