"""A bin of ``java.util.HashMap`` turned into a red-black tree (``HashMap.TreeNode``, JDK 17),
for the order its keys iterate in: `JavaHashMap` keeps one for each bin that reached nine keys
in a table of 64 buckets or more (``treeifyBin``).

A tree bin iterates along its nodes' ``next`` links, as a plain bin does, but the tree rewrites
them: ``treeify`` moves the tree's root to the front of the bin (``moveRootToFront``), and a key
added later is linked right after the node it hangs under in the tree (``putTreeVal``), not at
the tail. So partitions held in strides of a power of two (a member of 16 holding i, i + 16,
i + 32, ... after a round-robin or cooperative-sticky classic assignment, carried over by an
online migration) iterate in an order a plain bin never gives; the broker's assignors then keep
and give up other partitions than a plain bin says.

The tree orders nodes by their spread hash as a signed int, then by the keys' ``compareTo``:
Python's own order for the keys the assignors use (``Integer``; ``Uuid``, whose halves
`TopicId` holds as signed values and compares in the same order); a ``String`` goes in as
`ordering.java_key`'s bytes, which compare as its UTF-16 units do (`ordering.hashmap_order`);
a ``TopicPartition``, not comparable in Java, only among one topic's partitions, whose hashes
all differ (`java_sticky.movements`). Two distinct keys never compare equal there, so
``tieBreakOrder`` (identity hash codes) is never reached. The functions
below follow ``HashMap.TreeNode``'s, step for step (rotations, balancing, and the conditions
under which a bin goes back to a plain list: six keys or fewer after a split, a tree too small
after a removal).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from typing import Any

__all__ = ["Node", "TreeBin", "signed"]

#: ``UNTREEIFY_THRESHOLD``: a bin split off a tree with this many keys or fewer is a list again.
UNTREEIFY_THRESHOLD = 6


def signed(h: int) -> int:
    """An unsigned 32-bit hash as Java's ``int``."""
    return h - (1 << 32) if h >= 1 << 31 else h


class Node:
    """A ``TreeNode``: its key, its spread hash as a signed int, tree links and list links."""

    __slots__ = ("hash", "key", "left", "next", "parent", "prev", "red", "right")

    def __init__(self, key: Hashable, h: int) -> None:
        self.key, self.hash = key, h
        self.parent: Node | None = None
        self.left: Node | None = None
        self.right: Node | None = None
        self.prev: Node | None = None
        self.next: Node | None = None
        self.red = False

    def root(self) -> Node:
        r = self
        while r.parent is not None:
            r = r.parent
        return r


def _direction(key: Any, h: int, p: Node) -> int:
    """Where `key` goes under `p`: by hash (signed), then by ``compareTo``."""
    if p.hash > h:
        return -1
    if p.hash < h:
        return 1
    if key < p.key:
        return -1
    if p.key < key:
        return 1
    raise ValueError(f"keys {key!r} and {p.key!r} compare equal")  # (distinct keys never do)


