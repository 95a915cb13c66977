"""The member side (`assignor.member_side`) sends the JoinGroup metadata the what-if engine and
the leader's tests encode for a member of each protocol (`wire.columnar.encode_join_group`):
the adapters and the engine speak one protocol."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignor.member_side import MemberSide
from assignor.model import UNKNOWN_GENERATION, Claims, Member
from assignor.protocols import PROTOCOLS
from assignor.wire.columnar import encode_join_group
from tests.budget import examples

CLASSIC = sorted(name for name, p in PROTOCOLS.items() if p.classic)


@pytest.mark.parametrize("protocol", CLASSIC)
@given(topics=st.sets(st.sampled_from(["a", "b", "c"]), min_size=1),
       owned=st.none() | st.sets(st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 40))),
       generation=st.integers(0, 2**31 - 1), rack=st.none() | st.sampled_from(["r1", "eu-west-1a"]))
@examples(200)
def test_a_member_joins_with_the_metadata_the_engine_encodes_for_it(protocol, topics, owned, generation, rack):
    side = MemberSide(PROTOCOLS[protocol], rack=rack)
    if owned is not None:
        side.assigned(sorted(owned), generation)
    pairs = sorted(owned or ())
    names = sorted({t for t, _ in pairs})
    claims = Claims(np.zeros(len(pairs), dtype=np.int64), np.array([names.index(t) for t, _ in pairs], dtype=np.int64),
                    np.array([p for _, p in pairs], dtype=np.int64), names)
    engine = encode_join_group([Member("m", tuple(sorted(topics)), rack=rack)], claims,
                               [generation if owned is not None else UNKNOWN_GENERATION], PROTOCOLS[protocol])
    assert side.metadata(topics) == engine.messages()[0]


def test_a_lost_member_claims_nothing_and_forgets_its_generation():
    side = MemberSide(PROTOCOLS["cooperative-sticky"])
    side.assigned([("a", 1)], 3)
    side.lost()
    assert (side.owned, side.generation) == ([], UNKNOWN_GENERATION)


def test_both_adapters_hand_the_leader_the_static_members_instance_ids():
    """The JoinGroup response lists each static member's ``group.instance.id`` (v5+): kafka-python
    hands its rows to ``assign``, aiokafka's are read from its response; the leader plans with
    them (range and roundrobin deal to static members first: `assignor.ordering`)."""
    from types import SimpleNamespace

    from assignor.integrations import aiokafka as ours_aiokafka
    from assignor.integrations import kafka_python as ours_kafka_python

    seen: list[dict[str, str | None]] = []

    class Spy(ours_kafka_python.StickyAssignor):
        def lead(self, generation, topics, metadata, instance_ids=None):
            result = super().lead(generation, topics, metadata, instance_ids)
            seen.append({m.id: m.group_instance_id for m in result.planned.members})
            return result

    sent = Spy().metadata(["t"])
    rows = [SimpleNamespace(member_id=m, group_instance_id=instance,
                            metadata=SimpleNamespace(topics=["t"], generation_id=-1, encode=lambda: sent))
            for m, instance in (("m1", "i-1"), ("m2", None))]
    cluster = SimpleNamespace(partitions_for_topic=lambda topic: set(range(4)))
    Spy().assign(cluster, rows)
    assert seen == [{"m1": "i-1", "m2": None}]
    response = SimpleNamespace(members=[("m1", "i-1", sent), ("m2", None, sent)])
    assert ours_aiokafka._instance_ids(response, {"m1": sent, "m2": sent}) == {"m1": "i-1"}
    assert ours_aiokafka._instance_ids(SimpleNamespace(members=[("m1", sent)]), {"m1": sent}) == {}
