"""The what-if's figures counted many steps at once (`figures._measure_many`, `Counting`): each
step's are what counting it alone, member by member with dicts, gives."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from assignor import Claims, Group, Member, validate, whatif
from assignor.solver import dense
from assignor.whatif import figures
from tests.budget import examples


def _plainly(group: Group, layout: dense.Layout, owned: Claims) -> dict[str, object]:
    """One step's figures from its owned partitions, pair by pair: each member's load (a group
    of none counts one member holding nothing), the balance score by the oracle's rule, each
    topic's spread among its holders (down to 0 where a subscriber holds none of it), and the
    share of partitions with replica racks read from a rack of theirs."""
    members = max(len(layout.members), 1)
    pairs = [(m, owned.names[t], p) for m, t, p in
             zip(owned.member.tolist(), owned.topic.tolist(), owned.partition.tolist())]
    loads = Counter(m for m, _, _ in pairs)
    load = [loads.get(m, 0) for m in range(members)]
    subscribers = Counter(t for m in layout.members for t in set(m.topics) if t in layout.topics)
    cells = Counter((m, t) for m, t, _ in pairs)
    topic_spread = 0
    for topic in layout.topics:
        held = [n for (_, t), n in cells.items() if t == topic]
        if held:
            fewest = min(held) if len(held) == subscribers[topic] else 0
            topic_spread = max(topic_spread, max(held) - fewest)
    locality = None
    if group.partition_racks:
        placed = [(m, t, p) for m, t, p in pairs if t in group.partition_racks
                  and 0 <= p < len(group.partition_racks[t]) and group.partition_racks[t][p]]
        local = sum(layout.members[m].rack is not None and layout.members[m].rack in group.partition_racks[t][p]
                    for m, t, p in placed)
        locality = round(local / len(placed), 4) if placed else None
    return {"balance_score": validate.balance_score(load), "spread": max(load) - min(load),
            "topic_spread": topic_spread, "rack_locality": locality}


@st.composite
def _steps(draw):
    """Steps of groups of up to 6 members on up to 4 topics (racks sometimes), each owning
    random partitions of its layout (any member any topic: a figure counts what is held)."""
    found = []
    for _ in range(draw(st.integers(1, 5))):
        topics = {f"t{i}": draw(st.integers(0, 5)) for i in range(draw(st.integers(0, 4)))}
        names = sorted(topics)
        members = [Member(f"m{i}", draw(st.lists(st.sampled_from(names), max_size=3)) if names else [],
                          rack=draw(st.sampled_from([None, "r0", "r1"])))
                   for i in range(draw(st.integers(0, 6)))]
        racks = None
        if names and draw(st.booleans()):
            racks = {t: [draw(st.lists(st.sampled_from(["r0", "r1", "r2"]), max_size=2, unique=True))
                         for _ in range(count)] for t, count in topics.items()}
        group = Group(topics, members, partition_racks=racks)
        layout = dense.build(group)
        flats = [(t, p) for t in range(len(layout.topics)) for p in range(int(layout.counts[t]))]
        held = draw(st.lists(st.sampled_from(flats), unique=True)) if flats and members else []
        owner = [draw(st.integers(0, len(members) - 1)) for _ in held]
        order = sorted(range(len(held)), key=lambda i: (owner[i], held[i])) if draw(st.booleans()) else \
            list(range(len(held)))  # members usually list theirs in order; not always
        owned = Claims(np.array([owner[i] for i in order], dtype=np.int64),
                       np.array([held[i][0] for i in order], dtype=np.int64),
                       np.array([held[i][1] for i in order], dtype=np.int64),
                       layout.topics if draw(st.booleans()) else list(layout.topics))
        found.append((group, layout, owned))
    return found


@examples(300)
@given(_steps())
def test_steps_counted_together_are_each_counted_alone(steps):
    together = figures._measure_many([(g.partition_racks, layout, owned) for g, layout, owned in steps])
    assert together == [_plainly(*step) for step in steps]
    assert together == [figures._measure(*step) for step in steps]


def test_counting_fills_each_step_in_place_keeping_its_keys_order():
    group = Group({"t": 3}, [Member("a", ["t"]), Member("b", ["t"])])
    layout = dense.build(group)
    owned = Claims(np.array([0, 0, 1]), np.array([0, 0, 0]), np.array([0, 1, 2]), layout.topics)
    counting = figures.Counting()
    step = {"event": "x", **figures.UNCOUNTED, "after": 1}
    figures.counted(step, counting, group, layout, owned)
    assert step["balance_score"] == 0  # not counted yet
    counting.count()
    assert list(step) == ["event", "balance_score", "spread", "topic_spread", "rack_locality", "after"]
    assert (step["balance_score"], step["spread"], step["topic_spread"]) == (1, 1, 1)


def test_counting_counts_by_itself_past_its_bound_of_rows(monkeypatch):
    monkeypatch.setattr(figures.Counting, "ROWS", 2)
    group = Group({"t": 3}, [Member("a", ["t"])])
    layout = dense.build(group)
    owned = Claims(np.array([0, 0, 0]), np.array([0, 0, 0]), np.array([0, 1, 2]), layout.topics)
    counting = figures.Counting()
    step = {**figures.UNCOUNTED}
    figures.counted(step, counting, group, layout, owned)
    assert step["topic_spread"] == 0 and step["spread"] == 0 and step["balance_score"] == 0
    assert counting._steps == []  # counted: three rows are past the bound


def test_a_runs_figures_are_counted_before_a_step_reads_the_one_before():
    """Static members back within their session: those steps repeat the figures of the step
    before, which are counted first (not their placeholders)."""
    group = Group({"t": 5}, [Member("a", ["t"], group_instance_id="i-a"),
                             Member("b", ["t"], group_instance_id="i-b")])
    result = whatif.run(group, [whatif.parse_event("rolling_restart")], ["sticky"],
                        timing=whatif.Timing(restart_seconds=1.0))
    run = result["strategies"]["sticky"]["steps"]
    assert [s["rounds"] for s in run] == [1, 0, 0]
    assert [(s["balance_score"], s["spread"], s["topic_spread"]) for s in run] == [(1, 1, 1)] * 3
