"""The FastAPI application factory: ``uvicorn --factory api.app:create_app``.

This release serves health and plan endpoints; the JSON body of ``POST /v1/plans`` is the
group JSON form (`assignor.json_format`) plus ``strategy``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Body, FastAPI, HTTPException
from fastapi.concurrency import run_in_threadpool

from assignor import validate
from assignor.errors import AssignorError
from assignor.json_format import group_from_json, plan_to_json
from assignor.strategies import assign


def create_app() -> FastAPI:
    app = FastAPI(title="kafka-sticky-assignor", version="0.1.0")

    @app.get("/healthz")
    async def healthz() -> dict:
        return {"status": "ok"}

    @app.post("/v1/plans")
    async def plans(body: Annotated[dict[str, Any], Body()]) -> dict:
        strategy = body.pop("strategy", "sticky")
        try:
            group = group_from_json(body)
            plan = await run_in_threadpool(assign, strategy, group)
        except AssignorError as error:
            raise HTTPException(status_code=422, detail=str(error)) from None
        return {**plan_to_json(plan), "metrics": validate.report(group, plan)}

    return app
