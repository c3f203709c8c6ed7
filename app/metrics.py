"""Prometheus metrics of the service (requests, latency, ingest runs, chat-model tokens).

`neorag api` runs several worker processes and each ingest job in a process of its own, so
it sets PROMETHEUS_MULTIPROC_DIR (app/api/launch.py, before this module is imported) and
every process writes its samples there; `/metrics` adds them up (`render`). Without that
variable (one process, tests) the default registry is used. Labels carry route templates,
mode names, status codes and collection names only: never a key, a question or a path.
"""

from __future__ import annotations

import os

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)

REQUESTS = Counter(
    "neorag_requests_total",
    "HTTP requests answered, by route template, retrieval mode and status code",
    ["route", "mode", "status"],
)
LATENCY = Histogram(
    "neorag_request_seconds",
    "HTTP request latency, by route template and retrieval mode",
    ["route", "mode"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0),
)
INGEST_RUNS = Counter(
    "neorag_ingest_runs_total",
    "Ingest and delete jobs finished, by collection, kind and outcome",
    ["collection", "kind", "outcome"],
)
INGEST_SECONDS = Histogram(
    "neorag_ingest_seconds",
    "Duration of ingest and delete jobs, by collection and kind",
    ["collection", "kind"],
    buckets=(1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600),
)
TOKENS = Counter(
    "neorag_llm_tokens_total",
    "Chat-model tokens used for answers, by kind (prompt, completion)",
    ["kind"],
)


def count_tokens(usage: dict[str, int]) -> None:
    for kind in ("prompt", "completion"):
        n = usage.get(f"{kind}_tokens", 0)
        if n:
            TOKENS.labels(kind).inc(n)


def render() -> tuple[bytes, str]:
    """The exposition text of every process of this server run."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    from prometheus_client import REGISTRY

    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
