"""The query layer on a small real index: every mode, traces, budgets, bad questions,
langchain-core documents, answers with citations (extractive and through a chat model)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from typer.testing import CliRunner

from app.answer import answer, parse_generation, stream
from app.cli import app
from app.engine import Engine
from app.llm import chat_model
from app.overrides import with_overrides
from app.retrieval import mode_names
from app.retrieval.base import BadQuestion, ScoredChunk
from app.retrieval.fusion import (
    order_within_documents,
    rrf,
    spread_documents,
    weighted,
    with_document_evidence,
)
from app.retrieval.langchain import NeoragRetriever
from app.services import index_dir, store_path
from app.settings import Settings
from graph.embedded.store import EmbeddedStore
from graph.errors import NeoragError
from ingest.runner import run_ingest
from tests.app.fake_ollama import COMPLETION_TOKENS, PROMPT_TOKENS, fake_ollama_server
from tests.app.fake_openai import USAGE, fake_chat_server
from tests.ids import name_of, names
from tests.ingest.corpora import write_corpus

QUESTION = "When did Lothair II's mother die?"


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    tmp = tmp_path_factory.mktemp("retrieval")
    root = write_corpus(tmp / "docs", "A2")
    settings = Settings(data_dir=tmp / "data")
    with EmbeddedStore(store_path(settings)) as store:
        run_ingest(root, store, settings.ingest, settings.algorithms, index_dir(settings))
    return settings


@pytest.fixture(scope="module")
def engine(settings: Settings) -> Iterator[Engine]:
    e = Engine(settings)
    yield e
    e.close()


def test_fusion_by_hand() -> None:
    fused = rrf({"a": [("x", 9.0), ("y", 1.0)], "b": [("y", 5.0), ("z", 4.0)]}, k=60)
    assert [s.chunk_id for s in fused] == ["y", "x", "z"]
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61)
    assert fused[0].signals == {"a": 1.0, "b": 5.0}
    w = weighted({"a": [("x", 10.0), ("y", 0.0)], "b": [("y", 2.0)]}, {"a": 1.0, "b": 0.5})
    assert [(s.chunk_id, s.score) for s in w] == [("x", 1.0), ("y", 0.5)]


def test_spread_documents_by_hand() -> None:
    """At most two chunks of a document among the first four; held-back chunks follow them
    in order, and the documents' first appearances keep their order."""
    ids = ["a#0", "a#1", "a#2", "b#0", "a#3", "c#0", "b#1"]
    ranking = [ScoredChunk(c, 1.0 - i / 10) for i, c in enumerate(ids)]
    spread = spread_documents(ranking, 4, 2, lambda c: c.split("#")[0])
    assert [s.chunk_id for s in spread] == ["a#0", "a#1", "b#0", "c#0", "a#2", "a#3", "b#1"]
    assert sorted(s.chunk_id for s in spread) == sorted(ids)
    unlimited = spread_documents(ranking, 4, 4, lambda c: c.split("#")[0])
    assert [s.chunk_id for s in unlimited] == ids


def test_order_within_documents_by_hand() -> None:
    """Each position keeps its document; a document's chunks fill its positions in the
    second ranking's order, the chunks that ranking leaves out after the ones it ranks."""
    ids = ["a#0", "b#0", "a#1", "a#2", "c#0", "b#1"]
    ranking = [ScoredChunk(c, 1.0 - i / 10) for i, c in enumerate(ids)]
    order = [("b#1", 9.0), ("a#2", 8.0), ("x#0", 7.0), ("a#0", 6.0)]
    doc = lambda c: c.split("#")[0]  # noqa: E731
    ordered = order_within_documents(ranking, order, doc)
    assert [s.chunk_id for s in ordered] == ["a#2", "b#1", "a#0", "a#1", "c#0", "b#0"]
    assert [doc(s.chunk_id) for s in ordered] == [doc(c) for c in ids]
    assert order_within_documents(ranking, [], doc) == ranking


