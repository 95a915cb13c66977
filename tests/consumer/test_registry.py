"""Protocols and strategies as data: adding one is a module and a registration, and nothing
else in the library knows a protocol by its name."""

from __future__ import annotations

import ast
import base64
from pathlib import Path

import numpy as np
import pytest

from assignor import Group, Member, Plan, assign, leader, protocol, validate, whatif
from assignor.errors import AssignorError
from assignor.protocols import PROTOCOLS, Carrier, Protocol, UserData
from assignor.solver import dense
from assignor.strategies import REGISTRY, STRATEGIES, Strategy, java_counterparts, strategy_for
from assignor.strategies.strategy import stateless

ROOT = Path(__file__).resolve().parents[2]


# -- a throw-away strategy with a protocol of its own: the whole of what adding one takes ------------

#: The module: a cooperative protocol carrying the generation in its user data ...
REVERSED = Protocol("reversed-range", cooperative=True, user_data=UserData.GENERATION, owned_in=Carrier.SUBSCRIPTION,
                    generation_in=(Carrier.SUBSCRIPTION, Carrier.USER_DATA))


def _reversed_owners(group: Group, claims, memo) -> tuple[dense.Layout, np.ndarray]:
    """... and a strategy that deals each topic's partitions to its subscribers, last first."""
    layout = dense.build(group, claims, memo)
    first, subscribers, member = dense.topic_subscribers(layout)
    flat_topic = layout.topic_of_flat()
    n = subscribers[flat_topic]
    owner = np.full(layout.total, dense.NO_OWNER, dtype=np.int64)
    has = n > 0
    rank = (n - 1 - layout.partition_of_flat() % np.maximum(n, 1))[has]
    owner[has] = member[first[flat_topic[has]] + rank]
    return layout, owner


def _reversed_assign(group: Group) -> Plan:
    layout, owner = _reversed_owners(group, None, None)
    return Plan(REVERSED.name, layout.assignment(owner))


THROWAWAY = Strategy(REVERSED.name, REVERSED, _reversed_assign, stateless(_reversed_owners))


@pytest.fixture
def registered(monkeypatch):
    """The registration: one line each in `assignor.protocols` and `assignor.strategies`."""
    monkeypatch.setitem(PROTOCOLS, REVERSED.name, REVERSED)
    monkeypatch.setitem(REGISTRY, THROWAWAY.name, THROWAWAY)
    return THROWAWAY


def test_a_registered_strategy_plans_everywhere(registered):
    """The library, the leader's bytes, what-if, the oracle and the service's models take it
    with nothing else changed."""
    group = Group(topics={"t": 4}, members=[Member("a", ["t"]), Member("b", ["t"])])
    assert REVERSED.name in STRATEGIES
    plan = assign(REVERSED.name, group)
    assert plan.assignment == {"a": [("t", 1), ("t", 3)], "b": [("t", 0), ("t", 2)]}
    assert validate.report(group, plan)["valid"]
    # The leader: members send Subscription v3 with the generation in the user data.
    metadata = {m: protocol.encode_subscription(protocol.Subscription(["t"], protocol.encode_cooperative_user_data(4),
                                                                      generation_id=-1)) for m in "ab"}
    result = leader.sync(REVERSED.name, 5, {"t": 4}, metadata)
    assert [m.generation for m in result.roster.members] == [4, 4]
    assert {m: [tuple(tp) for tp in protocol.decode_assignment(b).partitions] for m, b in result.assignments.items()} \
        == {"a": [("t", 1), ("t", 3)], "b": [("t", 0), ("t", 2)]}
    # What-if runs it as a cooperative protocol (owned partitions travel in the subscription).
    run = whatif.run(group, [whatif.parse_event("member_leave:b")], [REVERSED.name], check=True)
    assert run["strategies"][REVERSED.name]["summary"]["steps"] == 1
    pytest.importorskip("fastapi")  # the service's schema (the api extra) knows it too
    import orjson

    from api.models import PlanRequest

    body = {"strategy": REVERSED.name, "topics": {"t": 1}, "members": []}
    request = PlanRequest.model_validate(orjson.loads(orjson.dumps(body)))
    assert request.strategy == REVERSED.name


def test_an_unknown_strategy_or_protocol_is_refused_by_name():
    from assignor import UnknownStrategyError
    from assignor.errors import UnknownProtocolError

    with pytest.raises(UnknownStrategyError, match="known: "):
        assign("reversed-range", Group(topics={}))
    with pytest.raises(UnknownProtocolError, match="known: "):
        leader.sync("reversed-range", 1, {}, {})


