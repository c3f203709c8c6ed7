"""A client for a running `neorag api`, which `neorag ask` uses when `NEORAG_API__URL` is set:
the server has its models and indexes loaded, so a question costs its retrieval only, not
a process start. Standard library only (urllib), so the command imports nothing heavy."""

from __future__ import annotations

import json
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import urlencode
from urllib.request import Request, urlopen

from app.settings import Settings
from graph.errors import NeoragError


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


def _message(exc: HTTPError) -> str:
    """The API's own error message (`{"error": {"message": …}}`), else the HTTP reason."""
    try:
        return str(json.loads(exc.read())["error"]["message"])
    except (ValueError, KeyError, TypeError, OSError):
        return str(exc.reason)
