"""The sidebar: what the index holds, the retrieval knobs, and adding documents."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from app.collections import list_collections
from app.engine import Engine
from app.retrieval import mode_names
from app.runlog import recent_runs
from app.service import QueryOptions
from app.settings import Settings
from app.ui.ingest import StreamlitProgress, ingest_path, save_uploads
from app.uploads import UnsupportedUpload
from graph.collections import is_collection_name
from graph.errors import LockedError, NeoragError
from graph.types import EDGE_KINDS
from ingest.loaders import SUPPORTED_EXTENSIONS

REPORT_KEY = "ingest_report"
MAX_TOP_K = 20


@dataclass(frozen=True, slots=True)
class Controls:
    """This session's retrieval choices; applied to a copy of the settings per question."""

    mode: str
    top_k: int
    budget_tokens: int
    hops: int

    def options(self) -> QueryOptions:
        return QueryOptions(self.mode, self.top_k, self.budget_tokens, self.hops)


def backend_label(settings: Settings) -> tuple[str, str]:
    """(which backend, where its state lives)."""
    if settings.backend == "neo4j":
        return "Neo4j", settings.neo4j_uri
    return "embedded (SQLite)", str(settings.data_dir)


def _count(n: int, noun: str) -> str:
    plural = noun if n == 1 else (noun[:-1] + "ies" if noun.endswith("y") else noun + "s")
    return f"**{n:,}** {plural}"


COLLECTION_KEY = "collection"


def collection_picker(settings: Settings) -> Settings:
    """Which collection this session reads and adds to (default: NEORAG_COLLECTION); a new
    name creates the collection on its first ingest. Returns the settings bound to it."""
    try:
        names = [c.name for c in list_collections(settings)]
    except NeoragError:
        names = []
    names = sorted({*names, settings.collection})
    current = st.session_state.get(COLLECTION_KEY, settings.collection)
    choice = st.selectbox(
        "Collection",
        [*names, NEW_COLLECTION] if current in names else [*names, current, NEW_COLLECTION],
        index=(names.index(current) if current in names else len(names)),
        help="Independent corpora in one backend; a question only sees its collection.",
    )
    if choice == NEW_COLLECTION:
        typed = st.text_input("New collection name", placeholder="e.g. team-docs")
        if not typed.strip():
            return settings.for_collection(current)
        if not is_collection_name(typed.strip()):
            st.error("Use 1-64 characters a-z, 0-9, '_' or '-', starting with a letter or digit.")
            return settings.for_collection(current)
        choice = typed.strip()
    st.session_state[COLLECTION_KEY] = choice
    return settings.for_collection(choice)


NEW_COLLECTION = "➕ new collection…"


def status_box(settings: Settings, engine: Engine | None, error: str | None = None) -> None:
    """Counts from `store.status()`, graph version and the last ingest run."""
    with st.container(border=True):
        name, where = backend_label(settings)
        st.markdown(f"**Backend** {name} · collection `{settings.collection}`")
        st.caption(f"`{where}`")
        if engine is None:
            st.caption(
                "Not connected — see the message on the right."
                if error
                else "A new collection: add documents below to create it."
            )
            return
        try:
            status = engine.store.status()
        except NeoragError as exc:
            st.error(str(exc))
            return
        st.markdown(
            f"{_count(status.documents, 'document')} · {_count(status.chunks, 'chunk')}  \n"
            f"{_count(status.tokens, 'token')} · {_count(status.communities, 'community')}"
        )
        typed = ", ".join(
            f"{kind.lower()} {status.edges[kind]:,}"
            for kind in EDGE_KINDS
            if status.edges.get(kind)
        )
        st.caption(
            f"graph version {status.graph_version}" + (f" · chunk edges: {typed}" if typed else "")
        )
        runs = recent_runs(settings, 1)
        if runs:
            last = runs[-1]
            st.caption(
                f"last ingest {last.get('finished', '?')} ({last.get('seconds', 0):.1f}s): "
                f"new {last.get('new', 0)}, changed {last.get('changed', 0)}, "
                f"removed {last.get('removed', 0)}, skipped {last.get('skipped', 0)}"
            )
        else:
            st.caption("no ingest recorded yet")


