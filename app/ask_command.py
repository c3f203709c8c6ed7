"""`neorag ask`: retrieve, answer with citations (app/service.py), show the trace."""

from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table
from rich.text import Text

from app.service import EnginePool, QueryOptions, ask
from app.settings import Settings


def run_ask(
    settings: Settings, question: str, mode: str, top_k: int | None, json_out: bool, out: Console
) -> None:
    pool = EnginePool()
    try:
        asked = ask(pool, settings, question, QueryOptions(mode=mode, top_k=top_k))
    finally:
        pool.close()
    payload = asked.payload()
    result, ans = asked.found.result, asked.answer
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
