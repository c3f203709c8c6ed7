"""The offline reader's answers as one span weight varies, over a dataset's evaluation index.

    python -m bench reader bench/datasets/sqlite-docs bench/datasets/git-docs \
        --feature mirror --weights 0,3,6,10 --out bench/out/reader-mirror-weights.json

Each question is retrieved once (default mode, as `neorag eval --answer offline` does);
then, per weight, the reader reads the same evidence with that weight for `--feature` and
the others as shipped. Reports answer_hit and EM per weight, and which questions each
weight answers, so the README's choice of a weight can be checked.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def sweep(directory: Path, feature: str, weights: list[float]) -> dict:
    from app.answer import evidence_sentences
    from app.engine import Engine
    from app.eval.harness import Dataset, eval_settings
    from app.eval.metrics import answer_in, exact_match
    from app.reader import scoring, shared_reader
    from app.settings import Settings

    dataset = Dataset.load(directory)
    settings = eval_settings(Settings(), dataset)
    engine = Engine(settings)
    shipped = scoring.WEIGHTS[feature]
    try:
        engine.require_index()
        reader = shared_reader(settings.ingest.models.spacy_model)
        retriever = engine.retriever("default")
        cases = [
            (q, evidence_sentences(engine, retriever.retrieve(q["question"])))
            for q in dataset.questions
        ]
        rows = []
        for weight in weights:
            scoring.WEIGHTS[feature] = weight
            hits, exact = [], 0.0
            for q, evidence in cases:
                short = reader.read(q["question"], evidence).short
                exact += exact_match(short, q["answers"])
                if answer_in(short, q["answers"]):
                    hits.append(q.get("id"))
            n = len(cases)
            rows.append(
                {
                    "weight": weight,
                    "answer_hit": round(100 * len(hits) / n, 1),
                    "em": round(100 * exact / n, 1),
                    "answered": hits,
                }
            )
    finally:
        scoring.WEIGHTS[feature] = shipped
        engine.close()
    return {"dataset": dataset.name, "questions": len(cases), "shipped": shipped, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--feature", default="mirror")
    parser.add_argument("--weights", default="0,3,6,10")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    from bench.json_out import current_commit, emit

    weights = [float(w) for w in args.weights.split(",")]
    emit(
        {
            "command": "python " + " ".join(sys.argv),
            "commit": current_commit(),
            "feature": args.feature,
            "sets": [sweep(d, args.feature, weights) for d in args.datasets],
        },
        args.out,
    )


if __name__ == "__main__":
    main()