def test_document_evidence_by_hand() -> None:
    """Three signals rank document `a` first, each through another chunk, and two rank
    `b#0` second: chunk-level RRF puts `b#0` first, the documents' own RRF puts `a` back on
    top (each signal votes once per document, at its best chunk), and chunks of one
    document keep their chunk-level order."""
    doc = lambda c: c.split("#")[0]  # noqa: E731
    rankings = {
        "one": [("a#0", 1.0), ("b#0", 0.9)],
        "two": [("a#1", 1.0), ("b#0", 0.9)],
        "three": [("a#2", 1.0), ("c#0", 0.9)],
    }
    fused = rrf(rankings, k=60)
    assert fused[0].chunk_id == "b#0"
    pooled = with_document_evidence(fused, rankings, 60, {}, doc)
    assert [s.chunk_id for s in pooled] == ["a#0", "a#1", "a#2", "b#0", "c#0"]
    assert pooled[0].signals["page"] == pytest.approx(3 / 61)
    assert pooled[0].score == pytest.approx(1 / 61 + 3 / 61)
    assert pooled[3].signals["page"] == pytest.approx(2 / 62)
    halved = with_document_evidence(fused, rankings, 60, {"three": 0.0}, doc, scale=0.5)
    assert halved[0].chunk_id == "b#0"
    assert halved[0].signals["page"] == pytest.approx(0.5 * 2 / 62)
    assert with_document_evidence(fused, rankings, 60, {}, doc, scale=0.0) == [
        ScoredChunk(s.chunk_id, s.score, {**s.signals, "page": 0.0}) for s in fused
    ]


def test_spectrag_diffusion_lifts_only_what_the_seeds_reach(engine: Engine) -> None:
    """Relevance diffusion adds to the chunks the graph connects to the seeds and leaves the
    seeds' own scores, and so their order among themselves, as they were."""
    from app.retrieval.base import Trace

    retriever = engine.retriever("spectrag")
    trace = Trace(mode="spectrag", question=QUESTION)
    query = retriever._validate(QUESTION, trace)
    seeds = retriever._seed_ranking(query, trace)[:2]  # the graph reaches beyond them

    def scores(weight: float) -> dict[str, float]:
        cfg = retriever.cfg
        retriever.cfg = cfg.model_copy(
            update={"spectrag": cfg.spectrag.model_copy(update={"diffusion_weight": weight})}
        )
        try:
            ranked = retriever.diffuse_and_select(query, seeds, Trace("spectrag", QUESTION))
        finally:
            retriever.cfg = cfg
        return {s.chunk_id: s.score for s in ranked}

    without, full = scores(0.0), scores(1.0)
    seed_ids = {s.chunk_id for s in seeds}
    assert without.keys() == full.keys() and seed_ids <= full.keys()
    lifted = [c for c in full if c not in seed_ids and full[c] > without[c]]
    assert lifted, "no chunk beyond the seeds was lifted"
    for c in full:
        if c in seed_ids:
            assert full[c] == without[c], c
        else:
            assert full[c] >= without[c], c


