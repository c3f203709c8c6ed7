"""`neorag eval`: index a shared dataset once, run every requested mode and the baselines in
one process, and report recall, MRR, context size, latency and, with `answer="offline"` (the
LLM-free reader, app/reader), EM, F1, answer_hit and the answer step's latency.

Each dataset is indexed into a collection of its own (`eval-<dataset>`), never into the
user's: nothing outside it is read or deleted. The index is kept while the corpus file, its
content and the ingest configuration stay the same, so a second run skips indexing.
Latency excludes model loading: each mode answers one warm-up question before the timed
ones, and on a server waits for the in-process copies that warm-up started (a running
service answers from the server while they load, then from them).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.engine import Engine, open_engine
from app.eval.metrics import (
    answer_in,
    answer_in_texts,
    exact_match,
    mrr,
    percentile,
    recall_at_k,
    token_f1,
)
from app.ingest_service import collection_writer
from app.services import index_dir
from app.settings import Settings
from graph.collections import check_collection
from graph.errors import NeoragError
from ingest.config import IngestConfig
from ingest.identity import document_id, passage_key
from ingest.report import NoProgress, Progress
from ingest.runner import config_fingerprint, run_ingest

KS = (1, 2, 5, 10)


@dataclass(slots=True)
class Dataset:
    """A question set and its corpus: a `corpus.jsonl` of passages (gold = passage ids,
    `gold_ids`) or a folder of pages (`pages/`, gold = paths under it, `gold_pages`), the
    shape of a user's own documentation."""

    name: str
    directory: Path
    corpus: Path
    questions: list[dict[str, Any]]
    kind: str = "corpus"
    half: str | None = None

    @classmethod
    def load(cls, directory: Path, limit: int | None = None, half: str | None = None) -> Dataset:
        """`half` keeps the questions at even or odd positions of questions.jsonl (0-based,
        blank lines not counted): the fixed split by which a set is developed on one half
        and reported on the other. `limit` then keeps the first N of those."""
        if half not in (None, "even", "odd"):
            raise NeoragError(f"half must be 'even' or 'odd', not {half!r}")
        questions_file = directory / "questions.jsonl"
        meta = (
            json.loads((directory / "meta.json").read_text())
            if (directory / "meta.json").is_file()
            else {}
        )
        pages = directory / str(meta.get("pages", "pages"))
        if (directory / "corpus.jsonl").is_file():
            kind, corpus, gold_key = "corpus", directory / "corpus.jsonl", "gold_ids"
        elif pages.is_dir():
            kind, corpus, gold_key = "folder", pages, "gold_pages"
        else:
            raise NeoragError(f"{directory} needs corpus.jsonl (or pages/) and questions.jsonl")
        if not questions_file.is_file():
            raise NeoragError(f"{directory} needs corpus.jsonl (or pages/) and questions.jsonl")
        questions = []
        for n, line in enumerate(questions_file.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                q = json.loads(line)
            except json.JSONDecodeError as exc:
                raise NeoragError(f"{questions_file}:{n}: malformed JSON ({exc.msg})") from None
            if not q.get("question") or not q.get(gold_key):
                raise NeoragError(f"{questions_file}:{n}: needs question and {gold_key}")
            q["gold"] = list(q[gold_key])
            questions.append(q)
        name = str(meta.get("name", directory.name))
        if half is not None:
            questions = questions[0 if half == "even" else 1 :: 2]
        return cls(name, directory, corpus, questions[:limit] if limit else questions, kind, half)

    def content_hash(self) -> str:
        if self.kind == "corpus":
            return hashlib.sha256(self.corpus.read_bytes()).hexdigest()[:16]
        h = hashlib.sha256()
        for path in sorted(p for p in self.corpus.rglob("*") if p.is_file()):
            h.update(path.relative_to(self.corpus).as_posix().encode() + b"\0")
            h.update(hashlib.sha256(path.read_bytes()).digest())
        return h.hexdigest()[:16]


@dataclass(slots=True)
class ModeResult:
    recalls: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in KS})
    mrr: list[float] = field(default_factory=list)
    context_tokens: list[int] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)
    em: list[float] = field(default_factory=list)
    f1: list[float] = field(default_factory=list)
    answer_hit: list[float] = field(default_factory=list)
    shown: list[bool] = field(default_factory=list)  # whether a user would see the pick
    short_answers: list[str] = field(default_factory=list)
    answer_ms: list[float] = field(default_factory=list)
    answer_at_5: list[float] = field(default_factory=list)
    answer_in_context: list[float] = field(default_factory=list)
    notes: Counter[str] = field(default_factory=Counter)
    rows: list[dict[str, Any]] | None = None  # one per question, when asked for

    def note(self, notes: Sequence[str]) -> None:
        """Count the questions whose trace carries each kind of note (its text before the
        first colon: "passage match", …), so a per-question decision is visible per run."""
        self.notes.update({re.sub(r"\d[\d.,]*", "N", n.split(":", 1)[0]) for n in notes})

    def summary(self) -> dict[str, Any]:
        def mean(xs: Sequence[float]) -> float:
            return round(sum(xs) / len(xs), 2) if xs else 0.0

        out: dict[str, Any] = {f"recall@{k}": mean([100 * r for r in self.recalls[k]]) for k in KS}
        out["mrr"] = round(sum(self.mrr) / len(self.mrr), 4) if self.mrr else 0.0
        out["context_tokens_mean"] = mean([float(t) for t in self.context_tokens])
        out["latency_ms_p50"] = (
            round(percentile(self.latency_ms, 50), 2) if self.latency_ms else 0.0
        )
        out["latency_ms_p95"] = (
            round(percentile(self.latency_ms, 95), 2) if self.latency_ms else 0.0
        )
        out["answer@5"] = mean([100 * x for x in self.answer_at_5]) if self.answer_at_5 else None
        out["answer_in_context"] = (
            mean([100 * x for x in self.answer_in_context]) if self.answer_in_context else None
        )
        out["em"] = mean([100 * x for x in self.em]) if self.em else None
        out["f1"] = mean([100 * x for x in self.f1]) if self.f1 else None
        out["answer_hit"] = mean([100 * x for x in self.answer_hit]) if self.answer_hit else None
        # of the picks a user is shown (the answerer says which), the share that is right,
        # and the share of questions that are shown one
        shown = [hit for hit, seen in zip(self.answer_hit, self.shown, strict=False) if seen]
        known = len(self.shown) == len(self.answer_hit) and bool(self.shown)
        out["answer_precision"] = (
            (mean([100 * x for x in shown]) if shown else 0.0) if known else None
        )
        out["answer_coverage"] = round(100 * len(shown) / len(self.shown), 2) if known else None
        for q in (50, 95):
            out[f"answer_ms_p{q}"] = (
                round(percentile(self.answer_ms, q), 2) if self.answer_ms else None
            )
        out["questions_noted"] = dict(sorted(self.notes.items()))
        if self.rows is not None:
            out["per_question"] = self.rows
        return out


