import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignor._arrays import appended, distinct, run_starts, stable_order


def test_run_starts_marks_where_any_key_changes():
    a = np.array([1, 1, 2, 2, 2])
    b = np.array([0, 1, 1, 1, 3])
    assert run_starts(a).tolist() == [True, False, True, False, False]
    assert run_starts(a, b).tolist() == [True, True, True, False, True]
    assert run_starts(np.zeros(0, dtype=np.int64)).tolist() == []
    assert run_starts(np.array([7])).tolist() == [True]


def test_appended_keeps_the_dtype():
    got = appended(np.array([3, 4], dtype=np.int64), 9)
    assert got.tolist() == [3, 4, 9] and got.dtype == np.int64


@pytest.mark.parametrize("high", [1, 300, 70_000, 2**33])
@pytest.mark.parametrize("size", [0, 5, 1000])
def test_stable_order_is_numpys_stable_argsort(high, size):
    rng = np.random.default_rng(high + size)
    keys = rng.integers(0, high, size)
    assert stable_order(keys).tolist() == np.argsort(keys, kind="stable").tolist()
    keys.sort()
    assert stable_order(keys).tolist() == np.argsort(keys, kind="stable").tolist()
    assert stable_order(keys - 5).tolist() == np.argsort(keys - 5, kind="stable").tolist()


@pytest.mark.parametrize("high", [300, 70_000])
@pytest.mark.parametrize("runs", [2, 7, 5000])
def test_stable_order_of_nearly_sorted_keys_is_numpys_stable_argsort(runs, high):
    """Sorted runs laid end to end (the rows of a plan where a few members changed), with ties
    across runs: the order is numpy's stable one whichever way it is found."""
    rng = np.random.default_rng(runs)
    keys = np.concatenate([np.sort(rng.integers(0, high, 20_000 // runs)) for _ in range(runs)])
    assert stable_order(keys).tolist() == np.argsort(keys, kind="stable").tolist()


@given(st.lists(st.integers(-(2**40), 2**40), max_size=300), st.integers(1, 1000))
def test_distinct_is_numpys_unique(values, spread):
    """`distinct` (a sort and a pass) is ``np.unique`` (a hash table in numpy 2), on values
    spread wide or crowded into a few."""
    found = np.array([v % spread if spread < 1000 else v for v in values], dtype=np.int64)
    assert distinct(found).tolist() == np.unique(found).tolist()
