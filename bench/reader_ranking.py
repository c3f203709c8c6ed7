"""Where the offline reader loses answers: finding the answer span or ranking it, and
whether a learned ranker over the same span features beats the fitted linear weights.

    python bench/reader_ranking.py --data-dir .neorag/eval-cache \\
        ../shared/datasets/2wiki-dev ../shared/datasets/hotpotqa-200 ../shared/datasets/musique-200

Reads the collections `neorag eval` indexed (`eval-<dataset>`, embedded backend) and, for
each span question: is the gold answer in the evidence sentences, the parsed sentences,
the scored candidates, and at which rank. Then trains scikit-learn rankers on the
questions the weights were fitted on (2wiki-dev, the first 100 of the others) and counts,
on the last 100 of hotpotqa-200 and musique-200, how often each puts a gold-naming
candidate first. Writes bench/out/reader-ranking.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.answer import evidence_sentences  # noqa: E402
from app.eval.metrics import answer_in, answer_in_texts  # noqa: E402
from app.reader.context import Context  # noqa: E402
from app.reader.question import analyse  # noqa: E402
from app.reader.reader import Reader  # noqa: E402
from app.reader.scoring import WEIGHTS, span_features  # noqa: E402
from app.service import EnginePool, QueryOptions, retrieve  # noqa: E402
from app.settings import Settings  # noqa: E402

FITTED_FIRST = 100  # questions of hotpotqa-200 / musique-200 the weights were fitted on


def collect(dataset: Path, data_dir: Path, reader: Reader) -> list[dict[str, Any]]:
    settings = Settings(data_dir=data_dir, collection=f"eval-{dataset.name}", backend="embedded")
    pool = EnginePool()
    lines = (dataset / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    out = []
    for i, q in enumerate(map(json.loads, lines)):
        found = retrieve(pool, settings, q["question"], QueryOptions())
        evidence = evidence_sentences(found.engine, found.result)
        analysis = analyse(reader.parse([q["question"]])[0])
        if analysis.kind != "span" or not evidence:
            continue
        context = Context(analysis, evidence)
        chosen = reader.sentences_to_parse(context)
        parsed = list(zip(chosen, reader.parse([e.text for e in chosen]), strict=True))
        spans = [s for s in span_features(context, parsed) if s.features["novel"] != 0.0]
        gold = q["answers"]
        out.append(
            {
                "index": i,
                "in_evidence": answer_in_texts([e.text for e in evidence], gold) > 0,
                "in_parsed": answer_in_texts([e.text for e in chosen], gold) > 0,
                "features": [s.features for s in spans],
                "labels": [answer_in(s.text, gold) for s in spans],
            }
        )
    pool.close()
    return out


def first_hits(groups: list[dict[str, Any]], score: Any, keys: list[str]) -> int:
    hits = 0
    for g in groups:
        if g["features"]:
            x = np.array([[f.get(k, 0.0) for k in keys] for f in g["features"]])
            hits += int(g["labels"][int(np.argmax(score(x)))] > 0)
    return hits


def main() -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression

    ap = argparse.ArgumentParser()
    ap.add_argument("datasets", nargs="+", type=Path)
    ap.add_argument("--data-dir", type=Path, default=REPO / ".neorag/eval-cache")
    ap.add_argument("--out", type=Path, default=REPO / "bench/out/reader-ranking.json")
    args = ap.parse_args()
    reader = Reader()
    per_set = {d.name: collect(d, args.data_dir, reader) for d in args.datasets}
    keys = sorted({k for gs in per_set.values() for g in gs for f in g["features"] for k in f})
    command = "python bench/reader_ranking.py " + " ".join(sys.argv[1:])
    report: dict[str, Any] = {"command": command, "finding": {}}
    for name, groups in per_set.items():
        ranks = []
        for g in groups:
            if not g["features"]:
                continue
            order = np.argsort(
                [-sum(WEIGHTS.get(k, 0.0) * v for k, v in f.items()) for f in g["features"]]
            )
            ranks.append(next((r for r, j in enumerate(order) if g["labels"][j]), None))
        report["finding"][name] = {
            "span_questions": len(groups),
            "gold_in_evidence": sum(g["in_evidence"] for g in groups),
            "gold_in_parsed_sentences": sum(g["in_parsed"] for g in groups),
            "gold_among_candidates": sum(r is not None for r in ranks),
            "gold_first": sum(r == 0 for r in ranks),
            "gold_in_top3": sum(r is not None and r < 3 for r in ranks),
        }

    def fitted(name: str, g: dict[str, Any]) -> bool:
        return name == "2wiki-dev" or g["index"] < FITTED_FIRST

    train = [g for n, gs in per_set.items() for g in gs if fitted(n, g) and g["features"]]
    x = np.array([[f.get(k, 0.0) for k in keys] for g in train for f in g["features"]])
    y = np.array([lab for g in train for lab in g["labels"]])
    w = np.array([WEIGHTS.get(k, 0.0) for k in keys])
    models: dict[str, Any] = {"fitted linear weights": lambda m: m @ w}
    for c in (0.1, 1.0):
        lr = LogisticRegression(C=c, max_iter=2000).fit(x, y)
        models[f"logistic regression C={c}"] = lr.decision_function
    for depth, rounds in ((3, 100), (3, 300), (5, 200)):
        hgb = HistGradientBoostingClassifier(
            max_depth=depth, max_iter=rounds, learning_rate=0.05, random_state=0
        ).fit(x, y)
        models[f"gradient boosting depth={depth} rounds={rounds}"] = lambda m, h=hgb: (
            h.predict_proba(m)[:, 1]
        )
    held: dict[str, Any] = {}
    for name, groups in per_set.items():
        rest = [g for g in groups if not fitted(name, g)]
        if rest:
            held[name] = {"span_questions": len(rest)} | {
                label: first_hits(rest, score, keys) for label, score in models.items()
            }
    report["held_out_first_hits"] = held
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
