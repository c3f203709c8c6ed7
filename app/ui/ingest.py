"""Adding documents from the chat: save uploads, then run the same locked, logged ingest as
`neorag ingest`, drawing one Streamlit progress bar per stage."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from app.ingest_service import ingest_once
from app.settings import Settings
from app.uploads import check_uploads, save_upload
from ingest.report import IngestReport


class Upload(Protocol):
    """What we read of Streamlit's UploadedFile (and what tests can fake)."""

    name: str

    def getvalue(self) -> bytes: ...


def save_uploads(settings: Settings, files: Iterable[Upload]) -> Path:
    """Keep the files under the collection's uploads folder (`app.uploads`) and return that
    folder: ingesting the whole folder keeps earlier uploads in the index. Raises
    UnsupportedUpload, keeping none, if one is of a type neorag does not read."""
    contents = [(f.name, f.getvalue()) for f in files]
    check_uploads(contents)
    for name, data in contents:
        save_upload(settings, name, data)
    return settings.uploads_dir


@dataclass(slots=True)
class _Bar:
    widget: DeltaGenerator
    total: int | None
    started: float
    done: int = 0


class StreamlitProgress:
    """The ingest `Progress` protocol as one `st.progress` bar per stage. Stages of unknown
    length show a running count and fill when they finish."""

    def __init__(self) -> None:
        self._area = st.container()
        self._bars: dict[str, _Bar] = {}

    def start(self, stage: str, total: int | None) -> None:
        widget = self._area.progress(0.0, text=f"{stage}…")
        self._bars[stage] = _Bar(widget, total, time.perf_counter())

    def advance(self, stage: str, n: int = 1) -> None:
        if stage not in self._bars:
            self.start(stage, None)
        bar = self._bars[stage]
        bar.done += n
        if bar.total:
            fraction, text = min(bar.done / bar.total, 1.0), f"{stage}: {bar.done}/{bar.total}"
        else:
            fraction, text = 0.0, f"{stage}: {bar.done}…"
        bar.widget.progress(fraction, text=text)

    def finish(self, stage: str) -> None:
        bar = self._bars.get(stage)
        if bar is not None:
            bar.widget.progress(1.0, text=f"{stage} ✓ {time.perf_counter() - bar.started:.1f}s")


def ingest_path(settings: Settings, path: Path, progress: StreamlitProgress) -> IngestReport:
    """`ingest_once` with Streamlit bars: the same lock and run log as the CLI, and only
    paths under the allowed ingest roots (the chat has no login of its own)."""
    return ingest_once(settings, path, progress=progress, bounded=True)
