import httpx
import pytest

from api.app import create_app


@pytest.fixture
async def client():
    transport = httpx.ASGITransport(app=create_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
        yield c


@pytest.mark.anyio
async def test_healthz(client):
    response = await client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


@pytest.mark.anyio
async def test_plan(client):
    body = {"strategy": "sticky", "topics": {"t0": 4},
            "members": [{"id": "a", "topics": ["t0"], "owned": [["t0", 0], ["t0", 1], ["t0", 2]], "generation": 1},
                        {"id": "b", "topics": ["t0"]}]}
    response = await client.post("/v1/plans", json=body)
    assert response.status_code == 200
    data = response.json()
    assert data["assignment"] == {"a": [["t0", 0], ["t0", 1]], "b": [["t0", 2], ["t0", 3]]}
    assert data["metrics"]["moved"] == 1


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("body", "message"),
    [({"topics": {"t": -1}, "members": []}, "partition count"),
     ({"strategy": "nope", "topics": {}, "members": []}, "unknown strategy")],
)
async def test_bad_plans_are_422(client, body, message):
    response = await client.post("/v1/plans", json=body)
    assert response.status_code == 422 and message in response.json()["detail"]
