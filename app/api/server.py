"""The FastAPI app: routes, errors, keys, metrics, health, and the MCP endpoint at /mcp.

`create_app()` builds one app over one `Queries` (app/queries.py): by default questions run
in this process on one `EnginePool` shared by its threads; `neorag api` gives it a pool of
query processes behind one queue (app/query_processes.py), which is what lets one server use
every core and answer its clients in arrival order. What processes share is files: the
store and indexes, the job files and the metrics samples.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse

from app import jobs, metrics
from app.access import CALLER_SCOPE
from app.api import document_routes, errors, openai_routes, query_routes
from app.api.auth import scope_of
from app.job_worker import WarmJobWorker
from app.queries import LocalQueries, Queries
from app.settings import Settings, load_settings
from ingest import threads

log = logging.getLogger("neorag.api")
DESCRIPTION = (
    "Graph RAG over Neo4j + GDS (or the embedded backend): retrieval with traces, cited "
    "answers, an OpenAI-compatible chat endpoint, documents and ingest jobs, and MCP at /mcp."
)


def create_app(settings: Settings | None = None, queries: Queries | None = None) -> FastAPI:
    settings = settings or load_settings()
    queries = queries or LocalQueries()
    mcp_app, mcp_lifespan = _mcp(queries, settings)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        threading.Thread(target=_warm, args=(app,), daemon=True, name="warm-up").start()
        worker = WarmJobWorker(settings.api.warm_jobs_idle_seconds)
        if settings.api.warm_jobs:
            jobs.use_warm_worker(worker)
        try:
            async with mcp_lifespan():
                yield
        finally:
            jobs.use_warm_worker(None)
            worker.close()
            queries.close()

    app = FastAPI(
        title="neorag",
        version="1.0",
        description=DESCRIPTION,
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.queries = queries
    app.state.keys = settings.api.api_keys()
    app.state.warm = {"done": False, "error": None}
    errors.install(app)
    app.include_router(query_routes.router)
    app.include_router(openai_routes.router)
    app.include_router(document_routes.router)
    _health_routes(app)
    app.middleware("http")(_observe)
    if settings.api.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.api.cors_origins,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type"],
        )
    app.mount("/mcp", _guarded(mcp_app, app))
    return app


def _warm(app: FastAPI) -> None:
    """Open the default collection and load the model before the first question, so the
    first request is not the one that pays seconds for it. Failures are left to readyz."""
    try:
        app.state.queries.warm(app.state.settings)
    except Exception as exc:  # readyz reports the state; the next request retries
        app.state.warm["error"] = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    app.state.warm["done"] = True


def _health_routes(app: FastAPI) -> None:
    @app.get("/healthz", summary="The process is alive", tags=["health"])
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", summary="Store reachable, GDS present, an index published", tags=["health"])
    def readyz(request: Request) -> JSONResponse:
        settings: Settings = request.app.state.settings
        if not request.app.state.warm["done"]:  # a probe answers at once, never waits
            return JSONResponse(
                {
                    "status": "unavailable",
                    **errors.body("not_ready", "warming up: opening the index, loading the model"),
                },
                status_code=503,
            )
        try:
            ready = request.app.state.queries.readiness(settings)
        except Exception as exc:
            status, _, message = errors.classify(exc)
            reason = message if status != 500 else f"{type(exc).__name__}"
            return JSONResponse(
                {"status": "unavailable", **errors.body("not_ready", reason)}, status_code=503
            )
        return JSONResponse(
            {
                "status": "ready",
                "backend": settings.backend,
                "collection": settings.collection,
                "index_version": ready["index_version"],
                "chunks": ready["chunks"],
            }
        )

    @app.get("/metrics", summary="Prometheus metrics", tags=["health"])
    def prometheus_metrics() -> Response:
        data, content_type = metrics.render()
        return Response(data, media_type=content_type)


async def _observe(
    request: Request, call_next: Callable[[Request], Awaitable[Response]]
) -> Response:
    """Count and time every request by route template, mode and status."""
    t0 = time.perf_counter()
    status = 500
    try:
        response = await call_next(request)
        status = response.status_code
        return response
    finally:
        route = request.scope.get("route")
        template = getattr(route, "path", None) or (
            "/mcp" if request.url.path.startswith("/mcp") else "unmatched"
        )
        mode = str(getattr(request.state, "mode", "") or "")
        if mode and len(mode) > 40:
            mode = "invalid"
        metrics.REQUESTS.labels(template, mode, str(status)).inc()
        metrics.LATENCY.labels(template, mode).observe(time.perf_counter() - t0)


def _mcp(queries: Queries, settings: Settings) -> tuple[Any, Callable[[], Any]]:
    """The MCP server's streamable-HTTP app (stateless JSON, so any worker answers any
    request) and the context that runs its session manager."""
    from app.mcp_server import build_server

    server = build_server(queries, settings)
    security = None
    if settings.api.mcp_allowed_hosts:
        from mcp.server.transport_security import TransportSecuritySettings

        hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*", *settings.api.mcp_allowed_hosts]
        security = TransportSecuritySettings(
            allowed_hosts=hosts,
            allowed_origins=[f"http://{h}" for h in hosts] + [f"https://{h}" for h in hosts],
        )
    http_app = server.streamable_http_app(
        streamable_http_path="/",
        stateless_http=True,
        json_response=True,
        host=settings.api.host,
        transport_security=security,
    )
    return http_app, server.session_manager.run


def _guarded(inner: Any, app: FastAPI) -> Any:
    """/mcp behind the same keys as /v1: 401 here without a valid key; otherwise the
    caller's scope rides in the ASGI scope (`CALLER_SCOPE`) to the MCP server, whose
    tools each check it against app/access.py, as the /v1 routes do."""

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}
            try:
                scope[CALLER_SCOPE] = scope_of(app.state.keys, headers.get("authorization"))
            except errors.ApiError as exc:
                response = JSONResponse(
                    errors.body(exc.kind, exc.message),
                    status_code=exc.status,
                    headers={"WWW-Authenticate": "Bearer"} if exc.status == 401 else None,
                )
                await response(scope, receive, send)
                return
        await inner(scope, receive, send)

    return guarded


def create_app_from_env() -> FastAPI:
    """The uvicorn factory `neorag api` serves: its settings, thread budget and number of
    query processes come from the environment app/api/launch.py set."""
    from app.query_processes import ProcessQueries

    if os.environ.get("OMP_NUM_THREADS"):
        threads.limit(threads.budget())
    settings = load_settings()
    return create_app(settings, ProcessQueries(settings, settings.api.workers, threads.budget()))
