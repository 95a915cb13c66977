"""The sticky solver's direct pushes (`assignor.solver.balance._push_direct`): each source's row
of open targets read as a list where targets are few and in numpy where they are many, one
choice either way."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from assignor.solver import balance
from tests.budget import examples


@st.composite
def _pushes(draw):
    """Classes open to members, what each holds and owned, their loads, and a level to push from."""
    classes, members = draw(st.integers(1, 5)), draw(st.integers(2, 70))
    eligible = np.array(draw(st.lists(st.booleans(), min_size=classes * members, max_size=classes * members)),
                        dtype=bool).reshape(classes, members)
    x = np.array(draw(st.lists(st.integers(0, 4), min_size=classes * members, max_size=classes * members)),
                 dtype=np.int64).reshape(classes, members) * eligible
    owned = np.array(draw(st.lists(st.integers(0, 4), min_size=classes * members, max_size=classes * members)),
                     dtype=np.int64).reshape(classes, members) * eligible
    local = draw(st.one_of(st.none(), st.just(eligible & (np.arange(members) % 2 == 0))))
    loads = x.sum(axis=0)
    active = np.array(draw(st.lists(st.booleans(), min_size=members, max_size=members)), dtype=bool)
    level = int(loads.max(initial=0))
    return eligible, x, owned, local, loads, active, level


@examples(300)
@given(_pushes())
def test_the_pushes_are_the_same_read_as_lists_or_in_numpy(case):
    eligible, x, owned, local, loads, active, level = case
    answers = []
    for up_to in (10**9, -1):  # every row as a list; every row in numpy
        pushed_x, pushed_loads = x.copy(), loads.copy()
        saved, balance._LIST_ROWS_UP_TO = balance._LIST_ROWS_UP_TO, up_to
        try:
            pushes = balance._push_direct(eligible, pushed_x, owned, local, pushed_loads, active, level)
        finally:
            balance._LIST_ROWS_UP_TO = saved
        answers.append((pushes, pushed_x.tolist(), pushed_loads.tolist()))
    assert answers[0] == answers[1]