# An answerer returns its pick, or its pick and whether a user would be shown it.
Answerer = Callable[[str, Any], str | tuple[str, bool]]


def offline_answerer(engine: Engine) -> Answerer:
    """The reader's short answer to a retrieved result (what EM/F1 score): its pick
    whatever its support, so the figures measure the reader, and beside it whether the
    answer shows it (`Settings.answer_min_confidence`), which answer_precision and
    answer_coverage score (`python -m bench reader --support` chooses that threshold)."""
    from app.answer import evidence_sentences, shows_short
    from app.reader import shared_reader

    def short_answer(question: str, result: Any) -> tuple[str, bool]:
        evidence = evidence_sentences(engine, result) if result.context else []
        if not evidence:
            return "", False
        reader = shared_reader(engine.settings.ingest.models.spacy_model)
        reading = reader.read(result.question, evidence)
        return reading.short, shows_short(reading, engine.settings.answer_min_confidence)

    return short_answer


ANSWERERS: dict[str, Callable[[Engine], Answerer]] = {"offline": offline_answerer}


def _slug(dataset: Dataset) -> str:
    name = dataset.directory.name.lower()
    return re.sub(r"[^a-z0-9_-]+", "-", name).strip("-_") or "dataset"


def eval_collection(
    settings: Settings, dataset: Dataset, distractors: Dataset | None = None
) -> str:
    """`eval-<dataset>` (`eval-mix-<a>-<b>` when two corpora are mixed, named in sorted
    order so that each dataset's questions run against the same index; plus the ingest
    configuration's fingerprint when it is not the default one, so ablations of
    index-time settings keep their own index)."""
    if distractors is None:
        name = f"eval-{_slug(dataset)}"[:48]
    else:
        name = "eval-mix-" + "-".join(sorted(_slug(d)[:19] for d in (dataset, distractors)))
    fingerprint = config_fingerprint(settings.ingest)
    if fingerprint != config_fingerprint(IngestConfig()):
        name = f"{name}-{fingerprint[:8]}"
    return check_collection(name)


