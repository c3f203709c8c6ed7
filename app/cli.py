"""`neorag`: ingest, analytics, ask, eval, cypher, status, serve, api, mcp.

Every command turns a NeoragError (database down, wrong password, empty index, ...) into a
one-line message and exit status 2, never a traceback.
"""

from __future__ import annotations

import errno
import json
import os
import sys
from collections.abc import Callable
from functools import wraps
from itertools import chain
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

from app.progress import RichProgress
from app.settings import Settings, load_settings
from graph.errors import NeoragError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="LLM-free graph RAG over Neo4j + GDS (or the embedded backend).",
    context_settings={"help_option_names": ["-h", "--help"]},
)
err = Console(stderr=True, soft_wrap=True)
out = Console()
F = TypeVar("F", bound=Callable[..., Any])
_NO_SPACE = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}


def friendly(fn: F) -> F:
    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except NeoragError as exc:
            # soft_wrap: the message stays one line whatever the terminal width.
            err.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        except KeyboardInterrupt:
            # The command's own cleanup has run (stores closed, workers stopped) and what
            # it wrote is crash-safe; the interpreter's teardown of torch and spaCy would
            # add a second or more before the shell gets its prompt back.
            err.print("interrupted")
            err.file.flush()
            sys.stdout.flush()
            os._exit(130)
        except OSError as exc:
            if exc.errno not in _NO_SPACE:
                raise
            where = f" {exc.filename}" if exc.filename else ""
            err.print(
                f"[red]error:[/red] cannot write{where}: {exc.strerror} (disk full or a file "
                "size limit); free space and run the command again — what was written is kept",
                highlight=False,
                soft_wrap=True,
            )
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]


def settings_for(backend: str | None, collection: str | None = None) -> Settings:
    """Settings from the environment, with the command line's backend and collection."""
    overrides: dict[str, Any] = {}
    if backend:
        overrides["backend"] = backend
    if collection:
        overrides["collection"] = collection
    return load_settings(**overrides)


BackendOpt = Annotated[
    str | None,
    typer.Option("--backend", "-b", help="embedded or neo4j (default: NEORAG_BACKEND)"),
]
CollectionOpt = Annotated[
    str | None,
    typer.Option(
        "--collection", "-c", help="the collection to use (default: NEORAG_COLLECTION or default)"
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="machine-readable output")]


@app.command()
@friendly
def ingest(
    path: Annotated[Path, typer.Argument(help="a file or folder (walked recursively)")],
    json_out: JsonOpt = False,
    rebuild: Annotated[bool, typer.Option(help="drop the stored graph first")] = False,
    every: Annotated[
        str | None, typer.Option(help="re-ingest on a schedule, e.g. 15m, 1h, 30s")
    ] = None,
    backend: BackendOpt = None,
    collection: CollectionOpt = None,
) -> None:
    """Index documents (.txt .md .rst .html .pdf corpus.jsonl) into a collection; only
    changed ones are re-done, and only documents under PATH can be removed (as a job of the
    running `neorag api` at NEORAG_API__URL when that is set, unless --rebuild or --every)."""
    settings = settings_for(backend, collection)
    if settings.api.url and not rebuild and not every:
        from app.ingest_view import run_remote_ingest

        if backend:
            raise NeoragError(
                "--backend does not apply when NEORAG_API__URL sends the ingest to a running "
                "API (it writes to its own backend); drop one of them"
            )
        raise typer.Exit(run_remote_ingest(settings, path, json_out, out, err))
    from app.ingest_command import run_ingest_command

    code = run_ingest_command(settings, path, json_out, rebuild, every, out, err)
    raise typer.Exit(code)


