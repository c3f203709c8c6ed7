"""When the offline reader reads a question as technical, measured on the evaluation sets.

    python bench/reader_technical.py ../shared/datasets/2wiki-dev ../shared/datasets/musique-200 \
        ../shared/datasets/hotpotqa-200 bench/datasets/sqlite-docs \
        --out bench/out/reader-technical.json

For each dataset (its evaluation index, built by `neorag eval` if missing) and each
question, with the default mode's context: whether the question is technical by its own
words (`analyse`), the share of the evidence sentences that quote code (`technical_share`,
what `in_context` compares with TECHNICAL_EVIDENCE), whether the reader then reads it as
technical, and whether the gold answer string occurs in an evidence sentence at all (the
reader can only pick spans from them). The README's figures on technical answers come
from this output.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def measure(directory: Path, data_dir: Path | None) -> dict:
    from app.answer import evidence_sentences
    from app.engine import Engine
    from app.eval.harness import Dataset, ensure_index, eval_settings
    from app.eval.metrics import answer_in_texts
    from app.reader import shared_reader
    from app.reader.code import technical_share
    from app.reader.question import TECHNICAL_EVIDENCE, analyse, in_context
    from app.settings import Settings
    from ingest.report import NoProgress

    dataset = Dataset.load(directory)
    base = Settings() if data_dir is None else Settings(data_dir=data_dir)
    settings = eval_settings(base, dataset)
    ensure_index(settings, dataset, NoProgress())
    engine = Engine(settings)
    try:
        engine.require_index()
        reader = shared_reader(settings.ingest.models.spacy_model)
        retriever = engine.retriever("default")
        by_words = in_evidence = read_technical = answer_absent = 0
        shares: list[float] = []
        for q in dataset.questions:
            result = retriever.retrieve(q["question"])
            evidence = evidence_sentences(engine, result)
            texts = [e.text for e in evidence]
            [doc] = reader.parse([q["question"]])
            analysis = analyse(doc)
            share = technical_share(texts)
            shares.append(share)
            by_words += analysis.technical
            in_evidence += share >= TECHNICAL_EVIDENCE
            read_technical += in_context(analysis, texts).technical
            if q.get("answers"):
                answer_absent += not answer_in_texts(texts, q["answers"])
    finally:
        engine.close()
    return {
        "questions": len(dataset.questions),
        "technical_by_words": by_words,
        "evidence_share_median": round(statistics.median(shares), 3),
        "evidence_share_p90": round(statistics.quantiles(shares, n=10)[-1], 3),
        "evidence_share_max": round(max(shares), 3),
        "evidence_at_threshold": in_evidence,
        "read_as_technical": read_technical,
        "answer_not_in_evidence": answer_absent,
        "threshold": TECHNICAL_EVIDENCE,
    }


def main() -> None:
    sys.path.insert(0, str(REPO / "bench"))
    from json_out import emit

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--data-dir", type=Path, help="where the evaluation indexes live")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    report = {
        "command": " ".join(["python", *sys.argv]),
        "datasets": {d.name: measure(d, args.data_dir) for d in args.datasets},
    }
    emit(report, args.out)


if __name__ == "__main__":
    main()
