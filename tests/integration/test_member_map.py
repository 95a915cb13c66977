"""Our model of the group coordinator's member map (`assignor.strategies.kip848.member_map`)
against Kafka's own ``org.apache.kafka.timeline.TimelineHashMap`` (kafka-server-common 4.3.1,
driven by ``jvm/src/TimelineOrder.java``): after every put and remove of random sequences of
member ids (Kafka's 22-character ones, and short names), both iterate in the same order."""

from __future__ import annotations

import base64
import random

import pytest

from assignor.strategies.kip848.member_map import MemberMap
from tests.jvm_driver import listed

pytestmark = pytest.mark.external


def member_id(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return f"c{rng.randrange(40)}"
    return base64.urlsafe_b64encode(rng.randbytes(16)).decode().rstrip("=")


def test_the_model_iterates_as_kafkas_timeline_hash_map():
    rng = random.Random(848)
    commands, expected = [], []
    for _ in range(200):
        commands.append("reset")
        model, present = MemberMap(), []
        for _ in range(rng.randrange(1, 60)):
            if present and rng.random() < 0.3:
                key = present.pop(rng.randrange(len(present)))
                commands.append(f"remove {key}")
                model.remove(key)
            else:
                key = member_id(rng)
                if key not in present:
                    present.append(key)
                commands.append(f"put {key}")
                model.put(key)
            commands.append("list")
            expected.append(list(model))
    kafka = listed("TimelineOrder", commands)
    assert len(kafka) == len(expected)
    for i, (theirs, ours) in enumerate(zip(kafka, expected, strict=True)):
        assert ours == theirs, (i, ours, theirs)
    # A map rebuilt from its own iteration order (`MemberMap.iterating`) iterates so too.
    for order in expected:
        if order:
            assert list(MemberMap.iterating(order)) == order
