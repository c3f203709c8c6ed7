"""Other fusions of the default mode's parts, scored offline on the same rankings.

    python bench/refusion.py --data-dir .neorag/eval-cache ../shared/datasets/musique-200 \\
        ../shared/datasets/hotpotqa-200 ../shared/datasets/2wiki-dev --out bench/out/refusion.json

Each question is retrieved once by each of the default's parts (`tigrag`, `bridge`; the
collections `neorag eval` indexed, embedded backend) and once by `default`; RRF of the
parts as shipped must give the default's page ranking (`reproduces`: the share of
questions where it does), so every variant below differs from the shipped fusion in that
variant only. Page-level recall as `neorag eval` computes it. The variants, each asked of
the README's goals (R@5 up on musique-200 and hotpotqa-200, R@2 not down):

- `rrf`: the RRF constant k and the `bridge` part's weight;
- `same_title`: a passage whose title an earlier passage already has, its score times f
  per such earlier passage (MuSiQue holds several paragraphs of one article);
- `mmr`: a diversity rerank of the fused first 30 by maximal marginal relevance over the
  passages' dense vectors, the first `keep` passages kept in place;
- `guaranteed`: each part's first m pages given a place in the first five;
- `sentence_dense`: a third part ranking each passage by its best sentence's cosine to the
  question (sentence-level evidence, one of the directions the retrieval issue names),
  alone and fused at a few weights;
- `learned`: logistic regression and gradient-boosted trees over each part's rank and
  score, trained on one set and scored on each other one;
- `missing`: where the gold pages missing from the default's first five are.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.engine import Engine, doc_id_of  # noqa: E402
from app.eval.harness import Dataset, eval_settings, gold_document_ids  # noqa: E402
from app.eval.metrics import recall_at_k  # noqa: E402
from app.retrieval.fusion import rrf  # noqa: E402
from app.settings import Settings  # noqa: E402
from ingest.sentences import split_sentences  # noqa: E402

PARTS = ("tigrag", "bridge")
DEPTH = 30  # how deep the default's fusion reads each part (app/retrieval/composed.py)
Ranking = list[tuple[str, float]]
Row = dict[str, Any]


def collect(directory: Path, data_dir: Path) -> dict[str, Any]:
    """Per question: each part's ranking, the default's, the gold pages; and the titles,
    first-30 texts and dense vectors the variants read."""
    dataset = Dataset.load(directory)
    settings = eval_settings(Settings(backend="embedded", data_dir=data_dir), dataset)
    engine = Engine(settings)
    try:
        engine.require_index()
        if tuple(settings.retrieval.default_parts) != PARTS:
            raise SystemExit(f"default parts are {settings.retrieval.default_parts}, not {PARTS}")
        rows: list[Row] = []
        for q in dataset.questions:
            parts = {
                name: [
                    (s.chunk_id, s.score)
                    for s in engine.retriever(name).retrieve(q["question"]).ranking
                ]
                for name in PARTS
            }
            default = engine.retriever("default").retrieve(q["question"])
            fused = [s.chunk_id for s in default.ranking]
            rows.append(
                {
                    "question": q["question"],
                    "gold": gold_document_ids(settings, dataset, q["gold"]),
                    "parts": parts,
                    "fused": fused,
                    "passage_match": any("passage match" in n for n in default.trace.notes),
                }
            )
        sentence_rankings = by_best_sentence(engine, [r["question"] for r in rows])
        for row, ranking in zip(rows, sentence_rankings, strict=True):
            row["sentence_dense"] = ranking
        first = sorted({c for r in rows for c in r["fused"][:DEPTH]})
        vectors = engine.dense.vectors(first)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        texts = {c.id: c.text for c in engine.store.get_chunks(first)}
        return {
            "rows": rows,
            "titles": dict(engine.links.title),
            "vectors": dict(zip(first, vectors / np.maximum(norms, 1e-9), strict=True)),
            "texts": texts,
        }
    finally:
        engine.close()


def by_best_sentence(engine: Engine, questions: list[str]) -> list[Ranking]:
    """Per question, the first `DEPTH` chunks by their best sentence's cosine (sentences
    of three words or more, embedded with the collection's model)."""
    owners, sentences = [], []
    for chunk in engine.store.corpus():
        for sentence in split_sentences(chunk.text):
            if len(sentence.split()) >= 3:
                owners.append(chunk.id)
                sentences.append(sentence)
    vectors = engine.embedder.encode(sentences)
    rankings = []
    for similarity in engine.encode_queries(questions) @ vectors.T:
        best: dict[str, float] = {}
        for j in np.argsort(-similarity):
            best.setdefault(owners[j], float(similarity[j]))
            if len(best) == DEPTH:
                break
        rankings.append(sorted(best.items(), key=lambda cs: -cs[1]))
    return rankings


