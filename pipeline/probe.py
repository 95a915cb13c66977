"""The task `pipeline.ship.check_executors` runs on an executor before the real work. It imports
only the standard library, so that it runs (and reports) on an executor that lacks everything
else."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["NEEDED", "PACKAGES", "probe"]

#: The packages shipped to the executors (pure Python).
PACKAGES = ("assignor", "pipeline")

#: What the executors import besides the shipped code: module -> how pip names it.
NEEDED = {"numpy": "numpy", "pandas": "pandas<3", "pyarrow": "pyarrow", "networkx": "networkx"}


def probe(_rows: Iterable[Any]) -> Iterator[dict[str, Any]]:
    """On an executor: its Python version and what of `NEEDED` (and the shipped code) imports."""
    found, missing = {}, {}
    for name in (*NEEDED, *PACKAGES):
        try:
            module = importlib.import_module(name)
            found[name] = str(getattr(module, "__version__", "shipped"))
        except Exception as error:  # noqa: BLE001 - any import failure is the answer
            missing[name] = f"{type(error).__name__}: {error}"
    yield {"python": list(sys.version_info[:2]), "found": found, "missing": missing,
           "executable": sys.executable}
