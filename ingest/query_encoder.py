"""Query-time encoding through onnxruntime.

A question and its hop expansions are one to a few short texts; for those, PyTorch's
per-call overhead dominates and onnxruntime runs the same MiniLM 2-3x faster on a CPU. The
weights are exported from the loaded sentence-transformers model into memory when first
needed (under a second, no file to keep in step with the model) and the output equals the
PyTorch path to float precision (tests/ingest/test_query_encoder.py). Bulk ingest keeps
PyTorch: its large batches gain little, and one code path computes every stored vector.

Only models whose pipeline is a transformer followed by mean pooling are exported; any
other model, or a failed export, falls back to PyTorch with a warning.
"""

from __future__ import annotations

import io
import logging
import tempfile
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

BATCH = 32


def _mean_pooled(model: Any) -> bool:
    """A transformer then mean pooling (then, optionally, normalisation) and nothing else."""
    modules = list(model)
    kinds = [type(m).__name__ for m in modules]
    if kinds[:2] != ["Transformer", "Pooling"] or any(k != "Normalize" for k in kinds[2:]):
        return False
    pooling = modules[1]
    mode = getattr(pooling, "pooling_mode", None)
    if mode is None and hasattr(pooling, "get_pooling_mode_str"):
        mode = pooling.get_pooling_mode_str()
    return mode == "mean" or mode == ["mean"]


class OnnxQueryEncoder:
    """Mean-pooled, L2-normalised embeddings from an in-memory ONNX export."""

    def __init__(
        self,
        model: Any,
        threads: int = 2,
        tokenizer_lock: threading.Lock | None = None,
        *,
        int8: bool = False,
    ) -> None:
        import onnxruntime as ort
        import torch

        self._tokenizer = model.tokenizer
        # A Hugging Face fast tokenizer keeps its padding/truncation setup as mutable state
        # that each call rewrites, so two threads tokenising at once corrupt each other's
        # batch ("setting an array element with a sequence"). Tokenising is a small share
        # of a query; the ONNX session itself is safe to run from several threads.
        self._tokenizer_lock = tokenizer_lock or threading.Lock()
        self._max_length = int(model.max_seq_length or 512)
        with self._tokenizer_lock:
            probe = self._tokenizer(["a b", "c"], padding=True, return_tensors="pt")
        names = ["input_ids", "attention_mask", "token_type_ids"]
        self._inputs = [n for n in names if n in probe]
        graph = _pooled_module(model[0].auto_model.eval(), self._inputs)
        axes = {n: {0: "batch", 1: "seq"} for n in self._inputs} | {"vectors": {0: "batch"}}
        buffer = io.BytesIO()
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer notes about shape-dependent branches
            torch.onnx.export(
                graph,
                tuple(probe[n] for n in self._inputs),
                buffer,
                input_names=self._inputs,
                output_names=["vectors"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.log_severity_level = 3
        # onnxruntime's pool threads spin after each run, waiting for the next: on a
        # query, CPU the token PageRank (run meanwhile) and other requests need. Measured
        # on 2wiki-dev, default mode with the other changes of that day: process CPU per
        # question down 30%, same rankings (docs/results.md, Speed).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        exported = _int8(buffer.getvalue()) if int8 else buffer.getvalue()
        self._session = ort.InferenceSession(exported, options, providers=["CPUExecutionProvider"])

    @classmethod
    def try_build(
        cls,
        model: Any,
        threads: int = 2,
        tokenizer_lock: threading.Lock | None = None,
        *,
        int8: bool = False,
    ) -> OnnxQueryEncoder | None:
        if not _mean_pooled(model):
            log.warning("query encoder: model is not mean-pooled; using PyTorch")
            return None
        try:
            return cls(model, threads, tokenizer_lock, int8=int8)
        except Exception as exc:  # an exporter or runtime gap must never break queries
            log.warning("query encoder: ONNX export failed (%s); using PyTorch", exc)
            return None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        cleaned = [str(t).strip() for t in texts]  # as sentence-transformers tokenises
        order = np.argsort([len(t) for t in cleaned], kind="stable")
        out: np.ndarray | None = None
        for start in range(0, len(cleaned), BATCH):
            idx = order[start : start + BATCH]
            with self._tokenizer_lock:
                feats = self._tokenizer(
                    [cleaned[i] for i in idx],
                    padding=True,
                    truncation="longest_first",
                    max_length=self._max_length,
                    return_tensors="np",
                )
            (vectors,) = self._session.run(
                None, {n: feats[n].astype(np.int64) for n in self._inputs}
            )
            if out is None:
                out = np.zeros((len(cleaned), vectors.shape[1]), dtype=np.float32)
            out[idx] = vectors
        assert out is not None
        return out


class _DropPreprocessingAdvice(logging.Filter):
    """onnxruntime's quantizer advises a pre-processing pass on the root logger; the
    export here is already shape-inferred, and a user's console should not carry it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


def _int8(exported: bytes) -> bytes:
    """The model with its MatMul weights quantized to int8 per output channel (dynamic
    activations): the attention and feed-forward projections, most of the compute, at
    about half the time per query on a CPU with int8 dot products; embeddings and
    normalisations stay float, so vectors keep a cosine of about 0.99 to the float path."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    advice = _DropPreprocessingAdvice()
    with tempfile.TemporaryDirectory(prefix="neorag-int8-") as tmp:
        source, target = Path(tmp, "float.onnx"), Path(tmp, "int8.onnx")
        source.write_bytes(exported)
        logging.getLogger().addFilter(advice)
        try:
            quantize_dynamic(
                source,
                target,
                weight_type=QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=["MatMul"],
            )
        finally:
            logging.getLogger().removeFilter(advice)
        return target.read_bytes()


def _pooled_module(transformer: Any, names: list[str]) -> Any:
    import torch

    class Pooled(torch.nn.Module):
        """Transformer → mean over real tokens → L2 norm, as one exportable graph."""

        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            kwargs = dict(zip(names, inputs, strict=True))
            hidden = self.transformer(**kwargs).last_hidden_state
            mask = kwargs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, dim=1)

    return Pooled()
