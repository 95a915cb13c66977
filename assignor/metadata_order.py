"""The order a Kafka broker lists the topics of a Metadata request that names them: what a client
that deals topics in the order its Metadata response gives them (librdkafka's leader, whose
``eligible_topics`` follow its response) deals them in.

Kafka 4.3's broker takes the request's names as a Scala set
(``KafkaApis.handleTopicMetadataRequest``: ``metadataRequest.topics.asScala.toSet``) and
answers in that set's order (``KRaftMetadataCache.getTopicMetadata`` streams it). Scala 2.13
keeps up to four elements in the order they were added (``Set1`` to ``Set4``); from five on, the
set is a ``HashSet``, a CHAMP trie whose order follows the names' hashes: ``improve`` of Java's
``String.hashCode``, read five bits a level from the lowest. Each node lists its own names by
those five bits, then each of its sub-nodes in turn, by the same bits; names of one whole hash
share a node that keeps them in the order they were added. (Topics the broker does not know
come after, which no assignor deals.) Tests hold this model to the JVM's own sets
(``tests/integration/test_scala_set_order.py``) and to a broker's answers.
"""

from __future__ import annotations

from collections.abc import Sequence

from assignor.ordering import string_hash

__all__ = ["response_order"]

#: Names Scala keeps in the order they were added (``Set1`` .. ``Set4``).
_SMALL_SET = 4
_BITS = 5  # (``Node.BitPartitionSize``)
_HASH_BITS = 32


def response_order(requested: Sequence[str]) -> list[str]:
    """The names of a Metadata request, in `requested` order, as the broker lists them back
    (each name once).

    Examples
    --------
    >>> response_order(["b", "a"])
    ['b', 'a']
    >>> response_order(["t-a", "t-b", "t-c", "t-d", "t-e", "t-f"])
    ['t-f', 't-e', 't-d', 't-a', 't-c', 't-b']
    """
    names = list(dict.fromkeys(requested))
    if len(names) <= _SMALL_SET:
        return names
    return _trie_order([(_improve(string_hash(name)), name) for name in names], 0)


def _improve(h: int) -> int:
    """``scala.collection.Hashing.improve`` on an unsigned 32-bit hash (``>>>`` as a shift of the
    unsigned value; each sum wraps as Java's ``int``)."""
    mask = 0xFFFFFFFF
    h = (h + (~(h << 9) & mask)) & mask
    h ^= h >> 14
    h = (h + (h << 4)) & mask
    return h ^ (h >> 10)


def _trie_order(entries: list[tuple[int, str]], shift: int) -> list[str]:
    """The names of the node at `shift` holding `entries` (improved hash, name; in the order
    added), as ``ChampBaseIterator`` lists them: the node's own names, then its sub-nodes'."""
    if shift >= _HASH_BITS:  # (``HashCollisionSetNode``: one hash, the names in the order added)
        return [name for _hash, name in entries]
    slots: dict[int, list[tuple[int, str]]] = {}
    for entry in entries:
        slots.setdefault((entry[0] >> shift) & ((1 << _BITS) - 1), []).append(entry)
    ordered = sorted(slots.items())
    own = [held[0][1] for _slot, held in ordered if len(held) == 1]
    below = [name for _slot, held in ordered if len(held) > 1 for name in _trie_order(held, shift + _BITS)]
    return own + below
