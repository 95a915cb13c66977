"""``java.util.HashMap`` / ``HashSet`` as the broker's assignors use them, modelled closely enough
to give Java's iteration order (and, where a bin may be a tree, the client's: `ordering`'s member
ids and topic names, the sticky assignor's moved partitions).

The group coordinator's assignors hand back ``Map<Uuid, Set<Integer>>`` per member, and the order
those iterate in is the order Kafka writes a member's target assignment (and the order the next
rebalance walks it, which decides what a member keeps). A ``HashMap`` iterates bucket by bucket
(``spread(hash) & (capacity - 1)``), and within a bucket in link order: ``put`` links a new key at
the tail, ``computeIfAbsent`` at the head, and a resize splits each bucket keeping its order. So
the order is fixed by the capacity and, per key, a *rank*: a counter that rises for ``put`` and
falls for ``computeIfAbsent`` (head of its bucket). Capacity follows JDK 17's ``resize``:
``new HashMap()`` starts at 16, ``new HashMap(n)`` at ``tableSizeFor(n)``; the table doubles after
a ``put`` takes the size past three quarters of it, and before a ``computeIfAbsent`` when the size
is already past it. A bucket reaching nine keys (eight by ``computeIfAbsent``, which counts the
bucket's nodes where ``putVal`` counts the links it walked) in a table under 64 doubles it
instead of becoming a tree (``treeifyBin``); in a larger table it becomes a red-black tree
(`tree_bin`), whose links iterate in another order, which the ranks of its keys then follow.
Partitions held in strides of a power of two make such trees (see `tree_bin`); tests hold the
model to the JVM's own maps (``tests/integration/test_java_hash.py``).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Generic, TypeVar

import numpy as np

from assignor.tree_bin import TreeBin

__all__ = ["JavaHashMap", "capacity_for", "copy_capacities", "float_capacity", "grown_capacities",
           "integer_hash", "spread", "spread_many", "table_size_for", "table_sizes_for"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_MAX = 1 << 30

#: The keys per bucket of a map without a table yet (`JavaHashMap._bins`; never written to).
_NO_BUCKETS = array("I")


def spread(h: int) -> int:
    """``HashMap.hash``: the high half folded into the low half before masking by the table size."""
    return h ^ (h >> 16)


def integer_hash(value: int) -> int:
    """``Integer.hashCode`` as an unsigned 32-bit value."""
    return value & 0xFFFFFFFF


def table_size_for(capacity: int) -> int:
    """``HashMap.tableSizeFor``: the power of two at or above `capacity` (1 at least)."""
    size = 1
    while size < capacity:
        size <<= 1
    return min(size, _MAX)


def float_capacity(expected: int) -> int:
    """``(int) ((expected / 0.75f) + 1)``: the sizing idiom Kafka writes, in float arithmetic."""
    return int(np.float32(expected) / np.float32(0.75) + np.float32(1))


def capacity_for(size: int) -> int:
    """The initial capacity ``new HashSet<>(collection)`` asks for a collection of `size`."""
    return max(int(np.float32(size) / np.float32(0.75)) + 1, 16)


# The same rules over arrays, for the columnar paths (`current_columns`, `target_columns`): one
# value per table, where the model above holds one table.

_POWERS = np.left_shift(np.int64(1), np.arange(31, dtype=np.int64))
_POWERS.flags.writeable = False


def spread_many(hashes: np.ndarray) -> np.ndarray:
    """`spread` of each unsigned 32-bit hash (int64 values)."""
    found: np.ndarray = hashes >> 16
    np.bitwise_xor(found, hashes, out=found)
    return found


def table_sizes_for(capacities: np.ndarray) -> np.ndarray:
    """`table_size_for` of each capacity."""
    found: np.ndarray = _POWERS[np.minimum(_POWERS.searchsorted(capacities), 30)]
    return found


def copy_capacities(sizes: np.ndarray) -> np.ndarray:
    """The table size of ``new HashSet<>(collection)`` for collections of `sizes` (`capacity_for`,
    in float32 as Java divides): never grown by the copy's own puts, which stay under 3/4 of it.

    Examples
    --------
    >>> copy_capacities(np.array([0, 12, 13, 47, 48])).tolist()
    [16, 32, 32, 64, 128]
    """
    raw = (sizes.astype(np.float32) / np.float32(0.75)).astype(np.int64) + 1
    return table_sizes_for(np.maximum(raw, 16))


def grown_capacities(capacities: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The table size of tables of `capacities` (powers of two, threshold 3/4 of it, as
    ``resize`` sets it at every size) once puts brought them to `sizes` keys: doubled each time
    the size passed the threshold. Tables
    where a small bin got crowded (`JavaHashMap._crowded`) grow otherwise: callers rule those out.

    Examples
    --------
    >>> grown_capacities(np.array([16, 16, 16, 128]), np.array([12, 13, 25, 97])).tolist()
    [16, 32, 64, 256]
    """
    found = capacities.astype(np.int64, copy=True)
    while True:
        over = sizes > found * 3 // 4
        if not over.any():
            return found
        found[over] *= 2