def pages(chunks: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(doc_id_of(c) for c in chunks))


def recall(data: dict[str, Any], order: Callable[[Row], Sequence[str]]) -> dict[str, float]:
    """R@2 / R@5 / R@10 (percent) of the page rankings `order` gives."""
    rankings = [(pages(order(row)), row["gold"]) for row in data["rows"]]
    return {
        f"R@{k}": round(100 * sum(recall_at_k(r, g, k) for r, g in rankings) / len(rankings), 2)
        for k in (2, 5, 10)
    }


def rrf_scores(
    parts: dict[str, Ranking], k: int = 60, weights: dict[str, float] | None = None
) -> Ranking:
    """The product's RRF (app/retrieval/fusion.py) over each part's first `DEPTH`."""
    cut = {name: ranking[:DEPTH] for name, ranking in parts.items()}
    return [(s.chunk_id, s.score) for s in rrf(cut, k, weights)]


def shipped(row: Row) -> list[str]:
    return [c for c, _ in rrf_scores(row["parts"])]


def same_title(data: dict[str, Any], factor: float) -> Callable[[Row], list[str]]:
    def order(row: Row) -> list[str]:
        seen: Counter[str] = Counter()
        out = []
        for chunk, score in rrf_scores(row["parts"]):
            title = data["titles"].get(doc_id_of(chunk), chunk)
            out.append((chunk, score * factor ** seen[title]))
            seen[title] += 1
        return [c for c, _ in sorted(out, key=lambda cs: -cs[1])]

    return order


def mmr(data: dict[str, Any], lam: float, keep: int) -> Callable[[Row], list[str]]:
    vectors = data["vectors"]

    def order(row: Row) -> list[str]:
        fused = rrf_scores(row["parts"])[:DEPTH]
        top = fused[0][1] if fused else 1.0
        chosen = [c for c, _ in fused[:keep]]
        pool = [(c, s / top) for c, s in fused[keep:]]
        while pool and len(chosen) < 10:
            best = max(
                pool,
                key=lambda cs: (
                    cs[1] - lam * max(float(vectors[cs[0]] @ vectors[x]) for x in chosen)
                ),
            )
            chosen.append(best[0])
            pool.remove(best)
        return chosen + [c for c, _ in fused if c not in chosen]

    return order


def guaranteed(m: int, keep: int, slots: int = 5) -> Callable[[Row], list[str]]:
    """The fused ranking with each part's first m pages moved into the first `slots` pages
    (after the first `keep`), in fused order."""

    def order(row: Row) -> list[str]:
        fused = shipped(row)
        ranked = pages(fused)
        head = ranked[:keep]
        wanted = []
        for ranking in row["parts"].values():
            for page in pages([c for c, _ in ranking[:DEPTH]])[:m]:
                if page not in head and page not in wanted:
                    wanted.append(page)
        room = slots - len(head)
        middle = wanted[:room]
        middle += [p for p in ranked if p not in head and p not in middle][: room - len(middle)]
        middle.sort(key=ranked.index)
        first = head + middle
        page_order = first + [p for p in ranked if p not in first]
        position = {p: i for i, p in enumerate(page_order)}
        return sorted(fused, key=lambda c: position[doc_id_of(c)])  # stable: chunk order kept

    return order


def features(row: Row) -> tuple[list[str], np.ndarray]:
    """Per chunk of either part's first 30: per part 1/(60+rank), 1/rank, score / the part's
    best score, and whether the part ranks it at all."""
    info: dict[str, dict[str, tuple[int, float]]] = {}
    for name in PARTS:
        ranking = row["parts"][name][:DEPTH]
        best = ranking[0][1] if ranking and ranking[0][1] else 1.0
        for rank, (chunk, score) in enumerate(ranking, start=1):
            info.setdefault(chunk, {})[name] = (rank, score / best)
    chunks = list(info)
    table = []
    for chunk in chunks:
        f: list[float] = []
        for name in PARTS:
            rank, score = info[chunk].get(name, (0, 0.0))
            f += [
                1 / (60 + rank) if rank else 0.0,
                1 / rank if rank else 0.0,
                score,
                float(rank > 0),
            ]
        table.append(f)
    return chunks, np.array(table)


