"""The orders Java puts names in, which Java-exact plans and bytes depend on.

Java sorts topics and member ids with ``String.compareTo``, which compares UTF-16 code units:
outside the Basic Multilingual Plane that differs from Python's code-point order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["java_key", "java_order", "java_sorted"]


def java_key(text: str) -> bytes:
    """Sort key that orders strings as Java's ``String.compareTo`` does (UTF-16 code units).

    Examples
    --------
    >>> sorted(["\\U0001f600", "\\uffff"], key=java_key) == ["\\U0001f600", "\\uffff"]
    True
    """
    return text.encode("utf-16-be", "surrogatepass")


def java_order(texts: Sequence[str]) -> list[int]:
    """Indices that put `texts` in Java's ``String.compareTo`` order. ASCII strings compare the
    same in UTF-16 and in Python, so they skip the key (the common case: member ids)."""
    if all(map(str.isascii, texts)):
        return sorted(range(len(texts)), key=texts.__getitem__)
    return sorted(range(len(texts)), key=lambda i: java_key(texts[i]))


def java_sorted(texts: Iterable[str]) -> list[str]:
    """`texts` in Java's ``String.compareTo`` order."""
    texts = list(texts)
    return [texts[i] for i in java_order(texts)]
