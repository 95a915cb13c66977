"""The examples in the library's docstrings run, and print what they show (as ``--doctest-modules``
ran them, but over the package as installed: a module of an extra that is not installed is
skipped, named, where its import would stop the whole collection)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import assignor

#: The libraries of the optional extras (pyproject.toml), by the name a missing one raises.
OPTIONAL = {"aiokafka": "aiokafka", "kafka": "kafka-python", "confluent_kafka": "test", "matplotlib": "plot",
            "pyspark": "spark", "pandas": "spark", "pyarrow": "spark"}

MODULES = sorted(m.name for m in pkgutil.walk_packages(assignor.__path__, "assignor."))


@pytest.mark.parametrize("name", MODULES)
def test_the_docstring_examples_print_what_they_show(name):
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name not in OPTIONAL:
            raise
        pytest.skip(f"needs {error.name} (the {OPTIONAL[error.name]} extra)")
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    for test in doctest.DocTestFinder().find(module, name):
        if test.examples:
            runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
