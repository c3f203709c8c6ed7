"""Load benchmark of `neorag api`: closed-loop clients over real HTTP, then the same while a
re-ingest of a changed corpus runs.

    nice -n 10 python -m bench load --backend embedded
    nice -n 10 python -m bench load --backend neo4j     # NEO4J_URI / NEO4J_PASSWORD

1. The dataset's corpus (default: 2wiki-dev) is copied into a work folder and indexed into
   collection `load` (incremental: a second run only re-does what changed).
2. `neorag api` starts with its default query processes over that data dir.
3. For each concurrency level (1, 4, 16), that many clients each send `POST /v1/ask`
   (extractive answers, the default mode) with the dataset's questions in turn, a new
   request as soon as the last one is answered, for `--seconds` (60): throughput,
   p50/p95/p99 latency, errors.
4. A copy of the corpus with every 20th passage changed is ingested through `POST /v1/ingest`
   (a background job) while `--reingest-clients` clients keep asking; every response's
   `X-Neorag-Index-Version` must be the version published before the job or the one it
   publishes, and each response carries one version (a request is pinned to one index
   snapshot).

Writes bench/out/load-<backend>.json. Latencies on a shared machine are indicative.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
NEORAG = str(Path(sys.executable).with_name("neorag"))
COLLECTION = "load"


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    k = (len(ordered) - 1) * q / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


class Recorder:
    """Latencies, errors and index versions of one level, shared by its client threads."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.errors: Counter[str] = Counter()
        self.versions: Counter[str] = Counter()
        self.lock = threading.Lock()

    def add(self, seconds: float, error: str | None, version: str) -> None:
        with self.lock:
            if error:
                self.errors[error] += 1
            else:
                self.latencies.append(seconds)
                self.versions[version] += 1

    def summary(self, elapsed: float) -> dict[str, Any]:
        ms = [1000 * s for s in self.latencies]
        return {
            "requests": len(ms) + sum(self.errors.values()),
            "ok": len(ms),
            "errors": sum(self.errors.values()),
            "error_kinds": dict(self.errors),
            "seconds": round(elapsed, 2),
            "throughput_rps": round(len(ms) / elapsed, 2),
            "p50_ms": _round(percentile(ms, 50)),
            "p95_ms": _round(percentile(ms, 95)),
            "p99_ms": _round(percentile(ms, 99)),
            "index_versions": dict(self.versions),
        }


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


def client_loop(
    url: str, questions: list[str], start: int, stop: threading.Event, rec: Recorder
) -> None:
    n = start
    with httpx.Client(base_url=url, timeout=120) as http:
        while not stop.is_set():
            question = questions[n % len(questions)]
            n += 1
            t0 = time.perf_counter()
            try:
                r = http.post("/v1/ask", json={"question": question})
                error = None if r.status_code == 200 else f"http {r.status_code}"
                version = r.headers.get("X-Neorag-Index-Version", "")
                if error is None and r.json()["index_version"] != version:
                    error = "header and body name different index versions"
            except httpx.HTTPError as exc:
                error, version = type(exc).__name__, ""
            rec.add(time.perf_counter() - t0, error, version)


def run_level(
    url: str, questions: list[str], clients: int, seconds: float, until: Any = None
) -> dict[str, Any]:
    """`clients` closed-loop clients for `seconds` (or until `until()` is true, at most
    `seconds`)."""
    rec, stop = Recorder(), threading.Event()
    threads = [
        threading.Thread(target=client_loop, args=(url, questions, i * 17, stop, rec), daemon=True)
        for i in range(clients)
    ]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    while time.perf_counter() - t0 < seconds:
        if until is not None and until():
            break
        time.sleep(1.0)
    stop.set()
    for t in threads:
        t.join(180)
    return {"concurrency": clients, **rec.summary(time.perf_counter() - t0)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(url: str, server: subprocess.Popen[bytes], timeout: float = 900) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit("neorag api exited; see its log")
        try:
            r = httpx.get(f"{url}/readyz", timeout=30)
            if r.status_code == 200:
                return dict(r.json())
        except httpx.HTTPError:
            pass
        time.sleep(1)
    raise SystemExit("neorag api never became ready")


def changed_corpus(original: Path, target: Path, every: int = 20) -> int:
    """Write `original` to `target` with every `every`-th passage's text changed."""
    lines, changed = [], 0
    for n, line in enumerate(original.read_text().splitlines()):
        row = json.loads(line)
        if n % every == 0:
            row["text"] += " (Revised entry.)"
            changed += 1
        lines.append(json.dumps(row, ensure_ascii=False))
    target.write_text("\n".join(lines) + "\n")
    return changed


def ingest_initial(env: dict[str, str], corpus: Path, backend: str) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [NEORAG, "ingest", str(corpus), "-b", backend, "-c", COLLECTION], env=env, check=True
    )
    return time.perf_counter() - t0


