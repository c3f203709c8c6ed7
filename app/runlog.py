"""The ingest run log `neorag status` shows: one JSON line per run, newest last."""

from __future__ import annotations

import json
import time
from pathlib import Path

from app.settings import Settings
from ingest.report import IngestReport

KEEP = 200


def log_path(settings: Settings) -> Path:
    return settings.collection_dir / "runs.jsonl"


def record_run(settings: Settings, report: IngestReport, error: str | None = None) -> None:
    path = log_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = {
        "finished": time.strftime(
            "%Y-%m-%d %H:%M:%S", time.localtime(report.finished_at or time.time())
        ),
        "path": report.path,
        "backend": report.backend,
        "collection": report.collection,
        "seconds": round((report.finished_at or time.time()) - report.started_at, 2),
        "new": len(report.new),
        "changed": len(report.changed),
        "removed": len(report.removed),
        "unchanged": report.unchanged,
        "skipped": len(report.skipped),
        "chunks": report.chunks,
        "graph_version": report.graph_version,
        "error": error,
    }
    lines = path.read_text().splitlines()[-(KEEP - 1) :] if path.exists() else []
    lines.append(json.dumps(entry))
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n")
    tmp.replace(path)


def recent_runs(settings: Settings, n: int = 10) -> list[dict]:
    path = log_path(settings)
    if not path.exists():
        return []
    runs = []
    for line in path.read_text().splitlines()[-n:]:
        try:
            runs.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return runs
