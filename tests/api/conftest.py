"""What the service's tests share: a client of a fresh service (threads, a registry of its own)."""

import pytest

from api.app import create_app
from tests.api.test_api import client_for, settings


@pytest.fixture
async def client(tmp_path):
    app = create_app(settings(tmp_path))
    async with await client_for(app) as c:
        yield c
    app.state.planner.close()
