"""Turn files and folders into typed documents, reporting (never raising on) bad input.

`scan(path, max_file_bytes)` yields `LoadedDocument` for everything it could read and
`SkippedFile` (with a short human-readable reason) for everything it could not, so one broken
file never stops an ingest and the user still learns what was left out. Only usage errors
raise: a path that does not exist is a `FileNotFoundError`.

Rules worth knowing:

- Formats by extension (case-insensitive): `.txt`, `.md`/`.markdown`, `.html`/`.htm`,
  `.rst`/`.rest` (reStructuredText, parsed by docutils: `rst`), `.pdf`, `.jsonl` (one
  `{"id", "title"?, "text"}` record a line, e.g. a dataset's `corpus.jsonl`).
- Folders are walked recursively in sorted name order, so ids and ordering are
  deterministic. Names starting with "." are reported (kind `hidden`) but not walked: a
  `.git` is one entry, not its thousands of files (the root itself may be hidden).
  Symbolic links are followed, but each directory is entered once, so loops cannot hang;
  a file reached through a link is named by the path it resolves to (one id however reached).
- Every other file met is reported, with a `kind` (`types.SKIP_KINDS`) beside its reason:
  files with other extensions or none and non-regular files (FIFOs, sockets, ...) are
  `unsupported` — reported, so a user learns what was left out, and, with `hidden`, told
  apart from the problems with files of a supported type (`too_large`, `binary`, `empty`,
  `unreadable`, `outside_roots`, `invalid`, `duplicate`): a folder of notes also holds
  images and a `.git`. A
  `questions.jsonl` or `meta.json` beside a `corpus.jsonl` (the evaluation-dataset layout)
  is the dataset's own file, not a document, and is not reported.
- Document names (`LoadedDocument.id`): a file's path relative to the scan root (posix), or
  its file name when the file itself was given; a jsonl record's `"id"`. What identifies a
  document is its `key`: the file's absolute path, or the corpus file's path plus
  `#<record id>` (`ingest.identity`), so equal names from two roots or two corpus files never
  collide. Within one corpus file the first record with an id wins, later ones are skipped
  as duplicates.
- `max_file_bytes` is checked before reading. For `.jsonl` it applies to each line instead of
  the file, so a large corpus of small passages loads while a single absurd record does not.
- Text is NFC-normalised, newlines unified, trailing spaces stripped and blank-line runs
  collapsed; paragraphs are kept (blank lines are sentence boundaries downstream).
- Headings are not repeated in section text; `Section.path` carries them.
- Links: Markdown inline / reference / auto links and `[[Wiki Title]]` (target before `|`, any
  `#fragment` dropped), HTML `<a href>`, bare http(s) URLs in any text format and PDF URI
  annotations. Targets are kept as written (relative paths are not resolved); same-page
  `#fragment` links, `javascript:` and `mailto:` are dropped. Link syntax is replaced by its
  visible text, and `Section.link_spans` records where that text sits, so chunkers can give
  each chunk only the links that occur in it.

Modules: `walk` (what a scan reads, loading by format, duplicate ids, what an upload may
be), one per format (`markdown`, `html`, `rst`, `pdf`, `jsonl`; `text` reads and decodes
the plain ones), `links` (which targets are kept, bare URLs) and `types` (the output
types, skip kinds, content hash, normalisation).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ingest.loaders.html import parse_html
    from ingest.loaders.markdown import parse_markdown
    from ingest.loaders.types import (
        LinkSpan,
        LoadedDocument,
        Section,
        SkippedFile,
        UnchangedFile,
        document_hash,
        normalize_text,
    )
    from ingest.loaders.walk import (
        DATASET_SIDECARS,
        SUPPORTED_EXTENSIONS,
        scan,
        scanned_sources,
        upload_refusal,
        within,
    )

# Each name's module, imported when the name is first used: a process that only needs the
# output types (a query process reading run logs) does not load the HTML, Markdown and
# PDF parsers (about 0.1 s).
_HOME = {
    "parse_html": "html",
    "parse_markdown": "markdown",
    "DATASET_SIDECARS": "walk",
    "SUPPORTED_EXTENSIONS": "walk",
    "scan": "walk",
    "scanned_sources": "walk",
    "upload_refusal": "walk",
    "within": "walk",
}
_TYPES = (
    "LinkSpan",
    "LoadedDocument",
    "Section",
    "SkippedFile",
    "UnchangedFile",
    "document_hash",
    "normalize_text",
)
_HOME |= dict.fromkeys(_TYPES, "types")

__all__ = [
    "DATASET_SIDECARS",
    "SUPPORTED_EXTENSIONS",
    "LinkSpan",
    "LoadedDocument",
    "Section",
    "SkippedFile",
    "UnchangedFile",
    "document_hash",
    "normalize_text",
    "parse_html",
    "parse_markdown",
    "scan",
    "scanned_sources",
    "upload_refusal",
    "within",
]


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
