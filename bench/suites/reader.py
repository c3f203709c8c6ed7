"""The offline reader's answers as one span weight varies, over a dataset's evaluation index.

    python -m bench reader bench/datasets/sqlite-docs bench/datasets/git-docs \
        --feature mirror --weights 0,3,6,10 --out bench/out/reader-mirror-weights.json

Each question is retrieved once (default mode, as `neorag eval --answer offline` does);
then, per weight, the reader reads the same evidence with that weight for `--feature` and
the others as shipped. Reports answer_hit and EM per weight, and which questions each
weight answers, so the README's choice of a weight can be checked.

`--support`: when the reader's short answer is shown, precision and coverage by threshold.

    python -m bench reader sample_corpus/wiki hotpotqa-200 musique-200 2wiki-dev \
        bench/datasets/sqlite-docs bench/datasets/git-docs bench/datasets/postgres-docs \
        --support --fit --out bench/out/abstain.json

Each dataset's evaluation index must exist (`neorag eval DATASET --modes default` builds
it). Each question is retrieved once (default mode) and read once; its reading's support
(app/reader/confidence.py) decides, per threshold, whether the short answer is shown.
The questions are split by a fixed rule, even and odd position in questions.jsonl. With
`--fit`, the calibration (app/reader/calibration.py: a logistic regression over the
support's features) is fitted on the even halves of all the sets together and written to
app/reader/calibration.json; without it the shipped calibration is read. The threshold is
chosen on the same even halves (`--rule precision`, the default: the lowest at which 80% of
the shown answers are right; `--rule utility`: most right answers shown minus wrong ones),
and everything is reported on the odd halves, with `answer_precision` (the share of shown
short answers that name the gold answer) and `answer_coverage` (the share of questions
shown one). A set with a held-out half (bench/suites/docs.py `HALVED`) is read on its
development half only, split the same way. The nonsense and out-of-corpus questions of
bench/datasets/nonsense-questions.jsonl are asked of every index too: `abstained` is the
share that gets no short answer.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

if TYPE_CHECKING:
    from app.reader.calibration import Calibration
    from app.reader.confidence import Support


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


NONSENSE = REPO / "bench" / "datasets" / "nonsense-questions.jsonl"
THRESHOLDS = [round(0.05 * i, 2) for i in range(0, 20)]
PRECISION = 80.0  # the share of shown short answers the answer-quality issue asks for
FIT_C = 1.0  # the logistic regression's inverse regularisation (sklearn's default)


@dataclass(frozen=True, slots=True)
class Read:
    index: int
    right: bool  # the reader's pick names a gold answer
    short: bool  # the reader has a pick at all
    support: Support


def read_set(directory: Path, nonsense: list[str]) -> tuple[str, list[Read], list[Read]]:
    """Every question of the dataset read once, and the nonsense questions (never right)."""
    from app.answer import evidence_sentences
    from app.engine import Engine
    from app.eval.harness import Dataset, eval_settings
    from app.eval.metrics import answer_in
    from app.reader import shared_reader
    from app.reader.confidence import NO_SUPPORT
    from app.settings import Settings
    from bench.suites.docs import HALVED

    # a set with a held-out half is read on its development half only
    half = HALVED.get(directory.name, {}).get("dev")
    dataset = Dataset.load(directory, half=half)
    engine = Engine(eval_settings(Settings(), dataset))
    try:
        engine.require_index()
        reader = shared_reader(engine.settings.ingest.models.spacy_model)
        retriever = engine.retriever("default")

        def reading(question: str) -> tuple[str, Support]:
            result = retriever.retrieve(question)
            evidence = evidence_sentences(engine, result) if result.context else []
            if not evidence:
                return "", NO_SUPPORT
            got = reader.read(result.question, evidence)
            return got.short, got.support

        reads = []
        for i, q in enumerate(dataset.questions):
            short, support = reading(q["question"])
            right = bool(short) and bool(answer_in(short, q["answers"]))
            reads.append(Read(i, right, bool(short), support))
        odd = [Read(-1, False, bool(short), sup) for short, sup in map(reading, nonsense)]
    finally:
        engine.close()
    return dataset.name, reads, odd


def confidence(read: Read, calibration: Calibration) -> float:
    """What `Support.confidence` is under `calibration` (0 when a part rules it out)."""
    if not read.short or read.support.product <= 0.0:
        return 0.0
    return calibration.probability(read.support)


def figures(reads: list[Read], calibration: Calibration, threshold: float) -> dict:
    shown = [r for r in reads if r.short and confidence(r, calibration) >= threshold]
    right = sum(r.right for r in shown)
    return {
        "questions": len(reads),
        "shown": len(shown),
        "right": right,
        "answer_precision": round(100 * right / len(shown), 1) if shown else 0.0,
        "answer_coverage": round(100 * len(shown) / len(reads), 1) if reads else 0.0,
        "utility": right - (len(shown) - right),
    }


def abstained(nonsense: list[Read], calibration: Calibration, threshold: float) -> float:
    kept = sum(1 for r in nonsense if not r.short or confidence(r, calibration) < threshold)
    return round(100 * kept / len(nonsense), 1) if nonsense else 0.0


def choose(fit: list[Read], calibration: Calibration, rule: str = "precision") -> float:
    """`precision`: the lowest threshold at which PRECISION percent of the shown answers
    of `fit` are right, so coverage is as high as that allows (`utility` when none
    reaches it). `utility`: the most right minus wrong shown answers (a wrong confident
    answer costs what a right one gains), the lowest of a tie."""
    if rule == "precision":
        for t in THRESHOLDS:
            at = figures(fit, calibration, t)
            if at["shown"] and at["answer_precision"] >= PRECISION:
                return t
    return max(THRESHOLDS, key=lambda t: (figures(fit, calibration, t)["utility"], -t))


def fit_calibration(fit: list[Read]) -> Calibration:
    """A logistic regression of "the short answer is right" on the support's features,
    over the readings of `fit` that have a short answer no part rules out."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    from app.reader.calibration import FEATURES, Calibration, features

    usable = [r for r in fit if r.short and r.support.product > 0.0]
    x = np.array([[features(r.support)[k] for k in FEATURES] for r in usable])
    y = np.array([r.right for r in usable])
    model = LogisticRegression(C=FIT_C, max_iter=5000).fit(x, y)
    weights = {k: round(float(w), 4) for k, w in zip(FEATURES, model.coef_[0], strict=True)}
    return Calibration(weights, round(float(model.intercept_[0]), 4))


