import pytest

from assignor import Group, Plan, validate


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
