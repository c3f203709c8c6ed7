"""What an ingest did, for people (CLI table, UI) and machines (`--json`, run log)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Protocol

CHUNKS_EMBEDDED = "chunks embedded"  # a stage counted in chunks, known only batch by batch


class Progress(Protocol):
    """Progress sink: the CLI draws rich bars, the UI a st.progress, tests nothing."""

    def start(self, stage: str, total: int | None) -> None: ...

    def advance(self, stage: str, n: int = 1) -> None: ...

    def finish(self, stage: str) -> None: ...


class NoProgress:
    def start(self, stage: str, total: int | None) -> None:
        pass

    def advance(self, stage: str, n: int = 1) -> None:
        pass

    def finish(self, stage: str) -> None:
        pass


@dataclass(slots=True)
class Skip:
    source: str
    reason: str


@dataclass(slots=True)
class IngestReport:
    path: str
    backend: str
    collection: str = ""
    new: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    reembedded: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[Skip] = field(default_factory=list)
    chunks_written: int = 0
    workers: int = 1
    chunks: int = 0
    tokens: int = 0
    edges: dict[str, int] = field(default_factory=dict)
    communities: int = 0
    modularity: float | None = None
    warnings: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    graph_version: int = 0
    derived_rebuilt: bool = False
    edge_refresh: str = ""  # "full", "update" or "current" (ingest/edges/maintain.py)
    edge_source: str = ""  # where the unchanged chunks were read: "store" or "workspace"
    analytics_refresh: str = ""  # "full", "patch" or "current" (ingest/analytics_refresh.py)
    indexes: str = ""  # how the search files were refreshed: unchanged, delta, compacted, full
    started_at: float = 0.0
    finished_at: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.skipped

    def add_time(self, stage: str, seconds: float) -> None:
        self.seconds[stage] = round(self.seconds.get(stage, 0.0) + seconds, 3)

    def as_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["documents"] = {
            "new": len(self.new),
            "changed": len(self.changed),
            "removed": len(self.removed),
            "reembedded": len(self.reembedded),
            "unchanged": self.unchanged,
            "skipped": len(self.skipped),
        }
        d["ok"] = self.ok
        return d


def timed(report: IngestReport, stage: str, clock: Callable[[], float]) -> _Timer:
    return _Timer(report, stage, clock)


class _Timer:
    def __init__(self, report: IngestReport, stage: str, clock: Callable[[], float]) -> None:
        self.report, self.stage, self.clock = report, stage, clock

    def __enter__(self) -> _Timer:
        self.t0 = self.clock()
        return self

    def __exit__(self, *exc: object) -> None:
        self.report.add_time(self.stage, self.clock() - self.t0)
