"""A model of ``java.util.HashMap`` (JDK 8+) written from its documented mechanics, step by
step, as an oracle independent of `assignor.ordering`'s closed form: a table of buckets (a
power of two, 16 at first), ``hash ^ (hash >>> 16)`` masked by the table size; ``put`` links a
new key at the tail of its bucket and grows the table after the size passes three quarters of
it; ``computeIfAbsent`` checks that at the start of every call, for a key already there too,
and links a new key at the head of its bucket; a bucket reaching nine keys by ``put`` (eight by
``computeIfAbsent``) in a table under 64 grows the table (``treeifyBin``); growing splits each
bucket keeping its order."""

from __future__ import annotations

from assignor.java_hash import spread
from assignor.ordering import string_hash


class JavaHashMap:
    def __init__(self) -> None:
        self.table: list[list[str]] = [[] for _ in range(16)]
        self.size = 0

    def _threshold(self) -> int:
        return len(self.table) * 3 // 4

    def _bucket(self, key: str) -> int:
        return spread(string_hash(key)) & (len(self.table) - 1)

    def _resize(self) -> None:
        old = self.table
        self.table = [[] for _ in range(2 * len(old))]
        for bucket in old:
            for key in bucket:
                self.table[self._bucket(key)].append(key)

    def _crowded(self, before: int, crowded: int) -> None:
        # putVal treeifies when the bin had eight or more nodes before the new one,
        # computeIfAbsent seven or more (it counts the bin's nodes, putVal the links it walked)
        if before >= crowded and len(self.table) < 64:
            self._resize()

    def put(self, key: str) -> None:
        bucket = self.table[self._bucket(key)]
        if key in bucket:
            return
        before = len(bucket)
        bucket.append(key)
        self._crowded(before, 8)
        self.size += 1
        if self.size > self._threshold():
            self._resize()

    def compute_if_absent(self, key: str) -> None:
        if self.size > self._threshold():
            self._resize()
        bucket = self.table[self._bucket(key)]
        if key in bucket:
            return
        before = len(bucket)
        bucket.insert(0, key)
        self.size += 1
        self._crowded(before, 7)

    def keys(self) -> list[str]:
        return [key for bucket in self.table for key in bucket]
