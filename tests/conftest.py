import os

import pytest
from hypothesis import settings

from assignor import Group, Plan, validate

# CI runs every property on the same examples (`.ci/run` sets HYPOTHESIS_PROFILE=ci): a failure
# there is a failure on every run, never a seed's luck; a property that only some seeds catch
# gets an `@example` of its own. Elsewhere each run explores new examples.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


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


@pytest.fixture(scope="session")
def broker(tmp_path_factory):
    """A tansu broker on a free loopback port for the whole session (see bench/broker.py)."""
    from tests.broker import Broker

    running = Broker(tmp_path_factory.mktemp("tansu") / "broker.log")
    yield running
    running.stop()


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
