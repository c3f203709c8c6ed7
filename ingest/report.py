"""What an ingest did, for people (CLI table, UI) and machines (`--json`, run log)."""

from __future__ import annotations

import resource
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, fields
from pathlib import PurePath
from typing import Any, Protocol

from ingest.loaders.types import NOT_PROBLEMS, UNSUPPORTED

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
    """A file (or corpus record) left out: `reason` for people, `kind` (one of
    ingest.loaders.types.SKIP_KINDS) for summaries and machines."""

    source: str
    reason: str
    kind: str


def skip_summary(skips: Iterable[Skip]) -> str:
    """`3 unsupported type (.exe, .xyz), 1 binary, 1 empty`: the skips counted by kind,
    the unsupported ones with their extensions."""
    skips = list(skips)
    counts = Counter(s.kind for s in skips)
    parts = []
    for kind, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        label = KIND_LABELS.get(kind, kind)
        if kind == UNSUPPORTED:
            found = {PurePath(s.source).suffix or "no extension" for s in skips if s.kind == kind}
            types = sorted(found)
            label += f" ({', '.join(types)})"
        parts.append(f"{n} {label}")
    return ", ".join(parts)


KIND_LABELS = {
    "unsupported": "unsupported type",
    "hidden": "hidden",
    "too_large": "too large",
    "binary": "binary",
    "empty": "empty",
    "unreadable": "unreadable",
    "outside_roots": "outside the allowed roots",
    "invalid": "invalid",
    "duplicate": "duplicate id",
    "failed": "failed to index",
}


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
    # The process's peak resident memory (MB) when each stage last finished: the stage
    # where it first rises is the one that needed that much.
    peak_rss_mb: dict[str, float] = field(default_factory=dict)
    graph_version: int = 0
    derived_rebuilt: bool = False
    edge_refresh: str = ""  # "full", "update" or "current" (ingest/edges/maintain.py)
    edge_source: str = ""  # where the unchanged chunks were read: "store" or "workspace"
    analytics_refresh: str = ""  # "full", "patch" or "current" (ingest/analytics_refresh.py)
    indexes: str = ""  # how the search files were refreshed: unchanged, delta, compacted, full
    # Why an ingest left no document under its path in the store ("" when it left some):
    # nothing there, or nothing there neorag could read.
    nothing_indexed: str = ""
    started_at: float = 0.0
    finished_at: float = 0.0

    @property
    def problems(self) -> list[Skip]:
        """The skips that mean a file of a supported type was not indexed; files of other
        types and hidden names are listed, not problems (a notes folder also holds images
        and a .git)."""
        return [s for s in self.skipped if s.kind not in NOT_PROBLEMS]

    @property
    def ok(self) -> bool:
        return not self.problems and not self.nothing_indexed

    def explain_nothing_indexed(self) -> None:
        """Set `nothing_indexed` when no document under the path is in the store after
        this ingest (none new, changed or unchanged)."""
        if self.new or self.changed or self.unchanged:
            self.nothing_indexed = ""
        elif not self.skipped:
            self.nothing_indexed = f"nothing to index under {self.path}: no files"
        else:
            n = len(self.skipped)
            why = self.skipped[0].reason if n == 1 else skip_summary(self.skipped)
            self.nothing_indexed = (
                f"nothing could be indexed under {self.path}: {n} file{'s' * (n != 1)} "
                f"skipped ({why})"
            )

    def add_time(self, stage: str, seconds: float) -> None:
        self.seconds[stage] = round(self.seconds.get(stage, 0.0) + seconds, 3)
        self.peak_rss_mb[stage] = peak_rss_mb()

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> IngestReport:
        """The report `as_dict` described (a job's report, read back by a client)."""
        names = {f.name for f in fields(cls)}
        report = cls(**{k: v for k, v in d.items() if k in names and k != "skipped"})
        report.skipped = [Skip(**s) for s in d.get("skipped", [])]
        return report

    def as_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["documents"] = {
            "new": len(self.new),
            "changed": len(self.changed),
            "removed": len(self.removed),
            "reembedded": len(self.reembedded),
            "unchanged": self.unchanged,
            "skipped": len(self.skipped),
            "skipped_by_kind": dict(Counter(s.kind for s in self.skipped)),
        }
        d["ok"] = self.ok
        return d


def peak_rss_mb() -> float:
    """This process's peak resident set so far (Linux reports ru_maxrss in KB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


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
