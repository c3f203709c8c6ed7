"""PDF to one section per page of text, with the page's link annotations."""

from __future__ import annotations

import io

from ingest.loaders.links import keep_target, plain_section
from ingest.loaders.types import Section, normalize_text, one_line


def parse_pdf(data: bytes, fallback_title: str) -> tuple[str, list[Section]] | str:
    """One section per page with text, path ("page N",). Returns a skip reason on failure."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            try:
                unlocked = reader.decrypt("")
            except Exception:
                unlocked = 0
            if not unlocked:
                return "encrypted PDF (needs a password)"
        title = fallback_title
        metadata = reader.metadata
        if metadata is not None and isinstance(metadata.title, str) and metadata.title.strip():
            title = one_line(metadata.title)
        sections: list[Section] = []
        for number, page in enumerate(reader.pages, start=1):
            page_text = normalize_text(page.extract_text() or "")
            if page_text:
                sections.append(plain_section((f"page {number}",), page_text, _pdf_uris(page)))
    except PdfReadError as exc:
        return f"PDF parse failure: {exc}"
    except Exception as exc:  # pypdf raises many types on damaged files
        return f"PDF parse failure: {type(exc).__name__}: {exc}"
    if not sections:
        return "no extractable text in PDF (scanned images?)"
    return title, sections


def _pdf_uris(page: object) -> list[str]:
    uris: list[str] = []
    try:
        annotations = page.get("/Annots") or []  # type: ignore[attr-defined]
        for reference in annotations:
            action = reference.get_object().get("/A")
            uri = action.get_object().get("/URI") if action is not None else None
            kept = keep_target(str(uri)) if uri is not None else None
            if kept is not None:
                uris.append(kept)
    except Exception:
        return uris
    return uris
