"""Query-time encoding cost per encoder: the float ONNX export, its int8 variant, PyTorch.

    python bench/query_encoder_bench.py ../shared/datasets/2wiki-dev \
        --out bench/out/latency/query-encoders-2wiki-dev.json

For each encoder, the dataset's first 100 questions are encoded one text at a time (the
question, as every mode does) and four at a time (TIGRAG's q ⊕ e hop texts, here the
question with four made-up entity names): wall-time p50 / p95 per call and the process's
CPU time per call, plus the cosine of each encoder's question vectors to the float export's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from json_out import emit  # noqa: E402

QUESTIONS = 100
HOP_TEXTS = 4


def measure(dataset: Path) -> dict:
    from app.eval.metrics import summarize
    from app.settings import Settings
    from ingest.embed import shared_embedder

    lines = (dataset / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["question"] for line in lines if line.strip()][:QUESTIONS]
    embedder = shared_embedder(Settings().ingest.models.embedding_model)
    encoders = {
        "onnx": lambda texts: embedder.encode_queries(texts),
        "onnx-int8": lambda texts: embedder.encode_queries(texts, int8=True),
        "torch": lambda texts: embedder.encode_queries(texts, onnx=False),
    }
    reference = embedder.encode_queries(questions)
    out: dict = {"dataset": str(dataset), "questions": len(questions), "encoders": {}}
    for name, encode in encoders.items():
        encode(["warm up"])
        row: dict = {}
        for n in (1, HOP_TEXTS):
            wall, cpu = [], []
            for q in questions:
                texts = [q] if n == 1 else [f"{q} Entity Name {i}" for i in range(n)]
                t0, c0 = time.perf_counter(), time.process_time()
                encode(texts)
                wall.append((time.perf_counter() - t0) * 1000)
                cpu.append((time.process_time() - c0) * 1000)
            stats = summarize(wall)
            row[f"{n}_texts"] = {
                "wall_ms_p50": round(stats["p50"], 2),
                "wall_ms_p95": round(stats["p95"], 2),
                "cpu_ms_mean": round(statistics.fmean(cpu), 2),
            }
        vectors = encode(questions)
        cosine = (vectors * reference).sum(axis=1)
        row["cosine_to_onnx"] = {"min": float(np.min(cosine)), "mean": float(np.mean(cosine))}
        out["encoders"][name] = row
    out["load_average"] = round(os.getloadavg()[0], 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    emit(measure(args.dataset), args.out)


if __name__ == "__main__":
    main()