def machine() -> dict[str, Any]:
    load = os.getloadavg()
    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "load_average_at_start": [round(x, 2) for x in load],
        "shared": load[0] > 1.5,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", choices=("embedded", "neo4j"), required=True)
    ap.add_argument("--dataset", type=Path, default=REPO.parent / "shared/datasets/2wiki-dev")
    ap.add_argument("--work", type=Path, default=Path.home() / ".cache/neorag/load-bench")
    ap.add_argument("--levels", default="1,4,16")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--reingest-clients", type=int, default=4)
    ap.add_argument("--workers", type=int, default=None, help="query processes (default: setting)")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    if not args.dataset.is_dir():
        args.dataset = Path("/work/shared/datasets") / args.dataset.name
    out = args.out or REPO / "bench" / "out" / f"load-{args.backend}.json"
    questions = [
        json.loads(line)["question"]
        for line in (args.dataset / "questions.jsonl").read_text().splitlines()
        if line.strip()
    ]
    corpus = args.work / "corpus" / "corpus.jsonl"
    corpus.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(args.dataset / "corpus.jsonl", corpus)
    corpus.chmod(0o644)
    env = {
        **os.environ,
        "NEORAG_BACKEND": args.backend,
        "NEORAG_DATA_DIR": str(args.work / "data"),
        "NEORAG_COLLECTION": COLLECTION,
        "NEORAG_INGEST__ALLOWED_ROOTS": str(args.work / "corpus"),
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    started_at = machine()
    print(f"indexing {corpus} ({args.backend}) ...", flush=True)
    initial_seconds = ingest_initial(env, corpus, args.backend)

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [NEORAG, "api", "--port", str(port)]
    if args.workers:
        command += ["--workers", str(args.workers)]
    log_path = args.work / f"api-{args.backend}.log"
    with open(log_path, "wb") as log:
        server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        ready = wait_ready(url, server)
        for _ in range(2 * (args.workers or 2)):  # every query process warm before timing
            httpx.post(f"{url}/v1/ask", json={"question": questions[0]}, timeout=300)
        levels = []
        for clients in (int(x) for x in args.levels.split(",")):
            print(f"concurrency {clients}: {args.seconds:.0f} s ...", flush=True)
            levels.append(run_level(url, questions, clients, args.seconds))
            print(json.dumps(levels[-1]), flush=True)

        changed = changed_corpus(args.dataset / "corpus.jsonl", corpus)
        before = httpx.post(f"{url}/v1/retrieve", json={"question": questions[0]}, timeout=300)
        version_before = before.headers["X-Neorag-Index-Version"]
        job = httpx.post(f"{url}/v1/ingest", json={"path": str(corpus)}, timeout=60)
        job.raise_for_status()
        job_id = job.json()["job"]["id"]
        state: dict[str, Any] = {}

        def finished() -> bool:
            state.update(httpx.get(f"{url}/v1/jobs/{job_id}", timeout=60).json())
            return state["state"] in ("succeeded", "failed")

        print(f"re-ingest of {changed} changed passages while clients ask ...", flush=True)
        during = run_level(url, questions, args.reingest_clients, 1800, until=finished)
        while not finished():
            time.sleep(1)
        after = httpx.post(f"{url}/v1/retrieve", json={"question": questions[0]}, timeout=300)
        version_after = after.headers["X-Neorag-Index-Version"]
        versions = set(during["index_versions"])
        reingest = {
            **during,
            "changed_passages": changed,
            "job_state": state["state"],
            "job_error": state.get("error"),
            "job_seconds": round((state["finished"] or 0) - (state["started"] or 0), 1),
            "version_before": version_before,
            "version_after": version_after,
            "only_published_versions": versions <= {version_before, version_after},
        }
        print(json.dumps(reingest), flush=True)
    finally:
        server.terminate()
        server.wait(60)

    by = {lv["concurrency"]: lv for lv in levels}
    goals: dict[str, Any] = {
        "zero_errors": all(lv["errors"] == 0 for lv in [*levels, reingest]),
        "one_published_version_per_response": reingest["only_published_versions"],
    }
    if 1 in by and 4 in by and by[1]["throughput_rps"]:
        ratio = by[4]["throughput_rps"] / by[1]["throughput_rps"]
        goals["speedup_4_over_1"] = round(ratio, 2)
        goals["speedup_ok"] = ratio >= 1.6
    if 16 in by:
        goals["p95_at_16_ms"] = by[16]["p95_ms"]
        # The issue sets this goal for the embedded backend only: None elsewhere.
        met = (by[16]["p95_ms"] or 1e9) <= 1000
        goals["p95_at_16_ok"] = met if args.backend == "embedded" else None
    result = {
        "backend": args.backend,
        "dataset": args.dataset.name,
        "questions": len(questions),
        "route": "POST /v1/ask (extractive answer, default mode)",
        "workers": args.workers or ready.get("workers") or "default",
        "chunks": ready.get("chunks"),
        "index_seconds_this_run": round(initial_seconds, 1),  # ~0 when already indexed
        "seconds_per_level": args.seconds,
        "command": " ".join(["python", "-m", "bench", "load", *sys.argv[1:]]),
        "machine": {**started_at, "load_average_at_end": [round(x, 2) for x in os.getloadavg()]},
        "levels": levels,
        "during_reingest": reingest,
        "goals": goals,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
