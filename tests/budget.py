"""How many examples a property tries: the number its test names, scaled by the Hypothesis
profile in force (`tests/conftest.py`): ``ci`` and ``default`` as named, ``dev`` (`make check`)
a twentieth. A bare ``@settings(max_examples=...)`` would override every profile."""

from __future__ import annotations

from typing import Any

from hypothesis import settings

#: The examples a profile of Hypothesis's own default (100) runs: a test naming `n` runs
#: ``n * profile's max_examples / 100``.
_BASELINE = 100


def examples(n: int, **options: Any) -> settings:
    """``@settings`` for a property that tries `n` examples under the ``ci`` profile (no
    deadline: the machine's load is not the property's)."""
    scaled = max(1, round(n * settings.default.max_examples / _BASELINE))
    return settings(max_examples=scaled, deadline=None, **options)
