"""Our models of ``java.util.HashMap`` and ``HashSet`` (`assignor.java_hash`
for the broker's assignors and the client's sticky moves, `assignor.ordering.hashmap_order` for
the client's names) against the
JVM's own (driven by ``jvm/src/HashMapOrder.java``): random sequences of puts,
``computeIfAbsent`` and removes, on maps and on copies of lists, iterate alike after every step.

The keys are what the broker's assignors put in them: partition numbers, often in strides of a
power of two (a classic group's round-robin or cooperative-sticky assignment, carried into the
consumer protocol by an online migration: member i of 16 holds i, i + 16, i + 32, ...), so
that nine or more share a bin of a table of 64 or more and Java makes the bin a red-black tree
(``treeifyBin``), which links its nodes in another order; topic ids, some picked to share
the low bits of their hashes; and one topic's partitions as ``TopicPartition``s (the sets of
partitions Java's sticky assignor moved between two members)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from assignor.java_hash import JavaHashMap, integer_hash, spread
from assignor.model import TopicPartition
from assignor.ordering import hashmap_order, partition_hash_of, string_hash
from assignor.strategies.kip848.coordinator import topic_hash
from assignor.topic_ids import TopicId
from tests.jvm_driver import listed

pytestmark = pytest.mark.external


def partitions(rng: random.Random) -> list[int]:
    """Keys of one sequence: a stride (mostly a power of two) from a base, some shuffled in."""
    stride = rng.choice([1, 3, 16, 16, 32, 64, 64, 128, 256, 1024])
    base = rng.randrange(stride)
    keys = [base + stride * k for k in range(rng.randrange(1, 400))]
    if rng.random() < 0.3:
        keys += rng.sample(range(5000), rng.randrange(1, 60))
    if rng.random() < 0.3:
        rng.shuffle(keys)
    return list(dict.fromkeys(keys))


def topic_ids(rng: random.Random) -> list[TopicId]:
    """Topic ids, most of them sharing the low 6 or 7 bits of their spread hashes."""
    bits, low = rng.choice([6, 7]), rng.randrange(128)
    found: list[TopicId] = []
    while len(found) < rng.randrange(10, 120):
        topic = TopicId(rng.randrange(-(1 << 63), 1 << 63), rng.randrange(-(1 << 63), 1 << 63))
        if rng.random() < 0.15 or spread(topic_hash(topic)) & ((1 << bits) - 1) == low & ((1 << bits) - 1):
            found.append(topic)
    return found


def _topic_partition_hash(tp: TopicPartition) -> int:
    """``TopicPartition.hashCode``."""
    return partition_hash_of(string_hash(tp.topic), tp.partition)


def _text(key: Any) -> str:
    """A key as the driver reads and prints it (``TopicPartition.toString``: TOPIC-PARTITION)."""
    return f"{key.topic}-{key.partition}" if isinstance(key, TopicPartition) else str(key)


def test_the_model_iterates_as_the_jvms_hash_map():
    rng = random.Random(848)
    commands: list[str] = []
    expected: list[list[str]] = []
    for sequence in range(400):
        kind = ("int", "int", "uuid", "tp")[sequence % 4]
        keys: list = topic_ids(rng) if kind == "uuid" else partitions(rng)
        key_hash: Callable[[Any], int] = {"uuid": topic_hash, "int": integer_hash}.get(kind, _topic_partition_hash)
        if kind == "tp":  # a pair's moved partitions in Java's sticky assignor (`java_sticky.movements`)
            topic = rng.choice(["t", "orders", "topic-with-dashes"])
            keys = [TopicPartition(topic, p) for p in keys]
        copied = rng.random() < 0.3
        if copied:
            start = keys[:rng.randrange(len(keys) + 1)]
            commands.append(" ".join(["copy", kind, *map(_text, start)]))
            model = JavaHashMap.copy_of(start, key_hash)
            present = list(start)
        else:
            capacity = rng.choice([None, None, 0, 1, 16, 40, 64, 100, 300])
            commands.append(f"map {kind}" + ("" if capacity is None else f" {capacity}"))
            model = JavaHashMap(key_hash, capacity)
            present = []
        for _ in range(rng.randrange(1, 2 * len(keys) + 2)):
            roll = rng.random()
            if present and roll < 0.2:
                key = present.pop(rng.randrange(len(present))) if rng.random() < 0.8 else rng.choice(keys)
                commands.append(f"remove {_text(key)}")
                model.remove(key)
                present = [k for k in present if k != key]
            else:
                key = rng.choice(keys)
                if not copied and roll > 0.75:
                    commands.append(f"cia {_text(key)}")
                    model.compute_if_absent(key, lambda: True)
                else:
                    commands.append(f"put {_text(key)}")
                    model.put(key, True)
                if key not in present:
                    present.append(key)
            if rng.random() < 0.2:
                commands.append("list")
                expected.append([_text(k) for k in model])
        commands.append("list")
        expected.append([_text(k) for k in model])
    jvm = listed("HashMapOrder", commands)
    assert len(jvm) == len(expected)
    for i, (theirs, ours) in enumerate(zip(jvm, expected, strict=True)):
        assert ours == theirs, (i, ours, theirs)


def crowded_names(rng: random.Random) -> list[str]:
    """Distinct names: a number of them (seven to nine most often, where ``put`` and
    ``computeIfAbsent`` differ) sharing the low four or five bits of their spread hashes (a bin
    of a table of 16 or 32), and a few others, in any order."""
    bits, low = rng.choice([4, 4, 5]), rng.randrange(32)
    crowd, others = rng.choice([7, 8, 8, 9, 12, 30]), rng.choice([0, 0, 2, 4, 30])
    together: list[str] = []
    apart: list[str] = []
    while len(together) < crowd or len(apart) < others:
        name = "".join(rng.choice("ab0123456789-") for _ in range(rng.randrange(1, 9)))
        shares = spread(string_hash(name)) & ((1 << bits) - 1) == low & ((1 << bits) - 1)
        which, wanted = (together, crowd) if shares else (apart, others)
        if name not in together and name not in apart and len(which) < wanted:
            which.append(name)
    names = together + apart
    rng.shuffle(names)
    return names


def test_the_client_orders_iterate_as_the_jvms_hash_map():
    """`hashmap_order` (the Java client's maps of member ids and topic names) and the tests'
    step-by-step model (`tests/java_hashmap.py`) against the JVM, by ``put`` and by
    ``computeIfAbsent`` (a bin's eighth key grows a small table there, its ninth by ``put``),
    with and without a call for a present key after the last, and the broker's model
    (`JavaHashMap`, string keys); where a bin of 64 or more became a tree, which the tests'
    model leaves out, `hashmap_order` (its `_modelled_order`) and the broker's model."""
    from tests.java_hashmap import JavaHashMap as Oracle

    rng = random.Random(54)
    commands: list[str] = []
    expected: list[tuple[list[str], list[str], list[str] | None]] = []
    for _ in range(400):
        keys = crowded_names(rng)
        how = rng.choice(["put", "cia", "cia-after"])
        commands.append("map str")
        oracle, model = Oracle(), JavaHashMap(string_hash)
        for key in keys:
            commands.append(f"{'put' if how == 'put' else 'cia'} {key}")
            if how == "put":
                oracle.put(key)
                model.put(key, True)
            else:
                oracle.compute_if_absent(key)
                model.compute_if_absent(key, lambda: True)
        if how == "cia-after":
            commands.append(f"cia {keys[0]}")
            oracle.compute_if_absent(keys[0])
            model.compute_if_absent(keys[0], lambda: True)
        commands.append("list")
        closed = hashmap_order(keys, computed=how != "put", called_after=how == "cia-after")
        expected.append((list(model), closed, oracle.keys() if model.treeified == 0 else None))
    jvm = listed("HashMapOrder", commands)
    assert len(jvm) == len(expected)
    trees = 0
    for i, (theirs, (model_order, closed, oracle_order)) in enumerate(zip(jvm, expected, strict=True)):
        assert model_order == theirs and closed == theirs, (i, model_order, closed, theirs)
        if oracle_order is None:
            trees += 1
        else:
            assert oracle_order == theirs, (i, oracle_order, theirs)
    assert 0 < trees < len(expected) // 4, trees
