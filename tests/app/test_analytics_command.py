"""`neorag status` says whether the analytics are stale, and `neorag analytics` runs the
deferred full pass (embedded store built from a synthetic corpus; no models needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import app
from app.services import open_store
from app.settings import Settings
from graph.config import AlgorithmConfig
from ingest.analytics_refresh import refresh_analytics
from ingest.config import AnalyticsPolicy
from ingest.edges.maintain import refresh_chunk_edges
from tests.ingest.edge_corpora import ANALYZER, CFG, RandomCorpus, write


def status(env: dict[str, str]) -> dict:
    result = CliRunner().invoke(app, ["status", "--json"], env=env)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["analytics"]


def test_status_shows_staleness_until_the_full_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"NEORAG_DATA_DIR": str(tmp_path), "NEORAG_BACKEND": "embedded"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    patch_only = AnalyticsPolicy(full_below_chunks=0, max_stale_share=1.0)
    corpus = RandomCorpus(4)
    with open_store(Settings()) as store:
        write(store, corpus, [corpus.new_doc() for _ in range(30)], [])
        refresh_chunk_edges(store, CFG, ANALYZER)
        assert refresh_analytics(store, AlgorithmConfig(), patch_only, added=None).mode == "full"
    assert status(env)["state"] == "fresh"

    with open_store(Settings()) as store:
        doc = corpus.new_doc()
        write(store, corpus, [doc], [])
        edges = refresh_chunk_edges(store, CFG, ANALYZER)
        assert edges.mode == "update"
        run = refresh_analytics(store, AlgorithmConfig(), patch_only, added=edges.added)
        assert run.mode == "patch"
        placed = {c.id: c.community for c in store.get_chunks(edges.added)}
    assert any(m is not None for m in placed.values())
    stale = status(env)
    assert stale["state"] == "stale"
    assert stale["chunks_changed_since_full_pass"] == len(edges.added)

    result = CliRunner().invoke(app, ["analytics", "--json"], env=env)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["communities"] >= 2
    assert status(env)["state"] == "fresh"


def test_the_full_pass_runs_once_stale_chunks_exceed_the_share(tmp_path: Path) -> None:
    """Patches accumulate their stale chunks; the ingest that takes them past
    `max_stale_share` of the corpus runs the full pass (and staleness starts again at 0)."""
    policy = AnalyticsPolicy(full_below_chunks=0, max_stale_share=0.05)
    corpus = RandomCorpus(5)
    settings = Settings(data_dir=tmp_path, backend="embedded")
    with open_store(settings) as store:
        write(store, corpus, [corpus.new_doc() for _ in range(40)], [])
        refresh_chunk_edges(store, CFG, ANALYZER)
        assert refresh_analytics(store, AlgorithmConfig(), policy, added=None).mode == "full"
        total, modes, stale = store.chunk_count(), [], 0
        while not modes or modes[-1] == "patch":
            write(store, corpus, [corpus.new_doc()], [])
            edges = refresh_chunk_edges(store, CFG, ANALYZER)
            assert edges.mode == "update"
            stale += len(edges.added)
            run = refresh_analytics(store, AlgorithmConfig(), policy, added=edges.added)
            modes.append(run.mode)
            assert len(modes) < 50
            if modes[-1] == "patch":
                assert stale <= 0.05 * store.chunk_count()
        assert len(modes) > 1 and stale > 0.05 * total
