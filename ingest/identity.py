"""Where a document's id comes from: its collection and its source, nothing else.

A stored document id is `<collection>:<key>`. The key identifies the source on this host:
a file's absolute path, or a corpus file's absolute path plus `#<passage id>` for one line
of a `corpus.jsonl`. Passage ids (`p0`, `p1`, …) repeat across corpus files and relative
paths repeat across roots (`a/notes.md`, `b/notes.md`), so neither alone may name a
document; with the collection in front, two collections in one Neo4j database never share
an id either. A file has one id whichever folder above it is ingested.
"""

from __future__ import annotations

from graph.collections import is_collection_name


def passage_key(corpus_source: str, passage_id: str) -> str:
    """The key of one record of a corpus file."""
    return f"{corpus_source}#{passage_id}"


def document_id(collection: str, key: str) -> str:
    return f"{collection}:{key}"


def collection_of(doc_id: str) -> str | None:
    """The collection a document id names, or None if it is not a collection-scoped id."""
    head, sep, _ = doc_id.partition(":")
    return head if sep and is_collection_name(head) else None
