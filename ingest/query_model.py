"""The query side of the embedding model: question vectors and token counts, ready in a
fraction of a second.

Answering needs the model's query vectors and its token counts, not the model itself.
Loading sentence-transformers (and PyTorch with it) takes several seconds, most of a cold
`neorag ask`; the ONNX export with the model's fast tokenizer needs neither. The export is
made once per model, from the loaded model (about a second), by the first ingest or query
that finds none, and kept in the model cache under a key made of what identifies the
model's vectors (`embed.model_identity`, the version of the package that ships it, the
export format): a changed model never meets an old export. Later processes load it
directly. A model that cannot be exported is recorded as such, so they go straight to
PyTorch; a cache that cannot be written leaves the export in the process's memory.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.metadata
import json
import logging
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict
from functools import cache
from pathlib import Path
from typing import Protocol

import numpy as np

from ingest import threads
from ingest.config import ModelConfig
from ingest.embed import BUNDLED_MODELS, Embedder, bundled_name, model_identity, shared_embedder
from ingest.query_encoder import EncoderSpec, OnnxQueryEncoder, export_model, quantize_int8

log = logging.getLogger(__name__)

FORMAT = 1  # bump when the export's graph or files change meaning
SPEC, GRAPH, GRAPH_INT8 = "encoder.json", "model.onnx", "model-int8.onnx"


class QueryModel(Protocol):
    """What retrieval needs from the embedding model."""

    identity: str
    dimension: int

    def encode(self, texts: Sequence[str], *, int8: bool = False) -> np.ndarray: ...

    def count_tokens(self, text: str) -> int: ...


def cache_dir(cfg: ModelConfig) -> Path:
    """Where exports are kept: the setting, else `models` in the install cache."""
    if cfg.cache_dir is not None:
        return cfg.cache_dir.expanduser()
    return Path(os.environ.get("NEORAG_CACHE") or "~/.cache/neorag").expanduser() / "models"


def export_folder(cache: Path, model: str) -> Path:
    """The folder of `model`'s export under `cache` (the model is not loaded)."""
    identity = model_identity(model)
    canonical = bundled_name(model)
    version = ""
    if canonical is not None:
        try:
            version = importlib.metadata.version(BUNDLED_MODELS[canonical][1])
        except importlib.metadata.PackageNotFoundError:
            version = "missing"
    digest = hashlib.sha256(f"{FORMAT}\0{identity}\0{version}".encode()).hexdigest()[:16]
    slug = re.sub(r"[^a-z0-9]+", "-", identity.casefold()).strip("-")[:48]
    return cache / f"{slug}-{digest}"


class OnnxQueryModel:
    """The float export, and its int8 variant quantized from it on first use."""

    def __init__(self, identity: str, spec: EncoderSpec, folder: Path) -> None:
        self.identity = identity
        self.dimension = spec.dimension
        self._spec, self._folder = spec, folder
        self._float = OnnxQueryEncoder(spec, folder / GRAPH, threads.budget())
        self._int8: OnnxQueryEncoder | None = None
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str], *, int8: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return (self._quantized() if int8 else self._float).encode(texts)

    def count_tokens(self, text: str) -> int:
        return self._float.count_tokens(text)

    def _quantized(self) -> OnnxQueryEncoder:
        with self._lock:
            if self._int8 is None:
                target = self._folder / GRAPH_INT8
                if not target.is_file():
                    quantize_int8(self._folder / GRAPH, target)
                self._int8 = OnnxQueryEncoder(self._spec, target, threads.budget())
            return self._int8


