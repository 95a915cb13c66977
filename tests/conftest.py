import contextlib
import importlib.util
import os
import subprocess

import pytest
from hypothesis import settings

from assignor import Group, Plan, validate

# CI runs every property on the same examples (`.ci/run` sets HYPOTHESIS_PROFILE=ci): a failure
# there is a failure on every run, never a seed's luck; a property that only some seeds catch
# gets an `@example` of its own. Elsewhere each run explores new examples: as many as CI's under
# the default profile, a twentieth under `dev` (`make check`). A test names its budget through
# `tests.budget.examples`, which scales it by the profile's `max_examples`.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("dev", max_examples=5)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


#: The tests of what an optional extra adds, and the libraries they import: with one missing (a
#: core install: ``pip install -e . pytest hypothesis``), they are not collected, and the rest
#: collect and run.
_EXTRAS = {"api": ("fastapi", "httpx", "orjson"),
           "integration": ("aiokafka", "kafka", "confluent_kafka", "yaml", "anyio"),
           "pipeline": ("pyspark", "pandas", "pyarrow")}
collect_ignore_glob = [where for where, needs in _EXTRAS.items()
                       if any(importlib.util.find_spec(name) is None for name in needs)]


#: Fixtures that start a process beside the tests (or use one that does): a test using one is
#: `external`. (`service`, `browser`, `page`: the page's tests serve and drive Chromium.)
_EXTERNAL_FIXTURES = frozenset({"broker", "java_members", "spark", "postgres", "service", "browser", "page"})


def pytest_collection_modifyitems(config, items):
    """The tiers (`make check` runs ``-m "not external"``): an integration test, or one that uses
    a fixture starting a process, is `external` without saying so itself.

    `make test` runs the external tests in two lanes side by side (``-n 2 --dist loadgroup``):
    ``kafka``, every test under ``tests/integration/`` (where the tests that start a broker of
    their own live) or using the session's `broker`, one at a time on that one broker; ``host``,
    the rest (Spark, the service, Chromium, PostgreSQL, the CLI). A broker test mostly waits on
    the broker's clock (sessions, heartbeats, rebalance timeouts: about a quarter of the two
    cores), so the host lane runs in what it leaves."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if item.get_closest_marker("integration") or _EXTERNAL_FIXTURES & fixtures:
            item.add_marker(pytest.mark.external)
            kafka = "broker" in fixtures or item.path.parent.name == "integration"
            item.add_marker(pytest.mark.xdist_group("kafka" if kafka else "host"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    with _no_process_unless_external(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    with _no_process_unless_external(item):
        return (yield)


@contextlib.contextmanager
def _no_process_unless_external(item):
    """A test not marked `external` that starts a program, in itself or in a fixture it sets up,
    fails saying so: the fast tier stays the one that needs nothing beside the tests. (What a
    library call may start on its own, `_LOOKUPS`, is let through; the service's own planning
    processes, forked from Python's forkserver, are the code under test.)"""
    if item.get_closest_marker("external"):
        yield
        return
    start = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def refused(self, args, *rest, **kw):
        program = os.path.basename(str(args[0] if isinstance(args, (list, tuple)) else args).split()[0])
        if program not in _LOOKUPS:
            raise AssertionError(f"this test starts a process ({program}): mark it `external` "
                                 "(pytest.mark.external), or keep the process out of it")
        return start(self, args, *rest, **kw)

    subprocess.Popen._execute_child = refused  # type: ignore[attr-defined]
    try:
        yield
    finally:
        subprocess.Popen._execute_child = start  # type: ignore[attr-defined]


#: Processes the code under test may start as part of a library call: ctypes.util.find_library's
#: helpers, and fontconfig's fc-list, which matplotlib runs once to list the system's fonts when its
#: font cache is not written yet (a new machine's first run: the plots' tests then fail without it).
_LOOKUPS = frozenset({"ldconfig", "ldconfig.real", "gcc", "cc", "ld", "objdump", "fc-list"})


def check(group: Group, plan: Plan, *, exact: bool = False) -> dict:
    """Run the oracle and fail the test on an invalid plan; return the report."""
    report = validate.report(group, plan, exact=exact)
    assert report["valid"], report["errors"]
    return report


@pytest.fixture
def oracle():
    return check


@pytest.fixture
def anyio_backend():
    return "asyncio"


def pytest_report_header(config):
    """The broker every integration test runs on, named before any runs."""
    from bench.broker import BrokerError, kafka_version

    try:
        return f"broker: Apache Kafka {kafka_version()} (one KRaft node, started on first use; bench/broker.py)"
    except BrokerError as error:
        return f"broker: none ({error})"


def _session_ended(request, why: str) -> BaseException:
    """What to raise to fail the test at hand with one line, `why`, and end the session after it
    with the same line: alike in one process and in a pytest-xdist worker (`make test`'s lanes),
    where `pytest.exit` is an internal error with a traceback."""
    request.session.shouldstop = why
    return pytest.fail.Exception(why, pytrace=False)


@pytest.fixture(scope="session")
def broker(request, tmp_path_factory):
    """Apache Kafka, one KRaft node on free loopback ports for the whole session (bench/broker.py).
    A node that does not start ends the session with one line saying why."""
    from bench.broker import Broker, BrokerError

    try:
        running = Broker(tmp_path_factory.mktemp("kafka"))
    except BrokerError as error:
        raise _session_ended(request, f"Apache Kafka did not start: {error}") from None
    yield running
    running.stop()


@pytest.fixture(scope="session")
def java_members(request, broker, tmp_path_factory):
    """One JVM of Java consumers (bench/java_members.py) for the session's tests."""
    from bench.broker import BrokerError
    from bench.java_members import JavaMembers

    try:
        host = JavaMembers(tmp_path_factory.mktemp("java-members") / "members.log")
    except BrokerError as error:
        raise _session_ended(request, f"the Java member driver did not start: {error}") from None
    yield host
    host.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failing test that used the broker shows what the broker logged while it ran, and where
    the whole log is kept."""
    report = yield
    broker = item.funcargs.get("broker") if hasattr(item, "funcargs") else None
    if broker is None:
        return report
    if call.when == "setup":
        item.stash[_LOG_START] = broker.log_size()
    elif report.failed:
        lines = broker.log_text(item.stash.get(_LOG_START, 0)).splitlines()
        report.sections.append(("Kafka broker log", f"(whole log: {broker.log_path})\n" + "\n".join(lines[-150:])))
    return report


_LOG_START = pytest.StashKey[int]()


@pytest.fixture(scope="session")
def spark():
    """One local[2] Spark session for the test run (C1 JIT: short jobs start sooner)."""
    from pipeline.session import spark_session

    session = spark_session("local[2]", "tests", quick_jit=True, shuffle_partitions=2)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def postgres():
    """A PostgreSQL server on a free loopback port for the whole session (see tests/postgres.py)."""
    from tests.postgres import Postgres

    server = Postgres()
    yield server
    server.stop()
