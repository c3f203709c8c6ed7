"""A client for a running `neorag api`, which `neorag ask` and `neorag ingest` use when
`NEORAG_API__URL` is set: the server has its models and indexes loaded, so a question costs
its retrieval only and a change its ingest only, not a process start. Standard library only
(urllib), so the command imports nothing heavy."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import urlencode
from urllib.request import Request, urlopen

from app.settings import Settings
from graph.errors import NeoragError
from ingest.report import Progress


class ApiUnavailable(NeoragError):
    pass


def ask_remote(settings: Settings, question: str, mode: str, top_k: int | None) -> dict[str, Any]:
    """`POST /v1/ask` on the configured API, for this command's collection."""
    cfg = settings.api
    base = cfg.url.rstrip("/")
    body: dict[str, Any] = {"question": question, "mode": mode}
    if top_k is not None:
        body["top_k"] = top_k
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    key = cfg.client_key.get_secret_value()
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = Request(
        f"{base}/v1/ask?{urlencode({'collection': settings.collection})}",
        data=json.dumps(body).encode(),
        headers=headers,
        method="POST",
    )
    try:
        with urlopen(request, timeout=cfg.client_timeout) as response:
            return json.load(response)
    except HTTPError as exc:
        raise ApiUnavailable(f"the API at {base} answered {exc.code}: {_message(exc)}") from None
    except (URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ApiUnavailable(
            f"cannot reach the neorag API at {base} ({reason}): start `neorag api` there, "
            "or unset NEORAG_API__URL to answer in this process"
        ) from None


def ingest_remote(
    settings: Settings, path: Path, progress: Progress | None = None, poll: float = 0.1
) -> dict[str, Any]:
    """`POST /v1/ingest` on the configured API (a job the server runs with its models
    loaded), then its progress until it ends; returns the finished job."""
    job = _call(settings, "POST", "/v1/ingest", {"path": str(path.resolve())})["job"]
    shown = _JobProgress(progress)
    while job["state"] in ("queued", "running"):
        time.sleep(poll)
        job = _call(settings, "GET", f"/v1/jobs/{job['id']}", None, collection=False)
        shown.update(job)
    shown.update(job)
    return job


class _JobProgress:
    """A job's stages (its file's `stages`) replayed into this command's progress bars."""

    def __init__(self, progress: Progress | None) -> None:
        self.progress = progress
        self.done: dict[str, int] = {}
        self.finished: set[str] = set()

    def update(self, job: dict[str, Any]) -> None:
        if self.progress is None:
            return
        for stage, s in job.get("stages", {}).items():
            if stage not in self.done:
                self.progress.start(stage, s.get("total"))
                self.done[stage] = 0
            if s["done"] > self.done[stage]:
                self.progress.advance(stage, s["done"] - self.done[stage])
                self.done[stage] = s["done"]
            if s["state"] == "finished" and stage not in self.finished:
                self.progress.finish(stage)
                self.finished.add(stage)


def _call(
    settings: Settings,
    method: str,
    route: str,
    body: dict[str, Any] | None,
    *,
    collection: bool = True,
) -> dict[str, Any]:
    cfg = settings.api
    base = cfg.url.rstrip("/")
    headers = {"Accept": "application/json"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    key = cfg.client_key.get_secret_value()
    if key:
        headers["Authorization"] = f"Bearer {key}"
    query = f"?{urlencode({'collection': settings.collection})}" if collection else ""
    request = Request(
        f"{base}{route}{query}",
        data=None if body is None else json.dumps(body).encode(),
        headers=headers,
        method=method,
    )
    try:
        with urlopen(request, timeout=cfg.client_timeout) as response:
            return dict(json.load(response))
    except HTTPError as exc:
        raise ApiUnavailable(f"the API at {base} answered {exc.code}: {_message(exc)}") from None
    except (URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ApiUnavailable(
            f"cannot reach the neorag API at {base} ({reason}): start `neorag api` there, "
            "or unset NEORAG_API__URL to run in this process"
        ) from None


def _message(exc: HTTPError) -> str:
    """The API's own error message (`{"error": {"message": …}}`), else the HTTP reason."""
    try:
        return str(json.loads(exc.read())["error"]["message"])
    except (ValueError, KeyError, TypeError, OSError):
        return str(exc.reason)
