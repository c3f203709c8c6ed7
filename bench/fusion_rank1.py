"""Which part of the default's fusion decides its first page, question by question.

    python bench/fusion_rank1.py bench/datasets/sqlite-docs \
        --out bench/out/fusion-rank1-sqlite-docs.json

Over a dataset's evaluation index (`NEORAG_DATA_DIR`, as `neorag eval` builds it), each
question is asked of the default mode and of its parts (tigrag, bridge, hybrid) and of
dense; the JSON lists the questions where the default's first page differs from dense's
first page, with the gold page's rank in every ranking and each part's score margin (its
first page's score over its second's, relative). It then re-fuses the stored rankings with
other RRF weights for TIGRAG and reports page R@2 / R@5 / MRR / answer@5 for each weight,
so the README's statement that no weight reaches dense's MRR without a cost can be checked.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PARTS = ("tigrag", "bridge", "hybrid")
WEIGHTS = (1.0, 0.8, 0.6, 0.5, 0.3)


def pages(ranking: Sequence[tuple[str, float]]) -> list[tuple[str, float]]:
    """Documents in order of first appearance, each with its best chunk's score."""
    from app.engine import doc_id_of

    seen: dict[str, float] = {}
    for chunk_id, score in ranking:
        seen.setdefault(doc_id_of(chunk_id), score)
    return list(seen.items())


def gold_rank(ranking: Sequence[tuple[str, float]], gold: set[str]) -> int | None:
    return next((i for i, (d, _) in enumerate(pages(ranking), 1) if d in gold), None)


def margin(ranking: Sequence[tuple[str, float]]) -> float | None:
    top = pages(ranking)[:2]
    if len(top) < 2 or not top[0][1]:
        return None
    return round((top[0][1] - top[1][1]) / abs(top[0][1]), 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    from app.engine import Engine, doc_id_of
    from app.eval.harness import Dataset, eval_settings, gold_document_ids
    from app.eval.metrics import answer_in_texts
    from app.retrieval.composed import FUSION_DEPTH
    from app.retrieval.fusion import rrf, spread_documents
    from app.settings import Settings
    from bench.json_out import emit

    dataset = Dataset.load(args.dataset)
    settings = eval_settings(Settings(), dataset)
    engine = Engine(settings)
    cfg = settings.retrieval
    rows = []
    try:
        engine.require_index()
        for q in dataset.questions:
            got = {}
            for name in ("default", *PARTS, "dense"):
                result = engine.retriever(name).retrieve(q["question"])
                got[name] = [(s.chunk_id, s.score) for s in result.ranking]
            rows.append((q, set(gold_document_ids(settings, dataset, q["gold"])), got))
        texts: dict[str, str] = {}

        def answer_at_5(chunks: Sequence[str], answers: Sequence[str]) -> bool:
            missing = [c for c in chunks if c not in texts]
            texts.update({c.id: c.text for c in engine.store.get_chunks(missing)})
            return answer_in_texts([texts[c] for c in chunks], answers)

        disagreements = []
        for q, gold, got in rows:
            first = {name: pages(r)[0][0] for name, r in got.items() if r}
            if first.get("default") == first.get("dense"):
                continue
            disagreements.append(
                {
                    "id": q["id"],
                    "gold_rank": {name: gold_rank(r, gold) for name, r in got.items()},
                    "margin": {name: margin(r) for name, r in got.items()},
                    "default_first_is_gold": first["default"] in gold,
                    "dense_first_is_gold": first["dense"] in gold,
                }
            )
        per_page = math.ceil(cfg.passage_match_page_share * cfg.top_k)
        weights = []
        for w in WEIGHTS:
            recall2, recall5, reciprocal, hits = [], [], [], []
            for q, gold, got in rows:
                fused = rrf(
                    {name: got[name][:FUSION_DEPTH] for name in PARTS},
                    cfg.fusion.rrf_k,
                    {"tigrag": w},
                )
                fused = spread_documents(fused, cfg.top_k, per_page, doc_id_of)
                ranking = [(s.chunk_id, s.score) for s in fused]
                docs = [d for d, _ in pages(ranking)]
                recall2.append(len(gold & set(docs[:2])) / len(gold))
                recall5.append(len(gold & set(docs[:5])) / len(gold))
                rank = gold_rank(ranking, gold)
                reciprocal.append(1 / rank if rank else 0.0)
                if q.get("answers"):
                    hits.append(answer_at_5([c for c, _ in ranking[:5]], q["answers"]))
            weights.append(
                {
                    "tigrag_weight": w,
                    "recall@2": round(100 * sum(recall2) / len(rows), 2),
                    "recall@5": round(100 * sum(recall5) / len(rows), 2),
                    "mrr": round(sum(reciprocal) / len(rows), 4),
                    "answer@5": round(100 * sum(hits) / max(1, len(hits)), 2),
                }
            )
    finally:
        engine.close()
    emit(
        {
            "dataset": dataset.name,
            "questions": len(rows),
            "note": "fused with hybrid as a part for every question (what passage match does "
            "on this corpus for 59 of 60)",
            "first_page_differs_from_dense": disagreements,
            "tigrag_weights": weights,
            "command": " ".join(["python bench/fusion_rank1.py", *sys.argv[1:]]),
        },
        args.out,
    )


if __name__ == "__main__":
    main()
