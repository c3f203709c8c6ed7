"""Query-time encoding through onnxruntime and the `tokenizers` library: no PyTorch.

A question and its hop expansions are one to a few short texts; for those, PyTorch's
per-call overhead dominates and onnxruntime runs the same MiniLM 2-3x faster on a CPU. More
than that, a process that only answers questions (`neorag ask`) need not import PyTorch and
sentence-transformers at all (several seconds): the encoder runs from an exported ONNX graph
plus the model's fast tokenizer (`ingest/query_model.py` keeps the export on disk). The
output equals the PyTorch path to float precision (tests/ingest/test_query_encoder.py), and
a CPU ingest embeds its chunks through it too (a GPU ingest keeps PyTorch).

Only models whose pipeline is a transformer followed by mean pooling, with a fast
tokenizer, are exported; any other model falls back to PyTorch with a warning.
"""

from __future__ import annotations

import io
import logging
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

BATCH = 32
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


@dataclass(frozen=True, slots=True)
class EncoderSpec:
    """What runs beside the ONNX graph (transformer, mean pooling and L2 norm in one): the
    model's fast tokenizer and the settings the model was trained with."""

    tokenizer: str  # the fast tokenizer's JSON
    inputs: tuple[str, ...]
    max_length: int
    pad_id: int
    pad_token: str
    pad_type_id: int
    dimension: int


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


def export_model(model: Any) -> tuple[EncoderSpec, bytes] | None:
    """The export of a loaded sentence-transformers model (its spec and ONNX graph), or
    None (with a warning) when it cannot reproduce the model's vectors. Needs PyTorch."""
    if not _mean_pooled(model):
        log.warning("query encoder: model is not mean-pooled; using PyTorch")
        return None
    try:
        return _export(model)
    except Exception as exc:  # an exporter or runtime gap must never break queries
        log.warning("query encoder: ONNX export failed (%s); using PyTorch", exc)
        return None


def _export(model: Any) -> tuple[EncoderSpec, bytes]:
    import torch

    hf = model.tokenizer
    backend = getattr(hf, "backend_tokenizer", None)
    if backend is None:
        raise ValueError("the model has no fast tokenizer")
    probe = hf(["a b", "c"], padding=True, return_tensors="pt")
    inputs = tuple(n for n in INPUTS if n in probe)
    graph = _pooled_module(model[0].auto_model.eval(), list(inputs))
    axes = {n: {0: "batch", 1: "seq"} for n in inputs} | {"vectors": {0: "batch"}}
    buffer = io.BytesIO()
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer notes about shape-dependent branches
        torch.onnx.export(
            graph,
            tuple(probe[n] for n in inputs),
            buffer,
            input_names=list(inputs),
            output_names=["vectors"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    spec = EncoderSpec(
        tokenizer=backend.to_str(),
        inputs=inputs,
        max_length=int(model.max_seq_length or 512),
        pad_id=int(hf.pad_token_id or 0),
        pad_token=str(hf.pad_token or "[PAD]"),
        pad_type_id=int(getattr(hf, "pad_token_type_id", 0) or 0),
        dimension=int(model.get_embedding_dimension() or 0),
    )
    return spec, buffer.getvalue()


class OnnxQueryEncoder:
    """Mean-pooled, L2-normalised embeddings and token counts from an export. Safe to call
    from several threads: its tokenizers are configured once and never changed after (a
    Hugging Face tokenizer rewrites its padding state on every call, which is what made
    the PyTorch path need a lock), and an onnxruntime session runs concurrently."""

    def __init__(self, spec: EncoderSpec, graph: Path | bytes, threads: int = 2) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.dimension = spec.dimension
        self._inputs = list(spec.inputs)
        self._batch = Tokenizer.from_str(spec.tokenizer)
        self._batch.enable_truncation(spec.max_length, strategy="longest_first")
        self._batch.enable_padding(
            pad_id=spec.pad_id, pad_type_id=spec.pad_type_id, pad_token=spec.pad_token
        )
        self._counter = Tokenizer.from_str(spec.tokenizer)
        self._counter.no_truncation()
        self._counter.no_padding()
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.log_severity_level = 3
        # onnxruntime's pool threads spin after each run, waiting for the next: on a
        # query, CPU the token PageRank (run meanwhile) and other requests need. Measured
        # on 2wiki-dev, default mode with the other changes of that day: process CPU per
        # question down 30%, same rankings (docs/results.md, Speed).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        source = str(graph) if isinstance(graph, Path) else graph
        self._session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        cleaned = [str(t).strip() for t in texts]  # as sentence-transformers tokenises
        out = np.zeros((len(cleaned), self.dimension), dtype=np.float32)
        order = np.argsort([len(t) for t in cleaned], kind="stable")
        for start in range(0, len(cleaned), BATCH):
            idx = order[start : start + BATCH]
            encodings = self._batch.encode_batch([cleaned[i] for i in idx])
            feeds = {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
            }
            (vectors,) = self._session.run(None, {n: feeds[n] for n in self._inputs})
            out[idx] = vectors
        return out

    def count_tokens(self, text: str) -> int:
        """The model's tokens in `text`, without special tokens or truncation (what the
        token budgets count)."""
        return len(self._counter.encode(text, add_special_tokens=False).ids)


class _DropPreprocessingAdvice(logging.Filter):
    """onnxruntime's quantizer advises a pre-processing pass on the root logger; the
    export here is already shape-inferred, and a user's console should not carry it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


def quantize_int8(source: Path, target: Path) -> None:
    """`source` with its MatMul weights quantized to int8 per output channel (dynamic
    activations), written to `target`: the attention and feed-forward projections, most of
    the compute, at about half the time per query on a CPU with int8 dot products;
    embeddings and normalisations stay float, so vectors keep a cosine of about 0.99 to
    the float path. Needs onnxruntime and onnx only."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    advice = _DropPreprocessingAdvice()
    logging.getLogger().addFilter(advice)
    try:
        with tempfile.TemporaryDirectory(prefix="neorag-int8-", dir=target.parent) as tmp:
            written = Path(tmp, "int8.onnx")
            quantize_dynamic(
                source,
                written,
                weight_type=QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=["MatMul"],
            )
            written.replace(target)
    finally:
        logging.getLogger().removeFilter(advice)


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