class TreeBin:
    """One tree bin: `first` heads its list of nodes (the root, once `move_root_to_front` ran)."""

    __slots__ = ("first",)

    def __init__(self, first: Node) -> None:
        self.first: Node | None = first

    @classmethod
    def of(cls, keys: list[Any], hashes: list[int]) -> TreeBin:
        """``treeifyBin``: the bin's keys in list order made nodes, then ``treeify``."""
        nodes = [Node(k, signed(h)) for k, h in zip(keys, hashes, strict=True)]
        for a, b in zip(nodes, nodes[1:], strict=False):
            a.next, b.prev = b, a
        found = cls(nodes[0])
        found.treeify()
        return found

    def __iter__(self) -> Iterator[Node]:
        node = self.first
        while node is not None:
            yield node
            node = node.next

    def keys(self) -> list[Any]:
        return [node.key for node in self]

    def treeify(self) -> None:
        """``TreeNode.treeify``: the tree built from the list, in list order; its root moved to
        the front."""
        root: Node | None = None
        x = self.first
        while x is not None:
            following = x.next
            x.left = x.right = None
            if root is None:
                x.parent, x.red, root = None, False, x
            else:
                p = root
                while True:
                    direction = _direction(x.key, x.hash, p)
                    parent = p
                    child = p.left if direction <= 0 else p.right
                    if child is None:
                        x.parent = parent
                        if direction <= 0:
                            parent.left = x
                        else:
                            parent.right = x
                        root = _balance_insertion(root, x)
                        break
                    p = child
            x = following
        self.move_root_to_front(root)

    def move_root_to_front(self, root: Node | None) -> None:
        """``moveRootToFront``: the root unlinked from its place and linked first."""
        first = self.first
        if root is None or root is first:
            return
        rp, rn = root.prev, root.next
        if rn is not None:
            rn.prev = rp
        if rp is not None:
            rp.next = rn
        if first is not None:
            first.prev = root
        root.next, root.prev = first, None
        self.first = root

    def put(self, key: Any, h: int) -> None:
        """``putTreeVal`` of a key not in the bin: linked after the node it hangs under."""
        assert self.first is not None
        h = signed(h)
        root = self.first.root()
        p = root
        while True:
            direction = _direction(key, h, p)
            parent = p
            child = p.left if direction <= 0 else p.right
            if child is None:
                following = parent.next
                x = Node(key, h)
                x.next = following
                if direction <= 0:
                    parent.left = x
                else:
                    parent.right = x
                parent.next = x
                x.parent = x.prev = parent
                if following is not None:
                    following.prev = x
                self.move_root_to_front(_balance_insertion(root, x))
                return
            p = child

    def find(self, key: Any, h: int) -> Node:
        """The node of `key` (in the bin), by the tree's order."""
        assert self.first is not None
        h, p = signed(h), self.first.root()
        while p.key != key:
            found = p.left if _direction(key, h, p) < 0 else p.right
            assert found is not None, key
            p = found
        return p

    def remove(self, node: Node) -> bool:
        """``removeTreeNode`` (movable): False when the bin goes back to a plain list (it was
        too small a tree), its list order kept."""
        first = self.first
        assert first is not None
        root: Node | None = first
        succ, pred = node.next, node.prev
        if pred is None:
            self.first = first = succ
        else:
            pred.next = succ
        if succ is not None:
            succ.prev = pred
        if first is None:
            return False
        assert root is not None
        if root.parent is not None:
            root = root.root()
        if root.right is None or root.left is None or root.left.left is None:
            return False  # too small: ``untreeify``
        p, pl, pr = node, node.left, node.right
        if pl is not None and pr is not None:
            s = pr
            while s.left is not None:  # the successor
                s = s.left
            s.red, p.red = p.red, s.red
            sr, pp = s.right, p.parent
            if s is pr:  # p was s's direct parent
                p.parent = s
                s.right = p
            else:
                sp = s.parent
                p.parent = sp
                if sp is not None:
                    if s is sp.left:
                        sp.left = p
                    else:
                        sp.right = p
                s.right = pr
                pr.parent = s
            p.left = None
            p.right = sr
            if sr is not None:
                sr.parent = p
            s.left = pl
            pl.parent = s
            s.parent = pp
            if pp is None:
                root = s
            elif p is pp.left:
                pp.left = s
            else:
                pp.right = s
            replacement = sr if sr is not None else p
        elif pl is not None:
            replacement = pl
        elif pr is not None:
            replacement = pr
        else:
            replacement = p
        if replacement is not p:
            pp = replacement.parent = p.parent
            if pp is None:
                root = replacement
                replacement.red = False
            elif p is pp.left:
                pp.left = replacement
            else:
                pp.right = replacement
            p.left = p.right = p.parent = None
        r = root if p.red else _balance_deletion(root, replacement)
        if replacement is p:  # detach
            pp = p.parent
            p.parent = None
            if pp is not None:
                if p is pp.left:
                    pp.left = None
                elif p is pp.right:
                    pp.right = None
        self.move_root_to_front(r)
        return True

    def split(self, bit: int) -> tuple[TreeBin | None, TreeBin | None]:
        """``TreeNode.split`` at a resize: the tree of the keys staying (hash & `bit` zero) and
        of those moving, each None where that half is a plain list again (six keys or fewer, in
        list order) or empty. A half holding every key keeps this tree as it is."""
        low = [n for n in self if n.hash & bit == 0]
        high = [n for n in self if n.hash & bit != 0]
        halves: list[TreeBin | None] = []
        for half, other in ((low, high), (high, low)):
            if len(half) <= UNTREEIFY_THRESHOLD:
                halves.append(None)
                continue
            for a, b in zip(half, half[1:], strict=False):
                a.next, b.prev = b, a
            half[0].prev, half[-1].next = None, None
            tree = TreeBin(half[0])
            if other:  # (else already a tree: the whole bin moves)
                tree.treeify()
            halves.append(tree)
        return halves[0], halves[1]