def learned(sets: dict[str, dict[str, Any]]) -> dict[str, Any]:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression

    def model_order(model: Any) -> Callable[[Row], list[str]]:
        def order(row: Row) -> list[str]:
            chunks, table = features(row)
            p = model.predict_proba(table)[:, 1]
            return [chunks[i] for i in np.argsort(-p, kind="stable")]

        return order

    out: dict[str, Any] = {}
    for train, data in sets.items():
        x, y = [], []
        for row in data["rows"]:
            chunks, table = features(row)
            x.append(table)
            y += [doc_id_of(c) in set(row["gold"]) for c in chunks]
        models = {
            "logistic_regression": LogisticRegression(C=1.0, max_iter=2000),
            "gradient_boosted_trees": HistGradientBoostingClassifier(
                max_iter=100, max_depth=3, learning_rate=0.05, random_state=0
            ),
        }
        for name, model in models.items():
            model.fit(np.vstack(x), np.array(y))
            out[f"{name} trained on {train}"] = {
                test: recall(other, model_order(model))
                for test, other in sets.items()
                if test != train
            }
    return out


def missing(data: dict[str, Any]) -> dict[str, int]:
    """The gold pages missing from the default's first five: in its first 30; with another
    passage of the same title in the first five; with their title in the text of the
    first three passages."""
    counts = Counter()
    for row in data["rows"]:
        fused = pages(row["fused"])
        first_text = " ".join(data["texts"].get(c, "") for c in row["fused"][:3]).lower()
        first_titles = {data["titles"].get(p) for p in fused[:5]}
        for gold in row["gold"]:
            if gold in fused[:5]:
                continue
            title = data["titles"].get(gold, "")
            counts["missing"] += 1
            counts["in the first 30"] += gold in fused[:30]
            counts["same title in the first 5"] += title in first_titles
            counts["title named in the first 3 passages"] += (
                bool(title) and title.lower() in first_text
            )
    return dict(counts)


def variants(data: dict[str, Any]) -> dict[str, Any]:
    rows = [r for r in data["rows"] if not r["passage_match"]]
    reproduced = sum(pages(shipped(r)) == pages(r["fused"]) for r in rows)
    out: dict[str, Any] = {
        "questions": len(data["rows"]),
        "reproduces": round(reproduced / max(len(rows), 1), 4),
        "default": recall(data, lambda r: r["fused"]),
        "shipped_rrf": recall(data, shipped),
        "rrf": {
            f"k={k} bridge={w}": recall(
                data, lambda r, k=k, w=w: [c for c, _ in rrf_scores(r["parts"], k, {"bridge": w})]
            )
            for k in (5, 10, 20, 30, 60, 90, 120)
            for w in (0.8, 1.0, 1.25)
        },
        "same_title": {
            f"x{f}": recall(data, same_title(data, f)) for f in (0.97, 0.95, 0.9, 0.85, 0.8)
        },
        "mmr": {
            f"lambda={lam} keep={keep}": recall(data, mmr(data, lam, keep))
            for keep in (1, 2)
            for lam in (0.05, 0.1, 0.2, 0.3, 0.5)
        },
        "guaranteed": {
            f"m={m} keep={keep}": recall(data, guaranteed(m, keep))
            for m in (1, 2, 3)
            for keep in (1, 2, 3)
        },
        "sentence_dense": {
            "alone": recall(data, lambda r: [c for c, _ in r["sentence_dense"]]),
            **{
                f"fused, weight {w}": recall(
                    data,
                    lambda r, w=w: [
                        c
                        for c, _ in rrf_scores(
                            {**r["parts"], "sentence": r["sentence_dense"]}, weights={"sentence": w}
                        )
                    ],
                )
                for w in (0.3, 0.5, 1.0)
            },
        },
        "missing": missing(data),
    }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--data-dir", type=Path, default=REPO / ".neorag" / "eval-cache")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    sets = {}
    for directory in args.datasets:
        print(f"retrieving {directory.name} …", file=sys.stderr, flush=True)
        sets[directory.name] = collect(directory, args.data_dir)
    from bench.json_out import current_commit, emit

    emit(
        {
            "command": "python " + " ".join(sys.argv),
            "commit": current_commit(),
            "sets": {name: variants(data) for name, data in sets.items()},
            "learned": learned(sets) if len(sets) > 1 else {},
        },
        args.out,
    )


if __name__ == "__main__":
    main()