def eval_settings(
    settings: Settings, dataset: Dataset, distractors: Dataset | None = None
) -> Settings:
    """The evaluation's own collection: it indexes there and touches nothing else."""
    return settings.for_collection(eval_collection(settings, dataset, distractors))


def gold_document_ids(settings: Settings, dataset: Dataset, gold: Sequence[str]) -> list[str]:
    """The stored ids of a question's gold documents: passages by their id within
    corpus.jsonl, or pages by their path under the pages folder."""
    root = dataset.corpus.resolve()
    if dataset.kind == "folder":
        return [document_id(settings.collection, str(root / g)) for g in gold]
    return [document_id(settings.collection, passage_key(str(root), g)) for g in gold]


def ensure_index(
    settings: Settings,
    dataset: Dataset,
    progress: Progress,
    distractors: Dataset | None = None,
) -> float:
    """Index the corpus (and the distractors' corpus beside it) into the evaluation's
    collection unless it already holds exactly this (same corpus files and content, same
    ingest configuration); returns the seconds indexing took when it was built, possibly
    by an earlier run. A collection holding anything else is rebuilt — only that
    collection."""
    corpora = [dataset] if distractors is None else [dataset, distractors]
    corpora.sort(key=_slug)  # either order: one index
    key = (
        "|".join(f"{d.name}:{d.corpus.resolve()}:{d.content_hash()}" for d in corpora)
        + f":{config_fingerprint(settings.ingest)}"
    )
    with collection_writer(settings) as store:
        if store.get_meta("eval_dataset") == key and store.get_meta("eval_index_seconds"):
            for d in corpora:  # a no-op unless a derived stage is stale (newer edge builders)
                run_ingest(
                    d.corpus, store, settings.ingest, settings.algorithms, index_dir(settings)
                )
            return float(store.get_meta("eval_index_seconds") or 0.0)
        t0 = time.perf_counter()
        for n, d in enumerate(corpora):
            run_ingest(
                d.corpus,
                store,
                settings.ingest,
                settings.algorithms,
                index_dir(settings),
                progress=progress,
                rebuild=n == 0,
            )
        seconds = round(time.perf_counter() - t0, 2)
        store.set_meta("eval_index_seconds", str(seconds))
        store.set_meta("eval_dataset", key)
        return seconds


