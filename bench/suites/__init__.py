"""The benchmark suites `python -m bench SUITE` runs (`make bench SUITE=…`): one module each,
with a `main()` that reads its options from sys.argv. An ablation or a sweep is an option
of a suite (`recall --ablation NAME`, `reader --feature F --weights W`), never a script.
Each suite writes one JSON per dataset × backend into bench/out/, overwritten by a rerun
(git keeps the history); docs/benchmarks.md says which table each one feeds."""

from __future__ import annotations

SUITES: dict[str, tuple[str, str]] = {
    "recall": (
        "bench.suites.recall",
        "neorag eval per dataset × backend, every mode; --ablation NAME",
    ),
    "answers": (
        "bench.suites.answers",
        "the offline reader's answers, and the held-out first-100 runs",
    ),
    "docs": (
        "bench.suites.docs",
        "the documentation corpora: checks each set, then recall and answers",
    ),
    "ingest": ("bench.suites.ingest", "full ingest per backend against embedding alone; --workers"),
    "change": ("bench.suites.change", "re-ingest after a one-document edit, addition and removal"),
    "ppr": ("bench.suites.ppr", "personalised PageRank per query, embedded against GDS"),
    "latency": ("bench.suites.latency", "where a mode's query time goes, step by step"),
    "scale": ("bench.suites.scale", "ingest, change, latency and recall at 10k-200k chunks"),
    "load": ("bench.suites.load", "concurrent clients on the HTTP API, also during a re-ingest"),
    "reader": (
        "bench.suites.reader",
        "the reader: a span weight's sweep; --support: when a short answer is shown",
    ),
    "capacity": ("bench.suites.capacity", "what N chunks need, extrapolated from the scale runs"),
    "cli": (
        "bench.suites.cli",
        "`neorag ask` from the shell, cold and via the API, against --help",
    ),
}