def controls(settings: Settings) -> Controls:
    cfg = settings.retrieval
    modes = mode_names()
    mode = st.selectbox(
        "Retrieval mode",
        modes,
        index=modes.index(cfg.default_mode) if cfg.default_mode in modes else 0,
        help="`default` is the combination the evaluation measured best; the others are the "
        "individual retrievers and the dense / BM25 / hybrid baselines.",
    )
    top_k = st.slider(
        "Top-k chunks",
        1,
        max(MAX_TOP_K, cfg.top_k),
        cfg.top_k,
        help="How many chunks of context the answer may cite.",
    )
    budget = st.number_input(
        "Token budget",
        min_value=64,
        max_value=16000,
        step=100,
        value=cfg.spectrag.budget_tokens,
        help="retrieval.spectrag.budget_tokens: the context size budgeted modes select within.",
    )
    hops = st.slider(
        "Hops",
        0,
        3,
        cfg.tigrag.hops,
        help="retrieval.tigrag.hops: entity-driven follow-up rounds for multi-hop questions.",
    )
    return Controls(str(mode), int(top_k), int(budget), int(hops))


def add_documents(settings: Settings, expanded: bool) -> None:
    """Upload files or name a path on the server, then ingest with a progress bar per stage.
    The report stays in the session; the page reruns so the status box shows new counts."""
    with st.expander("Add documents", expanded=expanded, icon=":material/upload_file:"):
        with st.form("add-documents", clear_on_submit=True, border=False):
            files = st.file_uploader(
                "Upload files",
                type=[e.lstrip(".") for e in SUPPORTED_EXTENSIONS],
                accept_multiple_files=True,
            )
            path = st.text_input(
                "…or a file or folder on this machine", placeholder="/path/to/docs"
            )
            submitted = st.form_submit_button("Ingest", type="primary", width="stretch")
        if submitted:
            try:
                targets = [save_uploads(settings, files)] if files else []
            except UnsupportedUpload as exc:
                st.error(str(exc))
                return
            if path.strip():
                targets.append(Path(path.strip()).expanduser())
            if not targets:
                st.warning("Choose files to upload or type a path first.")
            elif _ingest(settings, targets):
                st.rerun()
    report = st.session_state.get(REPORT_KEY)
    if report:
        _show_report(report)
        if st.button("Dismiss report", type="tertiary", icon=":material/close:"):
            del st.session_state[REPORT_KEY]
            st.rerun()


def _ingest(settings: Settings, targets: list[Path]) -> bool:
    for target in targets:
        try:
            report = ingest_path(settings, target, StreamlitProgress())
        except LockedError as exc:
            st.warning(str(exc))
            return False
        except NeoragError as exc:
            st.error(str(exc))
            return False
        st.session_state[REPORT_KEY] = report.as_dict()
    return True


def _show_report(report: dict[str, Any]) -> None:
    docs = report["documents"]
    summary = (
        f"new {docs['new']} · changed {docs['changed']} · removed {docs['removed']} · "
        f"unchanged {docs['unchanged']} · skipped {docs['skipped']}"
    )
    seconds = report["finished_at"] - report["started_at"]
    body = (
        f"**Ingested** `{report['path']}`  \n{summary}  \n"
        f"{_count(report['chunks'], 'chunk')} in the index · {seconds:.1f}s"
    )
    (st.success if report["ok"] else st.warning)(body)
    if report.get("nothing_indexed"):
        st.caption(report["nothing_indexed"])
    for skip in report["skipped"]:
        st.caption(f"skipped `{Path(skip['source']).name}`: {skip['reason']}")
    for warning in report["warnings"]:
        st.caption(f"warning: {warning}")
