"""Java's order of strings (``String.compareTo``: UTF-16 code units), which decides who gets what
in range, roundrobin and the sticky tie-breaks. Python orders by code point; the two differ once
an id holds a character past U+FFFF (two UTF-16 units from U+D800) beside one in
U+E000-U+FFFF. Member ids ordered by code point went unnoticed by 743 tests: all were ASCII."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from assignor import Group, Member, TopicPartition
from assignor.ordering import hashmap_order, java_order, java_sorted, string_hash, string_hashes
from assignor.strategies import assign
from tests.budget import examples

EMOJI, FULLWIDTH_A = "\U0001f600", "\uff21"  # UTF-16: D83D DE00 and FF21; code points 1F600 and FF21


def test_a_supplementary_character_sorts_before_the_top_of_the_basic_plane():
    assert sorted([FULLWIDTH_A, EMOJI]) == [FULLWIDTH_A, EMOJI]  # Python: by code point
    assert java_sorted([FULLWIDTH_A, EMOJI]) == [EMOJI, FULLWIDTH_A]  # Java: by UTF-16 unit
    assert java_order([f"m{FULLWIDTH_A}", f"m{EMOJI}", "m"]) == [2, 1, 0]


@given(st.lists(st.text(alphabet=st.sampled_from(["a", "é", "\ud7ff", "\ue000", FULLWIDTH_A, EMOJI, "\U00010000"]),
                        max_size=4), max_size=8))
@example([FULLWIDTH_A, EMOJI])
def test_java_order_is_utf16_order(texts):
    assert java_sorted(texts) == sorted(texts, key=lambda t: t.encode("utf-16-be"))


@pytest.mark.parametrize("strategy", ["range", "roundrobin"])
def test_the_client_assignors_give_the_first_partition_to_the_first_member_in_java_order(strategy):
    """Java's range and roundrobin hand out partitions in member-id order: ``m😀`` before
    ``mＡ``, although Python puts it after."""
    group = Group({"t": 2}, [Member(f"m{FULLWIDTH_A}", ("t",)), Member(f"m{EMOJI}", ("t",))])
    plan = assign(strategy, group)
    assert plan.assignment[f"m{EMOJI}"] == [TopicPartition("t", 0)]
    assert plan.assignment[f"m{FULLWIDTH_A}"] == [TopicPartition("t", 1)]


@examples(200)
@given(st.lists(st.text("ab0123456789-", min_size=1, max_size=5), max_size=260, unique=True),
       st.sampled_from(["put", "computed", "called_after"]))
@example([f"consumer-{i}" for i in range(49)], "called_after")  # a call after the 49th key grows 64 to 128
@example([f"consumer-{i}" for i in range(97)], "called_after")
def test_hashmap_order_is_javas_hashmap_order(keys, how):
    """`hashmap_order` (a table's size from its bins while it is small, from its count once it
    has 64 buckets) iterates as the step-by-step model of ``java.util.HashMap`` does, past 48
    keys and through bins crowded in small tables; and as the broker's model (`JavaHashMap`,
    trees included), also where a bin of 64 or more became a tree, which the first leaves out."""
    from assignor.java_hash import JavaHashMap as Model
    from tests.java_hashmap import JavaHashMap

    table, model = JavaHashMap(), Model(string_hash)
    for key in keys:
        if how == "put":
            table.put(key)
            model.put(key, True)
        else:
            table.compute_if_absent(key)
            model.compute_if_absent(key, lambda: True)
    if how == "called_after" and keys:
        table.compute_if_absent(keys[0])
        model.compute_if_absent(keys[0], lambda: True)
    found = hashmap_order(keys, computed=how != "put", called_after=how == "called_after")
    assert found == list(model)
    if not model.treeified:
        assert found == table.keys()


#: Keys of a put-built map that OpenJDK 17 iterated in the orders below: thirty in other bins, then
#: eleven sharing a bin of 64 (which becomes a tree at the ninth), two of them of one hash, told
#: apart in the tree by ``String.compareTo``: a supplementary character (two UTF-16 units from
#: 0xDBFF) before U+E000 there, after it in code points.
TREE_KEYS = [f"m-{i}" for i in (0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 19, 20, 21, 22, 23, 24,
                                25, 26, 27, 29, 30, 31, 32, 5, 28, 919, 1006, 1028)]
TREE_KEYS += ["\ue000\u5fe0`", "\U0010fc00A", "m-1105", "m-1127", "m-1149", "m-1204"]
TREE_ORDERS = {
    "put": ["m-31", "m-10", "m-32", "m-30", "m-1", "m-24", "m-0", "m-25", "m-3", "m-22", "m-2", "m-23", "m-1028",
            "m-28", "m-5", "m-919", "m-1006", "m-1149", "\ue000\u5fe0`", "\U0010fc00A", "m-1105", "m-1204", "m-1127",
            "m-4", "m-29", "m-7", "m-26", "m-6", "m-27", "m-9", "m-8", "m-20", "m-21", "m-13", "m-14", "m-11", "m-12",
            "m-18", "m-15", "m-16", "m-19"],
    "computeIfAbsent": ["m-31", "m-32", "m-10", "m-30", "m-24", "m-1", "m-25", "m-0", "m-22", "m-3", "m-23", "m-2",
                        "m-1006", "\U0010fc00A", "m-1105", "m-1204", "m-1127", "m-1149", "\ue000\u5fe0`", "m-1028",
                        "m-919", "m-28", "m-5", "m-29", "m-4", "m-26", "m-7", "m-27", "m-6", "m-9", "m-8", "m-20",
                        "m-21", "m-13", "m-14", "m-11", "m-12", "m-18", "m-15", "m-16", "m-19"],
}


@pytest.mark.parametrize("how", sorted(TREE_ORDERS))
def test_hashmap_order_iterates_a_tree_bin_as_the_jvm_did(how):
    """A bin of 64 made a red-black tree iterates root first, the rest linked after the nodes
    they hang under (``tests/integration/test_java_hash.py`` checks many more on the JVM)."""
    assert string_hash(TREE_KEYS[35]) == string_hash(TREE_KEYS[36])
    assert hashmap_order(TREE_KEYS, computed=how == "computeIfAbsent") == TREE_ORDERS[how]


@examples(100)
@given(st.lists(st.lists(st.text("ab0123456789-", min_size=1, max_size=5), max_size=80, unique=True),
                min_size=1, max_size=4))
def test_hashmap_order_with_known_hashes_is_the_same_order(rebalances):
    """A leader's kept hashes (`known`, read and added to from one rebalance to the next) give
    the order computed afresh, and hold every key's `string_hash`."""
    known: dict[str, int] = {}
    for keys in rebalances:
        assert hashmap_order(keys, known=known) == hashmap_order(keys)
        assert all(known[key] == string_hash(key) for key in keys)


#: Strings as member ids and topic names come: a few lengths shared by many (``consumer-N``), any
#: character (supplementary ones are two UTF-16 units, lone surrogates pass through), empty ones,
#: and long ones.
_TEXTS = st.one_of(
    st.lists(st.integers(0, 12_000).map(lambda i: f"consumer-{i}"), min_size=30, max_size=120),
    st.lists(st.text(st.characters(codec=None), max_size=12), min_size=30, max_size=90),
    st.lists(st.sampled_from(["", "a", "\U0001f600", "\ud800x", "é" * 40, "q" * 600, "t" * 513]), max_size=80),
)


@examples(150)
@given(st.lists(_TEXTS, min_size=1, max_size=3).map(lambda parts: [t for part in parts for t in part]))
@example([f"consumer-{i}" for i in range(40)] + ["\U0001f600" * 3] * 20 + [""] * 5)
def test_string_hashes_on_arrays_are_the_plain_hash(texts):
    """The array path (columns of equal-length strings, weighed units for the rest) is the
    plain `string_hash`, string for string."""
    assert string_hashes(texts) == [string_hash(t) for t in texts]
