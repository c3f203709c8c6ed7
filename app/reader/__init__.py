"""The offline reader (no LLM): a short answer named from the retrieved evidence."""

from app.reader.context import Evidence
from app.reader.reader import Reader, Reading, shared_reader

__all__ = ["Evidence", "Reader", "Reading", "shared_reader"]
