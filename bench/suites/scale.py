"""Scale benchmark: ingest, change and query cost as distractors grow around 2wiki-dev.

    python -m bench scale --backend embedded --sizes 10000,50000,200000
    python -m bench scale --plot        # bench/out/scale.png from the JSON files

Each size is a folder holding a copy of 2wiki-dev's corpus.jsonl plus pages of Debian's
documentation packages (bench/scale_corpus.py: the Linux kernel and Python docs) up to
about that many chunks in all; 2wiki-dev's questions then measure recall while the
distractors grow. A size runs in a child process of its own (peak RSS is that size's):

1. the embedding-only baseline: the folder's chunks embedded once with the ingest's model
   and batch size (chunking is not timed). Above `--embed-sample` chunks an evenly spaced
   sample of that many is embedded and the time scaled by chunks/sample (encoding cost is
   linear in the number of chunks; the JSON records the sample size);
2. a fresh ingest into the collection `bench-scale-<size>` (only that collection is
   rebuilt; it lives under the benchmark's own data dir);
3. a one-document change: one 2wiki passage edited, re-ingested, timed; then restored;
4. the 2wiki-dev questions in each mode: p50/p95 latency (after one warm-up) and R@5.

Timings are wall-clock seconds and, beside them, the process's CPU seconds (all its threads),
with the load average sampled every 10 s while each step ran: a shared machine's other work
stretches wall-clock time but not much the CPU time a step needs. `--queries-only` measures
step 4 again on the stores an earlier run left, every size back to back, so the sizes'
latencies compare within one quiet run.

A size's steps keep a ledger (`<data-dir>/ledger-<backend>-<size>.json`) that records each
finished step and, every 10 s, the running ingest's elapsed wall and CPU seconds and peak
RSS. `--resume` continues a size whose process was killed (the 200k size needs more hours
than a working session has): the embedding-only baseline is not measured again, the ingest
re-runs without rebuilding and picks up the documents still missing (the crash-safe path
users rely on), and the size's `ingest_seconds` is the sum of its segments, so the restart's
model loading and the batch redone after the kill are counted, not hidden. The JSON records
the number of segments.

Output: bench/out/scale-<backend>.json, {"backend", "sources", "sizes": [...]} with each
size shaped as the scale issue asks. On Neo4j, `store_mb` is the database folder, so it
counts every collection that database holds; Community Neo4j cannot be asked to
checkpoint, so the store files lag the last changes, which are in the transaction logs
(`neo4j_transaction_logs_mb`, which also hold older transactions up to their retention).
The machine's load average is recorded beside each size, since latencies on a shared
machine are only indicative.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench import scale_corpus, serving, vector_cache  # noqa: E402
from bench.json_out import current_commit  # noqa: E402

DATASET = REPO.parent / "shared" / "datasets" / "2wiki-dev"
MODES = ("default", "tigrag", "spectrag", "dense", "bm25", "hybrid")
DATABASE_MODES = ("default", "hybrid")  # under database serving (default is TIGRAG there)
QUESTIONS = 200
SERVED_QUESTIONS = 100


def build_folder(
    root: Path, size: int, cache: Path, base_chunks: int, *, keep: bool = False
) -> Path:
    """The size's corpus folder: a copy of 2wiki-dev's corpus and links to its pages. With
    `keep`, an existing folder's links stay (a resumed ingest must see the same files) and
    only the 2wiki corpus is copied again, undoing an edit a killed change step left."""
    folder = root / f"size-{size}"
    if keep and (folder / "pages").exists():
        shutil.copyfile(DATASET / "corpus.jsonl", folder / "2wiki" / "corpus.jsonl")
        return folder
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "2wiki").mkdir(parents=True)
    shutil.copyfile(DATASET / "corpus.jsonl", folder / "2wiki" / "corpus.jsonl")
    chosen = scale_corpus.select(scale_corpus.pages(cache), max(size - base_chunks, 0))
    for i, page in enumerate(chosen):
        link = folder / "pages" / page.package / f"{i:06d}-{Path(page.path).name}"
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(page.path)
    return folder


def _percentile(values: list[float], q: float) -> float:
    from app.eval.metrics import percentile

    return round(percentile(values, q), 2)


def _du_mb(*paths: Path) -> float:
    total = 0
    for path in paths:
        for f in path.rglob("*") if path.is_dir() else [path]:
            if f.is_file() and not f.is_symlink():
                total += f.stat().st_size
    return round(total / 2**20, 1)


class Timed(dict):
    """wall / cpu seconds and the mean load average of one timed step."""


def _peak_rss_mb() -> float:
    return round(
        max(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
        )
        / 1024,
        1,
    )


@contextmanager
def timed(checkpoint: Callable[[Timed], None] | None = None) -> Iterator[Timed]:
    """Time a step; `checkpoint` gets the running figures every 10 s."""
    out = Timed()
    loads: list[float] = []
    stop = threading.Event()
    wall, cpu = time.perf_counter(), time.process_time()

    def running() -> Timed:
        out["wall"] = time.perf_counter() - wall
        out["cpu"] = time.process_time() - cpu
        out["load"] = round(sum(loads) / max(len(loads), 1), 2)
        out["loads"] = len(loads)
        return out

    def sample() -> None:
        while True:
            loads.append(os.getloadavg()[0])
            if checkpoint:
                checkpoint(running())
            if stop.wait(10):
                return

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield out
    finally:
        stop.set()
        sampler.join()
        running()


class Ledger:
    """A size's finished steps and the running ingest's segments, kept on disk so a killed
    run resumes without measuring a step twice or losing the time already spent."""

    def __init__(self, path: Path, *, resume: bool) -> None:
        self.path = path
        self.data: dict[str, Any] = {"segments": []}
        if resume and path.exists():
            self.data = json.loads(path.read_text())
        elif not resume and path.exists():
            path.unlink()

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, indent=1))
        tmp.replace(self.path)

    def segment(self) -> Callable[[Timed], None]:
        """A checkpoint callback that records the running ingest as a new segment."""
        self.data["segments"].append({"wall": 0.0, "cpu": 0.0, "load": 0.0, "loads": 0})

        def checkpoint(t: Timed) -> None:
            self.data["segments"][-1] = {k: t[k] for k in ("wall", "cpu", "load", "loads")}
            self.data["peak_rss_mb"] = max(self.data.get("peak_rss_mb", 0.0), _peak_rss_mb())
            self.save()

        return checkpoint

    def ingest_totals(self) -> Timed:
        segments = self.data["segments"]
        loads = sum(s["loads"] for s in segments)
        return Timed(
            wall=sum(s["wall"] for s in segments),
            cpu=sum(s["cpu"] for s in segments),
            load=round(sum(s["load"] * s["loads"] for s in segments) / max(loads, 1), 2),
        )


def edit_one_passage(corpus: Path, restore: str | None = None) -> str:
    """Append a sentence to the first passage (or put `restore` back); returns the old file."""
    text = corpus.read_text()
    if restore is not None:
        corpus.write_text(restore)
        return text
    first, rest = text.split("\n", 1)
    record = json.loads(first)
    record["text"] += " This passage was edited by the scale benchmark."
    corpus.write_text(json.dumps(record) + "\n" + rest)
    return text


def measure(
    size: int,
    backend: str,
    data_dir: Path,
    cache: Path,
    modes: list[str],
    embed_sample: int,
    resume: bool = False,
    remeasure_embed: bool = False,
    reuse_vectors: bool = True,
) -> dict:
    """One size, in this (child) process: ingest, change, then queries."""
    from app.services import index_dir, open_store
    from app.settings import Settings
    from ingest.chunkers import chunk_document
    from ingest.loaders import LoadedDocument, scan
    from ingest.models import IngestModels
    from ingest.runner import run_ingest

    settings = Settings(backend=backend, data_dir=data_dir, collection=f"bench-scale-{size}")
    ledger = Ledger(data_dir / f"ledger-{backend}-{size}.json", resume=resume)
    resuming = bool(ledger.data["segments"])
    models = IngestModels(settings.ingest.models)
    reusing = vector_cache.cached(models, cache / "vectors") if reuse_vectors else None
    models.embedder.encode(["warm up"])
    count = models.count_tokens
    base = sum(
        len(chunk_document(d, settings.ingest.chunking, count))
        for d in scan(DATASET / "corpus.jsonl", settings.ingest.max_file_bytes)
        if isinstance(d, LoadedDocument)
    )
    folder = build_folder(data_dir / "corpora", size, cache, base, keep=resuming)
    if embed_sample < 0:  # --embed-sample -1: no baseline (the vectors come from the cache)
        ledger.data.setdefault("embed_only", None)
    elif "embed_only" not in ledger.data or ledger.data["embed_only"] is None or remeasure_embed:
        ledger.data["embed_only"] = embed_only_baseline(
            folder, settings, models, embed_sample, reusing._inner if reusing else None
        )
        ledger.save()
    embed_only = ledger.data["embed_only"]

    from rich.console import Console

    from app.progress import RichProgress

    if not resuming:
        # A fresh ingest starts from an empty store: this benchmark's own collection from an
        # earlier run is deleted before the clock starts, not cleared row by row inside it.
        from app.collections import delete_collection, list_collections

        if settings.collection in {c.name for c in list_collections(settings)}:
            delete_collection(settings)
    with open_store(settings, rebuild=not resuming) as store:
        run = partial(
            run_ingest, folder, store, settings.ingest, settings.algorithms, index_dir(settings)
        )
        if not ledger.data.get("ingest_done"):
            print(f"size {size}: ingest segment {len(ledger.data['segments']) + 1}", flush=True)
            checkpoint = ledger.segment()
            with timed(checkpoint) as segment, RichProgress(Console(stderr=True)) as progress:
                report = run(models=models, progress=progress, rebuild=not resuming)
            checkpoint(segment)
            # Where the ingest's time went, per stage (this segment's; summed over segments).
            stages = ledger.data.setdefault("stage_seconds", {})
            for stage, seconds in report.seconds.items():
                stages[stage] = round(stages.get(stage, 0.0) + seconds, 1)
            peaks = ledger.data.setdefault("stage_peak_rss_mb", {})
            for stage, mb in report.peak_rss_mb.items():
                peaks[stage] = max(peaks.get(stage, 0.0), mb)
            ledger.data["ingest_done"] = True
            if reusing is not None:
                for name, n in (
                    ("vectors_reused", reusing.reused),
                    ("vectors_encoded", reusing.encoded),
                    ("analyses_reused", models.extractor.reused),
                ):
                    ledger.data[name] = ledger.data.get(name, 0) + n
            ledger.save()
        else:
            run(models=models)  # undo an edit a killed change step left in the store
        ingest = ledger.ingest_totals()
        corpus = folder / "2wiki" / "corpus.jsonl"
        original = edit_one_passage(corpus)
        with timed() as change:
            changed = run(models=models)
        edit_one_passage(corpus, restore=original)
        run(models=models)
        status = store.status().as_dict()
    store_paths = [settings.collection_dir]
    tx_logs: dict[str, float] = {}
    if backend == "neo4j" and os.environ.get("NEO4J_RUN_DIR"):  # the whole database
        neo4j_data = Path(os.environ["NEO4J_RUN_DIR"]) / "data"
        store_paths.append(neo4j_data / "databases")
        # Community Neo4j has no db.checkpoint(): until its periodic checkpoint the store
        # files lag, and the changes since are in the transaction logs, reported beside.
        tx_logs["neo4j_transaction_logs_mb"] = _du_mb(neo4j_data / "transactions")
    baseline: dict[str, Any] = {}
    if embed_only is not None:
        scale = embed_only["scale"]
        baseline = {
            "embed_only_seconds": round(embed_only["wall"] * scale, 1),
            "embed_only_cpu_seconds": round(embed_only["cpu"] * scale, 1),
            "embed_only_load_average": embed_only["load"],
            "embed_only_measured_chunks": round(status["chunks"] / scale),
            "ingest_over_embed": round(ingest["wall"] / (embed_only["wall"] * scale), 2),
            "ingest_over_embed_cpu": round(ingest["cpu"] / (embed_only["cpu"] * scale), 2),
        }
    return {
        "chunks": status["chunks"],
        "documents": status["documents"],
        "tokens": status["tokens"],
        "co_occurs": status["edges"].get("CO_OCCURS", 0),
        "related": status["edges"].get("RELATED", 0),
        "ingest_seconds": round(ingest["wall"], 1),
        "ingest_cpu_seconds": round(ingest["cpu"], 1),
        "ingest_load_average": ingest["load"],
        "ingest_segments": len(ledger.data["segments"]),
        # Vectors and NER analyses an earlier run made (bench/vector_cache.py): the ingest
        # then did not pay for them, and its time is not a fresh ingest's.
        "vectors_reused": ledger.data.get("vectors_reused", 0),
        "vectors_encoded": ledger.data.get("vectors_encoded"),
        "analyses_reused": ledger.data.get("analyses_reused", 0),
        "ingest_stage_seconds": ledger.data.get("stage_seconds", {}),
        "ingest_stage_peak_rss_mb": ledger.data.get("stage_peak_rss_mb", {}),
        **baseline,
        "peak_rss_mb": max(_peak_rss_mb(), ledger.data.get("peak_rss_mb", 0.0)),
        "store_mb": _du_mb(*store_paths),
        **tx_logs,
        "one_doc_change_seconds": round(change["wall"], 2),
        "one_doc_change_cpu_seconds": round(change["cpu"], 2),
        "one_doc_change_share": round(change["wall"] / ingest["wall"], 4),
        # Where the change's time went (the edge stage's parts on a large store)
        "one_doc_change_stage_seconds": {k: round(v, 2) for k, v in changed.seconds.items()},
        **queries(size, backend, data_dir, modes),
    }


def embed_only_baseline(
    folder: Path, settings: Any, models: Any, embed_sample: int, model: Any = None
) -> dict:
    """Embed the folder's chunks (or an evenly spaced sample) once with the ingest's model
    (`model`: the embedder behind a vector cache, which must not answer from it)."""
    from bench.suites.ingest import chunk_texts

    documents, texts = chunk_texts(folder, settings, models)
    print(f"{folder.name}: {documents} documents, {len(texts)} chunks; embedding only", flush=True)
    step = max(1, len(texts) // embed_sample) if embed_sample else 1
    sample = texts[::step]
    with timed() as took:
        (model or models.embedder).encode(sample)
    return {"wall": took["wall"], "cpu": took["cpu"], "load": took["load"],
            "scale": len(texts) / len(sample)}  # fmt: skip


def queries(
    size: int, backend: str, data_dir: Path, modes: list[str], serving: str = "in-process"
) -> dict:
    """The 2wiki-dev questions in each mode against the size's stored collection, served as
    `serving` says (retrieval.serving)."""
    from app.engine import open_engine
    from app.eval.metrics import mrr, recall_at_k
    from app.retrieval.config import RetrievalConfig
    from app.settings import Settings
    from ingest.identity import document_id, passage_key

    settings = Settings(
        backend=backend,
        data_dir=data_dir,
        collection=f"bench-scale-{size}",
        retrieval=RetrievalConfig(serving=serving),
    )
    questions = [json.loads(line) for line in (DATASET / "questions.jsonl").open()][:QUESTIONS]
    source = os.path.abspath(data_dir / "corpora" / f"size-{size}" / "2wiki" / "corpus.jsonl")
    engine = open_engine(settings)
    p50: dict[str, float] = {}
    p95: dict[str, float] = {}
    recall: dict[str, float] = {}
    recall2: dict[str, float] = {}
    reciprocal: dict[str, float] = {}
    try:
        engine.require_index()
        with timed() as load:
            for mode in modes:
                retriever = engine.retriever(mode)
                retriever.retrieve(questions[0]["question"])
            engine.settle()  # on Neo4j: the token graph and hop table copies the warm-ups started
        with timed() as asked:
            for mode in modes:
                retriever = engine.retriever(mode)
                latencies, hits, hits2, ranks = [], [], [], []
                for q in questions:
                    gold = [
                        document_id(settings.collection, passage_key(source, g))
                        for g in q["gold_ids"]
                    ]
                    t0 = time.perf_counter()
                    result = retriever.retrieve(q["question"])
                    latencies.append((time.perf_counter() - t0) * 1000)
                    ranking = result.doc_ranking()
                    hits.append(recall_at_k(ranking, gold, 5))
                    hits2.append(recall_at_k(ranking, gold, 2))
                    ranks.append(mrr(ranking, gold))
                p50[mode], p95[mode] = _percentile(latencies, 50), _percentile(latencies, 95)
                recall[mode] = round(100 * sum(hits) / len(hits), 1)
                recall2[mode] = round(100 * sum(hits2) / len(hits2), 1)
                reciprocal[mode] = round(sum(ranks) / len(ranks), 4)
                print(
                    f"size {size} {mode}: R@2 {recall2[mode]} R@5 {recall[mode]} "
                    f"MRR {reciprocal[mode]} p50 {p50[mode]} ms",
                    flush=True,
                )
    finally:
        engine.close()
    return {
        "query_p50_ms": p50,
        "query_p95_ms": p95,
        "recall@5": recall,
        "recall@2": recall2,
        "mrr": reciprocal,
        # In this process, right after the ingest (files in the page cache): the modes'
        # warm-ups. A cold server's start is `serve`'s engine_warm_up_seconds.
        "queries_warm_up_seconds": round(load["wall"], 1),
        "query_load_average": asked["load"],
    }


def _env(size: int, backend: str, data_dir: Path) -> dict[str, str]:
    return {
        "NEORAG_BACKEND": backend,
        "NEORAG_DATA_DIR": str(data_dir.resolve()),
        "NEORAG_COLLECTION": f"bench-scale-{size}",
        # The corpus folder and the pages its links lead to (the unpacked packages).
        "NEORAG_INGEST__ALLOWED_ROOTS": ",".join(
            [str((data_dir / "corpora").resolve()), str(scale_corpus.DEFAULT_CACHE.resolve())]
        ),
    }


def _timed_command(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    run = subprocess.run(argv, env={**os.environ, **env}, capture_output=True, text=True)
    if run.returncode != 0:
        output = (run.stderr + run.stdout)[-3000:]
        raise SystemExit(f"{' '.join(argv)} failed ({run.returncode}): {output}")
    return time.perf_counter() - t0


def change_from_command(size: int, backend: str, data_dir: Path, env: dict[str, str]) -> float:
    """A one-passage edit re-ingested by `neorag ingest FOLDER` as users run it (a new
    process, or a job of the running API when `env` names one), timed end to end; then
    restored the same way."""
    folder = data_dir / "corpora" / f"size-{size}"
    corpus = folder / "2wiki" / "corpus.jsonl"
    argv = [serving.NEORAG, "ingest", str(folder.resolve()), "--json"]
    original = edit_one_passage(corpus)
    try:
        seconds = _timed_command(argv, {**_env(size, backend, data_dir), **env})
    finally:
        edit_one_passage(corpus, restore=original)
        _timed_command(argv, {**_env(size, backend, data_dir), **env})
    return round(seconds, 2)


def change_visible(
    size: int, backend: str, data_dir: Path, served: serving.Served
) -> tuple[float, float | None]:
    """A one-passage edit handed to the running API by `neorag ingest`: the command's
    seconds, and the seconds until the server answers from the version it published (its
    query processes load and warm it in the background meanwhile); then restored."""
    folder = data_dir / "corpora" / f"size-{size}"
    corpus = folder / "2wiki" / "corpus.jsonl"
    argv = [serving.NEORAG, "ingest", str(folder.resolve()), "--json"]
    env = {**_env(size, backend, data_dir), "NEORAG_API__URL": served.url}
    before = served.version()
    original = edit_one_passage(corpus)
    try:
        t0 = time.perf_counter()
        seconds = _timed_command(argv, env)
        shown = served.wait_version_change(before)
    finally:
        edit_one_passage(corpus, restore=original)
        _timed_command(argv, env)
        served.wait_version_change(None, until=before)
    return round(seconds, 2), None if shown is None else round(shown - t0, 2)


def _answered(served: serving.Served, size: int, asked: int) -> dict[str, Any]:
    """The first question and `asked` more over HTTP (retrieval in the default mode), then
    the memory of the server and its query processes."""
    questions = [json.loads(line)["question"] for line in (DATASET / "questions.jsonl").open()]
    t0 = time.perf_counter()
    served.ask(questions[0])
    first_ms = (time.perf_counter() - t0) * 1000
    latencies = []
    for q in questions[1 : asked + 1]:
        t0 = time.perf_counter()
        served.ask(q)
        latencies.append((time.perf_counter() - t0) * 1000)
    memory = served.memory()
    p50 = _percentile(latencies, 50)
    print(
        f"size {size}: ready in {served.ready_seconds} s, first question {first_ms:.0f} ms, "
        f"p50 {p50} ms, {memory}",
        flush=True,
    )
    return {
        "engine_warm_up_seconds": served.ready_seconds,
        "first_query_ms": round(first_ms, 1),
        "served_p50_ms": p50,
        "served_p95_ms": _percentile(latencies, 95),
        "served_questions": len(latencies),
        "first_query_over_p50": round(first_ms / p50, 2) if p50 else None,
        "serving_rss_mb": memory["max_process_rss_mb"],
        "serving_memory": memory,
    }


def serve(size: int, backend: str, data_dir: Path, asked: int = SERVED_QUESTIONS) -> dict:
    """The size's collection served as users serve it: `neorag api` started cold, timed to
    `/readyz` ready, then the first question and `asked` more over HTTP (`_answered`); then
    a one-passage change handed to it by `neorag ingest` (its warm job worker) and one from
    a cold `neorag ingest` process, each timed end to end from the command."""
    env = _env(size, backend, data_dir)
    log = data_dir / f"api-{backend}-{size}.log"
    with serving.api_server(env, log) as served:
        answered = _answered(served, size, asked)
        via_api = {"NEORAG_API__URL": served.url}
        change_first = change_from_command(size, backend, data_dir, via_api)
        change_warm, visible_seconds = change_visible(size, backend, data_dir, served)
    change_cold = change_from_command(size, backend, data_dir, {})
    return {
        **answered,
        # A one-passage change, end to end from `neorag ingest`: handed to the running API
        # (its first job starts the warm worker; the second finds it warm), and in a cold
        # process of its own.
        "one_doc_change_api_first_seconds": change_first,
        "one_doc_change_api_seconds": change_warm,
        "one_doc_change_command_seconds": change_cold,
        # From a change's command to the server answering from the version it published.
        "api_change_visible_seconds": visible_seconds,
    }


def serve_from_database(size: int, data_dir: Path, asked: int = SERVED_QUESTIONS) -> dict:
    """The Neo4j collection under database serving (retrieval.serving=database: no index
    in the query processes): `neorag api` cold to ready, answers and memory as `serve`
    measures them, and the questions' recall and latency per mode it serves."""
    env = {**_env(size, "neo4j", data_dir), "NEORAG_RETRIEVAL__SERVING": "database"}
    log = data_dir / f"api-neo4j-database-{size}.log"
    with serving.api_server(env, log) as served:
        answered = _answered(served, size, asked)
    asked_in_process = queries(size, "neo4j", data_dir, list(DATABASE_MODES), "database")
    return {"database_serving": {**answered, **asked_in_process}}


