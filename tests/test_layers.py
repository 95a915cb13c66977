"""The import rules that keep the layers of the house apart (see the README's Layout).

Imports run downward: adapters -> what-if / leader -> strategies -> solver -> model; the wire
imports only the model; the producer side imports nothing of the consumer side; the core
imports no web, Spark or client library; no import circles. Every import statement counts,
also those inside functions: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The bottom of the core: plain data and helpers every layer may use.
FOUNDATION = ("assignor.errors", "assignor.model", "assignor.ordering", "assignor._arrays", "assignor.protocols",
              "assignor.limits", "assignor.group_spec", "assignor.topic_ids", "assignor._topic_partitions",
              "assignor.java_hash", "assignor.tree_bin", "assignor.metadata_order")
SOLVER = ("assignor.solver",)
WIRE = ("assignor.wire", "assignor.protocol")
PRODUCER = ("assignor.partitioners", "assignor.partitioners")

#: (rule, the modules it is about, the modules of ours they may import; None means any). A
#: module's own package is always allowed.
RULES: list[tuple[str, tuple[str, ...], tuple[str, ...] | None]] = [
    ("the foundation imports only itself", FOUNDATION, FOUNDATION),
    ("the wire imports only the model", WIRE, (*FOUNDATION, *WIRE)),
    ("the producer side imports nothing of the consumer side", PRODUCER,
     (*PRODUCER, "assignor.errors", "assignor.limits")),
    ("the solver imports no strategy, wire or adapter", SOLVER, (*FOUNDATION, *SOLVER)),
    ("strategies import the solver, not the wire or what-if", ("assignor.strategies",),
     (*FOUNDATION, *SOLVER, "assignor.strategies")),
    ("the core imports no adapter", ("assignor",), ("assignor",)),
    ("the benchmark does not import the tests", ("bench",), ("assignor", "bench", "pipeline", "api")),
]

#: Third-party packages the core may not import (the adapters own them).
CORE_FORBIDDEN = ("fastapi", "pydantic", "starlette", "uvicorn", "pyspark", "pandas", "pyarrow", "aiokafka",
                  "kafka", "matplotlib")
CORE_ALLOWED_EXCEPTIONS = {"assignor.integrations.aiokafka": ("aiokafka",),
                           "assignor.integrations.aiokafka_cooperative": ("aiokafka",),
                           "assignor.integrations.aiokafka_consumer_protocol": ("aiokafka",),
                           "assignor.integrations.aiokafka_member": ("aiokafka",),
                           "assignor.integrations.kafka_python": ("kafka",),
                           "assignor.partitioners.simulate_plot": ("matplotlib",)}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every module `path` imports (absolute names; relative imports resolved)."""
    tree = ast.parse(path.read_text(), str(path))
    package = _module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else _module_name(path)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], base]).strip(".")
            # `from assignor import protocol` imports the module assignor.protocol (the package
            # itself only when a name is not a module).
            modules = {f"{base}.{alias.name}" for alias in node.names if _is_module(f"{base}.{alias.name}")}
            found.update(modules)
            if len(modules) < len(node.names):
                found.add(base)
    return found


def _is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _sources() -> dict[str, set[str]]:
    paths = [p for top in ("assignor", "api", "pipeline", "bench", "tests") for p in (ROOT / top).rglob("*.py")]
    return {_module_name(p): _imports(p) for p in paths}


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _ours(name: str) -> bool:
    return _within(name, ("assignor", "api", "pipeline", "bench", "tests"))


#: No exceptions: the CLI finds the Spark jobs' command through an entry point (`assignor.cli`).
EXCEPTIONS: set[tuple[str, str]] = set()


def violations(sources: dict[str, set[str]]) -> list[str]:
    """Every broken rule, as ``module imports target: rule``."""
    found = []
    for rule, modules, allowed in RULES:
        for module, imports in sources.items():
            if not _within(module, modules) or allowed is None:
                continue
            for target in sorted(imports):
                if (module, target) in EXCEPTIONS:
                    continue
                if _ours(target) and not _within(target, allowed) and not _within(target, (module,)):
                    found.append(f"{module} imports {target}: {rule}")
    for module, imports in sources.items():
        if not _within(module, ("assignor",)):
            continue
        exempt = CORE_ALLOWED_EXCEPTIONS.get(module, ())
        for target in sorted(imports):
            if _within(target, CORE_FORBIDDEN) and not _within(target, exempt):
                found.append(f"{module} imports {target}: the core imports no web, Spark or client library")
    found.extend(f"import circle: {' -> '.join(cycle)}" for cycle in circles(sources))
    return found


def circles(sources: dict[str, set[str]]) -> list[list[str]]:
    """Import circles among our modules (a package's __init__ re-exporting its own modules
    is not one)."""
    graph = {m: {t for t in imports if t in sources and t != m and not m.startswith(t + ".")
                 and not t.startswith(m + ".")} for m, imports in sources.items()}
    found, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                found.append(path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def test_the_layers_import_downward_only():
    assert violations(_sources()) == []


@pytest.mark.parametrize(("module", "target", "rule"), [
    ("assignor.wire.codec", "assignor.solver.dense", "the wire imports only the model"),
    ("assignor.partitioners.murmur", "assignor.model", "the producer side"),
    ("assignor.model", "assignor.wire.codec", "the foundation"),
    ("bench.peer", "tests.golden", "the benchmark does not import the tests"),
    ("assignor.whatif", "fastapi", "the core imports no web"),
])
def test_a_forbidden_import_is_caught(module, target, rule):
    """The checker itself: adding one forbidden import to the real tree is reported."""
    sources = _sources()
    sources[module] = {*sources[module], target}
    assert any(v.startswith(f"{module} imports {target}: {rule}") for v in violations(sources))


def test_an_import_circle_is_caught():
    sources = _sources()
    sources["assignor.ordering"] = {*sources["assignor.ordering"], "assignor.wire.messages"}
    assert any("circle" in v and "assignor.ordering" in v for v in violations(sources))


def test_the_spark_submit_entry_point_imports_nothing_of_ours_before_it_finds_the_checkout():
    """`spark-submit pipeline/cli.py` runs the file as a script: an `assignor` import at its top
    ran before its ``__main__`` block put the checkout on the path, and the cluster job ended in
    ``No module named 'assignor'``."""
    tree = ast.parse((ROOT / "pipeline" / "cli.py").read_text())
    def names(node: ast.Import | ast.ImportFrom) -> list[str]:
        return [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]

    ours = [node.lineno for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)
            and any(name.split(".")[0] in ("assignor", "pipeline", "api", "bench") for name in names(node))]
    assert not ours, f"pipeline/cli.py imports our packages at lines {ours}"
