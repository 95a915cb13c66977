"""Regex subscriptions (KIP-848) as the broker resolves them: the group coordinator's
``TopicRegexResolver.resolveRegularExpressions`` compiles each with RE2/J (``Pattern.compile``;
one that does not compile takes no topic) and takes every topic of its metadata, internal ones
too, that the regex matches whole (``matcher(topic).matches()``). Matched here by RE2 itself
(``google-re2``): RE2/J's syntax (``\\Q...\\E``, ``[[:digit:]]``, ``\\pL``, which Python's `re`
refuses or reads as another set) and its linear time, where `re` backtracks without end on a
regex such as ``(a+)+b``.
"""

from __future__ import annotations

import functools
from typing import Any

import re2

__all__ = ["matches"]


def matches(regex: str, topic: str) -> bool:
    """Whether the regex subscription `regex` takes `topic`.

    Examples
    --------
    >>> matches(r"orders\\.v[[:digit:]]+", "orders.v12"), matches(r"\\Qorders.v1\\E", "ordersXv1")
    (True, False)
    """
    compiled = _compiled(regex)
    return compiled is not None and compiled.fullmatch(topic) is not None


@functools.lru_cache(maxsize=1024)
def _compiled(regex: str) -> Any:
    """`regex` compiled by RE2, or None where RE2 refuses it (the broker refuses it too)."""
    try:
        return re2.compile(regex)
    except re2.error:
        return None
