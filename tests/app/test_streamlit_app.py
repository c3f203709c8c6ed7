"""The chat UI through Streamlit's AppTest: the real script, a real (tiny) embedded index,
no browser. Covers answering with citations, the status box, the sidebar knobs, adding
documents (and the ingest lock), streaming from a chat model, and every clear-error path."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app.ingest_service import ingest_lock
from app.retrieval import mode_names
from app.runlog import record_run
from app.service import subgraph_cypher
from app.services import index_dir, store_path
from app.settings import Settings
from app.ui.chat import EMPTY_INDEX
from app.ui.ingest import save_uploads
from app.ui.subgraph import Node, subgraph_dot
from graph.embedded.store import EmbeddedStore
from graph.types import ChunkEdge
from ingest.runner import run_ingest
from tests.app.fake_openai import fake_chat_server

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "streamlit_app.py")
QUESTION = "Which river flows from Mount Kell into the Amber Sea?"

# Four short pages with headings and links, so the chunk graph gets typed edges.
DOCS = {
    "silverrun.md": (
        "# Silverrun River\n\n## Course\n\nThe Silverrun river flows from "
        "[Mount Kell](mount-kell.md) into the [Amber Sea](amber-sea.md). Its water is cold "
        "and clear all year.\n\n## Fishing\n\nThe Ferrymen's Guild keeps the fishing rights "
        "on the lower Silverrun and sells salted trout in Port Veldt.\n"
    ),
    "mount-kell.md": (
        "# Mount Kell\n\nMount Kell is the highest peak of the Grey Range, 3,112 metres "
        "high. Snowmelt from its glacier feeds the Silverrun river.\n\n## Climbing\n\n"
        "Ottilie Brand made the first ascent of Mount Kell in 1911.\n"
    ),
    "amber-sea.md": (
        "# Amber Sea\n\nThe Amber Sea is a shallow inland sea named for the amber found on "
        "its beaches. Port Veldt is its largest harbour.\n\n## Trade\n\nAmber from the "
        "beaches is traded through Port Veldt by the [Ferrymen's Guild](guild.md).\n"
    ),
    "guild.md": (
        "# Ferrymen's Guild\n\nThe Ferrymen's Guild was founded in Port Veldt in 1702. It "
        "runs the ferries across the Amber Sea and keeps the fishing rights on the "
        "Silverrun.\n"
    ),
}


@dataclass(frozen=True, slots=True)
class TinyIndex:
    data_dir: Path
    chunks: int
    documents: int


def write_docs(folder: Path, docs: dict[str, str] = DOCS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in docs.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def build_index(root: Path) -> TinyIndex:
    """Ingest DOCS into an embedded store under `root/data` (also used by test_browser)."""
    settings = Settings(backend="embedded", data_dir=root / "data")
    docs = write_docs(root / "docs")
    with EmbeddedStore(store_path(settings)) as store:
        report = run_ingest(docs, store, settings.ingest, settings.algorithms, index_dir(settings))
        status = store.status()
    record_run(settings, report)
    assert report.ok and status.chunks > 0
    return TinyIndex(settings.data_dir, status.chunks, status.documents)


@pytest.fixture(scope="module")
def tiny_index(tmp_path_factory: pytest.TempPathFactory) -> TinyIndex:
    return build_index(tmp_path_factory.mktemp("ui-index"))


def app_for(monkeypatch: pytest.MonkeyPatch, data_dir: Path, **env: str) -> AppTest:
    """The app as `make run` starts it: settings only from the environment. Every short
    answer is shown: these tests check how the chat lays one out, not whether the
    calibration trusts a three-passage toy corpus (the process's engines, opened once per
    collection, keep the threshold they were opened with)."""
    monkeypatch.setenv("NEORAG_DATA_DIR", str(data_dir))
    monkeypatch.setenv("NEORAG_ANSWER_MIN_CONFIDENCE", "0")
    monkeypatch.setenv("NEORAG_BACKEND", "embedded")
    for name in ("NEORAG_LLM__PROVIDER", "NEORAG_NEO4J_URI", "NEORAG_RETRIEVAL__TOP_K"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return AppTest.from_file(APP, default_timeout=120).run()


def mode_box(at: AppTest):
    return next(s for s in at.sidebar.selectbox if s.label == "Retrieval mode")


def assistant_text(at: AppTest) -> str:
    last = [m for m in at.chat_message if m.name == "assistant"][-1]
    return "\n".join(m.value for m in last.markdown)


def ask(at: AppTest, question: str = QUESTION) -> AppTest:
    at.chat_input[0].set_value(question).run()
    assert not at.exception, at.exception
    return at


def test_answers_with_citations_trace_and_subgraph(
    monkeypatch: pytest.MonkeyPatch, tiny_index: TinyIndex
) -> None:
    at = app_for(monkeypatch, tiny_index.data_dir)
    assert not at.exception
    status = "\n".join(m.value for m in at.sidebar.markdown)
    assert f"**{tiny_index.chunks}** chunks" in status
    assert f"**{tiny_index.documents}** documents" in status  # both > 1 here
    assert any("last ingest" in c.value for c in at.sidebar.caption)

    ask(at)
    assert [m.name for m in at.chat_message] == ["user", "assistant"]
    assert "[1]" in assistant_text(at)
    labels = [e.label for e in at.expander]
    assert any(label.startswith("**[1]**") for label in labels)
    assert "Evidence & trace" in labels and "Retrieved subgraph" in labels
    assert "Silverrun" in assistant_text(at)
    cypher = [c.value for c in at.code if ":param ids =>" in c.value]
    assert cypher and "MATCH (a:Chunk)-[r]-(b:Chunk)" in cypher[0]
    assert at.get("graphviz_chart"), "the subgraph picture is drawn"

    # the history survives a rerun and a second question appends to it
    ask(at, "Who made the first ascent of Mount Kell?")
    assert [m.name for m in at.chat_message] == ["user", "assistant"] * 2
    assert "Ottilie Brand" in assistant_text(at)


def test_short_answer_comes_first(monkeypatch: pytest.MonkeyPatch, tiny_index: TinyIndex) -> None:
    """Without a chat model the reader's short answer leads, bold, with its citation; the
    cited evidence sentences follow, each once."""
    at = ask(app_for(monkeypatch, tiny_index.data_dir), "Who made the first ascent of Mount Kell?")
    last = [m for m in at.chat_message if m.name == "assistant"][-1]
    first, evidence = last.markdown[0].value, last.markdown[1].value
    assert first.startswith("**Ottilie Brand**") and "[" in first
    assert "first ascent of Mount Kell in 1911" in evidence
    sentences = [s.split("]**]")[-1].strip() for s in evidence.split(":blue-background[")]
    sentences = [s for s in sentences if s]
    assert len(sentences) == len(set(sentences))


def test_sidebar_knobs_apply_per_question(
    monkeypatch: pytest.MonkeyPatch, tiny_index: TinyIndex
) -> None:
    at = app_for(monkeypatch, tiny_index.data_dir)
    mode_box(at).set_value("tigrag")  # the hops knob is TIGRAG's entity hops
    top_k = next(s for s in at.sidebar.slider if s.label == "Top-k chunks")
    hops = next(s for s in at.sidebar.slider if s.label == "Hops")
    top_k.set_value(2)
    hops.set_value(0)
    ask(at)
    sources = [e for e in at.expander if e.label.startswith("**[")]
    assert len(sources) == 2
    assert not any(m.value.startswith("**Hop") for m in at.markdown)
    assert Settings().retrieval.tigrag.hops == 2, "shared settings are not mutated"


def test_every_mode_answers(monkeypatch: pytest.MonkeyPatch, tiny_index: TinyIndex) -> None:
    at = app_for(monkeypatch, tiny_index.data_dir)
    modes = mode_box(at).options
    assert set(mode_names()) == set(modes)
    for mode in modes:
        mode_box(at).set_value(mode)
        ask(at)
        trace = [e for e in at.expander if e.label == "Evidence & trace"][-1]
        summary = next(m.value for m in trace.markdown if m.value.startswith("mode **"))
        assert f"mode **{mode}**" in summary
        # the short answer leads with the number of the chunk it was read from (which
        # chunk that is depends on the mode's ranking)
        last = [m for m in at.chat_message if m.name == "assistant"][-1]
        assert re.match(r"\*\*Silverrun\*\* .*\[\*\*\[\d+\]\*\*\]", last.markdown[0].value), mode


def test_bad_question_is_a_message(monkeypatch: pytest.MonkeyPatch, tiny_index: TinyIndex) -> None:
    at = ask(app_for(monkeypatch, tiny_index.data_dir), "   ")
    assert any("question is empty" in e.value for e in at.error)


def test_empty_index_says_what_to_do(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    at = app_for(monkeypatch, tmp_path / "empty")
    assert not at.exception
    assert any(EMPTY_INDEX in i.value for i in at.info)
    ask(at, "anything at all?")
    assert any(EMPTY_INDEX in e.value for e in at.error)


def test_neo4j_down_is_a_clear_error_and_the_sidebar_still_works(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    at = app_for(
        monkeypatch, tmp_path / "neo", NEORAG_BACKEND="neo4j", NEO4J_URI="bolt://127.0.0.1:1"
    )
    assert not at.exception
    assert at.error, "an st.error names the problem"
    assert "127.0.0.1:1" in at.error[0].value
    assert "Traceback" not in at.error[0].value
    assert [s.label for s in at.sidebar.selectbox] == ["Collection", "Retrieval mode"]
    assert at.chat_input[0].disabled


def test_bad_setting_names_the_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    at = app_for(monkeypatch, tmp_path, NEORAG_BACKEND="mongo")
    assert not at.exception
    assert "NEORAG_BACKEND" in at.error[0].value


def test_add_documents_from_a_path_then_locked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    docs = write_docs(tmp_path / "more", {"kell.md": DOCS["mount-kell.md"]})
    at = app_for(monkeypatch, tmp_path / "data", NEORAG_INGEST__ALLOWED_ROOTS=str(tmp_path))
    at.sidebar.text_input[0].input(str(docs))
    at.sidebar.button[0].click().run()
    assert not at.exception, at.exception
    assert any("**Ingested**" in s.value and "new 1" in s.value for s in at.sidebar.success)
    assert "**1** document ·" in "\n".join(m.value for m in at.sidebar.markdown)
    assert not at.info, "the empty-index notice is gone"

    lock = ingest_lock(Settings(backend="embedded", data_dir=tmp_path / "data"))
    lock.acquire(timeout=0)
    try:
        at.sidebar.text_input[0].input(str(docs))
        at.sidebar.button[0].click().run()
    finally:
        lock.release()
    assert any("another ingest" in w.value for w in at.sidebar.warning)


def test_paths_outside_the_allowed_roots_are_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    allowed = write_docs(tmp_path / "allowed", {"kell.md": DOCS["mount-kell.md"]})
    secret = write_docs(
        tmp_path / "private", {"secret.md": "# Secret\n\nThe vault code is 4711.\n"}
    )
    (allowed / "link.md").symlink_to(secret / "secret.md")
    (allowed / "linked-dir").symlink_to(secret, target_is_directory=True)
    at = app_for(monkeypatch, tmp_path / "data", NEORAG_INGEST__ALLOWED_ROOTS=str(allowed))

    at.sidebar.text_input[0].input(str(secret))
    at.sidebar.button[0].click().run()
    assert any("outside the allowed ingest roots" in e.value for e in at.sidebar.error)

    at.sidebar.text_input[0].input(str(allowed))
    at.sidebar.button[0].click().run()
    assert not at.exception, at.exception
    report = at.session_state["ingest_report"]
    assert report["documents"]["new"] == 1, report  # kell.md only: the links reach outside
    reasons = {Path(s["source"]).name: s["reason"] for s in report["skipped"]}
    assert reasons == {
        "link.md": "outside the allowed ingest roots",
        "secret.md": "outside the allowed ingest roots",
    }
    ask(at, "What is the vault code?")
    assert "4711" not in assistant_text(at)


def test_uploads_are_kept_apart_by_content(tmp_path: Path) -> None:
    @dataclass
    class Fake:
        name: str
        data: bytes

        def getvalue(self) -> bytes:
            return self.data

    settings = Settings(backend="embedded", data_dir=tmp_path)
    folder = save_uploads(
        settings,
        [Fake("../../evil.md", b"# hi"), Fake("a b.txt", b"x"), Fake("a b.txt", b"other")],
    )
    assert folder == tmp_path / "uploads" / "default"
    files = sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())
    assert sorted(p.name for p in files) == ["a b.txt", "a b.txt", "evil.md"]
    assert len({p.parent for p in files}) == 3, "same-named uploads never overwrite each other"
    again = save_uploads(settings, [Fake("a b.txt", b"x")])
    assert sum(1 for p in again.rglob("*") if p.is_file()) == 3, "the same file is one upload"


def test_a_new_collection_from_the_picker(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "more", {"kell.md": DOCS["mount-kell.md"]})
    at = app_for(monkeypatch, tmp_path / "data", NEORAG_INGEST__ALLOWED_ROOTS=str(tmp_path))
    picker = next(s for s in at.sidebar.selectbox if s.label == "Collection")
    assert picker.value == "default"
    picker.set_value(picker.options[-1]).run()  # "new collection…"
    at.sidebar.text_input[0].input("team-notes").run()
    assert any("collection `team-notes`" in m.value for m in at.sidebar.markdown)
    path_box = next(t for t in at.sidebar.text_input if t.label.startswith("…or a file"))
    path_box.input(str(docs))
    next(b for b in at.sidebar.button if b.label == "Ingest").click().run()
    assert not at.exception, at.exception
    assert at.session_state["ingest_report"]["collection"] == "team-notes"
    base = Settings(backend="embedded", data_dir=tmp_path / "data")
    assert (base.for_collection("team-notes").collection_dir / "graph.sqlite").exists()
    with EmbeddedStore(store_path(base)) as default:
        assert default.status().documents == 0, "default stays untouched"
    ask(at, "Who made the first ascent of Mount Kell?")
    assert "Ottilie Brand" in assistant_text(at)


@pytest.fixture()
def fake_llm() -> Iterator[str]:
    """The shared fake OpenAI-compatible server (it streams REPLY token by token)."""
    with fake_chat_server() as chat:
        yield chat.url


def test_streams_a_chat_model_answer(
    monkeypatch: pytest.MonkeyPatch, tiny_index: TinyIndex, fake_llm: str
) -> None:
    at = app_for(
        monkeypatch,
        tiny_index.data_dir,
        NEORAG_LLM__PROVIDER="openai",
        NEORAG_LLM__MODEL="fake",
        NEORAG_LLM__BASE_URL=fake_llm,
    )
    ask(at)
    text = assistant_text(at)
    assert "the Silverrun :blue-background[**[1]**]" in text
    assert "Reasoning: The Silverrun links them" in "\n".join(c.value for c in at.caption)


def test_unreachable_chat_model_falls_back_to_extractive(
    monkeypatch: pytest.MonkeyPatch, tiny_index: TinyIndex
) -> None:
    at = app_for(
        monkeypatch,
        tiny_index.data_dir,
        NEORAG_LLM__PROVIDER="openai",
        NEORAG_LLM__MODEL="fake",
        NEORAG_LLM__BASE_URL="http://127.0.0.1:1/v1",
        NEORAG_LLM__TIMEOUT="2",
    )
    ask(at)
    assert any("extractive answer instead" in w.value for w in at.warning)
    assert "[1]" in assistant_text(at)


def test_subgraph_cypher_and_dot() -> None:
    cypher = subgraph_cypher(["a#0-x", 'b"#1-y', "a#0-x"])
    assert cypher.splitlines() == [
        ':param ids => ["a#0-x", "b\\"#1-y"]',
        "MATCH (a:Chunk)-[r]-(b:Chunk)",
        "WHERE a.id IN $ids AND b.id IN $ids",
        "RETURN a, r, b",
    ]
    nodes = [Node("a", 1, 'Title "A"', "Intro", 0), Node("b", 2, "B", "", None)]
    edges = [ChunkEdge("NEXT", "a", "b", 1.0), ChunkEdge("SEMANTIC", "a", "zzz", 0.5)]
    dot = subgraph_dot(nodes, edges)
    assert dot.startswith("graph retrieved {") and dot.endswith("}")
    assert '"[1] Title \\"A\\"\\nIntro"' in dot
    assert '"a" -- "b"' in dot and "dir=forward" in dot
    assert "zzz" not in dot, "edges leaving the context are not drawn"
