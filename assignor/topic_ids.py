"""Kafka topic ids (``org.apache.kafka.common.Uuid``) as the broker's assignors see them.

The broker's assignors break ties by topic id: they sort topics by ``Uuid.compareTo`` (signed
most significant 64 bits, then signed least significant) and keep them in ``HashSet``s and
``HashMap``s iterated by ``Uuid.hashCode``. Real clusters draw ids at random, so an exact replay
takes them as input (`assignor.Group`'s ``topic_ids``); without them each id is derived from the
topic's name by the rule the reference recordings use: the first 16 bytes of SHA-256 of
``"topic:" + name`` (most significant 8, then least significant 8, big-endian).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping
from typing import NamedTuple

from assignor.errors import InvalidGroupError

__all__ = ["TopicId", "derived_topic_id", "parse_topic_id", "text_of_bytes", "topic_ids_of"]


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


class TopicId(NamedTuple):
    """A topic id: its two signed 64-bit halves, as ``Uuid`` holds them."""

    msb: int
    lsb: int

    @classmethod
    def of_bytes(cls, raw: bytes) -> TopicId:
        return cls(_signed(int.from_bytes(raw[:8], "big")), _signed(int.from_bytes(raw[8:16], "big")))

    def java_hash(self) -> int:
        """``Uuid.hashCode``: ``(int) (x >>> 32) ^ (int) x`` with ``x = msb ^ lsb``, unsigned."""
        x = (self.msb ^ self.lsb) & 0xFFFF_FFFF_FFFF_FFFF
        return ((x >> 32) ^ x) & 0xFFFFFFFF

    def __str__(self) -> str:
        """``Uuid.toString``: base64url without padding."""
        mask = 0xFFFF_FFFF_FFFF_FFFF
        return text_of_bytes((self.msb & mask).to_bytes(8, "big") + (self.lsb & mask).to_bytes(8, "big"))


def text_of_bytes(raw: bytes) -> str:
    """``Uuid.toString`` of a topic id's 16 bytes as the wire carries them (``str`` of
    `TopicId.of_bytes`, without the halves)."""
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def derived_topic_id(name: str) -> TopicId:
    """The id the reference recordings give topic `name`.

    Examples
    --------
    >>> str(derived_topic_id("t0000"))
    'NHvsffp9Ed3fxWJQh-gJsQ'
    """
    return TopicId.of_bytes(hashlib.sha256(("topic:" + name).encode("utf-8")).digest())


def parse_topic_id(text: object, topic: str = "?") -> TopicId:
    """A topic id as Kafka prints it (``Uuid.fromString``: 22 base64url characters).

    Raises
    ------
    InvalidGroupError
        When `text` is not 22 base64url characters decoding to 16 bytes.
    """
    if not isinstance(text, str) or len(text) != 22:
        raise InvalidGroupError(f"topic_ids[{topic!r}]: a topic id is 22 base64url characters, got {text!r}")
    try:
        raw = base64.urlsafe_b64decode(text + "==")
    except (binascii.Error, ValueError):
        raise InvalidGroupError(f"topic_ids[{topic!r}]: {text!r} is not base64url") from None
    if len(raw) != 16 or any(c in text for c in "+/="):
        raise InvalidGroupError(f"topic_ids[{topic!r}]: {text!r} is not base64url")
    return TopicId.of_bytes(raw)


def topic_ids_of(names: Mapping[str, int] | list[str], given: Mapping[str, str] | None) -> dict[str, TopicId]:
    """Each topic's id: from `given` where it names the topic, else derived from the name.

    Raises
    ------
    InvalidGroupError
        When two of the topics would share an id (two given alike, or one given as another's
        derived id): a cluster never has that, and the broker's assignors, which key everything by
        id, would plan one topic twice and the other not at all.
    """
    given = given or {}
    ids = {name: parse_topic_id(given[name], name) if name in given else derived_topic_id(name) for name in names}
    if len(set(ids.values())) < len(ids):
        seen: dict[TopicId, str] = {}
        for name, topic_id in ids.items():
            if topic_id in seen:
                raise InvalidGroupError(f"topic_ids: topics {seen[topic_id]!r} and {name!r} share the topic id "
                                        f"{topic_id} (given or derived from the name); every topic needs its own")
            seen[topic_id] = name
    return ids