class JavaHashMap(Generic[K, V]):
    """One ``HashMap`` (a ``HashSet`` is one whose values are None).

    Parameters
    ----------
    key_hash : callable
        A key's Java ``hashCode`` as an unsigned 32-bit value.
    initial_capacity : int or None
        ``new HashMap<>(n)``; None for ``new HashMap<>()``.
    linked : bool
        A ``LinkedHashMap``: iterates in insertion order.

    Examples
    --------
    >>> s = JavaHashMap(integer_hash)
    >>> for p in (17, 1, 33): s.put(p)
    >>> list(s)
    [17, 1, 33]
    >>> s.put(2); list(s)
    [17, 1, 33, 2]
    """

    __slots__ = ("_bins", "_counter", "_hash", "_low", "_rank", "_spread", "_trees", "_values", "capacity", "linked",
                 "threshold", "treeified")

    def __init__(self, key_hash: Callable[[K], int], initial_capacity: int | None = None, linked: bool = False) -> None:
        self.linked = linked
        self._hash = key_hash
        self._rank: dict[K, int] = {}
        self._spread: dict[K, int] = {}
        self._values: dict[K, V | None] = {}
        self._bins = _NO_BUCKETS  # keys per bucket, at this capacity
        self._trees: dict[int, TreeBin] = {}  # bucket -> its tree, for the buckets that are trees
        self._counter = 0
        self._low = 0
        self.treeified = 0  # how many times a bucket became a tree (`tree_bin`)
        self.capacity = 0  # no table yet
        self.threshold = 0 if initial_capacity is None else table_size_for(initial_capacity)

    # -- JDK 17 HashMap.resize -------------------------------------------------------------
    def _resize(self) -> None:
        old_cap, old_thr = self.capacity, self.threshold
        if old_cap > 0:
            new_cap = old_cap << 1
            new_thr = old_thr << 1 if old_cap >= 16 else int(new_cap * 0.75)
        elif old_thr > 0:
            new_cap, new_thr = old_thr, int(old_thr * 0.75)
        else:
            new_cap, new_thr = 16, 12
        self.capacity, self.threshold = new_cap, new_thr
        if self._trees:  # each tree split (``TreeNode.split``): a half a list again, a tree anew, or as it was
            trees, self._trees = self._trees, {}
            for index, tree in trees.items():
                for half, at in zip(tree.split(old_cap), (index, index + old_cap), strict=True):
                    if half is not None:
                        self._trees[at] = half
                        self._rerank(half)
        bins = array("I", bytes(4 * new_cap))
        mask = new_cap - 1
        for h in self._spread.values():
            bins[h & mask] += 1
        self._bins = bins

    def _linked(self, key: K, h: int, crowded: int) -> None:
        """A new key (its rank set) counted into its bucket; `_crowded` where the bucket is a
        tree or held `crowded` keys before it (8 for ``putVal``, 7 for ``computeIfAbsent``,
        which counts the bucket's nodes where ``putVal`` counts the links it walked)."""
        index = h & (self.capacity - 1)
        bins = self._bins
        before = bins[index]
        bins[index] = before + 1
        if before >= crowded or self._trees:
            self._crowded(key, h, index, before, crowded)

    def _crowded(self, key: K, h: int, index: int, before: int, crowded: int) -> None:
        """The key linked into bucket `index` put into its tree (``putTreeVal``, for either
        call), or the bucket, which held `before` keys, treeified (``treeifyBin``) once that
        reached `crowded`."""
        tree = self._trees.get(index)
        if tree is not None:
            tree.put(key, h)
            self._rerank(tree)
        elif before >= crowded:
            if self.capacity < 64:  # treeifyBin resizes a small table instead
                self._resize()
            elif not self.linked:  # (a LinkedHashMap iterates in insertion order, trees or not)
                keys = sorted((k for k, g in self._spread.items() if g & (self.capacity - 1) == index),
                              key=self._rank.__getitem__)
                self._trees[index] = tree = TreeBin.of(keys, [self._spread[k] for k in keys])
                self._rerank(tree)
                self.treeified += 1

    def _rerank(self, tree: TreeBin) -> None:
        """The ranks of a tree bin's keys dealt again in its list's order: the same ranks, so a
        key added later still goes after (``put``) or before (``computeIfAbsent``) all of them
        once the bin is a list again."""
        keys = tree.keys()
        for key, rank in zip(keys, sorted(self._rank[k] for k in keys), strict=True):
            self._rank[key] = rank

    def put(self, key: K, value: V | None = None) -> None:
        """``put`` (``HashSet.add``): a new key at the tail of its bucket."""
        if self.capacity == 0:
            self._resize()
        if key in self._rank:
            self._values[key] = value
            return
        h = spread(self._hash(key))
        self._counter += 1
        self._rank[key] = self._counter
        self._spread[key] = h
        self._values[key] = value
        self._linked(key, h, 8)
        if len(self._rank) > self.threshold:
            self._resize()

    def compute_if_absent(self, key: K, make: Callable[[], V]) -> V:
        """``computeIfAbsent``: a new key at the head of its bucket."""
        if len(self._rank) > self.threshold or self.capacity == 0:
            self._resize()
        if key in self._rank:
            found = self._values[key]
            assert found is not None
            return found
        h = spread(self._hash(key))
        self._spread[key] = h
        if self.linked:  # a LinkedHashMap links every new key at the end
            self._counter += 1
            self._rank[key] = self._counter
        else:
            self._low -= 1
            self._rank[key] = self._low
        value = make()
        self._values[key] = value
        self._linked(key, h, 7)
        return value

    @staticmethod
    def copy_of(keys: Iterable[K], key_hash: Callable[[K], int], linked: bool = False) -> JavaHashMap[K, None]:
        """``new HashSet<>(collection)``: sized for the collection (`capacity_for`), then each
        key added in the collection's order."""
        keys = list(keys)
        found: JavaHashMap[K, None] = JavaHashMap(key_hash, capacity_for(len(keys)), linked=linked)
        for key in keys:
            found.put(key)
        return found

    def unordered(self) -> dict[K, V | None]:
        """Key -> value in no particular order: for look-ups that need no iteration order."""
        return self._values

    def remove(self, key: K) -> None:
        """``remove``: the key leaves (from its bucket's tree, which may become a list again:
        ``removeTreeNode``); the table never shrinks."""
        if key not in self._rank:
            return
        h = self._spread.pop(key)
        del self._rank[key]
        del self._values[key]
        index = h & (self.capacity - 1)
        self._bins[index] -= 1
        tree = self._trees.get(index)
        if tree is not None:
            if tree.remove(tree.find(key, h)):
                self._rerank(tree)
            else:
                del self._trees[index]  # (its list's order is its keys' ranks' already)

    def first(self) -> K:
        """The key ``iterator().next()`` gives (the map holds one at least)."""
        return min(self._rank, key=self._place())

    def _place(self) -> Callable[[K], tuple[int, int]]:
        """A key's place in iteration order: its bucket, then its rank within the bucket (for a
        ``LinkedHashMap``, its rank alone: one bucket, in effect)."""
        rank = self._rank
        if self.linked:
            return lambda k: (0, rank[k])
        mask, hashes = self.capacity - 1, self._spread
        return lambda k: (hashes[k] & mask, rank[k])

    def get(self, key: K) -> V | None:
        return self._values.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._rank

    def __len__(self) -> int:
        return len(self._rank)

    def __iter__(self) -> Iterator[K]:
        return iter(sorted(self._rank, key=self._place()))

    def items(self) -> Iterator[tuple[K, V]]:
        values = self._values
        for key in self:
            value = values[key]
            yield key, value  # type: ignore[misc]