def plot(out_dir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for path in sorted(out_dir.glob("scale-*.json")):
        report = json.loads(path.read_text())
        sizes = sorted(report["sizes"], key=lambda s: s["chunks"])
        xs = [s["chunks"] for s in sizes]
        backend = report["backend"]
        # Ingest time only where every vector was embedded (not reused from an earlier run)
        fresh = [s for s in sizes if "embed_only_seconds" in s and not s.get("vectors_reused")]
        fx = [s["chunks"] for s in fresh]
        left.plot(fx, [s["ingest_seconds"] for s in fresh], "o-", label=f"{backend} ingest")
        left.plot(
            fx, [s["embed_only_seconds"] for s in fresh], "x--", label=f"{backend} embed only"
        )
        right.plot(xs, [s["query_p50_ms"]["default"] for s in sizes], "o-", label=f"{backend} p50")
        right.plot(xs, [s["recall@5"]["default"] for s in sizes], "s:", label=f"{backend} R@5")
    left.set(xscale="log", yscale="log", xlabel="chunks", ylabel="seconds", title="Ingest")
    right.set(xscale="log", xlabel="chunks", title="Default mode: p50 ms and R@5 %")
    for ax in (left, right):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    target = out_dir / "scale.png"
    fig.savefig(target, dpi=110)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="embedded", choices=["embedded", "neo4j"])
    parser.add_argument("--sizes", default="10000,50000,200000")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument(
        "--embed-sample",
        type=int,
        default=20000,
        help="chunks embedded for the baseline (0: all; -1: none, when the vectors are cached)",
    )
    parser.add_argument("--cache", type=Path, default=scale_corpus.DEFAULT_CACHE)
    parser.add_argument("--data-dir", type=Path, default=REPO / ".neorag" / "bench-scale")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--plot", action="store_true", help="only redraw bench/out/scale.png")
    parser.add_argument(
        "--queries-only",
        action="store_true",
        help="measure the queries again on the stores of an earlier run (sizes back to back)",
    )
    parser.add_argument(
        "--serve-only",
        action="store_true",
        help="only start `neorag api` on the stores of an earlier run: ready time, first and "
        "steady answers, serving memory",
    )
    parser.add_argument(
        "--database-serving-only",
        action="store_true",
        help="only measure database serving (neo4j) on the stores of an earlier run",
    )
    parser.add_argument(
        "--no-vector-cache",
        action="store_true",
        help="embed every chunk even if an earlier run embedded the same text",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue sizes whose run was killed (their ledgers), adding ingest segments",
    )
    parser.add_argument(
        "--remeasure-embed",
        action="store_true",
        help="with --resume: measure the embedding-only baseline again (when the machine was "
        "busy the first time); the ingest segments are kept",
    )
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    out_dir = REPO / "bench" / "out"
    if args.plot:
        print(plot(out_dir))
        return
    modes = args.modes.split(",")
    if args.child:
        if args.queries_only:
            result = queries(args.child, args.backend, args.data_dir, modes)
        else:
            result = measure(
                args.child,
                args.backend,
                args.data_dir,
                args.cache,
                modes,
                args.embed_sample,
                resume=args.resume,
                remeasure_embed=args.remeasure_embed,
                reuse_vectors=not args.no_vector_cache,
            )
        args.result.write_text(json.dumps(result))
        return
    sources = scale_corpus.fetch(args.cache)
    scale_corpus.pages(args.cache)
    out = args.out or out_dir / f"scale-{args.backend}.json"
    report: dict[str, Any] = {"backend": args.backend, "sources": sources, "sizes": []}
    command = " ".join(["python -m bench scale", *sys.argv[1:]])
    commit = current_commit()
    if out.exists():
        report["sizes"] = json.loads(out.read_text()).get("sizes", [])
    for size in (int(s) for s in args.sizes.split(",")):
        earlier = [s for s in report["sizes"] if s.get("target_chunks") == size]
        if args.serve_only or args.database_serving_only:
            if not earlier:
                raise SystemExit(f"{out} has no size {size} to update")
            if args.database_serving_only:
                if args.backend != "neo4j":
                    raise SystemExit("--database-serving-only needs --backend neo4j")
                result = {**earlier[0], **serve_from_database(size, args.data_dir)}
                run = "database_serving_run"
            else:
                result = {**earlier[0], **serve(size, args.backend, args.data_dir)}
                run = "serve_run"
            result[run] = {
                "command": command,
                "commit": commit,
                "date": time.strftime("%Y-%m-%d"),
            }
            save(report, out, result)
            continue
        result_file = args.data_dir / f"result-{args.backend}-{size}.json"
        result_file.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, __file__, "--child", str(size), "--backend", args.backend,
             "--cache", str(args.cache), "--data-dir", str(args.data_dir), "--modes", args.modes,
             "--embed-sample", str(args.embed_sample),
             "--result", str(result_file)]
            + (["--queries-only"] if args.queries_only else [])
            + (["--resume"] if args.resume else [])
            + (["--remeasure-embed"] if args.remeasure_embed else [])
            + (["--no-vector-cache"] if args.no_vector_cache else []),
            check=True,
        )  # fmt: skip
        if args.queries_only and not earlier:
            raise SystemExit(f"--queries-only: {out} has no size {size} to update")
        result = {
            **(earlier[0] if args.queries_only else {}),
            "target_chunks": size,
            **json.loads(result_file.read_text()),
        }
        run = "queries_run" if args.queries_only else "run"  # a size's row may merge two runs
        result[run] = {"command": command, "commit": commit, "date": time.strftime("%Y-%m-%d")}
        if not args.queries_only:
            result.update(serve(size, args.backend, args.data_dir))
            if args.backend == "neo4j":
                result.update(serve_from_database(size, args.data_dir))
        save(report, out, result)
    print(plot(out_dir))


def save(report: dict[str, Any], out: Path, result: dict[str, Any]) -> None:
    """Put `result` in place of its size's row and write the suite's JSON."""
    size = result["target_chunks"]
    report["sizes"] = [s for s in report["sizes"] if s.get("target_chunks") != size]
    report["sizes"].append(result)
    report["sizes"].sort(key=lambda s: s["target_chunks"])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
