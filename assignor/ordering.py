"""The orders Java puts names in, which Java-exact plans and bytes depend on.

Java sorts topics and member ids with ``String.compareTo``, which compares UTF-16 code units:
outside the Basic Multilingual Plane that differs from Python's code-point order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from operator import mul

import numpy as np

from assignor.java_hash import JavaHashMap, spread

__all__ = ["hashmap_order", "java_key", "java_order", "java_sorted", "partition_hash", "partition_hash_of",
           "static_first_order", "string_hash", "string_hashes", "table_size"]


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
    return sorted(texts) if all(map(str.isascii, texts)) else sorted(texts, key=java_key)


def static_first_order(ids: Sequence[str], instance_ids: Sequence[str | None]) -> list[int]:
    """Indices that put members (``ids[i]``, static when ``instance_ids[i]`` is not None) in the
    order Kafka's range and round-robin assignors deal to them (KIP-345): static members first,
    by ``group.instance.id``, then the dynamic ones by member id, each in ``String.compareTo``
    order. A static member restarted under a new member id keeps its place, and so its
    partitions. The client's ``AbstractPartitionAssignor.MemberInfo.compareTo`` (its
    ``RangeAssignor`` and ``RoundRobinAssignor``) and the group coordinator's
    ``RangeAssignor.sortMemberIds`` (KIP-848) share the rule.

    Examples
    --------
    >>> static_first_order(["a", "b", "c"], [None, "z", "y"])
    [2, 1, 0]
    """
    def key(i: int) -> tuple[int, bytes]:
        instance = instance_ids[i]
        return (1, java_key(ids[i])) if instance is None else (0, java_key(instance))

    return sorted(range(len(ids)), key=key)


# Java's hash-based collections iterate in an order set by `hashCode`, which Java-exact plans
# depend on (KIP-54's assignor walks HashMaps of member ids and HashSets of partitions).

def string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units) as an unsigned 32-bit value: the
    plain reference `string_hashes` is held to.

    Examples
    --------
    >>> string_hash("consumer-1") == 0xF617_641A
    True
    """
    units = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h


#: Below this many strings (in all, of one length, or left over) `string_hashes` hashes one at a
#: time: numpy's set-up, and a column per character, cost more.
_FEW = 48
#: `_hash_one`'s longest ASCII string, and its weights: 31 ** (_LONGEST - 1 - i) modulo 2**32.
_LONGEST = 256
_WEIGHTS: list[int] = [pow(31, _LONGEST - 1 - i, 1 << 32) for i in range(_LONGEST)]


def _hash_one(text: str) -> int:
    """`string_hash`, for an ASCII string of up to `_LONGEST` characters without a Python loop:
    each character weighed by its power of 31 modulo 2**32, the products summed in C (under
    half the loop's time for a member id)."""
    if len(text) <= _LONGEST and text.isascii():
        weighed: int = sum(map(mul, text.encode("ascii"), _WEIGHTS[_LONGEST - len(text) :]))
        return weighed & 0xFFFFFFFF
    return string_hash(text)