@app.command()
@friendly
def status(
    json_out: JsonOpt = False, backend: BackendOpt = None, collection: CollectionOpt = None
) -> None:
    """A collection's counts of documents, chunks, tokens and edges per kind; its recent
    ingest runs."""
    from app.service import status as collection_status

    settings = settings_for(backend, collection)
    st = collection_status(settings)
    runs = st["runs"]
    if json_out:
        print(json.dumps(st, indent=2))
        return
    from rich.table import Table

    title = f"neorag status ({st['backend']}, collection {settings.collection})"
    table = Table(title=title, show_header=False)
    for key in ("documents", "chunks", "tokens", "communities", "graph_version"):
        table.add_row(key, str(st[key]))
    table.add_row("analytics", _analytics_line(st["analytics"]))
    for kind, n in st["edges"].items():  # type: ignore[union-attr]
        table.add_row(f"edges {kind}", str(n))
    out.print(table)
    if runs:
        last = runs[-1]
        out.print(
            f"last ingest: {last.get('finished', '?')} {last.get('path', '')} "
            f"({last.get('seconds', 0):.1f}s, new {last.get('new', 0)}, changed "
            f"{last.get('changed', 0)}, removed {last.get('removed', 0)}, skipped "
            f"{last.get('skipped', 0)})"
        )


def _analytics_line(info: dict[str, object]) -> str:
    if info["state"] == "none":
        return "not run yet"
    if info["state"] == "fresh":
        return "fresh (full pass on the current graph)"
    line = (
        f"stale: {info['chunks_changed_since_full_pass']} chunks added or removed since the "
        "last full pass, placed by their neighbours; `neorag analytics` runs it now"
    )
    return line + (f" ({info['note']})" if "note" in info else "")


@app.command()
@friendly
def analytics(
    json_out: JsonOpt = False, backend: BackendOpt = None, collection: CollectionOpt = None
) -> None:
    """Run a collection's full analytics pass now (Leiden, FastRP, spectral) if ingest
    deferred it."""
    from app.ingest_service import run_full_analytics

    run = run_full_analytics(settings_for(backend, collection))
    result = {
        "communities": run.report.communities,
        "modularity": run.report.modularity,
        "seconds": run.report.seconds,
        "warnings": run.report.warnings,
    }
    if json_out:
        print(json.dumps(result, indent=2))
        return
    out.print(
        f"analytics: {result['communities']} communities, modularity "
        f"{run.report.modularity:.3f}, {sum(run.report.seconds.values()):.1f}s"
    )
    for warning in run.report.warnings:
        err.print(f"[yellow]warning:[/yellow] {warning}")


@app.command()
@friendly
def ask(
    question: Annotated[str, typer.Argument(help="your question, in quotes")],
    mode: Annotated[str, typer.Option("--mode", "-m", help="retrieval mode")] = "default",
    top_k: Annotated[int | None, typer.Option("--top-k", "-k", help="chunks of context")] = None,
    json_out: JsonOpt = False,
    backend: BackendOpt = None,
    collection: CollectionOpt = None,
) -> None:
    """Answer a question from a collection's documents, with citations and the trace
    (through the running `neorag api` at NEORAG_API__URL when that is set)."""
    from app.ask_command import run_ask

    settings = settings_for(backend, collection)
    if backend and settings.api.url:
        raise NeoragError(
            "--backend does not apply when NEORAG_API__URL sends the question to a running "
            "API (it answers from its own backend); drop one of them"
        )
    run_ask(settings, question, mode, top_k, json_out, out)
    _EXIT_AT_ONCE.append(True)


@app.command("collections")
@friendly
def collections_(json_out: JsonOpt = False, backend: BackendOpt = None) -> None:
    """The collections of the backend, with their document and chunk counts."""
    from app.collections import legacy_note, list_collections

    settings = settings_for(backend)
    found = list_collections(settings)
    if json_out:
        print(json.dumps([c.as_dict() for c in found], indent=2))
        return
    from rich.table import Table

    table = Table(title=f"collections ({settings.backend})")
    for col in ("name", "documents", "chunks", "created"):
        table.add_column(col)
    for c in found:
        table.add_row(c.name, str(c.documents), str(c.chunks), c.created_at)
    out.print(table if found else "no collections yet: `neorag ingest PATH` creates one")
    if note := legacy_note(settings):
        err.print(f"[yellow]note:[/yellow] {note}", highlight=False)


@app.command()
@friendly
def documents(
    json_out: JsonOpt = False, backend: BackendOpt = None, collection: CollectionOpt = None
) -> None:
    """The documents of a collection: id, title and source."""
    from app.service import documents as collection_documents

    settings = settings_for(backend, collection)
    docs = collection_documents(settings)
    if json_out:
        print(json.dumps(docs, indent=2))
        return
    for d in docs:
        out.print(f"{d['id']}\t{d['title']}", highlight=False, soft_wrap=True)
    err.print(f"{len(docs)} documents in collection {settings.collection!r}")


