"""The embedding model is a setting every stage honours: names resolve offline or fail in
one line, a model is identified by what it is, and changing it re-indexes every document,
re-embeds the collection's documents from other paths, rebuilds FAISS, the SEMANTIC edges
and the Neo4j vector index at the new dimension, and query time refuses another model."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from app.settings import Settings
from graph.embedded.store import EmbeddedStore
from graph.types import DocumentRecord
from ingest.config import IngestConfig, ModelConfig
from ingest.embed import (
    UnknownEmbeddingModel,
    embedding_text,
    model_identity,
    resolve_model_path,
    shared_embedder,
)
from ingest.model_stamp import (
    EmbeddingModelMismatch,
    ModelStamp,
    check_query_model,
    mark_changing,
    plan_model_change,
    read_stamp,
)
from ingest.runner import config_fingerprint
from tests.ingest.tiny_models import MINILM, save_cls_pooled, save_projected, save_tiny_mpnet

REPO = Path(__file__).resolve().parents[2]


# ---- names, folders and identity (no model is loaded) ---------------------------------
def test_an_unknown_name_is_one_line_and_nothing_is_downloaded() -> None:
    with pytest.raises(UnknownEmbeddingModel) as caught:
        resolve_model_path("sentence-transformers/all-mpnet-base-v2")
    message = str(caught.value)
    assert "\n" not in message
    assert "'sentence-transformers/all-mpnet-base-v2'" in message
    assert "NEORAG_INGEST__MODELS__EMBEDDING_MODEL" in message and MINILM in message


def test_a_folder_without_a_model_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(UnknownEmbeddingModel, match="holds no sentence-transformers model"):
        resolve_model_path(str(tmp_path))


def test_packaged_aliases_are_one_model() -> None:
    names = (MINILM, "all-minilm-l6-v2", f"sentence-transformers/{MINILM}")
    paths = {resolve_model_path(n) for n in names}
    assert len(paths) == 1 and (Path(paths.pop()) / "modules.json").is_file()
    assert model_identity(f"sentence-transformers/{MINILM}") == model_identity(MINILM) == MINILM
    aliased = IngestConfig(models=ModelConfig(embedding_model="ALL-MINILM-L6-V2"))
    assert config_fingerprint(aliased) == config_fingerprint(IngestConfig())


def _fake_model(folder: Path, weights: bytes) -> Path:
    folder.mkdir(parents=True)
    (folder / "modules.json").write_text('[{"idx": 0, "path": "", "type": "Transformer"}]')
    (folder / "config.json").write_text('{"hidden_size": 8}')
    (folder / "model.safetensors").write_bytes(weights)
    (folder / "README.md").write_text("model card")
    return folder


def test_a_folder_is_identified_by_its_contents_not_its_path(tmp_path: Path) -> None:
    weights = np.random.default_rng(0).bytes(9 << 20)  # above the sampling threshold
    a = _fake_model(tmp_path / "a", weights)
    moved = Path(shutil.copytree(a, tmp_path / "elsewhere" / "b"))
    assert model_identity(str(a)) == model_identity(str(moved)) != MINILM
    (moved / "README.md").write_text("an edited model card")  # not part of the model
    assert model_identity(str(moved)) == model_identity(str(a))

    cfg = {p: IngestConfig(models=ModelConfig(embedding_model=str(p))) for p in (a, moved)}
    assert config_fingerprint(cfg[a]) == config_fingerprint(cfg[moved])
    assert config_fingerprint(cfg[a]) != config_fingerprint(IngestConfig())

    (moved / "config.json").write_text('{"hidden_size": 16}')
    assert model_identity(str(moved)) != model_identity(str(a))
    retrained = _fake_model(tmp_path / "c", b"\x01" + weights[1:])  # a fine-tune's new weights
    assert model_identity(str(retrained)) != model_identity(str(a))
    assert config_fingerprint(
        IngestConfig(models=ModelConfig(embedding_model=str(retrained)))
    ) != config_fingerprint(cfg[a])


def test_the_cli_reports_an_unknown_model_in_one_line(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nMarie Curie discovered radium.\n")
    env = {
        **os.environ,
        "NEORAG_DATA_DIR": str(tmp_path / "data"),
        "NEORAG_INGEST__MODELS__EMBEDDING_MODEL": "no-such-model",
        "HF_HUB_OFFLINE": "1",
    }
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "ingest", str(docs)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "'no-such-model'" in lines[0], done.stderr
    assert "Traceback" not in done.stderr


# ---- the collection's stamp (no model is loaded) ---------------------------------------
def test_an_interrupted_change_refuses_queries_and_re_embeds_everything_next_time(
    tmp_path: Path,
) -> None:
    with EmbeddedStore(tmp_path / "g.sqlite", "docs") as store:
        cfg = ModelConfig()
        stored = {
            d: DocumentRecord(d, f"/src/{d}", d, "hash") for d in ("docs:a", "docs:b", "docs:c")
        }
        # No stamp: written before stamps, with the packaged default model.
        assert plan_model_change(store, cfg, stored, ["docs:a"]).stale == []
        check_query_model(store, cfg)
        mark_changing(store)
        with pytest.raises(EmbeddingModelMismatch, match="half-way"):
            check_query_model(store, cfg)
        change = plan_model_change(store, cfg, stored, ["docs:a"])
        assert change.changing and change.stale == ["docs:b", "docs:c"]
        assert plan_model_change(store, cfg, {}, []).stale == []


# ---- real models: the whole pipeline (slow) --------------------------------------------
@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("models")
    return {
        "projected": save_projected(root / "minilm-dense96"),
        "cls": save_cls_pooled(root / "minilm-cls"),
        "mpnet": save_tiny_mpnet(root / "tiny-mpnet"),
    }


def _settings(tmp_path: Path, model: str) -> Settings:
    return Settings(
        backend="embedded",
        data_dir=tmp_path / "data",
        ingest=IngestConfig(models=ModelConfig(embedding_model=model)),
    )


def _write_docs(root: Path, texts: dict[str, str]) -> Path:
    for name, text in texts.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


PART_A = {
    "curie.md": "# Marie Curie\n\nMarie Curie discovered polonium and radium in Paris. She won "
    "two Nobel Prizes.\n\n## Later life\n\nShe founded the Radium Institute in Warsaw.\n",
    "rush.md": "# Rush\n\nRush is a Canadian rock band from Toronto. Their album Counterparts "
    "was released in 1993.\n",
}
PART_B = {
    "lothair.txt": "Lothair II was king of Lotharingia from 855. His mother was Ermengarde "
    "of Tours, who died in 851.\n",
    "toto.md": "# Toto\n\nJeff Porcaro was the drummer of Toto, an American band from Los "
    "Angeles.\n",
}


@pytest.mark.slow
def test_changing_the_model_rebuilds_every_stage_at_the_new_dimension(
    tmp_path: Path, model_dirs: dict[str, Path]
) -> None:
    from app.engine import Engine
    from app.ingest_command import ingest_once

    docs = _write_docs(tmp_path / "docs", {**PART_A, **PART_B})
    minilm = _settings(tmp_path, MINILM)
    first = ingest_once(minilm, docs, False)
    assert len(first.new) == 4
    projected = _settings(tmp_path, str(model_dirs["projected"]))
    second = ingest_once(projected, docs, False)
    assert sorted(second.changed) == sorted(first.new)  # every document, none skipped
    assert second.derived_rebuilt and second.edges["SEMANTIC"] > 0

    embedder = shared_embedder(str(model_dirs["projected"]))
    engine = Engine(projected)
    try:
        assert engine.dense.dim == 96 == embedder.dimension
        stored = engine.store.chunk_vectors("embedding")
        assert {v.shape for v in stored.values()} == {(96,)}
        chunk = engine.store.corpus()[0]
        expected = embedder.encode([embedding_text(chunk.title, chunk.section_path, chunk.text)])
        assert np.abs(stored[chunk.id] - expected[0]).max() < 1e-5
        assert read_stamp(engine.store) == ModelStamp(
            model_identity(str(model_dirs["projected"])), str(model_dirs["projected"]), 96
        )
        top = engine.retriever("dense").retrieve("Which Canadian band released Counterparts?")
        assert top.ranking[0].chunk_id.startswith(next(d for d in first.new if "rush" in d))
    finally:
        engine.close()

    with pytest.raises(EmbeddingModelMismatch, match=r"embedded with .*\(96 dims\)"):
        Engine(minilm)


@pytest.mark.slow
def test_documents_from_other_paths_are_re_embedded(
    tmp_path: Path, model_dirs: dict[str, Path]
) -> None:
    """Same tokenizer, same dimension, other vectors (CLS pooling): after ingesting only
    part A under the new model, the collection equals a fresh ingest of A and B with it."""
    from app.ingest_command import ingest_once
    from app.services import open_store
    from tests.ingest.graph_compare import assert_same_graph

    part_a = _write_docs(tmp_path / "a", PART_A)
    part_b = _write_docs(tmp_path / "b", PART_B)
    minilm = _settings(tmp_path, MINILM)
    ingest_once(minilm, part_a, False)
    b_ids = ingest_once(minilm, part_b, False).new
    cls = _settings(tmp_path, str(model_dirs["cls"]))
    report = ingest_once(cls, part_a, False)
    assert len(report.changed) == 2 and sorted(report.reembedded) == sorted(b_ids)
    again = ingest_once(cls, part_a, False)
    assert again.reembedded == [] and again.unchanged == 2 and not again.derived_rebuilt

    fresh = _settings(tmp_path / "fresh", str(model_dirs["cls"]))
    ingest_once(fresh, part_a, False)
    ingest_once(fresh, part_b, False)
    with open_store(cls) as changed, open_store(fresh) as reference:
        got, want = changed.snapshot(), reference.snapshot()
        assert set(got.documents) == set(want.documents)
        # Tokens, co-occurrences, entities, SEMANTIC edges; B's document hashes still name
        # the old configuration (the next ingest of its path re-chunks it).
        assert_same_graph(replace(got, documents={}), replace(want, documents={}))
        new, ref = changed.chunk_vectors("embedding"), reference.chunk_vectors("embedding")
        assert new.keys() == ref.keys()
        assert max(float(np.abs(new[c] - ref[c]).max()) for c in ref) < 1e-5


@pytest.mark.slow
def test_the_onnx_query_encoder_exports_mpnet_and_steps_aside_for_a_dense_head(
    model_dirs: dict[str, Path], tmp_path: Path
) -> None:
    from ingest.config import ModelConfig
    from ingest.query_model import OnnxQueryModel, TorchQueryModel, shared_query_model

    texts = ["Who drummed for Toto?", "  spaced  ", "x", "word " * 300]
    cache = tmp_path / "models"
    mpnet = shared_embedder(str(model_dirs["mpnet"]))
    query = shared_query_model(
        ModelConfig(embedding_model=str(model_dirs["mpnet"]), cache_dir=cache)
    )
    assert isinstance(query, OnnxQueryModel), "a mean-pooled MPNet must export"
    fast = query.encode(texts)
    assert fast.shape == (len(texts), 32)
    assert np.abs(fast - mpnet.encode(texts)).max() < 1e-5
    assert all(query.count_tokens(t) == mpnet.count_tokens(t) for t in texts)

    projected = shared_embedder(str(model_dirs["projected"]))
    cfg = ModelConfig(embedding_model=str(model_dirs["projected"]), cache_dir=cache)
    stepped_aside = shared_query_model(cfg)
    # A Dense head is not exported: PyTorch answers, and the cache records it.
    assert isinstance(stepped_aside, TorchQueryModel)
    assert np.array_equal(stepped_aside.encode(texts), projected.encode(texts))
    assert len(list(cache.iterdir())) == 2


@pytest.mark.slow
@pytest.mark.neo4j
@pytest.mark.exclusive  # the database's one vector index: no other collection may hold it
def test_the_neo4j_vector_index_follows_the_model(
    neo4j_store, tmp_path: Path, model_dirs: dict[str, Path]
) -> None:
    from ingest.models import IngestModels
    from ingest.runner import run_ingest

    docs = _write_docs(tmp_path / "docs", {**PART_A, **PART_B})
    for model, dimension in ((MINILM, 384), (str(model_dirs["projected"]), 96)):
        settings = _settings(tmp_path, model)
        run_ingest(
            docs,
            neo4j_store,
            settings.ingest,
            settings.algorithms,
            tmp_path / f"idx-{dimension}",
            models=IngestModels(settings.ingest.models),
        )
        assert neo4j_store.read("vector_index_dimension")[0]["dimension"] == dimension
        vectors = neo4j_store.chunk_vectors("embedding")
        some_id = sorted(vectors)[0]
        assert vectors[some_id].shape == (dimension,)
        hits = neo4j_store.read(
            "vector_search", k=1, candidates=50, vector=[float(x) for x in vectors[some_id]]
        )
        assert hits and hits[0]["id"] == some_id
