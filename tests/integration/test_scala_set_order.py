"""Our model of the order a Kafka broker lists a Metadata request's topics in
(`assignor.metadata_order.response_order`: Scala 2.13's sets, as ``KafkaApis`` holds the
request's names) against the JVM's own (``jvm/src/ScalaSetOrder.java``, on the broker's
``scala-library``): random requests of topic-like names, from one name to hundreds; names
picked to share the low bits of their improved hashes, so the trie nests levels deep;
and names of one whole hash (``Aa`` and ``BB`` hash alike in Java), which Scala keeps in the
order they were added."""

from __future__ import annotations

import itertools
import random

import pytest

from assignor.metadata_order import _improve, response_order
from assignor.ordering import string_hash
from tests.jvm_driver import listed

pytestmark = pytest.mark.external


def _names(rng: random.Random) -> list[str]:
    """One request's names: topic-like, some sharing the low 5 or 10 bits of their improved
    hashes (two levels of the trie), some of one whole hash, repeats left in (the broker keeps each once)."""
    prefix = rng.choice(["orders", "t", "payments.v2", "x_y", "six-alike"])
    names = [f"{prefix}-{rng.randrange(10**6)}" for _ in range(rng.choice([1, 3, 4, 5, 6, 9, 40, 300]))]
    if rng.random() < 0.4:
        bits = rng.choice([5, 10])
        low = _improve(string_hash(names[0])) & ((1 << bits) - 1)
        while len(names) < 30:
            name = f"{prefix}-{rng.randrange(10**7)}"
            if _improve(string_hash(name)) & ((1 << bits) - 1) == low:
                names.append(name)
    if rng.random() < 0.3:  # (``Aa`` and ``BB`` blocks: every such name of one length hashes alike)
        alike = ["".join(blocks) for blocks in itertools.product(["Aa", "BB"], repeat=3)]
        names += rng.sample(alike, rng.randrange(2, len(alike) + 1))
    if rng.random() < 0.2:
        names += rng.sample(names, rng.randrange(1, len(names) + 1))
    rng.shuffle(names)
    return names


def test_the_model_lists_names_as_scala_sets_iterate():
    rng = random.Random(848)
    requests = [_names(rng) for _ in range(300)]
    answers = listed("ScalaSetOrder", ["set " + " ".join(names) for names in requests])
    for names, answer in zip(requests, answers, strict=True):
        assert response_order(names) == answer, names