def string_hashes(texts: Sequence[str]) -> list[int]:
    """`string_hash` of each of `texts`, on arrays; nothing is kept between calls (the design
    keeps no module state: a caller that hashes the same ids again keeps them, as a leader's plan
    memo does through `hashmap_order`'s `known`).

    Strings of one length (member ids mostly come a few lengths at a time) are a matrix of UTF-16
    units hashed a column at a time, ``h = 31 * h + unit`` in uint32, which wraps as Java's
    ``int`` does. The rest (lengths shared by few strings, or long ones) go one at a time when
    they are few (`_hash_one`), else through `_weighed_hashes`, one pass over all their units
    whatever their shape; fewer than `_FEW` strings in all go one at a time."""
    if len(texts) < _FEW:
        return list(map(_hash_one, texts))
    if all(map(str.isascii, texts)):
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    else:  # a character past the BMP is two UTF-16 units
        lengths = np.array([len(t.encode("utf-16-be", "surrogatepass")) // 2 for t in texts], dtype=np.int64)
    hashes = np.zeros(len(texts), dtype=np.uint32)
    sizes, bucket, counts = np.unique(lengths, return_inverse=True, return_counts=True)
    rest: list[np.ndarray] = []
    for k, (length, count) in enumerate(zip(sizes.tolist(), counts.tolist(), strict=True)):
        if length == 0:
            continue
        indices = np.arange(len(texts)) if len(sizes) == 1 else np.flatnonzero(bucket == k)
        if count < _FEW or length > 512:  # a column per unit would cost more than it saves
            rest.append(indices)
            continue
        members = texts if len(sizes) == 1 else [texts[i] for i in indices.tolist()]
        joined = "".join(members).encode("utf-16-be", "surrogatepass")
        units = np.frombuffer(joined, dtype=">u2").reshape(count, length).astype(np.uint32)
        h = np.zeros(count, dtype=np.uint32)
        for column in units.T:
            h = h * np.uint32(31) + column
        hashes[indices] = h
    if rest:
        others = np.concatenate(rest)
        hashes[others] = list(map(_hash_one, (texts[i] for i in others.tolist()))) if len(others) < _FEW else \
            _weighed_hashes([texts[i] for i in others.tolist()], lengths[others].tolist())
    return hashes.tolist()


def _weighed_hashes(texts: Sequence[str], lengths: Sequence[int]) -> list[int]:
    """``h = sum(unit[j] * 31**(n - 1 - j))`` mod 2**32 for each of `texts` (of these lengths in
    UTF-16 units, none 0), each unit weighed by its power of 31 (a cumulative product in uint32
    wraps mod 2**32) and the products summed per string."""
    units = np.frombuffer("".join(texts).encode("utf-16-be", "surrogatepass"), dtype=">u2").astype(np.uint64)
    counts = np.asarray(lengths, dtype=np.int64)
    ends = np.cumsum(counts)
    powers = np.cumprod(np.full(int(counts.max()), 31, dtype=np.uint32), dtype=np.uint32)
    powers = np.r_[np.uint32(1), powers[:-1]].astype(np.uint64)  # 31**0, 31**1, ... mod 2**32
    exponent = np.repeat(ends - 1, counts) - np.arange(len(units), dtype=np.int64)
    weighed = (units * powers[exponent]) & 0xFFFFFFFF  # under 2**48 each: no product wraps uint64
    return [int(h) & 0xFFFFFFFF for h in np.add.reduceat(weighed, ends - counts).tolist()]


def partition_hash(topic: str, partition: int) -> int:
    """Java's ``TopicPartition.hashCode`` as an unsigned 32-bit value."""
    return partition_hash_of(string_hash(topic), partition)


def partition_hash_of(topic_hash: int, partition: int) -> int:
    """`partition_hash` from the topic's `string_hash`, for a caller that hashes each topic once."""
    return (31 * (31 + partition) + topic_hash) & 0xFFFFFFFF


def table_size(entries: int) -> int:
    """The table size a ``new HashMap<>()`` has after `entries` puts of distinct keys (16,
    doubled whenever the size passes three quarters of it)."""
    size = 16
    while entries > size * 3 // 4:
        size *= 2
    return size


def hashmap_order(keys: Sequence[str], *, computed: bool = False, called_after: bool = False,
                  known: dict[str, int] | None = None) -> list[str]:
    """The order a ``new HashMap<String, V>()`` iterates `keys` (distinct) added in this order:
    by bucket, then within a bucket in insertion order for ``put``, or newest first for
    ``computeIfAbsent`` (`computed`), which links a new key at the head of its bucket. A resize
    splits a bucket keeping its order, so that holds whatever the table went through.

    ``put`` grows the table after the entry that passes three quarters of it; ``computeIfAbsent``
    checks at the start of every call, for a key already there too, so the table grows before
    the next call after that entry: the next new key's, or (`called_after`) a call for a key
    added before once the last key is in (``CollectionUtils.groupPartitionsByTopic`` calls it
    once per partition, so a member's 13th topic followed by any partition grows the table to
    32). A bucket of nine keys (eight for ``computeIfAbsent``) in a table under 64 makes Java grow
    the table early (treeifyBin), and the size here accounts for that. A bucket of as many in a
    table of 64 or more becomes a red-black tree, which links its keys in another order (nine of a
    thousand random member ids share a bucket about once in 100,000 maps): where the keys' low six
    bits could make one, the order is the one `assignor.java_hash` models step by step, trees
    included (`_modelled_order`).

    `known`: keys' `string_hash` a caller keeps from one call to the next (a leader's plan memo,
    `dense.PlanMemo.string_hashes`), read where it has them and added to.

    Examples
    --------
    >>> hashmap_order(["consumer-0", "consumer-1", "consumer-2"])
    ['consumer-2', 'consumer-1', 'consumer-0']
    >>> hashmap_order(["big-topic", "other"]), hashmap_order(["big-topic", "other"], computed=True)
    (['big-topic', 'other'], ['other', 'big-topic'])
    """
    string = string_hashes(keys) if known is None else _known_hashes(keys, known)
    hashes = [spread(h) for h in string]
    size = _grown_size(hashes, computed, computed and called_after)
    if size >= 64 and _may_make_a_tree(hashes, computed):
        return _modelled_order(keys, string, computed, called_after)
    mask = size - 1
    newest_first = -1 if computed else 1
    position = [(h & mask, newest_first * i) for i, h in enumerate(hashes)]
    return [keys[i] for i in sorted(range(len(keys)), key=position.__getitem__)]


def _may_make_a_tree(hashes: Sequence[int], computed: bool) -> bool:
    """Whether a bucket of a table of 64 or more could have become a tree: one of 64 buckets
    holds more keys than a bin may before treeifyBin (eight by ``put``, seven by
    ``computeIfAbsent``); the buckets of a larger table split those, so hold no more."""
    counts = np.bincount(np.asarray(hashes, dtype=np.int64) & 63, minlength=64)
    return bool(counts.max() > (7 if computed else 8))


def _modelled_order(keys: Sequence[str], hashes: Sequence[int], computed: bool, called_after: bool) -> list[str]:
    """`hashmap_order` by the step-by-step model of ``HashMap`` (`JavaHashMap`, tree bins
    included), each key as `java_key`: a tree orders keys of one hash by ``String.compareTo``,
    which compares UTF-16 code units as those bytes do (Python's code points do not)."""
    as_java = [java_key(key) for key in keys]
    hash_of = dict(zip(as_java, hashes, strict=True))
    table: JavaHashMap[bytes, bool] = JavaHashMap(hash_of.__getitem__)
    for key in as_java:
        if computed:
            table.compute_if_absent(key, lambda: True)
        else:
            table.put(key, True)
    if called_after and as_java:
        table.compute_if_absent(as_java[0], lambda: True)
    text_of = dict(zip(as_java, keys, strict=True))
    return [text_of[key] for key in table]


def _known_hashes(keys: Sequence[str], known: dict[str, int]) -> list[int]:
    """`string_hashes` of `keys`, read from `known` (a cache its caller keeps: a leader hashes the
    same member ids at every rebalance) where it has them, the others hashed and added to it."""
    missing = [key for key in keys if key not in known]
    if missing:
        known.update(zip(missing, string_hashes(missing)))
    return list(map(known.__getitem__, keys))


def _grown_by_count(size: int, entries: int, computed: bool, called_after: bool) -> int:
    """`_grown_size` once the table has 64 buckets or more: ``put`` doubles it after an entry
    that passes three quarters, ``computeIfAbsent`` before the call after such an entry."""
    while (entries - 1 if computed else entries) > size * 3 // 4:
        size *= 2
    if called_after and entries > size * 3 // 4:
        size *= 2
    return size


def _grown_size(hashes: Sequence[int], computed: bool, called_after: bool = False) -> int:
    """The table size after adding these (spread) hashes in order (see `hashmap_order`)."""
    size = 16
    counts: dict[int, int] = {}
    crowded = 7 if computed else 8

    def regrow(entries: int) -> None:
        nonlocal size, counts
        size *= 2
        counts = {}
        for g in hashes[:entries]:
            counts[g & (size - 1)] = counts.get(g & (size - 1), 0) + 1

    for n, h in enumerate(hashes, start=1):
        if size >= 64:  # no bin grows the table from here on: only the count does
            return _grown_by_count(size, len(hashes), computed, called_after)
        if computed and n - 1 > size * 3 // 4:
            regrow(n - 1)
        bucket = h & (size - 1)
        counts[bucket] = counts.get(bucket, 0) + 1
        # A put's ninth key in a bin of a small table grows it (treeifyBin resizes instead), a
        # computeIfAbsent's eighth (it counts the bin's nodes, putVal the links it walked)
        if counts[bucket] > crowded and size < 64:
            regrow(n)
        if not computed and n > size * 3 // 4:
            regrow(n)
    if called_after and len(hashes) > size * 3 // 4:
        regrow(len(hashes))
    return size
