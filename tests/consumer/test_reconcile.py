"""KIP-848's reconciliation (`assignor.reconcile`): revoke before assign, members that lose
nothing never pause, and the timings the heartbeat model gives, on table cases read by hand."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from assignor.reconcile import phases, reconcile
from tests.budget import examples
from tests.consumer.reconcile_plain import reconcile_plainly


def test_nothing_to_do():
    owned = {"a": [("t", 0)], "b": [("t", 1)]}
    r = reconcile(owned, owned, ["a", "b"])
    assert (r["intervals"], r["revoked"], r["moved"], r["paused_members"], r["max_unowned"]) == (0, 0, 0, 0, 0.0)


def test_a_partition_waits_for_its_revocation():
    """b heartbeats before a (b first in order): it waits for t-1 until a revoked it, then gets
    it on its heartbeat in the next interval: one interval unowned, two intervals in all."""
    r = reconcile({"a": [("t", 0), ("t", 1)], "b": []}, {"a": [("t", 0)], "b": [("t", 1)]}, ["b", "a"])
    assert (r["intervals"], r["revoked"], r["moved"], r["waiting_members"]) == (2, 1, 1, 1)
    assert r["max_unowned"] == 0.5  # revoked at 0.75, received at 1.25
    assert r["paused_members"] == 1  # a; b lost nothing


def test_departed_owner_releases_at_once():
    r = reconcile({"gone": [("t", 0)], "a": []}, {"a": [("t", 0)]}, ["a"])
    assert (r["intervals"], r["revoked"], r["moved"], r["paused_members"]) == (1, 0, 0, 0)
    assert r["max_unowned"] == 0.5


def test_new_partitions_go_to_their_owner_on_its_first_heartbeat():
    r = reconcile({"a": [("t", 0)]}, {"a": [("t", 0), ("t", 1)]}, ["a"])
    assert (r["revoked"], r["moved"], r["paused_members"], r["unowned"]) == (0, 0, 0, 1)


def test_a_partition_two_members_claim_is_held_by_the_first_in_order():
    """Hostile claims: a and b both claim t-0 and neither is given it. As the coordinator can
    hold one owner only, the later claim is dropped (`coordinator.group_spec`'s rule): a revokes
    it once, b never held it."""
    r = reconcile({"a": [("t", 0), ("t", 1)], "b": [("t", 0)]}, {"a": [("t", 1)], "b": [("t", 2)]}, ["a", "b"])
    assert (r["revoked"], r["moved"], r["paused_members"]) == (1, 0, 1)
    r = reconcile({"a": [("t", 0)], "b": [("t", 0)]}, {"a": [], "b": [("t", 0)]}, ["b", "a"])
    assert (r["revoked"], r["moved"], r["paused_members"]) == (0, 0, 0)  # b came first: it keeps t-0


@examples(200)
@given(st.integers(1, 6), st.integers(0, 20), st.randoms(use_true_random=False))
def test_converges_and_never_hands_over_a_held_partition(members, partitions, rng):
    """Any target is reached within two intervals; revocations are exactly the partitions a
    present member held and must give up; moves never exceed them."""
    ids = [f"m{i}" for i in range(members)]
    tps = [("t", p) for p in range(partitions)]
    current: dict[str, list[tuple[str, int]]] = {m: [] for m in ids}
    target: dict[str, list[tuple[str, int]]] = {m: [] for m in ids}
    for tp in tps:
        current[rng.choice(ids)].append(tp)
        target[rng.choice(ids)].append(tp)
    r = reconcile(current, target, ids)
    assert r["intervals"] <= 2
    must_revoke = sum(len(set(current[m]) - set(target[m])) for m in ids)
    assert r["revoked"] == must_revoke
    assert r["moved"] == must_revoke
    assert r["paused_members"] == sum(1 for m in ids if set(current[m]) - set(target[m]))
    assert 0 <= r["max_unowned"] <= 1.0


def test_an_eager_classic_member_gives_up_and_takes_back_what_it_keeps():
    """A classic member under an eager protocol, hosted by a converted group, rejoins at its
    first heartbeat after the change and revokes everything first: b keeps t-1 yet gives it up
    and takes it back; a cooperative (or consumer) b would not pause at all."""
    current = {"a": [("t", 0), ("t", 2)], "b": [("t", 1)]}
    target = {"a": [("t", 0)], "b": [("t", 1), ("t", 2)]}
    consumer = reconcile(current, target, ["a", "b"])
    eager = reconcile(current, target, ["a", "b"], eager=["b"])
    assert (consumer["revoked"], consumer["paused_members"]) == (1, 1)  # a gives up t-2
    assert (eager["revoked"], eager["paused_members"], eager["moved"]) == (2, 2, 1)  # and b its t-1
    assert eager["intervals"] == 1  # a revoked t-2 before b's heartbeat: b rejoins once


def test_an_eager_classic_member_rejoins_once_all_it_waits_for_is_free():
    """b (eager) heartbeats before a: its first rejoin gives up t-1 and takes it back but finds
    t-2 still held; once a revoked t-2, b's next heartbeat makes it rejoin, giving up t-1 again."""
    current = {"a": [("t", 0), ("t", 2)], "b": [("t", 1)]}
    target = {"a": [("t", 0)], "b": [("t", 1), ("t", 2)]}
    r = reconcile(current, target, ["b", "a"], eager=["b"])
    assert (r["revoked"], r["waiting_members"], r["intervals"]) == (3, 1, 2)


def test_an_eager_classic_member_with_nothing_to_do_still_rejoins_once():
    owned = {"a": [("t", 0)], "b": [("t", 1)]}
    r = reconcile(owned, owned, ["a", "b"], eager=["b"])
    assert (r["intervals"], r["revoked"], r["moved"], r["paused_members"], r["max_unowned"]) == (1, 1, 0, 1, 0.0)


def _mixed(members: int, partitions: int, rng) -> tuple[list[str], list[str], dict, dict]:
    """Member ids, about half of them eager classic members, and a random current assignment
    and target of one topic's partitions."""
    ids = [f"m{i}" for i in range(members)]
    eager = [m for m in ids if rng.random() < 0.5]
    current: dict[str, list[tuple[str, int]]] = {m: [] for m in ids}
    target: dict[str, list[tuple[str, int]]] = {m: [] for m in ids}
    for p in range(partitions):
        current[rng.choice(ids)].append(("t", p))
        target[rng.choice(ids)].append(("t", p))
    return ids, eager, current, target


@examples(200)
@given(st.integers(1, 6), st.integers(0, 20), st.randoms(use_true_random=False))
def test_eager_classic_members_converge_to_the_same_moves(members, partitions, rng):
    """With some members classic and eager, the group still reaches its target within three
    intervals with the same moves; those members revoke at least all they held and are paused
    whenever they held anything (and when they rejoin again holding what their first rejoin
    gave them)."""
    ids, eager, current, target = _mixed(members, partitions, rng)
    plain, mixed = reconcile(current, target, ids), reconcile(current, target, ids, eager=eager)
    assert mixed["intervals"] <= 3
    assert mixed["moved"] == plain["moved"]
    held_by_eager = sum(len(current[m]) for m in eager)
    others_revoke = sum(len(set(current[m]) - set(target[m])) for m in ids if m not in eager)
    assert mixed["revoked"] >= held_by_eager + others_revoke
    assert mixed["paused_members"] >= len({m for m in eager if current[m]}
                                           | {m for m in ids if set(current[m]) - set(target[m])})


def test_the_member_whose_heartbeat_computed_the_target_has_it_at_once():
    """A joining member's heartbeat computes the target: free partitions are its at time 0;
    one another member must revoke first comes at its own next heartbeat, a whole interval
    later."""
    current = {"a": [("t", 0), ("t", 1)], "gone": [("t", 2)]}
    target = {"a": [("t", 0)], "j": [("t", 1), ("t", 2)]}
    r = reconcile(current, target, ["a", "j"], first="j")
    # j takes t-2 at 0; a revokes t-1 at 0.25; j takes it at 1.0
    assert (r["intervals"], r["settled"], r["max_unowned"], r["revoked"]) == (1, 1.0, 0.75, 1)
    alone = reconcile({"gone": [("t", 0)]}, {"j": [("t", 0)]}, ["j"], first="j")
    assert (alone["intervals"], alone["settled"], alone["max_unowned"]) == (1, 0.0, 0.0)


def test_a_departed_members_partitions_wait_from_its_leave():
    """The target comes `left_before` after the leave: the departed member's partitions are
    unowned from the leave, not from the computation."""
    plain = reconcile({"gone": [("t", 0)], "a": []}, {"a": [("t", 0)]}, ["a"])
    late = reconcile({"gone": [("t", 0)], "a": []}, {"a": [("t", 0)]}, ["a"], left_before=0.4)
    assert (plain["max_unowned"], late["max_unowned"]) == (0.5, 0.9)
    assert late["settled"] == plain["settled"] == 0.5  # (from the computation)


def test_a_classic_member_learns_at_its_own_heartbeat():
    """A classic member heartbeating every 0.6 consumer intervals (3 s against 5 s) at phase
    3/4 revokes at 0.45, not 0.75: the partition it hands over waits less."""
    current = {"a": [("t", 0), ("t", 1)], "b": []}
    target = {"a": [("t", 0)], "b": [("t", 1)]}
    consumer = reconcile(current, target, ["b", "a"])
    classic = reconcile(current, target, ["b", "a"], periods={"a": 0.6})
    assert (consumer["max_unowned"], classic["max_unowned"]) == (0.5, 0.8)  # b's next beat: 1.25
    assert classic["revoked"] == consumer["revoked"] == 1


@examples(100)
@given(st.integers(1, 6), st.integers(0, 16), st.randoms(use_true_random=False))
def test_phases_change_only_how_often_eager_members_rejoin(members, partitions, rng):
    """Across phases the moves never change; without eager members nor do the revocations; with
    them, every phase revokes at least what one rejoin per eager member gives up, and the
    first phase is `reconcile` as called without an offset."""
    ids, eager, current, target = _mixed(members, partitions, rng)
    cooperative = phases(current, target, ids)
    assert len({(r["revoked"], r["moved"]) for r in cooperative}) == 1
    runs = phases(current, target, ids, eager)
    assert runs[0] == reconcile(current, target, ids, eager)
    assert {r["moved"] for r in runs} == {cooperative[0]["moved"]}
    floor = sum(len(current[m]) for m in eager) + sum(len(set(current[m]) - set(target[m])) for m in ids
                                                      if m not in eager)
    assert min(r["revoked"] for r in runs) >= floor


@examples(300)
@given(st.integers(1, 7), st.integers(0, 24), st.randoms(use_true_random=False))
def test_following_only_the_members_with_something_to_do_changes_nothing(members, partitions, rng):
    """`reconcile` follows only the members that do not already hold their target (or must
    rejoin); `reconcile_plainly` follows every member. Alike on any group: many members that
    keep what they hold, departed members, partitions claimed twice (by two members, or twice
    by one), targets that give a partition to two members, eager classic members, slower
    heartbeats, the member whose heartbeat computed the target, claims as lists or tuples; and,
    where no partition is claimed or given twice, with `disjoint`, which reads the partitions of
    the members that hold their target not at all."""
    ids = [f"m{i}" for i in range(members)]
    gone = [f"gone{i}" for i in range(rng.randrange(3))]
    tps = [(rng.choice("tu"), p) for p in range(partitions)]
    current: dict[str, list] = {m: [] for m in ids + gone}
    target: dict[str, list] = {m: [] for m in ids}
    twice = rng.random() < 0.5
    for tp in tps:
        owner = rng.choice(ids + gone + [None])
        if owner is not None:
            current[owner].append(tp if rng.random() < 0.7 else list(tp))
        keeper = owner if owner in target and rng.random() < 0.7 else rng.choice(ids)
        target[keeper].append(tp)
        if twice and rng.random() < 0.1:  # claimed twice, or given twice
            (current if rng.random() < 0.5 else target)[rng.choice(ids)].append(tp)
    for m in ids:
        rng.shuffle(current[m])
    eager = rng.sample(ids, rng.randrange(len(ids) + 1)) if rng.random() < 0.4 else []
    periods = {m: rng.choice([1.0, 0.6, 2.0]) for m in ids if rng.random() < 0.3}
    first = rng.choice(ids + [None])
    options = {"periods": periods or None, "first": first, "left_before": rng.choice([0.0, 0.4]),
               "offset": rng.choice([0.0, 0.375])}
    expected = reconcile_plainly(current, target, ids, eager, **options)
    assert reconcile(current, target, ids, eager, **options) == expected
    claimed = [tuple(tp) for tps in current.values() for tp in tps]
    given = [tp for tps in target.values() for tp in tps]
    if len(set(claimed)) == len(claimed) and len(set(given)) == len(given):  # (what `disjoint` vouches)
        assert reconcile(current, target, ids, eager, **options, disjoint=True) == expected