def run_eval(
    settings: Settings,
    dataset: Dataset,
    modes: Sequence[str],
    *,
    progress: Progress | None = None,
    answerer: Answerer | None = None,
    answer: str | None = None,
    distractors: Dataset | None = None,
    per_question: bool = False,
) -> dict[str, Any]:
    """`answer` names a built-in answerer ("offline": the reader's short answer); a custom
    `answerer(question, result) -> str` wins over it. `distractors`: another dataset whose
    corpus is indexed beside this one's (its questions are not asked), the way a user's
    collection mixes kinds of documents. `per_question` adds each question's row to every
    mode (`per_question`: its id, the rank of its first gold document, its recall at each
    k and whether the answer string is in the top five chunks; with an answerer, its short
    answer beside the gold answers), so two modes or two runs can be compared question by
    question."""
    if answer is not None and answer not in ANSWERERS:
        raise NeoragError(f"unknown answerer {answer!r}; choose from {', '.join(ANSWERERS)}")
    progress = progress or NoProgress()
    settings = eval_settings(settings, dataset, distractors)
    index_seconds = ensure_index(settings, dataset, progress, distractors)
    engine = open_engine(settings)
    results: dict[str, Any] = {}
    try:
        engine.require_index()
        if answerer is None and answer is not None:
            answerer = ANSWERERS[answer](engine)
        for mode in modes:
            retriever = engine.retriever(mode)
            warm = retriever.retrieve(dataset.questions[0]["question"])  # warm-up: loads models
            engine.settle()  # and, on a server, the in-process copies it started
            if answerer is not None:
                answerer(warm.question, warm)
            acc = ModeResult(rows=[] if per_question else None)
            progress.start(f"eval {mode}", len(dataset.questions))
            for q in dataset.questions:
                t0 = time.perf_counter()
                # Each mode's own context (TIGRAG's β, SpectRAG's budget, top-k otherwise);
                # recall reads the ranking, which every mode makes at least 10 deep.
                result = retriever.retrieve(q["question"])
                acc.latency_ms.append((time.perf_counter() - t0) * 1000)
                ranking = result.doc_ranking()
                gold = gold_document_ids(settings, dataset, q["gold"])
                for k in KS:
                    acc.recalls[k].append(recall_at_k(ranking, gold, k))
                acc.mrr.append(mrr(ranking, gold))
                acc.context_tokens.append(result.context_tokens)
                acc.note(result.trace.notes)
                if q.get("answers"):
                    top = engine.store.get_chunks([c.chunk_id for c in result.ranking[:5]])
                    acc.answer_at_5.append(answer_in_texts([c.text for c in top], q["answers"]))
                    in_context = answer_in_texts([c.text for c in result.context], q["answers"])
                    acc.answer_in_context.append(in_context)
                if answerer is not None and q.get("answers"):
                    t1 = time.perf_counter()
                    got = answerer(q["question"], result)
                    acc.answer_ms.append((time.perf_counter() - t1) * 1000)
                    prediction, seen = got if isinstance(got, tuple) else (got, None)
                    if seen is not None:
                        acc.shown.append(seen)
                    acc.em.append(exact_match(prediction, q["answers"]))
                    acc.f1.append(token_f1(prediction, q["answers"]))
                    acc.answer_hit.append(answer_in(prediction, q["answers"]))
                    acc.short_answers.append(prediction)
                if acc.rows is not None:
                    acc.rows.append(_question_row(q, acc))
                progress.advance(f"eval {mode}")
            progress.finish(f"eval {mode}")
            results[mode] = acc.summary()
    finally:
        engine.close()
    return {
        "dataset": dataset.name,
        "kind": dataset.kind,
        "backend": settings.backend,
        "collection": settings.collection,
        "questions": len(dataset.questions),
        "half": dataset.half,
        "distractors": distractors.name if distractors is not None else None,
        "documents": len(engine.links.title),
        "chunks": len(engine.indexed),
        "index_seconds": index_seconds,
        "results": results,
    }


def _question_row(q: dict[str, Any], acc: ModeResult) -> dict[str, Any]:
    """The question just scored into `acc`, as `--per-question` reports it."""
    row: dict[str, Any] = {"id": q.get("id"), "question": q["question"]}
    first = acc.mrr[-1]
    row["first_gold_rank"] = round(1 / first) if first else None
    row.update({f"recall@{k}": round(acc.recalls[k][-1], 4) for k in KS})
    if q.get("answers"):
        row["answer@5"] = bool(acc.answer_at_5[-1])
    if len(acc.answer_hit) and q.get("answers"):
        row["answer_hit"] = bool(acc.answer_hit[-1])
        row["short_answer"] = acc.short_answers[-1]
        if len(acc.shown) == len(acc.answer_hit):
            row["shown"] = acc.shown[-1]
        row["answers"] = list(q["answers"])
    return row


def markdown_table(report: dict[str, Any]) -> str:
    cols = [
        "recall@1",
        "recall@2",
        "recall@5",
        "recall@10",
        "mrr",
        "context_tokens_mean",
        "latency_ms_p50",
        "latency_ms_p95",
        "answer@5",
        "em",
        "f1",
        "answer_hit",
        "answer_precision",
        "answer_coverage",
        "answer_ms_p50",
        "answer_ms_p95",
    ]
    lines = [
        f"{report['dataset']} · {report['backend']} · {report['questions']} questions · "
        f"index {report['index_seconds']}s",
        "",
        "| mode | " + " | ".join(cols) + " |",
        "|---|" + "---:|" * len(cols),
    ]
    for mode, row in report["results"].items():
        cells = ["–" if row.get(c) is None else f"{row[c]}" for c in cols]
        lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
