"""`neorag delete`: remove named documents, or a whole collection, and nothing else.

Targets are document ids (`<collection>:<source>`, as `neorag documents` lists them) or
paths of files whose documents should go (a corpus file names all its passages). Without
targets, `--collection NAME` deletes that collection after a confirmation (`--yes` skips
it; a non-interactive run without `--yes` refuses instead of guessing).
"""

from __future__ import annotations

import json
import os
import sys

import typer
from rich.console import Console

from app.collections import delete_collection
from app.ingest_service import delete_documents
from app.services import open_store
from app.settings import Settings, load_settings
from graph.errors import NeoragError
from ingest.identity import collection_of


def _collection_of_targets(targets: list[str], given: str | None) -> str | None:
    named = {c for t in targets if (c := collection_of(t)) and not os.path.exists(t)}
    if len(named) > 1:
        raise NeoragError(f"these ids name several collections ({', '.join(sorted(named))})")
    if given and named and named != {given}:
        raise NeoragError(f"{next(iter(named))!r} ids cannot be deleted from {given!r}")
    return given or (named.pop() if named else None)


def resolve_targets(settings: Settings, targets: list[str]) -> list[str]:
    """Document ids for the targets: ids as given, files by their stored source."""
    with open_store(settings) as store:
        stored = store.documents()
    ids: list[str] = []
    for target in targets:
        if target in stored:
            ids.append(target)
            continue
        if os.path.exists(target):
            source = os.path.abspath(target)
            found = sorted(d for d, rec in stored.items() if rec.source == source)
            if found:
                ids += found
                continue
            raise NeoragError(f"no document of {target} in collection {settings.collection!r}")
        raise NeoragError(
            f"no document {target!r} in collection {settings.collection!r}; "
            "`neorag documents` lists them"
        )
    return list(dict.fromkeys(ids))


def run_delete(
    backend: str | None,
    collection: str | None,
    targets: list[str],
    yes: bool,
    json_out: bool,
    out: Console,
    err: Console,
) -> int:
    overrides: dict[str, str] = {"backend": backend} if backend else {}
    name = _collection_of_targets(targets, collection)
    if name:
        overrides["collection"] = name
    settings = load_settings(**overrides)
    if not targets:
        if not collection:
            raise NeoragError("name documents to delete, or --collection NAME for a collection")
        if not yes:
            if not sys.stdin.isatty():
                raise NeoragError(f"deleting collection {collection!r}: confirm with --yes")
            typer.confirm(f"Delete collection {collection!r} and everything in it?", abort=True)
        info = delete_collection(settings)
        if json_out:
            print(json.dumps({"deleted_collection": info.as_dict()}, indent=2))
        else:
            out.print(
                f"deleted collection {info.name!r} ({info.documents} documents, "
                f"{info.chunks} chunks)",
                highlight=False,
            )
        return 0
    ids = resolve_targets(settings, targets)
    report = delete_documents(settings, ids)
    if json_out:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        for doc_id in report.removed:
            out.print(f"deleted {doc_id}", highlight=False, soft_wrap=True)
        out.print(f"{report.chunks} chunks left in collection {settings.collection!r}")
    return 0
