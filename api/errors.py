"""The service's own error: an answer other than 200, with its status and a reason that names
the field or limit. Errors of the core (`AssignorError`, `ProtocolError`) become 422 answers
where a route calls it; shapes of JSON the core never sees are checked here, with this error."""

from __future__ import annotations

from collections.abc import Sequence

from assignor.errors import AssignorError


class Rejected(AssignorError):
    """An answer other than 200: status and reason. One of the library's errors (`AssignorError`,
    the one tree a caller catches), with the HTTP status the service answers it with."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status, self.detail = status, detail


def field_path(location: Sequence[str | int]) -> str:
    """A validation error's location written one way everywhere: ``members[0].metadata_b64``
    (an index in brackets; FastAPI's leading ``body`` left out; ``body`` for the body itself)."""
    parts = list(location[1:] if location and location[0] == "body" else location)
    path = ""
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "body"
