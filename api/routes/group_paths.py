"""Group ids in paths. Kafka lets a group id hold ``/`` (``team/orders``), which a client sends
as ``%2F``, as ``encodeURIComponent`` and ``urllib.parse.quote(id, safe="")`` do; the server
decodes the path before it routes it, so the routes take the id as one segment or more
(``{group_id:group_id}``, `GroupIdConvertor`), each route with a suffix (``/plan``,
``/history``, ``/sync``) declared before the bare one, and `suffix_sent` tells whether the suffix
came as a segment of its own or ended an id sent encoded (``x%2Fhistory`` is the group
``x/history``, not the history of ``x``)."""

from __future__ import annotations

from urllib.parse import unquote

from fastapi import Request
from starlette.convertors import Convertor, register_url_convertor


class GroupIdConvertor(Convertor[str]):
    """A group id in a path: one character or more, ``/`` and line breaks too (Starlette's
    ``path`` takes no line break, and an id that holds one is the handlers' to refuse, naming
    it: `api.handlers.groups.check_group_id`)."""

    regex = r"[\s\S]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("group_id", GroupIdConvertor())


def suffix_sent(request: Request, suffix: str) -> bool:
    """Whether the path as the client sent it ends in the segment `suffix` (percent-decoded):
    else the routed id is the group's id up to its own ``/`` + `suffix`."""
    raw = request.scope.get("raw_path")
    if not isinstance(raw, bytes):  # (a server that does not say: the path as routed)
        return True
    return unquote(raw.rsplit(b"/", 1)[-1].decode("ascii", "replace")) == suffix
