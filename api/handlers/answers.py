"""What every handler shares: an answer is ``(status, json_bytes, stats)``; errors in the
caller's input are 4xx answers with the core's message, never exceptions.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import orjson
from pydantic import BaseModel

from api.errors import Rejected, field_path
from assignor._arrays import gc_paused
from assignor.errors import AssignorError, LimitExceededError
from assignor.json_format import strict_loads

log = logging.getLogger("api")

#: A handler's answer: status, the JSON body, and the few figures the service's metrics need.
Answer = tuple[int, bytes, dict[str, Any]]
#: What a handler's body computes: the JSON value to answer with, and its figures for metrics.
Handled = tuple[dict[str, Any], dict[str, Any]]


def answer(handler: Callable[..., Handled], *args: Any) -> Answer:
    """`handler`'s answer, with the cyclic collector paused while it runs. A 10,000-partition
    plan allocates tens of thousands of containers (the answer's pairs, the members), which set
    off a dozen young collections that each walk whatever is alive at the time, and nothing of
    it is cyclic: refcounting frees it all when `_answered` returns, before the collector is
    back. That saves about 1 ms of a 16 ms plan (in-process, alternating). A request that does
    make cycles (an exception's traceback) leaves them to the next collection."""
    with gc_paused():
        return _answered(handler, *args)


def _answered(handler: Callable[..., Handled], *args: Any) -> Answer:
    try:
        out, stats = handler(*args)
        return 200, dumps(out), stats
    except Rejected as error:
        return error.status, dumps({"detail": error.detail}), {}
    except LimitExceededError as error:  # (an input past `assignor.limits`: too large, not malformed)
        return 413, dumps({"detail": str(error)}), {}
    except AssignorError as error:
        return 422, dumps({"detail": str(error)}), {}


def dumps(value: Any) -> bytes:
    """JSON bytes by orjson: several times faster than `json` on a plan of a million pairs."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


def json_object(body: bytes) -> dict[str, Any]:
    """`body` parsed as one JSON object, duplicate keys refused (`refuse_duplicate_keys`)."""
    try:
        data = strict_loads(body)
    except ValueError as error:
        raise Rejected(422, f"body: not valid JSON ({_why(body, error)})") from None
    if not isinstance(data, dict):
        raise Rejected(422, "body: expected a JSON object")
    return data


def refuse_duplicate_keys(body: bytes) -> None:
    """422 when an object of `body` repeats a key. RFC 8259 leaves the meaning of a repeated
    key to each parser (ours keep the last, many filters and proxies the first), so a filter in
    front could check another request than the one planned here (``{"topics": {"a": 1, "a":
    2000000000}}``). The same parse as `json_object`'s: on the largest bodies (a 38 MB group)
    Python's parser with a hook per object takes the time orjson does; it builds the body's
    Python objects, so `validated` runs it on valid bodies only."""
    try:
        strict_loads(body)
    except ValueError as error:
        raise Rejected(422, f"body: not valid JSON ({_why(body, error)})") from None


def _why(body: bytes, error: ValueError) -> str:
    if isinstance(error, UnicodeDecodeError):
        return "not UTF-8"
    # A lone surrogate escape ("\\ud800") is text no UTF-8 can hold: say so.
    what = "a string is not UTF-8, " if "surrogate" in str(error) else ""
    return f"{what}{error}"


def validated(model: type[BaseModel], body: bytes) -> Any:
    """`body` validated by `model`, the one that documents it in OpenAPI; the first problem
    named, as a 422.

    pydantic reads the JSON itself (``model_validate_json``), stopping at the first bad item of
    a list (the models' ``fail_fast``): an invalid body costs no Python objects at all (a
    1 MiB body of ``[{}, {}, ...]`` parsed first cost 2 MB, and before ``fail_fast`` 800 MB),
    and a valid one validates faster than parsed then validated."""
    from pydantic import ValidationError

    try:
        valid = model.model_validate_json(body)
    except ValidationError as error:
        first = error.errors()[0]
        if first["type"] == "json_invalid":
            # A lone surrogate escape ("\\ud800") is text no UTF-8 can hold: say so.
            what = "a string is not UTF-8, " if b"\\ud" in body.lower() and "escape" in first["msg"] else ""
            raise Rejected(422, f"body: not valid JSON ({what}{first['msg']})") from None
        if first["type"] == "model_type" and not first["loc"]:
            raise Rejected(422, "body: expected a JSON object") from None
        where = field_path(first["loc"])
        raise Rejected(422, f"{where}: {first['msg'].removeprefix('Value error, ')}") from None
    # Only a body that validated is read again for repeated keys: it is within every limit,
    # while an invalid one (refused above without a Python object made) could be anything.
    refuse_duplicate_keys(body)
    return valid