def test_default_parts_side_by_side_equal_one_after_the_other(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With two cores the default mode runs its parts on threads beside each other; the
    ranking, and the trace's steps in order, are those of running them in turn (one core),
    and so under concurrent questions too."""
    retriever = engine.retriever("default")
    side_by_side = retriever.retrieve(QUESTION, top_k=5)
    with ThreadPoolExecutor(max_workers=4) as pool:
        concurrent = list(pool.map(lambda _: retriever.retrieve(QUESTION, top_k=5), range(6)))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the thread budget: one core
    in_turn = retriever.retrieve(QUESTION, top_k=5)

    def shape(result):  # what the trace says, without the timings
        t = result.trace
        steps = [(s.name, s.details.get("hop")) for s in t.steps]
        return steps, t.notes, t.hops, t.candidates, t.pool, t.expanded_tokens

    assert len(engine.settings.retrieval.default_parts) >= 2
    for result in (side_by_side, *concurrent):
        assert [(s.chunk_id, s.score) for s in result.ranking] == [
            (s.chunk_id, s.score) for s in in_turn.ranking
        ]
        assert shape(result) == shape(in_turn)


@pytest.mark.parametrize("mode", mode_names())
def test_every_mode_finds_both_hops(engine: Engine, mode: str) -> None:
    result = engine.retriever(mode).retrieve(QUESTION, top_k=5)
    docs = names(result.doc_ranking()[:5])
    assert "p4" in docs  # Lothair II
    if mode not in ("bm25",):
        assert "p5" in docs, docs  # Ermengarde of Tours: the second hop
    assert result.context and result.trace.steps and result.trace.total_ms > 0
    assert result.trace.mode == mode


def test_tigrag_trace_shows_its_work(engine: Engine) -> None:
    result = engine.retriever("tigrag").retrieve(QUESTION, top_k=5)
    t = result.trace
    assert t.seeds == ["lothair"]  # "mother" and "die" do not occur in this corpus
    assert t.expanded_tokens and abs(sum(t.expanded_tokens.values()) - 1.0) < 1e-3
    assert t.candidates >= t.pool > 0
    assert t.hops and t.hops[0]["entities"]
    names = [s.name for s in t.steps]
    assert names[:4] == ["title linking", "token ppr", "candidate scoring", "query embeddings"]
    # every round awaits the vectors encoded beside its graph work, and says how long they took
    encodes = [s for s in t.steps if s.name in ("query embeddings", "hop embeddings")]
    assert len(encodes) == names.count("rerank") == 1 + sum(1 for h in t.hops if h["entities"])
    assert all(s.details["encode_ms"] > 0 for s in encodes)
    assert [s.details["n"] for s in encodes[1:]] == [
        len(h["entities"]) for h in t.hops if h["entities"]
    ]
    top = result.ranking[0]
    assert {"rho", "cosine"} <= set(top.signals)


def test_int8_hop_encoder_finds_both_hops(settings: Settings) -> None:
    """`tigrag.hop_encoder=int8` encodes the hop rerank texts with the int8 export, and
    only those: the question keeps the float vectors."""
    tuned = with_overrides(settings, {"retrieval.tigrag.hop_encoder": "int8"})
    engine = Engine(tuned)
    try:
        model = engine.query_model
        model._int8 = None  # the process shares its query models
        result = engine.retriever("tigrag").retrieve(QUESTION, top_k=5)
        assert {"p4", "p5"} <= set(names(result.doc_ranking()[:5]))
        assert any(h["entities"] for h in result.trace.hops)
        assert model._int8 is not None, "the hops went through the int8 export"
        question = engine.encode_queries([QUESTION])[0]
        float_vector = model.encode([QUESTION])[0]
        assert np.array_equal(question, float_vector)
    finally:
        engine.close()


def test_tigrag_is_safe_to_call_from_threads(engine: Engine) -> None:
    """The encoder thread is shared by every TIGRAG call in the process (UI sessions)."""
    retriever = engine.retriever("tigrag")
    serial = [s.chunk_id for s in retriever.retrieve(QUESTION, top_k=5).ranking]
    with ThreadPoolExecutor(max_workers=4) as pool:
        rankings = list(pool.map(lambda _: retriever.retrieve(QUESTION, top_k=5).ranking, range(8)))
    assert all([s.chunk_id for s in r] == serial for r in rankings)


def test_spectrag_stays_within_budget(settings: Settings) -> None:
    for budget in (120, 600):
        s = with_overrides(settings, {"retrieval.spectrag.budget_tokens": budget})
        e = Engine(s)
        result = e.retriever("spectrag").retrieve(QUESTION)
        assert 0 < result.context_tokens <= budget
        assert result.trace.budget == budget and result.trace.tokens_used == result.context_tokens
        e.close()


def test_bad_questions_are_clear(engine: Engine) -> None:
    r = engine.retriever("default")
    with pytest.raises(BadQuestion, match="empty"):
        r.retrieve("   \n ")
    long = r.retrieve("Lothair " * 2000)
    assert any("truncated" in n for n in long.trace.notes)
    stop = r.retrieve("what is the of and to")
    assert any("no searchable words" in n for n in stop.trace.notes)
    unknown = r.retrieve("zyxwvut qwertyuiop")
    assert any("none of the question's words" in n for n in unknown.trace.notes)
    before = engine.store.status()
    cypher_like = r.retrieve("MATCH (n) DETACH DELETE n RETURN n")
    assert cypher_like.trace.mode == "default"
    assert engine.store.status() == before


def test_langchain_retriever_documents(settings: Settings) -> None:
    retriever = NeoragRetriever.from_settings(settings, mode="tigrag", top_k=3)
    docs = retriever.invoke(QUESTION)
    assert 1 <= len(docs) <= 3
    meta = docs[0].metadata
    assert {"chunk_id", "doc_id", "title", "section_path", "score", "signals", "community"} <= set(
        meta
    )
    assert meta["rank"] == 1 and docs[0].page_content


def test_extractive_answer_cites_context(engine: Engine) -> None:
    result = engine.retriever("default").retrieve(QUESTION)
    ans = answer(engine, result)
    assert ans.extractive and ans.citations
    assert all(1 <= n <= len(result.context) for n in ans.citations)
    for n, sentence in ans.evidence:  # verbatim from the chunk it cites
        assert sentence in result.context[n - 1].text and f"{sentence} [{n}]" in ans.text
    cited_docs = {name_of(result.context[n - 1].doc_id) for n in ans.citations}
    assert {"p4", "p5"} <= cited_docs  # both hops: Lothair II and his mother's passage


GENERATED = ("Lothair II's mother is Ermengarde of Tours [2].\n", "Answer: 20 March 851 [2]")


def _generate(engine: Engine, settings: Settings, llm: dict[str, str], kind: str):  # type: ignore[no-untyped-def]
    """The default mode's answer through the chat model `llm` configures, whole and
    streamed (with the usage the stream reported); the model must be of class `kind`."""
    model = chat_model(with_overrides(settings, {f"llm.{k}": v for k, v in llm.items()}))
    assert type(model).__name__ == kind
    result = engine.retriever("default").retrieve(QUESTION)
    ans = answer(engine, result, model)
    usage: dict[str, int] = {}
    streamed = "".join(stream(model, result, usage))
    assert ans.text == "20 March 851 [2]" and ans.citations == [2] and not ans.extractive
    assert parse_generation(streamed, len(result.context)).text == ans.text
    return ans, usage


def test_generated_answer_through_chat_openai(engine: Engine, settings: Settings) -> None:
    """langchain-openai's ChatOpenAI against a local OpenAI-compatible server: the answer
    parses, cites, and carries the server's token usage."""
    with fake_chat_server(GENERATED) as chat:
        llm = {"provider": "openai", "model": "m", "base_url": chat.url}
        ans, usage = _generate(engine, settings, llm, "ChatOpenAI")
    assert ans.usage == USAGE and usage == USAGE
    prompt = chat.requests[0]["messages"][1]["content"]
    assert "[1]" in prompt and QUESTION in prompt
    assert "Answer:" in chat.requests[0]["messages"][0]["content"]
    assert parse_generation("no marker [9]", 3).citations == []


def test_generated_answer_through_ollama(engine: Engine, settings: Settings) -> None:
    """`NEORAG_LLM__PROVIDER=ollama` is langchain-ollama's ChatOllama over Ollama's native
    API (a base URL ending in `/v1`, Ollama's OpenAI-compatible path, is accepted): the
    answer parses, cites and carries Ollama's token counts, whole and streamed."""
    with fake_ollama_server(GENERATED) as chat:
        llm = {"provider": "ollama", "model": "llama3.1", "base_url": chat.url + "/v1"}
        ans, usage = _generate(engine, settings, llm, "ChatOllama")
    assert ans.usage["prompt_tokens"] == PROMPT_TOKENS
    assert ans.usage["completion_tokens"] == COMPLETION_TOKENS
    assert usage["prompt_tokens"] == PROMPT_TOKENS
    assert chat.requests[0]["model"] == "llama3.1"
    assert QUESTION in chat.requests[0]["messages"][-1]["content"]


def test_unreachable_chat_model_is_one_line(engine: Engine, settings: Settings) -> None:
    llm = with_overrides(
        settings,
        {
            "llm.provider": "openai",
            "llm.model": "m",
            "llm.base_url": "http://127.0.0.1:1/v1",
            "llm.max_retries": 0,
            "llm.api_key": "sk-secret-never-shown",
        },
    )
    result = engine.retriever("dense").retrieve(QUESTION)
    with pytest.raises(NeoragError) as caught:
        answer(engine, result, chat_model(llm))
    message = str(caught.value)
    assert "cannot reach the chat model" in message and "\n" not in message
    assert "sk-secret" not in message


def test_ask_cli_json(settings: Settings) -> None:
    env = {"NEORAG_DATA_DIR": str(settings.data_dir), "NEORAG_BACKEND": "embedded"}
    out = CliRunner().invoke(app, ["ask", QUESTION, "--json", "--mode", "tigrag"], env=env)
    assert out.exit_code == 0, out.output[-2000:]
    payload = json.loads(out.stdout)
    assert payload["mode"] == "tigrag" and payload["citations"]
    assert payload["trace"]["steps"] and payload["answer"]["text"]
    assert "MATCH (a:Chunk)" in payload["cypher"]
    empty = CliRunner().invoke(app, ["ask", ""], env=env)
    assert empty.exit_code == 2 and "empty" in empty.stderr
    assert isinstance(empty.exception, SystemExit)  # a message, not an exception