def test_the_java_pairs_come_from_the_registry():
    assert [(j.name, o.name) for j, o in java_counterparts()] == [("java-sticky", "sticky"),
                                                                  ("java-cooperative-sticky", "cooperative-sticky")]
    # Other clients' strategies are planned where named: never ours, nor in the default comparison.
    peers = [name for name, s in REGISTRY.items() if s.peer is not None]
    assert peers == ["librdkafka-cooperative-sticky", "librdkafka-range", "librdkafka-roundrobin"]
    assert whatif.ALL_STRATEGIES == tuple(name for name in REGISTRY if name not in peers)
    assert not set(peers) & set(whatif.MIGRATE_FROM)
    assert [strategy_for(REGISTRY[peer].protocol).name for peer in peers] == ["cooperative-sticky", "range",
                                                                               "roundrobin"]


# -- nothing outside the registry compares names ---------------------------------------------------

#: String constants that are a protocol's name for another reason: a producer partitioner is
#: called "roundrobin" too.
_OTHER_MEANINGS = {("api/models.py", "roundrobin")}


def _name_literals(path: Path, names: set[str]) -> list[str]:
    """Protocol names written as string constants in code (docstrings are docs, not code)."""
    tree = ast.parse(path.read_text())
    docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in names and id(node) not in docstrings]


def test_only_the_registry_writes_a_protocols_name():
    names = set(PROTOCOLS)
    found = []
    for top in ("assignor", "api", "pipeline"):
        for path in sorted((ROOT / top).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative == "assignor/protocols.py" or relative.startswith("assignor/partitioners/"):
                continue  # the registry itself; the producer side's partitioners have names of their own
            found += [(relative, name) for name in _name_literals(path, names)
                      if (relative, name) not in _OTHER_MEANINGS]
    assert found == []


def test_a_broken_registry_is_caught():
    """The check itself: a protocol's name compared in code is reported."""
    sample = ROOT / "tests" / "consumer" / "_sample_for_registry_check.py"
    sample.write_text('def f(p):\n    """Under "sticky"."""\n    return p == "cooperative-sticky"\n')
    try:
        assert _name_literals(sample, set(PROTOCOLS)) == ["cooperative-sticky"]
    finally:
        sample.unlink()


def test_the_metadata_example_round_trips():
    """The service's example body decodes under the protocol its example names."""
    pytest.importorskip("fastapi")  # (the api extra)
    from api.models import SyncRequest

    example = SyncRequest.model_json_schema()["examples"][0]
    assert example["protocol"] in PROTOCOLS
    protocol.member_from_metadata("c1", base64.b64decode(example["members"][0]["metadata_b64"]), example["protocol"])


def _leader_of(protocol_name: str, strategy: str | None):
    return leader.sync(protocol_name, 1, {"t": 2}, {}, strategy=strategy).strategy


def _aiokafka_member(protocol_name: str, strategy: str | None):
    pytest.importorskip("aiokafka")
    from assignor.integrations import aiokafka

    kind = {"sticky": aiokafka.StickyAssignor, "cooperative-sticky": aiokafka.CooperativeStickyAssignor}[protocol_name]
    return kind(strategy=strategy).strategy


def _kafka_python_member(protocol_name: str, strategy: str | None):
    pytest.importorskip("kafka")
    from assignor.integrations import kafka_python

    kind = {"sticky": kafka_python.StickyAssignor,
            "cooperative-sticky": kafka_python.CooperativeStickyAssignor}[protocol_name]
    return kind(strategy=strategy).strategy


@pytest.mark.parametrize("chooser", [_leader_of, _aiokafka_member, _kafka_python_member])
def test_a_leader_and_every_adapter_choose_a_protocols_strategy_by_one_rule(chooser):
    """Ours by default, Java's when asked, a strategy of another protocol refused in one wording
    (`assignor.strategies.strategy_for`), wherever a protocol's strategy is chosen."""
    for name in ("sticky", "cooperative-sticky"):
        chosen = chooser(name, None)
        assert getattr(chosen, "name", chosen) == strategy_for(PROTOCOLS[name]).name == name
        assert getattr(chooser(name, "java-" + name), "name", chooser(name, "java-" + name)) == "java-" + name
    with pytest.raises(AssignorError, match="^strategy 'range' plans the 'range' protocol, not 'sticky'$"):
        chooser("sticky", "range")
