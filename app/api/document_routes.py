"""Collections, documents, ingest jobs, status and read-only Cypher.

Writes are background jobs (app/jobs.py): the route checks what it can at once (the path is
under the allowed roots, the document exists, no other ingest holds the collection), then
answers 202 with the job; `GET /v1/jobs/{id}` reports its stages and progress. Queries keep
answering from the published index until the job publishes the next one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, Request, UploadFile
from fastapi.responses import JSONResponse

from app import jobs, service
from app.api.auth import require
from app.api.errors import ApiError
from app.api.models import SERVER_COLLECTION, CypherRequest, IngestRequest
from app.api.naming import CollectionQuery, chosen, takes_none
from app.api.query_routes import settings_of
from app.collections import list_collections
from app.cypher_service import run_cypher
from app.services import open_store
from app.uploads import check_uploads, save_upload
from ingest.identity import collection_of

router = APIRouter(prefix="/v1")
read = [Depends(require("read"))]
write = [Depends(require("ingest"))]
no_collection = [Depends(takes_none)]
UPLOAD_CHUNK = 1024 * 1024


def _accepted(job: dict[str, Any], **extra: Any) -> JSONResponse:
    return JSONResponse({"job": job, **extra}, status_code=202)


@router.get(
    "/collections", dependencies=read + no_collection, summary="Collections with their counts"
)
def collections(request: Request) -> dict[str, Any]:
    found = list_collections(request.app.state.settings)
    return {"collections": [c.as_dict() for c in found]}


@router.get("/status", dependencies=read, summary="The shape of `neorag status --json`")
def status(request: Request, collection: CollectionQuery = None) -> Any:
    return service.status(_existing(request, collection))


@router.get("/documents", dependencies=read, summary="A collection's documents")
def documents(request: Request, collection: CollectionQuery = None) -> Any:
    settings = _existing(request, collection)
    return {"collection": settings.collection, "documents": service.documents(settings)}


@router.post("/documents", dependencies=write, summary="Upload files, then ingest them (job)")
def upload(
    request: Request,
    files: Annotated[list[UploadFile], File(description="one or more documents")],
    collection: CollectionQuery = None,
    form_collection: Annotated[
        str | None, Form(alias="collection", description=f"{SERVER_COLLECTION}; older spelling")
    ] = None,
) -> JSONResponse:
    settings = settings_of(request, chosen(collection, form_collection, "form"))
    cap = settings.api.max_upload_bytes
    contents = [(f.filename or "upload.txt", _read_capped(f, cap)) for f in files]
    check_uploads(contents)  # all of them before any is kept
    saved = [save_upload(settings, name, data) for name, data in contents]
    # The server's own uploads folder: ingested even when the allowed roots exclude it.
    job = jobs.start_job(settings, "ingest", {"path": str(settings.uploads_dir), "bounded": False})
    return _accepted(job, saved=[p.name for p in saved])


def _read_capped(upload: UploadFile, cap: int) -> bytes:
    parts, size = [], 0
    while chunk := upload.file.read(UPLOAD_CHUNK):
        size += len(chunk)
        if size > cap:
            raise ApiError(
                413,
                "too_large",
                f"{upload.filename or 'the upload'} is over the {cap:,}-byte limit "
                "(NEORAG_API__MAX_UPLOAD_BYTES)",
            )
        parts.append(chunk)
    return b"".join(parts)


@router.delete("/documents/{doc_id:path}", dependencies=write, summary="Delete one document (job)")
def delete_document(
    request: Request, doc_id: str, collection: CollectionQuery = None
) -> JSONResponse:
    settings = settings_of(request, collection or collection_of(doc_id))
    with open_store(settings) as store:
        known = doc_id in store.documents()
    if not known:
        raise ApiError(
            404, "not_found", f"no document {doc_id!r} in collection {settings.collection!r}"
        )
    return _accepted(jobs.start_job(settings, "delete", {"doc_ids": [doc_id]}))


@router.post("/ingest", dependencies=write, summary="Ingest a path under the allowed roots (job)")
def ingest(
    req: IngestRequest, request: Request, collection: CollectionQuery = None
) -> JSONResponse:
    settings = settings_of(request, chosen(collection, req.collection, "body"))
    path = jobs.check_ingest_path(settings, Path(req.path).expanduser())
    return _accepted(jobs.start_job(settings, "ingest", {"path": str(path)}))


@router.get("/jobs", dependencies=read + no_collection, summary="Recent jobs, newest first")
def list_jobs(request: Request) -> dict[str, Any]:
    return {"jobs": jobs.list_jobs(request.app.state.settings)}


@router.get(
    "/jobs/{job_id}",
    dependencies=read + no_collection,
    summary="A job's state, stages and progress",
)
def job(request: Request, job_id: str) -> dict[str, Any]:
    return jobs.read_job(request.app.state.settings, job_id)


@router.get("/chunks/{chunk_id:path}", dependencies=read, summary="One chunk by id")
def chunk(request: Request, chunk_id: str, collection: CollectionQuery = None) -> dict[str, Any]:
    settings = settings_of(request, collection or collection_of(chunk_id))
    return request.app.state.queries.get_chunk(settings, chunk_id)  # type: ignore[no-any-return]


@router.post(
    "/cypher",
    dependencies=[Depends(require("cypher")), *no_collection],
    summary="Read-only Cypher on the Neo4j backend (the `neorag cypher` guard)",
)
def cypher(req: CypherRequest, request: Request) -> dict[str, Any]:
    result = run_cypher(request.app.state.settings, req.statement, req.params)
    return {"keys": result.keys, "rows": result.rows, "truncated": result.truncated}


def _existing(request: Request, collection: str | None) -> Any:
    """Settings of a collection that must exist (reads never conjure an empty one)."""
    settings = settings_of(request, collection)
    open_store(settings).close()
    return settings
