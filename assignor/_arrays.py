"""Small numpy helpers the hot paths share (each spares a few microseconds of ``np.r_`` a call,
which a what-if replay pays thousands of times)."""

from __future__ import annotations

import numpy as np


def run_starts(*keys: np.ndarray) -> np.ndarray:
    """True where a run of equal values starts in sorted arrays of equal length: at 0 and
    wherever any of `keys` differs from the element before."""
    n = len(keys[0])
    starts = np.empty(n, dtype=bool)
    starts[:1] = True
    if n > 1:
        np.not_equal(keys[0][1:], keys[0][:-1], out=starts[1:])
        for key in keys[1:]:
            starts[1:] |= key[1:] != key[:-1]
    return starts


def appended(values: np.ndarray, last) -> np.ndarray:
    """`values` with `last` after them, in their dtype."""
    return np.concatenate((values, np.array([last], dtype=values.dtype)))
