"""`assignor.tree_bin` keeps a red-black tree's invariants through any puts and
removes (what ``HashMap.TreeNode.checkInvariants`` asserts in Java), and the map over it keeps
every key once, in a table of the right size. Whether the order is the JVM's is
``tests/integration/test_java_hash.py``'s question; this one runs without a JVM."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from assignor.java_hash import JavaHashMap, integer_hash, spread
from assignor.tree_bin import Node, TreeBin, signed
from tests.budget import examples

#: Partitions in strides of 64 from one base: nine or more of them share a bin of a table of 64.
STRIDED = st.lists(st.integers(0, 300).map(lambda k: 5 + 64 * k), max_size=200)


def _black_height(node: Node | None) -> int:
    """The black height of a subtree, asserting the red-black and search-tree invariants."""
    if node is None:
        return 1
    for child in (node.left, node.right):
        if child is not None:
            assert child.parent is node
            assert not (node.red and child.red), "a red node with a red child"
    if node.left is not None:
        assert (node.left.hash, node.left.key) < (node.hash, node.key)
    if node.right is not None:
        assert (node.right.hash, node.right.key) > (node.hash, node.key)
    left, right = _black_height(node.left), _black_height(node.right)
    assert left == right, "paths of different black heights"
    return left + (0 if node.red else 1)


def _checked(tree: TreeBin) -> None:
    """``checkInvariants``: the list linked both ways, headed by the black root, holding
    exactly the tree's nodes."""
    assert tree.first is not None
    root = tree.first.root()
    assert root is tree.first and not root.red and root.parent is None
    _black_height(root)
    listed = list(tree)
    assert listed[0].prev is None
    assert all(b.prev is a for a, b in zip(listed, listed[1:], strict=False))

    def walk(node: Node | None) -> list[Node]:
        return [] if node is None else [*walk(node.left), node, *walk(node.right)]

    assert sorted(map(id, walk(root))) == sorted(map(id, listed))


@examples(200)
@given(STRIDED, st.lists(st.tuples(st.booleans(), st.integers(0, 300)), max_size=300))
def test_tree_bins_stay_red_black_trees(start, steps):
    """Puts and removes of partitions 64 apart (the keys of one bin) keep every tree bin of the
    map a valid red-black tree over exactly its bin's keys, and the map holds each key once."""
    table: JavaHashMap[int, None] = JavaHashMap.copy_of(start, integer_hash)
    present = set(start)
    for put, k in steps:
        key = 5 + 64 * k
        if put:
            table.put(key)
            present.add(key)
        else:
            table.remove(key)
            present.discard(key)
        for index, tree in table._trees.items():
            _checked(tree)
            assert {n.key for n in tree} == {p for p in present if spread(p) & (table.capacity - 1) == index}
    assert sorted(table) == sorted(present) and len(table) == len(present)
    assert len(present) <= table.capacity * 3 // 4


@examples(100)
@given(st.lists(st.integers(-(2**31), 2**31 - 1), min_size=9, max_size=60, unique=True))
def test_a_tree_of_any_keys_is_a_red_black_tree(keys):
    """A bin made a tree from any keys (signed hashes of every sign), then each key removed in
    turn until the tree is small enough to be a list again."""
    tree = TreeBin.of(keys, [k & 0xFFFFFFFF for k in keys])
    _checked(tree)
    assert sorted(n.key for n in tree) == sorted(keys)
    assert all(n.hash == signed(n.key & 0xFFFFFFFF) for n in tree)
    for key in keys:
        if not tree.remove(tree.find(key, key & 0xFFFFFFFF)):
            break
        _checked(tree)
