"""One chat turn: retrieve, answer (streamed when a chat model is configured), and draw the
answer with its sources, the retrieval trace and the retrieved subgraph.

A turn is kept in `st.session_state` as a plain dict (the `neorag ask --json` payload plus
the subgraph edges), so earlier answers redraw on every rerun without touching the store.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import streamlit as st

from app.answer import Answer, answer, parse_generation, stream
from app.engine import Engine
from app.llm import chat_model
from app.retrieval.base import RetrievalResult
from app.service import QueryOptions, result_payload, retrieve_on, subgraph_cypher
from app.settings import Settings
from app.ui.subgraph import EDGE_COLOURS, Node, edges_among, subgraph_dot
from app.ui.text import (
    escape,
    highlighted,
    section_label,
    section_path_without_title,
    with_citations,
)
from graph.errors import NeoragError
from graph.types import ChunkEdge

Message = dict[str, Any]
EMPTY_INDEX = "Index is empty — add documents in the sidebar or run `neorag ingest PATH`"
RANKING_SHOWN = 10
TOKENS_SHOWN = 20
log = logging.getLogger(__name__)


def respond(engine: Engine, settings: Settings, question: str, options: QueryOptions) -> Message:
    """Answer one question inside the current `st.chat_message`, returning the turn to keep.
    Errors become a message naming the fix, never a traceback. The engine is shared by
    every browser session of the process: the question runs on its own snapshot."""
    try:
        engine.refresh(background=True)  # another process may have re-ingested meanwhile
        view = engine.snapshot()
        if len(view.dense) == 0:
            return {"role": "assistant", "error": EMPTY_INDEX}
        with st.spinner("Retrieving…"):
            result = retrieve_on(view, settings, question, options).result
        ans, notice = _answer(view, settings, result)
        edges = edges_among(engine.store, [c.id for c in result.context])
    except NeoragError as exc:
        return {"role": "assistant", "error": str(exc)}
    except Exception as exc:  # the UI boundary: log the traceback, show one line
        log.exception("question failed")
        return {"role": "assistant", "error": f"unexpected error ({type(exc).__name__}): {exc}"}
    payload = result_payload(result, ans)
    payload["edges"] = [
        {"kind": e.kind, "src": e.src, "dst": e.dst, "weight": e.weight} for e in edges
    ]
    payload["ranking"] = [
        {"chunk_id": s.chunk_id, "score": s.score, "signals": s.signals}
        for s in result.ranking[:RANKING_SHOWN]
    ]
    return {"role": "assistant", "payload": payload, "notice": notice}


def _answer(engine: Engine, settings: Settings, result: RetrievalResult) -> tuple[Answer, str]:
    """Stream the chat model's tokens when one is configured; fall back to the extractive
    answer (with a notice) when it is misconfigured or unreachable."""
    try:
        model = chat_model(settings)
    except NeoragError as exc:
        return answer(engine, result, None), f"{exc}; showing an extractive answer instead"
    if model is None or not result.context:
        with st.spinner("Reading the evidence…"):
            return answer(engine, result, None), ""
    area = st.empty()
    try:
        with area.container():
            streamed = st.write_stream(stream(model, result))
    except NeoragError as exc:
        area.empty()
        return answer(engine, result, None), f"{exc}; showing an extractive answer instead"
    area.empty()
    text = streamed if isinstance(streamed, str) else "".join(map(str, streamed))
    return parse_generation(text, len(result.context)), ""


def render_turn(message: Message) -> None:
    if message["role"] == "user":
        st.markdown(escape(message["text"]))
        return
    if "error" in message:
        st.error(message["error"])
        return
    payload = message["payload"]
    if message.get("notice"):
        st.warning(message["notice"])
    ans = payload["answer"]
    if ans.get("short"):
        # The reader's short answer first, then the sentences it rests on.
        where = f" [{ans['evidence'][0]['chunk']}]" if ans["evidence"] else ""
        st.markdown(f"**{escape(ans['short'])}**" + with_citations(where))
        cited = " ".join(f"{e['sentence']} [{e['chunk']}]" for e in ans["evidence"])
        st.markdown(with_citations(cited))
    else:
        st.markdown(with_citations(ans["text"]))
    if ans["reasoning"]:
        st.caption("Reasoning: " + escape(ans["reasoning"]))
    _sources(payload)
    with st.expander("Evidence & trace", icon=":material/timeline:"):
        _trace(payload)
    with st.expander("Retrieved subgraph", icon=":material/hub:"):
        _subgraph(payload)


def _sources(payload: dict[str, Any]) -> None:
    """One expander per context chunk, numbered as cited; cited ones say so and mark the
    sentences the answer used."""
    cited = set(payload["answer"]["citations"])
    evidence: dict[int, list[str]] = {}
    for item in payload["answer"]["evidence"]:
        evidence.setdefault(item["chunk"], []).append(item["sentence"])
    if not payload["citations"]:
        return
    st.caption("Sources")
    for c in payload["citations"]:
        where = escape(section_label(c["title"] or c["doc_id"], c["section_path"]))
        label = f"**[{c['n']}]** {where}" + (" · *cited*" if c["n"] in cited else "")
        with st.expander(label):
            meta = [f"source `{c['source'] or c['doc_id']}`"]
            section = section_path_without_title(c["title"], c["section_path"])
            if section:
                meta.append("section " + escape(" › ".join(section)))
            meta.append(f"community {c['community']}" if c["community"] is not None else "")
            if c["score"] is not None:
                meta.append(f"score {c['score']:.3f}")
            st.caption(" · ".join(m for m in meta if m))
            st.markdown(highlighted(c["text"], evidence.get(c["n"], [])), unsafe_allow_html=True)


def _trace(payload: dict[str, Any]) -> None:
    trace = payload["trace"]
    numbers = {c["chunk_id"]: c["n"] for c in payload["citations"]}
    budget = f" of {trace['budget']:,} budget" if trace["budget"] else ""
    st.markdown(
        f"mode **{trace['mode']}** · **{trace['total_ms']:,.0f} ms** · "
        f"**{trace['tokens_used']:,}** context tokens{budget} · "
        f"**{trace['candidates']:,}** candidates → pool **{trace['pool']:,}**"
    )
    for note in trace["notes"]:
        st.warning(note, icon=":material/info:")
    if trace["seeds"]:
        st.markdown("**Seed tokens** " + " ".join(f"`{s}`" for s in trace["seeds"]))
    if trace["expanded_tokens"]:
        top = list(trace["expanded_tokens"].items())[:TOKENS_SHOWN]
        st.markdown(f"**Expanded tokens** (PPR mass, top {len(top)})")
        st.dataframe(
            [{"token": t, "mass": m} for t, m in top],
            hide_index=True,
            column_config={
                "mass": st.column_config.ProgressColumn(
                    format="%.4f", min_value=0.0, max_value=max(m for _, m in top) or 1.0
                )
            },
        )
    for hop in trace["hops"]:
        source = ", ".join(f"[{numbers[c]}]" if c in numbers else f"`{c}`" for c in hop["chunks"])
        entities = ", ".join(escape(e) for e in hop["entities"]) or "none new (stopped)"
        extra = f" → {hop['candidates']} candidates" if "candidates" in hop else ""
        st.markdown(f"**Hop {hop['hop']}** from {source}: entities {entities}{extra}")
    st.markdown("**Steps**")
    longest = max((s["ms"] for s in trace["steps"]), default=0.0) or 1.0
    st.dataframe(
        [
            {"step": s["name"], "ms": s["ms"], "details": _compact(s["details"])}
            for s in trace["steps"]
        ],
        hide_index=True,
        column_config={
            "ms": st.column_config.ProgressColumn(format="%.1f", min_value=0.0, max_value=longest)
        },
    )
    if payload["ranking"]:
        st.markdown(f"**Ranking** (top {len(payload['ranking'])}; # = citation number)")
        rows = [
            {
                "#": f"[{numbers[r['chunk_id']]}]" if r["chunk_id"] in numbers else "",
                "chunk": r["chunk_id"],
                "score": round(r["score"], 4),
                "signals": _compact(r["signals"]),
            }
            for r in payload["ranking"]
        ]
        st.dataframe(rows, hide_index=True)
    if payload["chains"]:
        st.markdown("**Reasoning chains**")
        st.code("\n".join(payload["chains"]), language=None, wrap_lines=True)


def _compact(details: dict[str, Any]) -> str:
    def short(v: Any) -> Any:
        return round(v, 4) if isinstance(v, float) else v

    return json.dumps({k: short(v) for k, v in details.items()}, default=str)[:200]


def _subgraph(payload: dict[str, Any]) -> None:
    nodes = [
        Node(
            c["chunk_id"],
            c["n"],
            c["title"] or c["doc_id"],
            " › ".join(section_path_without_title(c["title"], c["section_path"])),
            c["community"],
        )
        for c in payload["citations"]
    ]
    if not nodes:
        st.caption("No context chunks, so no subgraph.")
        return
    edges = [ChunkEdge(e["kind"], e["src"], e["dst"], e["weight"]) for e in payload["edges"]]
    st.graphviz_chart(subgraph_dot(nodes, edges), width="stretch")
    counts: dict[str, int] = {}
    for e in edges:
        counts[e.kind] = counts.get(e.kind, 0) + 1
    legend = " ".join(
        f'<span style="color:{EDGE_COLOURS.get(kind, "#333")};font-weight:600">━ {kind}</span> {n}'
        for kind, n in sorted(counts.items())
    )
    st.markdown(
        (legend or "No typed edges among these chunks.") + " · node fill = community",
        unsafe_allow_html=True,
    )
    st.caption("The same subgraph in Neo4j Browser (run the `:param` line first):")
    st.code(subgraph_cypher([n.chunk_id for n in nodes]), language="cypher", wrap_lines=True)
