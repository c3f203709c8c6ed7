"""Page-level baselines on a folder corpus (a stop-gap until `neorag eval` reads folders).

    NEORAG_DATA_DIR=/tmp/docsbench-data .venv/bin/neorag ingest bench/datasets/sqlite-docs/pages
    NEORAG_DATA_DIR=/tmp/docsbench-data .venv/bin/python bench/docs_baselines.py \
        bench/datasets/sqlite-docs [--modes dense,bm25,hybrid,tigrag,default] [--json OUT]

The store must already hold the dataset's `pages/` (the ingest above). Gold pages are paths
relative to `pages/`; they are matched to stored documents through each document's `source`
path, never through the form of its id. Per mode it reports page R@2/R@5/R@10 (gold pages
among the first k distinct documents of the ranking), R@2 and R@5 over the two-page
questions alone, `all@5 two-page` (share of those with both gold pages in the first five),
`answer@5` (percent of questions whose answer string, case-insensitive and
whitespace-normalised, occurs in the text of the ranking's first five chunks), `answer@ctx`
(the same over the context the mode selects) and the mean context size in tokens. `--json`
also keeps each question's figures and first five pages.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.engine import Engine  # noqa: E402
from app.eval.metrics import recall_at_k  # noqa: E402
from app.settings import Settings  # noqa: E402

MODES = ("dense", "bm25", "hybrid", "tigrag", "default")
KS = (2, 5, 10)
ANSWER_CHUNKS = 5
_SPACE = re.compile(r"\s+")


def normalised(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def load_questions(dataset: Path) -> list[dict[str, Any]]:
    lines = (dataset / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def page_of_documents(engine: Engine, pages: Path) -> dict[str, str]:
    """Stored document id -> its page path relative to `pages` (documents from elsewhere
    are left out, so they can never count as gold)."""
    root = pages.resolve()
    out: dict[str, str] = {}
    for doc_id, record in engine.store.documents().items():
        source = Path(record.source).resolve()
        if source.is_relative_to(root):
            out[doc_id] = source.relative_to(root).as_posix()
    return out


def contains_answer(texts: list[str], answers: list[str]) -> bool:
    joined = [normalised(t) for t in texts]
    return any(normalised(a) in t for a in answers for t in joined)


def evaluate_mode(
    engine: Engine, mode: str, questions: list[dict[str, Any]], page_of: dict[str, str]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The mode's summary row and one record per question (its ranking's first pages)."""
    retriever = engine.retriever(mode)
    per_question: list[dict[str, Any]] = []
    for q in questions:
        result = retriever.retrieve(q["question"])
        ranking = [page_of.get(d, f"(elsewhere) {d}") for d in result.doc_ranking()]
        top = engine.store.get_chunks([s.chunk_id for s in result.ranking[:ANSWER_CHUNKS]])
        record: dict[str, Any] = {"id": q["id"], "type": q["type"]}
        record |= {f"R@{k}": recall_at_k(ranking, q["gold_pages"], k) for k in KS}
        record["answer@5"] = contains_answer([c.text for c in top], q["answers"])
        record["answer@ctx"] = contains_answer([c.text for c in result.context], q["answers"])
        record["ctx tokens"] = result.context_tokens
        record["top pages"] = ranking[:5]
        per_question.append(record)
    return summary(per_question), per_question


def summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Percentages over the questions; `R@2 two-page` and `all@5 two-page` (both gold pages
    among the first five) isolate the questions that need two pages."""

    def pct(values: list[Any]) -> float:
        return round(100 * sum(values) / len(values), 1) if values else 0.0

    two = [r for r in records if r["type"] == "two-page"]
    row: dict[str, Any] = {f"R@{k}": pct([r[f"R@{k}"] for r in records]) for k in KS}
    row["R@2 two-page"] = pct([r["R@2"] for r in two])
    row["R@5 two-page"] = pct([r["R@5"] for r in two])
    row["all@5 two-page"] = pct([r["R@5"] == 1.0 for r in two])
    row["answer@5"] = pct([r["answer@5"] for r in records])
    row["answer@ctx"] = pct([r["answer@ctx"] for r in records])
    tokens = [r["ctx tokens"] for r in records]
    row["ctx tokens"] = round(sum(tokens) / len(tokens), 1) if tokens else 0.0
    return row


def markdown(rows: dict[str, dict[str, Any]]) -> str:
    cols = list(next(iter(rows.values())))
    lines = ["| mode | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
    for mode, row in rows.items():
        lines.append(f"| {mode} | " + " | ".join(str(row[c]) for c in cols) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path, help="folder with pages/ and questions.jsonl")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    questions = load_questions(args.dataset)
    engine = Engine(Settings())
    try:
        engine.require_index()
        page_of = page_of_documents(engine, args.dataset / "pages")
        gold = {p for q in questions for p in q["gold_pages"]}
        missing = sorted(gold - set(page_of.values()))
        if missing:
            raise SystemExit(f"gold pages not in the store (ingest pages/ first): {missing}")
        evaluated = {m: evaluate_mode(engine, m, questions, page_of) for m in args.modes.split(",")}
    finally:
        engine.close()
    two_page = sum(q["type"] == "two-page" for q in questions)
    print(
        f"{args.dataset.name}: {len(page_of)} pages, {len(questions)} questions "
        f"({two_page} two-page)\n"
    )
    print(markdown({mode: row for mode, (row, _) in evaluated.items()}))
    if args.json:
        report = {
            mode: {"summary": row, "questions": per_question}
            for mode, (row, per_question) in evaluated.items()
        }
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
