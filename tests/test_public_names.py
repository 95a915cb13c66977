"""Every name the README imports stays importable, whatever the layout under it, and the
package's curated surface stays as listed."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import assignor

README = Path(__file__).resolve().parents[1] / "README.md"
IMPORTS = sorted(set(re.findall(r"^from (assignor[\w.]*) import ([\w, ]+)$", README.read_text(), re.MULTILINE)))


@pytest.mark.parametrize(("module", "names"), IMPORTS, ids=[m for m, _ in IMPORTS])
def test_names_the_readme_imports_exist(module, names):
    if module.startswith("assignor.integrations.aiokafka"):
        pytest.importorskip("aiokafka")
    imported = importlib.import_module(module)
    for name in (n.strip() for n in names.split(",")):
        assert hasattr(imported, name) or importlib.util.find_spec(f"{module}.{name}"), f"{module}.{name}"


def test_the_package_surface_is_sorted_and_complete():
    assert assignor.__all__ == sorted(assignor.__all__)
    assert all(hasattr(assignor, name) for name in assignor.__all__)
    protocol = importlib.import_module("assignor.protocol")
    assert all(hasattr(protocol, name) for name in protocol.__all__)
