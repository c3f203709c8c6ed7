"""Collections as people see them: list them with their counts, delete one.

On the embedded backend a collection is a folder with its own store; on Neo4j it is the
`collection` property every node of it carries (plus a local folder of FAISS/BM25 files
built from the database). Deleting one removes exactly that: other collections' nodes,
files and content hashes are untouched.
"""

from __future__ import annotations

import shutil
from dataclasses import asdict, dataclass

from app.ingest_service import collection_writer
from app.services import legacy_embedded_store, unknown_collection
from app.settings import Settings
from graph.collections import is_collection_name


@dataclass(frozen=True, slots=True)
class CollectionInfo:
    name: str
    documents: int
    chunks: int
    created_at: str = ""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def list_collections(settings: Settings) -> list[CollectionInfo]:
    """Every collection of the configured backend, by name."""
    if settings.backend == "neo4j":
        from graph.neo4j.store import Neo4jStore

        with Neo4jStore(settings.neo4j, settings.collection, allow_legacy=True) as store:
            rows = store.collections()
        return [
            CollectionInfo(r["name"], int(r["documents"]), int(r["chunks"]), r["created_at"] or "")
            for r in rows
        ]
    from graph.embedded.store import EmbeddedStore

    found = []
    folder = settings.backend_dir / "collections"
    for path in sorted(folder.glob("*/graph.sqlite")) if folder.is_dir() else []:
        name = path.parent.name
        if not is_collection_name(name):
            continue
        with EmbeddedStore(path, name) as store:
            status = store.status()
            created = store.get_meta("created_at") or ""
        found.append(CollectionInfo(name, status.documents, status.chunks, created))
    return found


def legacy_note(settings: Settings) -> str | None:
    """A line about an older neorag's index that no collection holds, if there is one."""
    if settings.backend == "embedded" and (path := legacy_embedded_store(settings)):
        return (
            f"{path} holds an index from an older neorag; "
            "`neorag ingest PATH --rebuild` replaces it"
        )
    return None


def delete_collection(settings: Settings) -> CollectionInfo:
    """Delete `settings.collection` and its local files; returns what it held."""
    existing = {c.name: c for c in list_collections(settings)}
    name = settings.collection
    if name not in existing:
        raise unknown_collection(settings)
    with collection_writer(settings) as store:
        store.clear()
    shutil.rmtree(settings.collection_dir, ignore_errors=True)
    return existing[name]