# -- Red-black tree methods, as HashMap.TreeNode has them (adapted from CLR) -------------------

def _rotate_left(root: Node | None, p: Node | None) -> Node | None:
    if p is not None and (r := p.right) is not None:
        rl = p.right = r.left
        if rl is not None:
            rl.parent = p
        pp = r.parent = p.parent
        if pp is None:
            root = r
            r.red = False
        elif pp.left is p:
            pp.left = r
        else:
            pp.right = r
        r.left = p
        p.parent = r
    return root


def _rotate_right(root: Node | None, p: Node | None) -> Node | None:
    if p is not None and (left := p.left) is not None:
        lr = p.left = left.right
        if lr is not None:
            lr.parent = p
        pp = left.parent = p.parent
        if pp is None:
            root = left
            left.red = False
        elif pp.right is p:
            pp.right = left
        else:
            pp.left = left
        left.right = p
        p.parent = left
    return root


def _balance_insertion(root: Node | None, x: Node) -> Node | None:
    x.red = True
    while True:
        xp = x.parent
        if xp is None:
            x.red = False
            return x
        xpp = xp.parent
        if not xp.red or xpp is None:
            return root
        xppl = xpp.left
        if xp is xppl:
            xppr = xpp.right
            if xppr is not None and xppr.red:
                xppr.red = False
                xp.red = False
                xpp.red = True
                x = xpp
            else:
                if x is xp.right:
                    x = xp
                    root = _rotate_left(root, x)
                    xp = x.parent
                    xpp = None if xp is None else xp.parent
                if xp is not None:
                    xp.red = False
                    if xpp is not None:
                        xpp.red = True
                        root = _rotate_right(root, xpp)
        else:
            if xppl is not None and xppl.red:
                xppl.red = False
                xp.red = False
                xpp.red = True
                x = xpp
            else:
                if x is xp.left:
                    x = xp
                    root = _rotate_right(root, x)
                    xp = x.parent
                    xpp = None if xp is None else xp.parent
                if xp is not None:
                    xp.red = False
                    if xpp is not None:
                        xpp.red = True
                        root = _rotate_left(root, xpp)


def _red(node: Node | None) -> bool:
    return node is not None and node.red


def _balance_deletion(root: Node | None, x: Node | None) -> Node | None:
    while True:
        if x is None or x is root:
            return root
        xp = x.parent
        if xp is None:
            x.red = False
            return x
        if x.red:
            x.red = False
            return root
        if xp.left is x:
            xpr = xp.right
            if xpr is not None and xpr.red:
                xpr.red = False
                xp.red = True
                root = _rotate_left(root, xp)
                xp = x.parent
                xpr = None if xp is None else xp.right
            if xpr is None:
                x = xp
            else:
                sl, sr = xpr.left, xpr.right
                if not _red(sr) and not _red(sl):
                    xpr.red = True
                    x = xp
                else:
                    if not _red(sr):
                        if sl is not None:
                            sl.red = False
                        xpr.red = True
                        root = _rotate_right(root, xpr)
                        xp = x.parent
                        xpr = None if xp is None else xp.right
                    if xpr is not None:
                        xpr.red = False if xp is None else xp.red
                        sr = xpr.right
                        if sr is not None:
                            sr.red = False
                    if xp is not None:
                        xp.red = False
                        root = _rotate_left(root, xp)
                    x = root
        else:  # symmetric
            xpl = xp.left
            if xpl is not None and xpl.red:
                xpl.red = False
                xp.red = True
                root = _rotate_right(root, xp)
                xp = x.parent
                xpl = None if xp is None else xp.left
            if xpl is None:
                x = xp
            else:
                sl, sr = xpl.left, xpl.right
                if not _red(sl) and not _red(sr):
                    xpl.red = True
                    x = xp
                else:
                    if not _red(sl):
                        if sr is not None:
                            sr.red = False
                        xpl.red = True
                        root = _rotate_left(root, xpl)
                        xp = x.parent
                        xpl = None if xp is None else xp.left
                    if xpl is not None:
                        xpl.red = False if xp is None else xp.red
                        sl = xpl.left
                        if sl is not None:
                            sl.red = False
                    if xp is not None:
                        xp.red = False
                        root = _rotate_right(root, xp)
                    x = root