@app.command()
@friendly
def delete(
    targets: Annotated[
        list[str] | None,
        typer.Argument(help="document ids (see `neorag documents`) or files whose documents go"),
    ] = None,
    collection: CollectionOpt = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="do not ask before deleting")] = False,
    json_out: JsonOpt = False,
    backend: BackendOpt = None,
) -> None:
    """Delete named documents, or with only --collection NAME the whole collection.
    Nothing else is touched."""
    from app.delete_command import run_delete

    code = run_delete(backend, collection, targets or [], yes, json_out, out, err)
    raise typer.Exit(code)


@app.command("eval")
@friendly
def eval_(
    dataset_dir: Annotated[
        Path,
        typer.Argument(help="a folder with questions.jsonl and corpus.jsonl (or pages/)"),
    ],
    modes: Annotated[
        str, typer.Option(help="comma-separated modes")
    ] = "default,tigrag,dense,bm25,hybrid",
    backend: BackendOpt = None,
    limit: Annotated[int | None, typer.Option(help="first N questions only")] = None,
    half: Annotated[
        str | None,
        typer.Option(
            help="'even' or 'odd': only the questions at even or odd positions of "
            "questions.jsonl (develop on one half, report the other)"
        ),
    ] = None,
    json_path: Annotated[Path | None, typer.Option("--json", help="write results here")] = None,
    no_bm25: Annotated[
        bool, typer.Option("--no-bm25", help="ablation: presence, not BM25")
    ] = False,
    centrality: Annotated[str | None, typer.Option(help="ablation: ppr or degree")] = None,
    no_rerank: Annotated[
        bool, typer.Option("--no-rerank", help="ablation: no cosine rerank")
    ] = False,
    hops: Annotated[int | None, typer.Option(help="ablation: entity hops (0-3)")] = None,
    beta: Annotated[int | None, typer.Option(help="ablation: final chunks β")] = None,
    th: Annotated[float | None, typer.Option(help="ablation: cumulative-mass pool th")] = None,
    budget: Annotated[int | None, typer.Option(help="ablation: token budget")] = None,
    answer: Annotated[
        str | None,
        typer.Option(help="also answer: 'offline' (the LLM-free reader) adds EM, F1, answer_hit"),
    ] = None,
    distractors: Annotated[
        Path | None,
        typer.Option(
            help="another dataset folder whose corpus is indexed beside this one's "
            "(a mixed collection); only this dataset's questions are asked"
        ),
    ] = None,
    per_question: Annotated[
        bool,
        typer.Option(
            "--per-question",
            help="add each question's first gold rank, recall, answer hit and short answer "
            "to the JSON",
        ),
    ] = False,
) -> None:
    """Recall@1/2/5/10, MRR, answer@5, context size and latency per mode on a QA set: a
    corpus.jsonl of passages, or a folder of pages (a documentation tree)."""
    from app.eval.harness import Dataset, markdown_table, run_eval
    from app.overrides import ablation_overrides, with_overrides

    settings = with_overrides(
        settings_for(backend),
        ablation_overrides(no_bm25, centrality, no_rerank, hops, beta, th, budget),
    )
    dataset = Dataset.load(dataset_dir, limit, half)
    mixed_in = Dataset.load(distractors) if distractors is not None else None
    with RichProgress(err) as progress:
        report = run_eval(
            settings,
            dataset,
            [m.strip() for m in modes.split(",") if m.strip()],
            progress=progress,
            answer=answer,
            distractors=mixed_in,
            per_question=per_question,
        )
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(report, indent=2) + "\n")
    print(markdown_table(report))


