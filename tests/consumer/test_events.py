"""The event kinds, each written once (`assignor.events.KINDS`): the README's table, the page's
list and the CLI's help show the registry, and each kind's effect on the sizes the limits count
(`EventKind.sized`) is its effect on the group (`EventKind.change`)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignor import Group, Member
from assignor.errors import WhatIfError
from assignor.events import KINDS, apply_event, parse_event
from assignor.limits import Sizes
from tests.budget import examples

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_tables_every_kind_as_the_registry_has_it():
    rows = re.findall(r"^\| `([A-Za-z_]+[^`]*)` \| (.+) \|$", (ROOT / "README.md").read_text(), re.MULTILINE)
    forms = {kind.form for kind in KINDS.values()}
    shown = [(form, meaning) for form, meaning in rows if form.split(":")[0] in KINDS or form in forms]
    assert shown == [(kind.form, kind.meaning) for kind in KINDS.values()]


def test_the_page_lists_every_kind_as_the_registry_has_it():
    pytest.importorskip("fastapi")
    from api.routes.health import rendered_page

    hint = re.search(r'<p class="hint">(member_join.*?)</p>', rendered_page(), re.DOTALL).group(1)
    assert [form.strip() for form in hint.split("·")] == [html.escape(kind.form) for kind in KINDS.values()]


def test_the_clis_help_names_every_kind(capsys):
    from assignor.cli import main

    try:
        main(["whatif", "--help"])
    except SystemExit:
        pass
    shown = " ".join(capsys.readouterr().out.split())
    assert all(kind.form in shown for kind in KINDS.values())


EVENT_TEXT = st.one_of(
    st.builds(lambda i, t: f"member_join:m{i}:{t}", st.integers(0, 5), st.sampled_from(["a", "b", "a,b"])),
    st.builds(lambda i: f"member_leave:m{i}", st.integers(0, 5)),
    st.builds(lambda i, t: f"subscribe:m{i}:{t}", st.integers(0, 5), st.sampled_from(["a", "b", "c"])),
    st.builds(lambda i, t: f"unsubscribe:m{i}:{t}", st.integers(0, 5), st.sampled_from(["a", "b"])),
    st.builds(lambda t, n: f"partitions_added:{t}:{n}", st.sampled_from(["a", "b", "c"]), st.integers(0, 9)),
    st.builds(lambda t, n: f"topic_created:{t}:{n}", st.sampled_from(["a", "b", "c"]), st.integers(0, 9)),
    st.builds(lambda t: f"topic_deleted:{t}", st.sampled_from(["a", "b", "c"])),
    st.builds(lambda i, r: f"rack_changed:m{i}:{r}", st.integers(0, 5), st.sampled_from(["r1", "r2"])),
    st.just("rolling_restart"),
)
#: Changes that come together (`assignor.events.BATCH`): any but restarts.
BATCH_TEXT = st.lists(EVENT_TEXT.filter(lambda text: text != "rolling_restart"), min_size=2, max_size=4).map("+".join)


@given(texts=st.lists(st.one_of(EVENT_TEXT, BATCH_TEXT), max_size=12), members=st.integers(0, 4))
@examples(300)
def test_each_kinds_effect_on_the_counted_sizes_is_its_effect_on_the_group(texts, members):
    group = Group(topics={"a": 3, "b": 2}, members=[Member(f"m{i}", ["a"]) for i in range(members)])
    sizes = Sizes(group)
    for text in texts:
        event = parse_event(text)
        try:
            after = apply_event(group, event)
        except WhatIfError:
            continue  # (what cannot apply never reaches the sizes: the engine refuses it first)
        event.resize(sizes)
        group = after
        assert sizes.topics == group.topics
        assert sizes.partitions == sum(group.topics.values())
        assert sizes.members == {m.id for m in group.members}
        expected = 2 * len(group.members) if text == "rolling_restart" else text.count("+") + 1
        assert event.rebalances(len(group.members)) == expected


def test_a_created_topic_is_read_by_the_members_whose_regex_takes_it():
    """KIP-848's regex subscriptions: the broker resolves each regex again when a topic appears
    (`topic_regex`, RE2/J's syntax); members of names, or whose regex does not take it, do not
    read it. Through the group JSON and a what-if, a restart on the way (the member rejoins with
    its regex), and the plans of the broker's assignor."""
    from assignor import whatif
    from assignor.json_format import group_from_json, group_to_json, pack_group, unpack_group
    from assignor.model import Claims

    data = {"topics": {"orders.v1": 2}, "members": [
        {"id": "a", "topics": ["orders.v1"], "owned": [["orders.v1", 0]], "topic_regex": r"orders\.v[[:digit:]]+"},
        {"id": "b", "topics": ["orders.v1"], "owned": [["orders.v1", 1]]},
        {"id": "c", "topics": [], "topic_regex": r"\Qaudit\E"}]}
    group = group_from_json(data)
    assert [m.topic_regex for m in group.members] == [r"orders\.v[[:digit:]]+", None, r"\Qaudit\E"]
    assert group_to_json(group)["members"][0]["topic_regex"] == r"orders\.v[[:digit:]]+"
    unpacked = group_from_json(unpack_group(pack_group(group, Claims.empty())))
    assert [m.topic_regex for m in unpacked.members] == [m.topic_regex for m in group.members]
    created = apply_event(group, parse_event("topic_created:orders.v2:4"))
    assert [list(m.topics) for m in created.members] == [["orders.v1", "orders.v2"], ["orders.v1"], []]
    assert [list(m.topics) for m in apply_event(group, parse_event("topic_created:ordersXv2:4")).members] == [
        ["orders.v1"], ["orders.v1"], []]
    events = [parse_event("rolling_restart"), parse_event("topic_created:orders.v3:4")]
    run = whatif.run(group, events, ["kip848-uniform"], include_plans=True)
    last = run["strategies"]["kip848-uniform"]["steps"][-1]["assignment"]
    held_v3 = {member for member, pairs in last.items() if any(t == "orders.v3" for t, _p in pairs)}
    assert len(held_v3) == 1 and next(iter(held_v3)).startswith("a")  # (a, under the id it rejoined with)
    with pytest.raises(Exception, match="topic_regex must be a string"):
        Member("x", [], topic_regex=3)  # type: ignore[arg-type]


#: A librdkafka consumer-protocol member's id (KIP-848): 22 characters of standard base64, ``+``
#: and ``/`` among them, as one it wrote on Apache Kafka 4.3.1.
BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
BASE64_ID = st.text(alphabet=BASE64, min_size=22, max_size=22)


#: A classic Java member's id: its client id (``consumer-GROUP-N`` by default, a group id of
#: ':' and '+' here), '-', a UUID.
JAVA_ID = st.builds(lambda group, n, uuid: f"consumer-{group}-{n}-{uuid}",
                    st.text(alphabet="ab:+.", min_size=1, max_size=8), st.integers(1, 9), st.uuids())


@given(ids=st.lists(st.one_of(BASE64_ID, JAVA_ID), min_size=1, max_size=4),
       rack=st.text(alphabet="ab+", min_size=1, max_size=6))
@examples(200)
def test_ids_and_racks_that_hold_a_plus_or_a_colon_are_named_alone_and_together(ids, rack):
    """A ``+`` inside an id or a rack is not where changes are joined (`events.BATCH`), and a
    ``:`` inside a member's id is not where its arguments part: the events read back as
    written, alone and together, each naming the whole id."""
    assert all(kind.least == kind.most for kind in KINDS.values() if kind.about_member)  # (read from the right)
    for member in ids:
        assert parse_event(f"subscribe:{member}:orders").args == (member, "orders")
        assert parse_event(f"rollback:{member}").args == (member,)
        assert parse_event(f"member_leave:{member}").args == (member,)
        assert parse_event(f"rack_changed:{member}:{rack}").args == (member, rack)
    texts = [f"member_leave:{member}" for member in ids] + [f"member_join:new:a:{rack}"]
    together = parse_event("+".join(texts))
    assert together.kind == "together" and [str(change) for change in together.args] == texts
    assert str(together) == "+".join(texts)


def test_a_leave_of_a_member_whose_id_holds_a_plus_is_planned():
    from assignor import whatif

    member = "wh5bX//KSa+bT4n0Py0Xkg"  # (the id librdkafka gave a member of a snapshot, KIP-848)
    group = Group(topics={"a": 4}, members=[Member(member, ["a"]), Member("b", ["a"])])
    run = whatif.run(group, [parse_event(f"member_leave:{member}")], ["kip848-uniform"], include_plans=True)
    assert run["strategies"]["kip848-uniform"]["steps"][-1]["assignment"] == {"b": [["a", 0], ["a", 1], ["a", 2],
                                                                                     ["a", 3]]}


def test_a_plus_before_no_kind_is_part_of_the_id_and_the_leave_names_it_whole():
    """``member_leave:m0+grow:t:9``: no kind is named ``grow``, so the ``+`` is the id's (an id
    may hold one), and the engine names the member it did not find, whole."""
    from assignor import whatif

    group = Group(topics={"t": 4}, members=[Member("m0", ["t"]), Member("m1", ["t"])])
    with pytest.raises(WhatIfError, match=r"member_leave: no member 'm0\+grow:t:9'"):
        whatif.run(group, [parse_event("member_leave:m0+grow:t:9")], ["sticky"])


@pytest.mark.parametrize("strategy", ["kip848-range", "range"])
def test_a_static_member_joins_under_its_instance_id(strategy):
    """``member_join:ID:TOPICS:RACK:INSTANCE_ID``: the joiner is static (KIP-345), and range,
    the broker's and Java's, deals to static members first, by instance id, where a dynamic
    member whose id sorts last would get the last range: what a static member's join does can
    be planned before it comes, its member id not yet drawn."""
    from assignor import whatif

    group = Group(topics={"t": 6}, members=[Member("m1", ["t"]), Member("m2", ["t"])])

    def joiner_gets(text: str) -> list[list[object]]:
        run = whatif.run(group, [parse_event(text)], [strategy], include_plans=True)
        return run["strategies"][strategy]["steps"][-1]["assignment"]["zz"]

    assert joiner_gets("member_join:zz:t") == [["t", 4], ["t", 5]]
    assert joiner_gets("member_join:zz:t::instance-a") == [["t", 0], ["t", 1]]
    assert joiner_gets("member_join:zz:t:rack-1:instance-a") == [["t", 0], ["t", 1]]
    assert str(parse_event("member_join:zz:t::instance-a")) == "member_join:zz:t::instance-a"
    joined = apply_event(group, parse_event("member_join:zz:t::instance-a")).members[-1]
    assert (joined.rack, joined.group_instance_id) == (None, "instance-a")
    static = Group(topics={"t": 6}, members=[Member("m1", ["t"], group_instance_id="instance-a")])
    with pytest.raises(WhatIfError, match="instance id 'instance-a' is held by member 'm1'; a static member that "
                                          "comes back is rollback:m1 or rolling_restart"):
        apply_event(static, parse_event("member_join:zz:t::instance-a"))
