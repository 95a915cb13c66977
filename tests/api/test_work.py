"""The planning workers' answers: written from the planner's arrays, held to the answer written
from the strategy's `Plan` (the reference), on random groups."""

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from api import protocol_io, transport
from api.handlers import answers
from api.handlers import plans as plans_handlers
from api.settings import Settings
from assignor import validate
from assignor.json_format import group_from_json, group_to_json, plan_to_columns_json, plan_to_json
from assignor.plan_answer import PlanAnswer
from assignor.protocol import plan_bytes
from assignor.strategies import REGISTRY, assign, strategy_named
from tests.budget import examples
from tests.consumer.test_validate import claimed_groups

LIMITS = Settings().limits


def reference_planned(group, strategy: str, generation: int, columns: bool, with_bytes: bool) -> PlanAnswer:
    """The answer written the plain way, from the strategy's `Plan` (objects, in its order)."""
    chosen = strategy_named(strategy)
    plan = assign(strategy, group)
    # KIP-848's broker assignors plan no classic protocol: no SyncGroup bytes to write
    encoded, user_data = plan_bytes(plan, chosen.protocol, generation, as_java=chosen.java) \
        if with_bytes and chosen.protocol.classic else (None, {})
    return PlanAnswer(list(plan.assignment), plan_to_columns_json(plan) if columns else plan_to_json(plan),
                        encoded, user_data, validate.report(group, plan), 0.0)


@examples(300)
@given(claimed_groups(), st.sampled_from(list(REGISTRY)),
       st.booleans(), st.booleans(), st.integers(0, 5))
def test_a_plan_written_from_arrays_is_the_plans_own_answer(group, strategy, columns, with_bytes, generation):
    body = orjson.dumps({**group_to_json(group), "strategy": strategy, "generation": generation})
    status, answer, stats = plans_handlers.plan(body, LIMITS, columns, with_bytes)
    try:
        reference = reference_planned(group_from_json(group_to_json(group)), strategy, generation, columns,
                                      with_bytes)
    except Exception as error:  # Java's assignor fails on some hostile groups: the answer says so
        assert status == 422 and str(error) in orjson.loads(answer)["detail"]
        return
    assert status == 200, answer
    got = orjson.loads(answer)
    assert orjson.loads(answers.dumps(reference.assignment)) == {k: got[k] for k in reference.assignment}
    assert got["metrics"] == orjson.loads(answers.dumps(reference.report))
    if reference.encoded is not None:
        assert got["members"] == {m: {"assignment_b64": protocol_io.b64(reference.encoded[m]),
                                      "user_data_b64": protocol_io.b64(reference.user_data.get(m))}
                                  for m in reference.members}
    else:
        assert "members" not in got
    assert list(got["assignment"]) == reference.members


@pytest.mark.parametrize("strategy", ["java-sticky", "java-cooperative-sticky"])
def test_java_faithful_plans_are_written_from_their_plan(strategy):
    body = orjson.dumps({"topics": {"t": 3}, "members": [{"id": "a", "topics": ["t"]}, {"id": "b", "topics": ["t"]}],
                         "strategy": strategy})
    status, answer, _ = plans_handlers.plan(body, LIMITS)
    assert status == 200 and sorted(orjson.loads(answer)["members"]) == ["a", "b"]


@pytest.mark.parametrize("strategy", list(REGISTRY))
@pytest.mark.parametrize("columns", [False, True])
def test_a_large_plan_with_racks_and_owners_is_the_same_either_way(strategy, columns):
    """A group the size of a small service load (2,000 partitions, 40 members, half of them
    owning what they held last time), with replica racks on one topic."""
    from assignor.model import Group, Member
    from assignor.strategies import assign
    from assignor.workloads import carry, java_large

    group = java_large("random50", 20, 100, 40)
    group = carry(group, assign(strategy, group), 1)
    members = [Member(m.id, m.topics, m.owned, m.generation, rack=f"r{i % 3}") for i, m in enumerate(group.members)]
    topic = sorted(group.topics)[0]
    racks = {topic: [[f"r{p % 3}", f"r{(p + 1) % 3}"] for p in range(group.topics[topic])]}
    group = Group(group.topics, members, racks)
    body = orjson.dumps({**group_to_json(group), "strategy": strategy})
    status, answer, _ = plans_handlers.plan(body, LIMITS, columns)
    got = orjson.loads(answer)
    generation = max(m.generation for m in group.members) + 1
    reference = reference_planned(group, strategy, generation, columns, True)
    assert status == 200 and got["generation"] == generation
    assert {k: got[k] for k in reference.assignment} == orjson.loads(answers.dumps(reference.assignment))
    assert got["metrics"] == orjson.loads(answers.dumps(reference.report))
    if reference.encoded is None:  # KIP-848's broker assignors: no classic protocol, no SyncGroup bytes
        assert "members" not in got and not REGISTRY[strategy].protocol.classic
        return
    assert {m: got["members"][m]["assignment_b64"] for m in reference.members} == {
        m: protocol_io.b64(reference.encoded[m]) for m in reference.members}


