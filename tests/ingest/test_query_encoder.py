"""The query model (ONNX export + fast tokenizer, kept in the model cache) gives the PyTorch
path's vectors and token counts, loads without PyTorch, and steps aside when it cannot
reproduce them."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from ingest.config import ModelConfig
from ingest.embed import shared_embedder
from ingest.query_encoder import EncoderSpec, _mean_pooled, export_model
from ingest.query_model import (
    SPEC,
    OnnxQueryModel,
    TorchQueryModel,
    _query_model,
    ensure_export,
    export_folder,
    read_export,
    shared_query_model,
)

TEXTS = [
    "When did Lothair II's mother die?",
    "  padded with spaces  ",
    "x",
    "Who was born first, the director of Hello Sister or of The Lonely Road? Erich von Stroheim",
    "word " * 700,  # beyond the model's 256-token window: truncated the same way
    "Ünïcödé, emoji 🙂 and numbers 1,234.5",
]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def embedder():
    return shared_embedder("all-MiniLM-L6-v2")


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("model-cache")


@pytest.fixture(scope="module")
def query(cache: Path, embedder) -> OnnxQueryModel:
    model = shared_query_model(ModelConfig(cache_dir=cache))
    assert isinstance(model, OnnxQueryModel), "the bundled MiniLM must export"
    return model


def test_onnx_vectors_equal_pytorch(query: OnnxQueryModel, embedder) -> None:
    fast = query.encode(TEXTS)
    slow = embedder.encode(TEXTS)
    assert fast.shape == slow.shape == (len(TEXTS), embedder.dimension)
    assert fast.dtype == np.float32
    assert np.abs(fast - slow).max() < 1e-5
    assert np.allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)


def test_token_counts_equal_the_model_tokenizer(query: OnnxQueryModel, embedder) -> None:
    for text in [*TEXTS, "", "word " * 3000]:  # the counter never truncates
        assert query.count_tokens(text) == embedder.count_tokens(text)


def test_the_export_is_kept_and_reused(cache: Path, query: OnnxQueryModel) -> None:
    folder = export_folder(cache, "all-MiniLM-L6-v2")
    spec = read_export(folder)
    assert not isinstance(spec, bool) and spec is not None
    assert spec.dimension == 384 and spec.max_length == 256
    assert export_folder(cache, "sentence-transformers/all-MiniLM-L6-v2") == folder
    # A later ingest finds it and exports nothing.
    assert ensure_export(ModelConfig(cache_dir=cache), _refuse) == folder


def _refuse():
    raise AssertionError("the export was made again")


def test_a_process_answering_from_the_export_never_imports_pytorch(
    cache: Path, query: OnnxQueryModel
) -> None:
    script = (
        "import sys, numpy as np\n"
        "from ingest.config import ModelConfig\n"
        "from ingest.query_model import shared_query_model\n"
        f"m = shared_query_model(ModelConfig(cache_dir={str(cache)!r}))\n"
        "v = m.encode(['When did Lothair II\\'s mother die?'])\n"
        "print(type(m).__name__, v.shape, m.count_tokens('a b c'))\n"
        "heavy = ('torch', 'sentence_transformers', 'transformers')\n"
        "print([n for n in heavy if n in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["OnnxQueryModel (1, 384) 3", "[]"]


def test_onnx_pool_threads_do_not_spin(query: OnnxQueryModel) -> None:
    """Spinning pool threads burn the cores the token PageRank runs on between encodes."""
    options = query._float._session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"


def test_order_and_batching_do_not_change_vectors(query: OnnxQueryModel) -> None:
    one_by_one = np.stack([query.encode([t])[0] for t in TEXTS])
    many = query.encode(TEXTS * 7)  # several batches, sorted by length inside
    assert np.abs(many[: len(TEXTS)] - one_by_one).max() < 1e-5
    assert np.abs(many[-len(TEXTS) :] - one_by_one).max() < 1e-5
    assert query.encode([]).shape == (0, query.dimension)


def test_threads_share_one_query_model(query: OnnxQueryModel) -> None:
    """Its tokenizers are configured once and never changed, so no lock is needed."""
    texts = [" ".join(["river"] * n) for n in range(1, 9)]
    serial = [(query.encode([t, t + " sea"]), query.count_tokens(t)) for t in texts]
    with ThreadPoolExecutor(4) as pool:
        both = list(
            pool.map(lambda t: (query.encode([t, t + " sea"]), query.count_tokens(t)), texts * 4)
        )
    for (vectors, count), (want, want_count) in zip(both, serial * 4, strict=True):
        assert count == want_count and np.abs(vectors - want).max() < 1e-6


def test_torch_setting_skips_onnx(cache: Path, embedder) -> None:
    model = shared_query_model(ModelConfig(cache_dir=cache), torch=True)
    assert isinstance(model, TorchQueryModel)
    assert np.array_equal(model.encode(TEXTS[:2]), embedder.encode(TEXTS[:2]))


def test_an_unwritable_cache_keeps_the_export_in_the_process(tmp_path: Path, embedder) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    model = _query_model("all-MiniLM-L6-v2", 64, blocked / "models", False)
    assert isinstance(model, OnnxQueryModel)
    assert np.abs(model.encode(TEXTS[:1]) - embedder.encode(TEXTS[:1])).max() < 1e-5


class Transformer:
    pass


class Pooling:
    def __init__(self, mode: str) -> None:
        self.pooling_mode = mode


class Normalize:
    pass


class Dense:
    pass


def test_only_mean_pooled_pipelines_are_exported() -> None:
    assert _mean_pooled([Transformer(), Pooling("mean"), Normalize()])
    assert _mean_pooled([Transformer(), Pooling("mean")])
    assert not _mean_pooled([Transformer(), Pooling("cls"), Normalize()])
    assert not _mean_pooled([Transformer(), Pooling("mean"), Dense(), Normalize()])
    assert export_model([Transformer(), Pooling("cls")]) is None
    assert export_model([Transformer(), Pooling("mean")]) is None  # the export fails


def test_a_stale_or_foreign_export_is_not_read(tmp_path: Path) -> None:
    (tmp_path / SPEC).write_text(json.dumps({"format": 0, "dimension": 3}))
    assert read_export(tmp_path) is None
    (tmp_path / SPEC).write_text(json.dumps({"format": 1, "exportable": False}))
    assert read_export(tmp_path) is False
    (tmp_path / SPEC).write_text("{broken")
    assert read_export(tmp_path) is None


def test_int8_encoder_stays_close_to_the_float_vectors(query: OnnxQueryModel) -> None:
    """The int8 export quantizes the MatMul weights only: vectors keep their direction
    (cosine ≥ 0.97 to the float path, unit length) and their nearest neighbours. The int8
    kernels onnxruntime picks depend on the CPU: the lowest cosine of these texts was ≥ 0.98
    on earlier machines and 0.976 on an AMD EPYC with AVX2 and no VNNI, so the bound leaves
    that room; the mean stays ≥ 0.98. It is quantized from the stored float export, once."""
    quantized = query.encode(TEXTS, int8=True)
    exact = query.encode(TEXTS)
    assert query._quantized() is not query._float
    assert (query._folder / "model-int8.onnx").is_file()
    assert quantized.shape == exact.shape and quantized.dtype == np.float32
    assert np.allclose(np.linalg.norm(quantized, axis=1), 1.0, atol=1e-5)
    cosine = (quantized * exact).sum(axis=1)
    assert cosine.min() >= 0.97, cosine
    assert cosine.mean() >= 0.98, cosine
    assert not np.array_equal(quantized, exact)  # it is a different computation
    assert ((quantized @ exact.T).argmax(axis=1) == np.arange(len(TEXTS))).all()


def test_an_ingest_leaves_the_export_for_the_first_question(tmp_path: Path, embedder) -> None:
    """A CPU ingest embeds through the export, so an ingest into a fresh model cache makes
    it there, and its stored vectors are the PyTorch path's to float precision."""
    from app.services import index_dir, store_path
    from app.settings import Settings
    from graph.embedded.store import EmbeddedStore
    from ingest.embed import embedding_text
    from ingest.models import IngestModels
    from ingest.query_model import OnnxEmbedder
    from ingest.runner import run_ingest

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Kell\n\nMount Kell is the highest peak of the Grey Range.\n")
    settings = Settings(backend="embedded", data_dir=tmp_path / "data")
    settings.ingest.models.cache_dir = tmp_path / "models"
    models = IngestModels(settings.ingest.models, "cpu")
    with EmbeddedStore(store_path(settings)) as store:
        report = run_ingest(
            docs, store, settings.ingest, settings.algorithms, index_dir(settings), models=models
        )
        chunk = store.corpus()[0]
        stored = store.chunk_vectors("embedding")[chunk.id]
    assert report.ok and report.new and isinstance(models.embedder, OnnxEmbedder)
    folder = export_folder(tmp_path / "models", "all-MiniLM-L6-v2")
    assert isinstance(read_export(folder), EncoderSpec)
    text = embedding_text(chunk.title, chunk.section_path, chunk.text)
    assert np.abs(stored - embedder.encode([text])[0]).max() < 1e-5


def test_the_model_identity_names_the_export(tmp_path: Path) -> None:
    """A model saved to a folder is keyed by its contents: another model there is another
    export, the same model elsewhere the same one."""
    first, second = tmp_path / "m1", tmp_path / "m2"
    for folder, weights in ((first, b"weights-a"), (second, b"weights-b")):
        folder.mkdir()
        (folder / "config.json").write_text("{}")
        (folder / "model.safetensors").write_bytes(weights)
    cache = tmp_path / "cache"
    assert export_folder(cache, str(first)) != export_folder(cache, str(second))
    (second / "model.safetensors").write_bytes(b"weights-a")
    assert export_folder(cache, str(first)) == export_folder(cache, str(second))
