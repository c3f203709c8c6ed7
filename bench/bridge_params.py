"""The `bridge` walk's parameters moved one at a time around the shipped values, scored on
the first and the last 100 questions of each set.

    python bench/bridge_params.py --data-dir .neorag/eval-cache ../shared/datasets/musique-200 \\
        ../shared/datasets/hotpotqa-200 --out bench/out/bridge-params.json
    python bench/bridge_params.py --mode default … --out bench/out/bridge-params-default.json

The shipped values were tuned on the first 100 questions of musique-200 and hotpotqa-200;
the last 100 are the held-out check that a value's effect there goes the same way. Reads
the collections `neorag eval` indexed (embedded backend); `bridge` mode alone, or with
`--mode default` the default mode (which fuses it), page-level R@2 / R@5 as `neorag eval`
computes them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.engine import Engine  # noqa: E402
from app.eval.harness import Dataset, eval_settings, gold_document_ids  # noqa: E402
from app.eval.metrics import recall_at_k  # noqa: E402
from app.settings import Settings  # noqa: E402

HALF = 100
GRID: dict[str, tuple[float, ...]] = {
    "temperature": (0.01, 0.05),
    "damping": (0.7, 0.95),
    "name_share": (0.1, 0.6),
    "title_boost": (1.0, 6.0),
}


def halves(per_question: list[tuple[float, float]]) -> dict[str, dict[str, float]]:
    """R@2 / R@5 (percent) of the first `HALF` questions, the rest, and all."""

    def mean(rows: list[tuple[float, float]]) -> dict[str, float]:
        n = max(len(rows), 1)
        return {f"R@{k}": round(100 * sum(r[i] for r in rows) / n, 2) for i, k in enumerate((2, 5))}

    return {
        "first 100": mean(per_question[:HALF]),
        "last 100": mean(per_question[HALF:]),
        "all": mean(per_question),
    }


def sweep(directory: Path, data_dir: Path, mode: str) -> dict[str, Any]:
    dataset = Dataset.load(directory)
    settings = eval_settings(Settings(backend="embedded", data_dir=data_dir), dataset)
    engine = Engine(settings)
    try:
        engine.require_index()
        retriever = engine.retriever(mode)
        shipped = retriever.cfg
        questions = [
            (q["question"], gold_document_ids(settings, dataset, q["gold"]))
            for q in dataset.questions
        ]

        def run(update: dict[str, float]) -> dict[str, dict[str, float]]:
            retriever.cfg = shipped.model_copy(
                update={"bridge": shipped.bridge.model_copy(update=update)}
            )
            rows = []
            for question, gold in questions:
                ranked = retriever.retrieve(question).doc_ranking()
                rows.append((recall_at_k(ranked, gold, 2), recall_at_k(ranked, gold, 5)))
            return halves(rows)

        out: dict[str, Any] = {"shipped": {p: getattr(shipped.bridge, p) for p in GRID} | run({})}
        for param, values in GRID.items():
            for value in values:
                out[f"{param}={value}"] = run({param: value})
        retriever.cfg = shipped
        return out
    finally:
        engine.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--data-dir", type=Path, default=REPO / ".neorag" / "eval-cache")
    parser.add_argument("--mode", choices=("bridge", "default"), default="bridge")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    from bench.json_out import current_commit, emit

    emit(
        {
            "command": "python " + " ".join(sys.argv),
            "commit": current_commit(),
            "mode": args.mode,
            "sets": {d.name: sweep(d, args.data_dir, args.mode) for d in args.datasets},
        },
        args.out,
    )


if __name__ == "__main__":
    main()