@app.command(
    "cypher",
    help="Run ad-hoc Cypher on the Neo4j backend, read-only unless --write.\n\n"
    "Read-only means the statement's plan is checked before it runs: LOAD CSV, writes, "
    "dbms.*, GDS catalog changes (gds.graph.project/drop/export, ...) and mutate/write "
    "modes are refused; schema introspection, db.index.*.query*, gds.graph.list and GDS "
    "stream/stats/estimate modes on existing projections are allowed.",
)
@friendly
def cypher_(
    statement: Annotated[str, typer.Argument(help="a Cypher statement in quotes; - reads stdin")],
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param", "-p", help="name=value, repeatable; value read as JSON if valid, else text"
        ),
    ] = None,
    write: Annotated[
        bool, typer.Option("--write", help="allow the statement to write (default: read-only)")
    ] = False,
    json_out: JsonOpt = False,
    timeout: Annotated[
        float | None,
        typer.Option(
            help="seconds the server may spend (default NEORAG_CYPHER__TIMEOUT_SECONDS, 60)"
        ),
    ] = None,
    max_rows: Annotated[
        int | None,
        typer.Option(min=1, help="rows to fetch at most (default NEORAG_CYPHER__MAX_ROWS, 1000)"),
    ] = None,
    backend: BackendOpt = None,
) -> None:
    """Run ad-hoc Cypher on the Neo4j backend, read-only unless --write."""
    from app.cypher_command import run_cypher_command

    run_cypher_command(
        settings_for(backend),
        statement,
        param or [],
        write=write,
        json_out=json_out,
        timeout=timeout,
        max_rows=max_rows,
        out=out,
        err=err,
    )


def streamlit_argv(port: int, address: str) -> list[str]:
    """The command `serve` execs: the checkout's streamlit_app.py, else the one in the
    working directory (a non-editable install has no checkout next to the package)."""
    name = "streamlit_app.py"
    candidates = [Path(__file__).resolve().parents[1] / name, Path.cwd() / name]
    script = next((p for p in candidates if p.is_file()), None)
    if script is None:
        raise NeoragError("cannot find streamlit_app.py; run `neorag serve` in the neorag checkout")
    options = {
        "--server.port": str(port),
        "--server.address": address,
        "--server.headless": "true",
        "--browser.gatherUsageStats": "false",
    }
    return [sys.executable, "-m", "streamlit", "run", str(script), *chain(*options.items())]


@app.command()
@friendly
def serve(
    port: Annotated[int, typer.Option(min=1, max=65535, help="port to listen on")] = 8501,
    address: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    backend: BackendOpt = None,
) -> None:
    """Open the chat (Streamlit) on http://ADDRESS:PORT."""
    argv = streamlit_argv(port, address)
    if backend:
        os.environ["NEORAG_BACKEND"] = backend
    os.execv(argv[0], argv)


@app.command()
@friendly
def api(
    host: Annotated[str | None, typer.Option(help="address (default 127.0.0.1)")] = None,
    port: Annotated[int | None, typer.Option(min=1, max=65535, help="port (default 8000)")] = None,
    workers: Annotated[
        int | None, typer.Option(min=1, max=64, help="query processes (default 2)")
    ] = None,
    backend: BackendOpt = None,
    collection: CollectionOpt = None,
) -> None:
    """Serve the HTTP API (OpenAPI at /docs, OpenAI-compatible /v1/chat/completions, MCP at
    /mcp) on http://HOST:PORT. Settings: NEORAG_API__* (keys, workers, limits)."""
    from app.api.launch import serve as serve_api

    settings = settings_for(backend, collection)
    cfg = settings.api
    serve_api(settings, host or cfg.host, port or cfg.port, workers or cfg.workers)


@app.command()
@friendly
def mcp(backend: BackendOpt = None, collection: CollectionOpt = None) -> None:
    """Serve the MCP tools (search, ask, get_chunk, status, cypher) over stdio."""
    from app.mcp_server import serve_stdio

    serve_stdio(settings_for(backend, collection))


# Set by a command whose process may end as soon as its output is out (see `main`).
_EXIT_AT_ONCE: list[bool] = []


def main() -> None:
    try:
        app()
    except NeoragError as exc:  # raised outside a command
        err.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except SystemExit as exc:
        if _EXIT_AT_ONCE and exc.code in (0, None):
            _exit_now()
        raise


def _exit_now() -> None:
    """End the process once the command's output is out: the interpreter's teardown of
    numpy, FAISS, onnxruntime and spaCy adds about 0.3 s to `neorag ask`, which takes two
    (exit handlers still run; nothing is left open: the command closed its stores)."""
    import atexit

    sys.stdout.flush()
    sys.stderr.flush()
    atexit._run_exitfuncs()
    os._exit(0)


if __name__ == "__main__":
    main()
