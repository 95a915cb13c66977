"""Ship this project's pure-Python code to a cluster's executors, and check their Python first.

On a non-local master the executors run Python processes of their own, which have the
third-party libraries the cluster provides but not this project. `ship` zips the `assignor` and
`pipeline` packages once per run (from where the driver imports them) and adds the zip to the
session, so nothing has to be installed on the workers but `NEEDED`. Before the real work, one
small task imports what the executors need and reports versions (`check_executors`): a missing
library or another Python minor version than the driver's stops the job with a message that
names it and the ways to provide it, instead of a traceback from deep inside a task.
"""

from __future__ import annotations

import atexit
import importlib
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from assignor.errors import ExecutorEnvironmentError
from pipeline.probe import NEEDED, PACKAGES, probe

__all__ = ["NEEDED", "ExecutorEnvironmentError", "check_executors", "code_zip", "ship"]


def code_zip(directory: Path) -> Path:
    """A zip of `PACKAGES`' Python files, as the driver imports them, in `directory`."""
    path = directory / "kafka-sticky-assignor-code.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in PACKAGES:
            root = Path(importlib.import_module(name).__file__ or "").parent
            for source in sorted(root.rglob("*.py")):
                archive.write(source, Path(name) / source.relative_to(root))
    return path


def ship(spark: Any, py_files: Iterable[str] = ()) -> dict[str, Any]:
    """On a non-local master: add the code zip and `py_files` to the session, then check the
    executors (`check_executors`, whose report this returns; {} on a local master)."""
    context = spark.sparkContext
    if context.master.startswith("local"):
        return {}
    directory = Path(tempfile.mkdtemp(prefix="assignor-ship-"))
    atexit.register(shutil.rmtree, directory, True)  # the session serves the file until exit
    context.addPyFile(str(code_zip(directory)))
    for path in py_files:
        context.addPyFile(path)
    return check_executors(context)


def check_executors(context: Any) -> dict[str, Any]:
    """Run `probe` in one task; raise `ExecutorEnvironmentError` when the executors lack a
    library or run another Python minor version than the driver."""
    driver = list(sys.version_info[:2])
    try:
        report: dict[str, Any] = context.parallelize([0], 1).mapPartitions(probe).collect()[0]
    except Exception as error:  # noqa: BLE001 - Py4JJavaError and friends carry the worker's text
        text = str(error)
        if "different version" in text or "different minor versions" in text:
            raise ExecutorEnvironmentError(
                f"the executors run another Python version than the driver ({driver[0]}.{driver[1]}); "
                + _ways("a Python " + f"{driver[0]}.{driver[1]}")) from None
        first = next((line for line in text.splitlines() if "Error" in line), text.splitlines()[0] if text else "")
        raise ExecutorEnvironmentError(f"the executors could not run a Python task: {first.strip()}") from None
    if report["python"] != driver:
        raise ExecutorEnvironmentError(
            f"the executors run Python {report['python'][0]}.{report['python'][1]} ({report['executable']}), the "
            f"driver {driver[0]}.{driver[1]}; " + _ways(f"a Python {driver[0]}.{driver[1]}"))
    if report["missing"]:
        names = ", ".join(sorted(report["missing"]))
        first = next(iter(sorted(report["missing"])))
        wanted = " ".join(f"'{NEEDED.get(n, n)}'" for n in sorted(report["missing"]))
        raise ExecutorEnvironmentError(
            f"the executors' Python ({report['executable']}) lacks {names} ({report['missing'][first]}); "
            + _ways(f"pip install {wanted}"))
    return report


def _ways(what: str) -> str:
    return ("provide it with --archives and a packed environment (venv-pack or conda-pack: --archives "
            "env.tar.gz#env --conf spark.pyspark.python=./env/bin/python), with an image that has it, or by "
            f"installing it on every worker ({what}).")
