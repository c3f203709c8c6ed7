"""One way to name a collection: the `collection` query parameter, on every /v1 route.

Why a query parameter: it is the one place every route has (GET, DELETE, a multipart
upload, a JSON body), and the `openai` client can send it on every call without touching
the request body (`OpenAI(default_query={"collection": "docs"})`), so a chat client can be
pinned to a collection once. Omitted, a route uses the server's collection
(`neorag api --collection`).

Kept for the clients written before: the `collection` field of the JSON bodies
(`/v1/retrieve`, `/v1/ask`, `/v1/ingest`, `/v1/chat/completions`, which is also what
openai's `extra_body` sends) and of the upload form. Naming two different collections at
once is a 400, and so is `?collection=` on a route that reads none (`/v1/models`,
`/v1/collections`, `/v1/jobs…`, `/v1/cypher`): a name given where it is not read is never
silently replaced by the server's collection.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Query, Request

from app.api.errors import ApiError
from app.api.models import SERVER_COLLECTION

CollectionQuery = Annotated[str | None, Query(description=SERVER_COLLECTION)]


def chosen(query: str | None, other: str | None, where: str) -> str | None:
    """The collection a request names: `?collection=`, else the older field `where`
    (None: neither, the server's); 400 when the two name different collections."""
    if query is not None and other is not None and query != other:
        raise ApiError(
            400,
            "conflicting_collection",
            f"two collections named: ?collection={query!r} and the {where} field {other!r}; "
            "name it once, as ?collection=",
        )
    return query if query is not None else other


def takes_none(request: Request) -> None:
    """A dependency of the routes that read no collection: `?collection=` there is a 400,
    not a name silently dropped."""
    if "collection" in request.query_params:
        raise ApiError(
            400,
            "invalid_request",
            f"{request.url.path} reads no collection; drop ?collection= "
            "(the collection is named only on routes that read one)",
        )
