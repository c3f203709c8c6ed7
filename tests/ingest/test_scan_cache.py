"""A re-ingest parses only the files whose bytes changed, and never skips what the store does
not confirm: a failed document, a malformed line, another configuration or a store that
lost the documents all lead to the file being parsed (and reported) again."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

import ingest.loaders.walk as walk
import ingest.runner as runner
from app.settings import Settings
from graph.embedded.store import EmbeddedStore
from ingest.models import IngestModels
from ingest.runner import run_ingest
from tests.ids import names
from tests.ingest.corpora import write_corpus

pytestmark = pytest.mark.slow
SETTINGS = Settings()


@pytest.fixture(scope="module")
def models() -> IngestModels:
    return IngestModels(SETTINGS.ingest.models)


@pytest.fixture()
def parses(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often each file was loaded (parsed) by the scan."""
    counts: Counter[str] = Counter()
    real = walk._load_file

    def counting(path, *args):  # type: ignore[no-untyped-def]
        counts[path.name] += 1
        return real(path, *args)

    monkeypatch.setattr(walk, "_load_file", counting)
    return counts


def ingest(store, root: Path, idx: Path, models: IngestModels, cfg=None):  # type: ignore[no-untyped-def]
    return run_ingest(root, store, cfg or SETTINGS.ingest, SETTINGS.algorithms, idx, models=models)


def test_unchanged_files_are_not_parsed_again(
    embedded_store: EmbeddedStore, tmp_path: Path, models: IngestModels, parses: Counter[str]
) -> None:
    root = write_corpus(tmp_path / "docs", "A")
    first = ingest(embedded_store, root, tmp_path / "idx", models)
    assert len(first.new) == 9 and sum(parses.values()) == 4  # three pages and a corpus file
    parses.clear()

    again = ingest(embedded_store, root, tmp_path / "idx", models)
    assert (again.new, again.changed, again.removed, again.unchanged) == ([], [], [], 9)
    assert not parses

    install = root / "guide" / "install.md"
    install.write_text(install.read_text() + "\nSee also the FAQ.\n")
    edited = ingest(embedded_store, root, tmp_path / "idx", models)
    assert names(edited.changed, root) == ["guide/install.md"] and edited.unchanged == 8
    assert dict(parses) == {"install.md": 1}
    parses.clear()

    (root / "notes.txt").unlink()
    removed = ingest(embedded_store, root, tmp_path / "idx", models)
    assert names(removed.removed, root) == ["notes.txt"] and not parses


def test_the_store_decides_not_the_cache(
    tmp_path: Path, models: IngestModels, parses: Counter[str]
) -> None:
    """A store that no longer holds what the cache says (cleared, or written by another
    process) gets every file parsed and indexed again."""
    root = write_corpus(tmp_path / "docs", "A")
    store = EmbeddedStore(tmp_path / "graph.sqlite")
    try:
        ingest(store, root, tmp_path / "idx", models)
        store.clear()
        parses.clear()
        again = ingest(store, root, tmp_path / "idx", models)
        assert len(again.new) == 9 and sum(parses.values()) == 4
    finally:
        store.close()


def test_another_configuration_parses_everything(
    embedded_store: EmbeddedStore, tmp_path: Path, models: IngestModels, parses: Counter[str]
) -> None:
    root = write_corpus(tmp_path / "docs", "A")
    ingest(embedded_store, root, tmp_path / "idx", models)
    parses.clear()
    other = SETTINGS.ingest.model_copy(deep=True)
    other.tokens.cooccurrence_window = 5
    again = ingest(embedded_store, root, tmp_path / "idx", models, other)
    assert sum(parses.values()) == 4 and len(again.changed) == 9


def test_bad_lines_are_reported_every_time(
    embedded_store: EmbeddedStore, tmp_path: Path, models: IngestModels
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    good = {"id": "p1", "title": "Kingfisher", "text": "The kingfisher dives for small fish."}
    (root / "corpus.jsonl").write_text(json.dumps(good) + "\n{not json\n")
    for _ in range(2):
        report = ingest(embedded_store, root, tmp_path / "idx", models)
        assert [s.reason for s in report.skipped] and report.unchanged + len(report.new) == 1


def break_chunking_of(monkeypatch: pytest.MonkeyPatch, name: str):  # type: ignore[no-untyped-def]
    """Make chunking raise for the files called `name`; returns the real chunker."""
    real = runner.chunk_document

    def failing(doc, *args, **kwargs):  # type: ignore[no-untyped-def]
        if doc.source.endswith(name):
            raise RuntimeError("chunker broke")
        return real(doc, *args, **kwargs)

    monkeypatch.setattr(runner, "chunk_document", failing)
    return real


def test_a_document_that_failed_is_tried_again(
    embedded_store: EmbeddedStore,
    tmp_path: Path,
    models: IngestModels,
    monkeypatch: pytest.MonkeyPatch,
    parses: Counter[str],
) -> None:
    root = write_corpus(tmp_path / "docs", "A")
    real = break_chunking_of(monkeypatch, "install.md")
    first = ingest(embedded_store, root, tmp_path / "idx", models)
    assert len(first.new) == 8 and any("chunker broke" in s.reason for s in first.skipped)
    monkeypatch.setattr(runner, "chunk_document", real)
    parses.clear()
    again = ingest(embedded_store, root, tmp_path / "idx", models)
    assert names(again.new, root) == ["guide/install.md"] and dict(parses) == {"install.md": 1}


def test_an_edit_that_fails_keeps_the_stored_version(
    embedded_store: EmbeddedStore,
    tmp_path: Path,
    models: IngestModels,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An edited document whose chunking raises is reported, its stored version (chunks and
    hash) stays as it was, and the next ingest, once chunking works, takes the edit."""
    root = write_corpus(tmp_path / "docs", "A")
    ingest(embedded_store, root, tmp_path / "idx", models)
    install = next(
        d for d, r in embedded_store.documents().items() if r.source.endswith("install.md")
    )
    before = embedded_store.documents()[install]
    before_texts = [c.text for c in embedded_store.document_chunks([install])]
    path = root / "guide" / "install.md"
    path.write_text(path.read_text() + "\nA new closing line about make check.\n")
    real = break_chunking_of(monkeypatch, "install.md")
    failed = ingest(embedded_store, root, tmp_path / "idx", models)
    assert any("chunker broke" in s.reason for s in failed.skipped)
    assert embedded_store.documents()[install].content_hash == before.content_hash
    assert [c.text for c in embedded_store.document_chunks([install])] == before_texts
    monkeypatch.setattr(runner, "chunk_document", real)
    again = ingest(embedded_store, root, tmp_path / "idx", models)
    assert names(again.changed, root) == ["guide/install.md"]
    after = [c.text for c in embedded_store.document_chunks([install])]
    assert any("make check" in t for t in after) and after != before_texts
