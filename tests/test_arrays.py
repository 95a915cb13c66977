import numpy as np

from assignor._arrays import appended, run_starts


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
