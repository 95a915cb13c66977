"""The service's own error: an answer other than 200, with its status and a reason that names
the field or limit. Errors of the core (`AssignorError`, `ProtocolError`) become 422 answers
where a route calls it; shapes of JSON the core never sees are checked here, with this error."""

from __future__ import annotations


class Rejected(Exception):
    """An answer other than 200: status and reason."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status, self.detail = status, detail
