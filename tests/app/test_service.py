"""The one service layer: its functions on a real embedded index, its safety under
concurrent threads (the tokenizer race of the ONNX query encoder, refreshes while queries
run), and the rule that no adapter imports another."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from app import service
from app.retrieval.base import BadQuestion
from app.service import EnginePool, QueryOptions, UnknownMode
from app.settings import Settings
from graph.errors import UnknownCollection
from tests.app.test_streamlit_app import QUESTION, build_index

REPO = Path(__file__).resolve().parents[2]
QUESTIONS = [
    QUESTION,
    "Who made the first ascent of Mount Kell?",
    "When was the Ferrymen's Guild founded?",
    "What is traded through Port Veldt?",
    "How high is Mount Kell?",
    "Who keeps the fishing rights on the Silverrun?",
]


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    tiny = build_index(tmp_path_factory.mktemp("service"))
    return Settings(backend="embedded", data_dir=tiny.data_dir)


@pytest.fixture(scope="module")
def pool() -> Iterator[EnginePool]:
    pool = EnginePool()
    yield pool
    pool.close()


def test_ask_returns_answer_citations_and_index_version(
    pool: EnginePool, settings: Settings
) -> None:
    asked = service.ask(pool, settings, QUESTION, QueryOptions(mode="tigrag", top_k=3))
    payload = asked.payload()
    assert payload["answer"]["text"] and payload["citations"]
    assert len(payload["citations"]) <= 3 and payload["mode"] == "tigrag"
    assert payload["index_version"] == pool.engine(settings).version is not None
    assert "Silverrun" in " ".join(c["text"] for c in payload["citations"])
    assert payload["cypher"].startswith(":param ids => [")


def test_retrieve_payload_and_knobs(pool: EnginePool, settings: Settings) -> None:
    found = service.retrieve(pool, settings, QUESTION, QueryOptions(mode="tigrag", hops=0))
    payload = service.retrieval_payload(found)
    assert payload["ranking"][0]["chunk_id"].startswith(payload["ranking"][0]["doc_id"] + "#")
    assert payload["context"] and payload["trace"]["steps"]
    assert not payload["trace"]["hops"], "hops=0 reached the retriever"


def test_bad_questions_and_modes(pool: EnginePool, settings: Settings) -> None:
    with pytest.raises(BadQuestion, match="empty"):
        service.retrieve(pool, settings, "   \n ")
    with pytest.raises(BadQuestion, match="at most 4,000"):
        service.retrieve(pool, settings, "x" * 4001, max_chars=4000)
    with pytest.raises(UnknownMode, match="unknown mode 'nope'"):
        service.retrieve(pool, settings, QUESTION, QueryOptions(mode="nope"))
    with pytest.raises(UnknownCollection):
        service.retrieve(pool, settings.for_collection("missing"), QUESTION)


def test_status_documents_and_chunks(pool: EnginePool, settings: Settings) -> None:
    st = service.status(settings)
    docs = service.documents(settings)
    assert st["documents"] == len(docs) == 4 and st["collection"] == "default"
    found = service.retrieve(pool, settings, QUESTION)
    chunk_id = found.result.context[0].id
    assert service.get_chunk(pool, settings, chunk_id)["chunk_id"] == chunk_id
    with pytest.raises(service.UnknownChunk):
        service.get_chunk(pool, settings, "nope#0")


def test_one_engine_is_safe_under_concurrent_threads(pool: EnginePool, settings: Settings) -> None:
    """Eight threads, 96 questions over one shared engine: before the tokenizer lock, two
    threads on the ONNX encoder failed with `ValueError: setting an array element with a
    sequence`. Every answer equals the one the question gets alone."""
    alone = {
        q: [c.id for c in service.retrieve(pool, settings, q).result.context] for q in QUESTIONS
    }

    def run(q: str) -> tuple[str, list[str]]:
        return q, [c.id for c in service.ask(pool, settings, q).found.result.context]

    with ThreadPoolExecutor(8) as workers:
        results = list(workers.map(run, QUESTIONS * 16))
    assert len(results) == 96
    assert all(ids == alone[q] for q, ids in results)


def test_a_snapshot_keeps_its_index_while_the_engine_refreshes(
    pool: EnginePool, settings: Settings
) -> None:
    engine = pool.engine(settings)
    view = engine.snapshot()
    before = (view.version, view.dense, view.lexical, view.indexed)
    engine._key = None  # as if another ingest was published: the next refresh reloads
    assert engine.refresh()
    assert (view.version, view.dense, view.lexical, view.indexed) == before
    assert engine.dense is not view.dense and engine.version == view.version


def _adapter(module: str) -> str | None:
    """Which adapter a module belongs to (None: the service layer or below)."""
    if module == "app.cli" or (module.startswith("app.") and module.endswith("_command")):
        return "cli"
    if module == "streamlit_app" or module == "app.ui" or module.startswith("app.ui."):
        return "chat"
    if module == "app.api" or module.startswith("app.api."):
        return "http"
    if module == "app.mcp_server":
        return "mcp"
    return None


# Entry points, not shared code: the CLI's `api` and `mcp` commands start those servers,
# and the HTTP app mounts the MCP server at /mcp.
LAUNCHES = {("cli", "app.api.launch"), ("cli", "app.mcp_server"), ("http", "app.mcp_server")}


def _module_of(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")


def test_no_adapter_imports_another() -> None:
    """CLI commands, the chat, the HTTP API and the MCP server import the service layer,
    never each other: code two adapters need belongs in the service layer."""
    files = [REPO / "streamlit_app.py", *(REPO / "app").rglob("*.py")]
    offences = []
    for path in files:
        me = _module_of(path)
        mine = _adapter(me)
        if mine is None:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                other = _adapter(name)
                if other and other != mine and (mine, name) not in LAUNCHES:
                    offences.append(f"{me} imports {name}")
    assert not offences


def test_warm_up_answers_once_so_the_first_question_pays_nothing(settings: Settings) -> None:
    """What /readyz waits for: the default mode's derived graphs and the offline reader's
    model are loaded by the warm-up, not by the first question."""
    from app.reader import reader

    pool = EnginePool()
    try:
        reader._loaded.cache_clear()
        reader.shared_reader.cache_clear()  # another test's reader must not answer for it
        service.warm(pool, settings)
        built = {key[0] for key in pool.engine(settings)._derived}
        assert "bridge graph" in built
        assert reader._loaded.cache_info().currsize == 1
    finally:
        pool.close()