def auc(reads: list[Read], score: Callable[[Read], float]) -> float | None:
    """How often a right short answer outranks a wrong one (ties count half)."""
    usable = [r for r in reads if r.short]
    right = [score(r) for r in usable if r.right]
    wrong = [score(r) for r in usable if not r.right]
    if not right or not wrong:
        return None
    wins = sum((a > b) + 0.5 * (a == b) for a in right for b in wrong)
    return round(wins / (len(right) * len(wrong)), 3)


def support(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", nargs="+", help="dataset folders or shared set names")
    parser.add_argument("--nonsense", type=Path, default=NONSENSE)
    parser.add_argument("--rule", choices=("utility", "precision"), default="precision")
    parser.add_argument(
        "--fit", action="store_true", help="fit the calibration on the even halves and ship it"
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    from app.reader import calibration as shipped_file
    from app.settings import Settings
    from bench.json_out import current_commit, emit
    from bench.suites.recall import locate

    nonsense = [json.loads(line)["question"] for line in args.nonsense.read_text().splitlines()]
    sets = [read_set(locate(d), nonsense) for d in args.datasets]
    fit = [r for _, reads, _ in sets for r in reads if r.index % 2 == 0]
    report = [r for _, reads, _ in sets for r in reads if r.index % 2 == 1]
    command = "python -m bench reader --support " + " ".join(argv)
    if args.fit:
        fitted = fit_calibration(fit)
        shipped_file.FILE.write_text(
            fitted.to_json(
                command=command,
                commit=current_commit(),
                fitted_on="the even-indexed questions of " + ", ".join(n for n, _, _ in sets),
                features=list(shipped_file.FEATURES),
            ),
            encoding="utf-8",
        )
        shipped_file.shipped.cache_clear()
    calibrated = shipped_file.shipped()
    chosen = choose(fit, calibrated, args.rule)
    threshold = Settings().answer_min_confidence
    out_sets = []
    for name, reads, odd in sets:
        halves = {
            "even": [r for r in reads if r.index % 2 == 0],
            "odd": [r for r in reads if r.index % 2 == 1],
        }
        out_sets.append(
            {
                "dataset": name,
                "at_chosen": {h: figures(rs, calibrated, chosen) for h, rs in halves.items()},
                "at_shipped": {h: figures(rs, calibrated, threshold) for h, rs in halves.items()},
                "always_shown": {h: figures(rs, calibrated, 0.0) for h, rs in halves.items()},
                "nonsense_abstained": {
                    "chosen": abstained(odd, calibrated, chosen),
                    "shipped": abstained(odd, calibrated, threshold),
                    "always_shown": abstained(odd, calibrated, 0.0),
                },
                "by_threshold_even": {
                    str(t): figures(halves["even"], calibrated, t) for t in THRESHOLDS
                },
            }
        )
    emit(
        {
            "command": command,
            "commit": current_commit(),
            "rule": f"{args.rule}: threshold chosen on the even-indexed questions of all sets "
            "together (the calibration fitted on the same), reported on the odd ones",
            "chosen_threshold": chosen,
            "shipped_threshold": threshold,
            "calibration": {"weights": calibrated.weights, "bias": calibrated.bias},
            "auc": {
                half: {
                    "calibrated": auc(rs, lambda r: confidence(r, calibrated)),
                    "product": auc(rs, lambda r: r.support.product),
                }
                for half, rs in (("even", fit), ("odd", report))
            },
            "nonsense_file": str(args.nonsense.relative_to(REPO))
            if args.nonsense.is_relative_to(REPO)
            else str(args.nonsense),
            "pooled": {
                "even": figures(fit, calibrated, chosen),
                "odd": figures(report, calibrated, chosen),
            },
            "sets": out_sets,
        },
        args.out,
    )


def main() -> None:
    if "--support" in sys.argv[1:]:
        support([a for a in sys.argv[1:] if a != "--support"])
        return
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
