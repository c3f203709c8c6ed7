"""`neorag ask`: retrieve, answer with citations, show the trace."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from app.answer import Answer, answer
from app.engine import Engine
from app.llm import chat_model
from app.retrieval.base import RetrievalResult
from app.settings import Settings
from app.ui.subgraph import subgraph_cypher


def result_payload(result: RetrievalResult, ans: Answer) -> dict[str, Any]:
    """The JSON shape `ask --json` prints and the UI keeps per message."""
    signals = {s.chunk_id: s for s in result.ranking}
    return {
        "question": result.question,
        "mode": result.mode,
        "answer": ans.as_dict(),
        "citations": [
            {
                "n": n,
                "chunk_id": c.id,
                "doc_id": c.doc_id,
                "title": c.title,
                "section_path": list(c.section_path),
                "source": c.source,
                "community": c.community,
                "score": round(signals[c.id].score, 6) if c.id in signals else None,
                "signals": signals[c.id].signals if c.id in signals else {},
                "text": c.text,
            }
            for n, c in enumerate(result.context, start=1)
        ],
        "chains": result.chains,
        "cypher": subgraph_cypher([c.id for c in result.context]),
        "context_tokens": result.context_tokens,
        "trace": result.trace.as_dict(),
    }


def run_ask(
    settings: Settings, question: str, mode: str, top_k: int | None, json_out: bool, out: Console
) -> None:
    engine = Engine(settings)
    try:
        engine.require_index()
        result = engine.retriever(mode).retrieve(question, top_k=top_k)
        ans = answer(engine, result, chat_model(settings))
    finally:
        engine.close()
    payload = result_payload(result, ans)
    if json_out:
        print(json.dumps(payload, indent=2, default=str))
        return
    if ans.short:
        where = f" [{ans.evidence[0][0]}]" if ans.evidence else ""
        out.print(Text(ans.short, style="bold") + Text(where))
        out.print(Text(" ".join(f"{s} [{n}]" for n, s in ans.evidence)) + Text("\n"))
    else:
        out.print(Text(ans.text, style="bold") + Text("\n"))
    table = Table(title="citations")
    for col in ("#", "document", "section", "score"):
        table.add_column(col)
    for c in payload["citations"]:
        table.add_row(
            str(c["n"]),
            c["title"] or c["doc_id"],
            " / ".join(c["section_path"]),
            f"{c['score']:.3f}" if c["score"] is not None else "",
        )
    out.print(table)
    trace = result.trace
    out.print(
        f"trace: mode {trace.mode}, {trace.total_ms:.0f} ms, seeds {trace.seeds}, "
        f"candidates {trace.candidates}, pool {trace.pool}, context {trace.tokens_used} tokens"
        + (f" / budget {trace.budget}" if trace.budget else ""),
        highlight=False,
    )
    for hop in trace.hops:
        out.print(f"  hop {hop['hop']}: entities {hop.get('entities')}", highlight=False)
    for step in trace.steps:
        out.print(f"  {step.name}: {step.ms:.1f} ms", highlight=False)
    for note in trace.notes:
        out.print(f"[yellow]note:[/yellow] {note}", highlight=False)
