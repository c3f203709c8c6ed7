"""The neorag chat: ask questions of the indexed documents and see why each answer came out.

Run with `make run` (which sets NEORAG_DATA_DIR) or
`streamlit run streamlit_app.py`; every setting comes from `NEORAG_*` / `.env` via
`app.settings.Settings`. A backend that cannot be reached (Neo4j down, wrong password) is
reported as one line while the sidebar still works, never as a traceback.
"""

from __future__ import annotations

import contextlib
import threading

import streamlit as st

from app.engine import Engine
from app.engine import open_engine as open_serving_engine
from app.service import warm_engine
from app.settings import Settings, SettingsError, load_settings
from app.ui.chat import EMPTY_INDEX, render_turn, respond
from app.ui.sidebar import add_documents, backend_label, collection_picker, controls, status_box
from graph.errors import NeoragError, UnknownCollection

MESSAGES = "messages"


@st.cache_resource(show_spinner="Opening the index…", max_entries=8)
def _engine(
    backend: str, data_dir: str, neo4j_uri: str, collection: str, _settings: Settings
) -> Engine:
    """One Engine per process, store and collection: the FAISS/BM25 files and the
    embedding model load once and every session shares them (each question runs on its own
    `Engine.snapshot()`, and the tokenizer is locked, so concurrent sessions are safe). A
    failure is not cached, so the next rerun retries (Neo4j may have come up meanwhile).
    What the first question would load (the default mode's graphs, the reader's model) is
    loaded on a thread meanwhile, so the page is usable at once and the first answer is not
    the slow one."""
    engine = open_serving_engine(_settings)
    threading.Thread(
        target=_warm, args=(engine, _settings), name="chat-warm-up", daemon=True
    ).start()
    return engine


def _warm(engine: Engine, settings: Settings) -> None:
    # A failure here is the first question's to report, with its context.
    with contextlib.suppress(Exception):
        warm_engine(engine.snapshot(), settings)


def open_engine(settings: Settings) -> tuple[Engine | None, str | None]:
    try:
        engine = _engine(
            settings.backend,
            str(settings.data_dir.resolve()),
            settings.neo4j_uri,
            settings.collection,
            settings,
        )
        engine.refresh(background=True)  # pick up a re-ingest by another process, once warm
    except UnknownCollection:
        return None, None  # a new collection: it exists after its first ingest
    except NeoragError as exc:
        return None, str(exc)
    return engine, None


def settings_or_error() -> Settings | None:
    """Settings from the environment; a bad value is shown as the variable to fix."""
    try:
        return load_settings()
    except SettingsError as exc:
        st.error(str(exc))
        return None


def is_empty(engine: Engine | None) -> bool:
    return engine is not None and len(engine.dense) == 0


def main() -> None:
    st.set_page_config(page_title="neorag", page_icon=":material/hub:", layout="centered")
    settings = settings_or_error()
    if settings is None:
        return
    with st.sidebar:
        st.title("neorag")
        st.caption("Graph RAG without an LLM at index time.")
        settings = collection_picker(settings)
    engine, error = open_engine(settings)
    with st.sidebar:
        status_box(settings, engine, error)
        st.subheader("Retrieval")
        knobs = controls(settings)
        add_documents(settings, expanded=engine is None or is_empty(engine))
        if st.button("Clear conversation", icon=":material/delete_sweep:", width="stretch"):
            st.session_state[MESSAGES] = []

    st.header("Ask your documents")
    name, _ = backend_label(settings)
    st.caption(f"{name} backend · mode `{knobs.mode}` · top-k {knobs.top_k} · hops {knobs.hops}")
    if error:
        st.error(error)
    elif engine is None or is_empty(engine):
        st.info(EMPTY_INDEX, icon=":material/inbox:")

    messages: list[dict] = st.session_state.setdefault(MESSAGES, [])
    if not messages and engine is not None and not is_empty(engine):
        st.caption(
            "Ask a question below. Answers cite their sources as [n]: open a source to read "
            "the passage, or the trace and subgraph under an answer to see how it was found."
        )
    for message in messages:
        with st.chat_message(message["role"]):
            render_turn(message)

    placeholder = "Ask a question…" if engine else "Not connected to the index"
    question = st.chat_input(placeholder, disabled=engine is None)
    if not question or engine is None:
        return
    turn = {"role": "user", "text": question}
    messages.append(turn)
    with st.chat_message("user"):
        render_turn(turn)
    with st.chat_message("assistant"):
        reply = respond(engine, settings, question, knobs.options())
        render_turn(reply)
    messages.append(reply)


main()
