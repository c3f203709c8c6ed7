"""Ingest benchmark: full ingest of a dataset on each backend (and with each number of worker
processes), timed per stage, reported as a ratio to the embedding-only time measured in the
same run (these machines are noisy; ratios against a same-run baseline are what we compare).

    python -m bench ingest ../shared/datasets/2wiki-dev --backends embedded,neo4j \
        --out bench/out/ingest-2wiki.json
    python -m bench ingest ../shared/datasets/2wiki-dev --backends embedded \
        --workers 1,2 --out bench/out/ingest-workers-2wiki-dev.json

A child process first measures the embedding-only baseline (loads the models, embeds every
chunk once: same chunker, model and batch size, one process); then, for each backend and
worker count, a child runs the real ingest into an empty store, models loaded inside it as
a user's ingest loads them (the `models` stage: in the writer with one worker, in each
worker otherwise). While a child runs this process samples the resident memory of its whole
process tree (writer and workers, every 0.2 s) and the load average, and afterwards takes
the CPU seconds (user + system) of the child and its workers: on a shared machine the wall
time says little, the CPU time what the work cost. The Neo4j backend uses
NEO4J_URI / NEO4J_PASSWORD (`make bench` starts a server and sets them).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.json_out import emit

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
PROC = Path("/proc")


def chunk_texts(source: Path, settings, models) -> tuple[int, list[str]]:
    """The documents found under `source` (a file or folder) and their chunks' embedding texts,
    exactly as the ingest would embed them."""
    from ingest.chunkers import chunk_document
    from ingest.loaders import LoadedDocument, scan
    from ingest.runner import embedding_text

    docs = [
        d for d in scan(source, settings.ingest.max_file_bytes) if isinstance(d, LoadedDocument)
    ]
    texts = [
        embedding_text(d.title, p.section_path, p.text)
        for d in docs
        for p in chunk_document(d, settings.ingest.chunking, models.count_tokens)
    ]
    return len(docs), texts


def baseline(dataset: Path) -> dict[str, object]:
    from app.settings import Settings
    from ingest.models import IngestModels

    settings = Settings()
    models = IngestModels(settings.ingest.models, settings.ingest.device)
    models.embedder.encode(["warm up"])
    documents, texts = chunk_texts(dataset / "corpus.jsonl", settings, models)
    t0 = time.perf_counter()
    models.embedder.encode(texts)
    return {
        "documents": documents,
        "chunks": len(texts),
        "embedding_only_seconds": round(time.perf_counter() - t0, 2),
        "device": models.embedder.device,
    }


def ingest(dataset: Path, backend: str, data_dir: Path, workers: int | None) -> dict[str, object]:
    from app.services import index_dir, open_store
    from app.settings import Settings
    from ingest.runner import run_ingest

    settings = Settings(backend=backend, data_dir=data_dir)
    if workers is not None:
        settings.ingest = settings.ingest.model_copy(update={"workers": workers})
    with open_store(settings) as store:
        store.clear()
        t0 = time.perf_counter()
        report = run_ingest(
            dataset / "corpus.jsonl",
            store,
            settings.ingest,
            settings.algorithms,
            index_dir(settings),
        )
        total = time.perf_counter() - t0
        status = store.status().as_dict()
    return {
        "backend": backend,
        "workers": report.workers,
        "batch_documents": settings.ingest.batch_documents,
        "ingest_seconds": round(total, 2),
        "stage_seconds": report.seconds,
        "writer_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "status": status,
        "modularity": report.modularity,
    }


def _rss_kb(pid: int) -> int:
    try:
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def _tree(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except (FileNotFoundError, ProcessLookupError):
                continue
            parents[int(entry.name)] = int(stat[stat.rindex(")") + 2 :].split()[1])
    found, frontier = [root], [root]
    while frontier:
        parent = frontier.pop()
        children = [p for p, pp in parents.items() if pp == parent]
        found += children
        frontier += children
    return found


class TreeSampler(threading.Thread):
    """Peak of the summed RSS of a process and its descendants, and the 1-minute load
    average, sampled while the process runs."""

    def __init__(self, pid: int, interval: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_kb = 0
        self.peak_by_pid: dict[int, int] = {}
        self.load: list[float] = []
        self.stop = threading.Event()

    def run(self) -> None:
        last_load = 0.0
        while not self.stop.is_set():
            sizes = {p: _rss_kb(p) for p in _tree(self.pid)}
            self.peak_kb = max(self.peak_kb, sum(sizes.values()))
            for p, kb in sizes.items():
                self.peak_by_pid[p] = max(self.peak_by_pid.get(p, 0), kb)
            if time.monotonic() - last_load >= 1.0:
                self.load.append(os.getloadavg()[0])
                last_load = time.monotonic()
            self.stop.wait(self.interval)

    def summary(self) -> dict[str, object]:
        others = sorted((kb for p, kb in self.peak_by_pid.items() if p != self.pid), reverse=True)
        load = self.load or [os.getloadavg()[0]]
        return {
            "peak_tree_rss_mb": round(self.peak_kb / 1024, 1),
            "peak_rss_mb_per_child": [round(kb / 1024, 1) for kb in others if kb > 50 * 1024],
            "load_average_1m": {
                "min": round(min(load), 2),
                "mean": round(statistics.fmean(load), 2),
                "max": round(max(load), 2),
            },
        }


def run_child(args: list[str], what: str) -> dict[str, object]:
    proc = subprocess.Popen(
        [sys.executable, __file__, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    sampler = TreeSampler(proc.pid)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    sampler.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    sampler.stop.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        print(err[-3000:], file=sys.stderr)
        raise SystemExit(f"[bench] {what} failed")
    result = json.loads(out.strip().splitlines()[-1])
    result.update(sampler.summary())
    # The child and every process it waited for (its workers): user + system CPU time.
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    result.update(process_cpu_seconds=round(cpu, 1), process_wall_seconds=round(wall, 1))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--backends", default="embedded,neo4j")
    parser.add_argument(
        "--workers", help="comma-separated worker counts, e.g. 1,2 (default: the setting)"
    )
    parser.add_argument("--out", type=Path)
    parser.add_argument("--baseline", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--n-workers", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    dataset = args.dataset.resolve()
    if args.baseline:
        print(json.dumps(baseline(dataset)))
        return
    if args.worker:
        print(json.dumps(ingest(dataset, args.worker, args.data_dir, args.n_workers)))
        return
    counts: list[int | None] = (
        [int(w) for w in args.workers.split(",") if w.strip()] if args.workers else [None]
    )
    print("[bench] embedding-only baseline ...", file=sys.stderr)
    base = run_child([str(dataset), "--baseline"], "baseline")
    results = []
    for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
        for workers in counts:
            label = f"{backend}, workers={workers or 'default'}"
            print(f"[bench] {label}: ingesting {dataset} ...", file=sys.stderr)
            with tempfile.TemporaryDirectory(prefix=f"neorag-bench-{backend}-") as tmp:
                extra = ["--n-workers", str(workers)] if workers is not None else []
                result = run_child(
                    [str(dataset), "--worker", backend, "--data-dir", tmp, *extra], label
                )
            result.update(
                documents=base["documents"],
                chunks=base["chunks"],
                device=base["device"],
                embedding_only_seconds=base["embedding_only_seconds"],
                ratio=round(result["ingest_seconds"] / base["embedding_only_seconds"], 3),
            )
            results.append(result)
            print(
                f"[bench] {label}: ingest {result['ingest_seconds']}s "
                f"(CPU {result['process_cpu_seconds']}s), embedding-only "
                f"{result['embedding_only_seconds']}s, ratio {result['ratio']}, peak RSS "
                f"(process tree) {result['peak_tree_rss_mb']} MB, load average "
                f"{result['load_average_1m']['mean']}",
                file=sys.stderr,
            )
    report = {
        "dataset": args.dataset.name,
        "machine": f"{os.cpu_count()} cores",
        "command": " ".join(["python", "-m", "bench", "ingest", *sys.argv[1:]]),
        "baseline": base,
        "results": results,
    }
    emit(report, args.out)


if __name__ == "__main__":
    main()