class OnnxEmbedder:
    """Bulk embeddings (an ingest's chunks) through the same export on a CPU: the ingest
    then never imports PyTorch either, which was most of a one-document change on a small
    collection (6.3 s of 10.4 s loading models), and onnxruntime also embeds more texts a
    second than PyTorch does on two cores (53-58 against 44 2wiki passages/s). Vectors
    equal the PyTorch path's to 2e-7."""

    device = "cpu"

    def __init__(self, model: OnnxQueryModel, name: str, batch_size: int) -> None:
        self.name, self.batch_size = name, batch_size
        self.identity, self.dimension = model.identity, model.dimension
        self._model = model

    def encode(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        order = np.argsort([len(t) for t in texts], kind="stable")
        for start in range(0, len(texts), self.batch_size):
            idx = order[start : start + self.batch_size]
            out[idx] = self._model.encode([texts[i] for i in idx])
            if progress:
                progress(len(idx))
        return out

    def count_tokens(self, text: str) -> int:
        return self._model.count_tokens(text)


def ingest_embedder(cfg: ModelConfig, device: str) -> OnnxEmbedder | Embedder:
    """What an ingest embeds with: the ONNX export on a CPU when the model exports, else
    (a GPU, or a model the export cannot reproduce) sentence-transformers."""
    if device == "cpu":
        model = shared_query_model(cfg)
        if isinstance(model, OnnxQueryModel):
            return OnnxEmbedder(model, cfg.embedding_model, cfg.embedding_batch_size)
    return shared_embedder(cfg.embedding_model, cfg.embedding_batch_size, device)


class TorchQueryModel:
    """The PyTorch path: for `query_encoder=torch` and models the export cannot reproduce."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.identity = embedder.identity
        self.dimension = embedder.dimension

    def encode(self, texts: Sequence[str], *, int8: bool = False) -> np.ndarray:
        return self.embedder.encode(texts)

    def count_tokens(self, text: str) -> int:
        return self.embedder.count_tokens(text)


def read_export(folder: Path) -> EncoderSpec | bool | None:
    """The stored spec; False when the model was found not to export; None when absent."""
    try:
        data = json.loads((folder / SPEC).read_text())
    except (OSError, ValueError):
        return None
    if data.get("format") != FORMAT:
        return None
    if not data.get("exportable", True):
        return False
    if not (folder / GRAPH).is_file():
        return None
    fields = {k: data[k] for k in EncoderSpec.__dataclass_fields__ if k != "tokenizer"}
    fields["inputs"] = tuple(fields["inputs"])
    try:
        tokenizer = (folder / "tokenizer.json").read_text()
    except OSError:
        return None
    return EncoderSpec(tokenizer=tokenizer, **fields)


def write_export(folder: Path, embedder: Embedder) -> bool:
    """Export `embedder`'s model into `folder` (built aside, then renamed into place, so a
    concurrent reader never sees half of it); False when the cache cannot be written."""
    made = export_model(embedder._model)
    meta: dict[str, object] = {"format": FORMAT, "identity": embedder.identity}
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
        building.chmod(0o755)  # a cache other users of the machine may read
        if made is None:
            meta["exportable"] = False
        else:
            spec, graph = made
            (building / GRAPH).write_bytes(graph)
            (building / "tokenizer.json").write_text(spec.tokenizer)
            meta |= {k: v for k, v in asdict(spec).items() if k != "tokenizer"}
        (building / SPEC).write_text(json.dumps(meta, indent=1))
        try:
            building.rename(folder)
        except OSError:  # another process put one in place meanwhile: keep that one
            shutil.rmtree(building, ignore_errors=True)
        return True
    except OSError as exc:
        log.warning("query encoder: cannot write the export to %s (%s)", folder, exc)
        return False


def ensure_export(cfg: ModelConfig, embedder: Callable[[], object]) -> Path:
    """The export's folder, made now from `embedder()` if there is none (ingest calls this
    with the model it has loaded, so the first question after it starts fast)."""
    folder = export_folder(cache_dir(cfg), cfg.embedding_model)
    if read_export(folder) is None:
        loaded = embedder()
        if isinstance(loaded, Embedder):  # an ONNX embedder ran from an export already
            write_export(folder, loaded)
    return folder


def shared_query_model(cfg: ModelConfig, torch: bool = False) -> QueryModel:
    """One query model per process and model (`torch`: the PyTorch path)."""
    return _query_model(cfg.embedding_model, cfg.embedding_batch_size, cache_dir(cfg), torch)


@cache
def _query_model(model: str, batch_size: int, cache: Path, torch: bool) -> QueryModel:
    loaded = lambda: shared_embedder(model, batch_size)  # noqa: E731
    if torch:
        return TorchQueryModel(loaded())
    folder = export_folder(cache, model)
    found = read_export(folder)
    if found is None:
        if not write_export(folder, loaded()):
            folder = _private_copy(loaded())
        found = read_export(folder)
    if not isinstance(found, EncoderSpec):
        return TorchQueryModel(loaded())
    return OnnxQueryModel(model_identity(model), found, folder)


def _private_copy(embedder: Embedder) -> Path:
    """An export in a temporary folder for this process, when the cache is not writable."""
    private = Path(tempfile.mkdtemp(prefix="neorag-query-model-"))
    atexit.register(shutil.rmtree, private, True)
    folder = private / "export"
    write_export(folder, embedder)
    return folder
