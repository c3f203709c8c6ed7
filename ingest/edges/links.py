"""How a chunk's links are read as the documents they may name: the options CITES matches
against a document's target strings (ingest/edges/cites.py) and the link index the edge
workspace keeps (ingest/edges/workspace.py)."""

from __future__ import annotations

from collections.abc import Iterable


def normalise_link(link: str) -> list[str]:
    """A link's candidate names: the whole link, its last path part, that part without its
    extension and with underscores as spaces; case-folded, without fragment or query."""
    link = link.split("#", 1)[0].split("?", 1)[0].strip().rstrip("/")
    last = link.rsplit("/", 1)[-1]
    options = [link, last, last.rsplit(".", 1)[0], last.replace("_", " ")]
    return [o.casefold() for o in options if o]


def link_options(links: Iterable[str]) -> set[str]:
    return {o for link in links for o in normalise_link(link)}
