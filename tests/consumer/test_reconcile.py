"""KIP-848's reconciliation (`assignor.reconcile`): revoke before assign, members that lose
nothing never pause, and the timings the heartbeat model gives, on table cases read by hand."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from assignor.reconcile import reconcile


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


@settings(max_examples=200, deadline=None)
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