def test_planning_workers_hide_their_long_lived_objects_from_the_collector():
    """`transport.start_worker` runs first in each planning process: what the imports made is frozen,
    so the full collections a large plan sets off do not walk it again."""
    import gc

    from api.pool import Planner

    planner = Planner(Settings(workers=1))
    try:
        frozen = planner._pool().submit(gc.get_freeze_count).result()
    finally:
        planner.close()
    assert frozen > 10_000  # the modules, numpy's and pydantic's included


def test_handlers_run_with_the_collector_paused():
    """`answers.answer` pauses the cyclic collector for the handler (its containers are acyclic,
    freed by refcounting) and restores it after."""
    import gc

    status, answer, _ = answers.answer(lambda: ({"collecting": gc.isenabled()}, {}))
    assert (status, orjson.loads(answer)) == (200, {"collecting": False})
    assert gc.isenabled()


def test_large_answers_are_handed_over_as_files_or_as_bytes_when_there_is_no_room(monkeypatch, tmp_path):
    big = b"x" * (transport.SPOOL_BYTES + 1)
    status, spooled, stats, seconds = transport.handed_over(0, lambda: (200, big, {"n": 1}))
    assert 0 <= seconds < 60
    try:
        assert (status, stats) == (200, {"n": 1}) and isinstance(spooled, transport.Spooled)
        with open(spooled.path, "rb") as file:
            assert file.read() == big and spooled.size == len(big)
    finally:
        transport.discard(spooled)
    assert transport.handed_over(0, lambda: (200, b"{}", {}))[:3] == (200, b"{}", {})  # small: as they are

    class Full:  # a spool folder with no room left
        name = str(tmp_path / "full.json")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def write(self, data):
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(transport, "spool_file", Full)
    assert transport.handed_over(0, lambda: (200, big, {}))[:3] == (200, big, {})


@examples(100)
@given(st.lists(st.tuples(st.sampled_from(["a", "bb", "dé", ""]), st.integers(0, 2**31 - 1)), max_size=40),
       st.none() | st.binary(max_size=8), st.integers(0, 3))
def test_a_decoded_assignment_is_the_object_readers_answer(pairs, user_data, version):
    """``/v1/protocol/decode`` reads an assignment in columns; the object reader is the reference."""
    from api import protocol_io
    from assignor.model import TopicPartition
    from assignor.protocol import Assignment, decode_assignment, encode_assignment

    blob = encode_assignment(Assignment([TopicPartition(t, p) for t, p in pairs], user_data), version=version)
    plain = decode_assignment(blob)
    assert protocol_io.decode("assignment", blob) == {
        "version": plain.version, "partitions": [[tp.topic, tp.partition] for tp in plain.partitions],
        "user_data_b64": protocol_io.b64(plain.user_data)}


def test_a_request_whose_planning_process_ends_is_told_so_and_the_next_is_planned():
    """A planning process that ends under a request (here it exits; the kernel's out-of-memory
    killer does the same) broke the pool for good: every later request answered 500
    ``BrokenProcessPool``. Now that request gets a 500 saying what happened, a new pool replaces
    the broken one, and the next request is planned."""
    import asyncio
    import os

    from fastapi import HTTPException

    from api.pool import Planner

    planner = Planner(Settings(workers=1))

    async def scenario() -> tuple[str, int]:
        planner.start()
        try:
            await planner.run(os._exit, 1)
        except HTTPException as error:
            told = str(error.detail)
        else:
            raise AssertionError("the request whose process ended was answered")
        body = orjson.dumps({"topics": {"t": 2}, "members": [{"id": "a", "topics": ["t"]}]})
        status, _, _ = await planner.run(plans_handlers.plan, body, LIMITS)
        return told, status

    try:
        told, status = asyncio.run(scenario())
    finally:
        planner.close()
    assert told.startswith("the planning process ended") and status == 200
    assert planner.ready()
