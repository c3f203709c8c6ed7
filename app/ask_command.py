"""`neorag ask`: retrieve, answer with citations (app/service.py), show the trace.

With `NEORAG_API__URL` set, the question goes to that running `neorag api` (its models and
indexes are loaded already: a fraction of a second) and the answer is shown the same way;
otherwise it is answered in this process. Both produce the payload of `/v1/ask`, and the
output is rendered from that payload alone.
"""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from app.settings import Settings


def run_ask(
    settings: Settings, question: str, mode: str, top_k: int | None, json_out: bool, out: Console
) -> None:
    if settings.api.url:
        from app.api_client import ask_remote

        payload = ask_remote(settings, question, mode, top_k)
    else:
        payload = ask_here(settings, question, mode, top_k)
    if json_out:
        print(json.dumps(payload, indent=2, default=str))
    else:
        render(payload, out)


def ask_here(settings: Settings, question: str, mode: str, top_k: int | None) -> dict[str, Any]:
    from app.service import EnginePool, QueryOptions, ask

    pool = EnginePool()
    try:
        return ask(pool, settings, question, QueryOptions(mode=mode, top_k=top_k)).payload()
    finally:
        pool.close()


def render(payload: dict[str, Any], out: Console) -> None:
    """The answer (short answer in bold, then its cited evidence), the citations and the
    retrieval trace, from an `/v1/ask` payload."""
    ans = payload["answer"]
    evidence = [(e["chunk"], e["sentence"]) for e in ans.get("evidence", [])]
    if ans.get("short"):
        where = f" [{evidence[0][0]}]" if evidence else ""
        out.print(Text(ans["short"], style="bold") + Text(where))
        out.print(Text(" ".join(f"{s} [{n}]" for n, s in evidence)) + Text("\n"))
    else:  # the lead in bold ("Not found in the corpus…", or a chat model's answer)
        lead, _, rest = ans["text"].partition("\n\n")
        out.print(Text(lead, style="bold"))
        out.print(Text(rest + "\n") if rest else Text(""))
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
    trace = payload["trace"]
    out.print(
        f"trace: mode {trace['mode']}, {trace['total_ms']:.0f} ms, seeds {trace['seeds']}, "
        f"candidates {trace['candidates']}, pool {trace['pool']}, "
        f"context {trace['tokens_used']} tokens"
        + (f" / budget {trace['budget']}" if trace.get("budget") else ""),
        highlight=False,
    )
    for hop in trace["hops"]:
        out.print(f"  hop {hop['hop']}: entities {hop.get('entities')}", highlight=False)
    for step in trace["steps"]:
        out.print(f"  {step['name']}: {step['ms']:.1f} ms", highlight=False)
    for note in trace["notes"]:
        out.print(f"[yellow]note:[/yellow] {note}", highlight=False)
