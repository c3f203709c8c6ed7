"""The MCP adapter: tools `search`, `ask`, `get_chunk`, `status` and `cypher` over the
service layer, through the official `mcp` SDK.

`neorag mcp` serves them over stdio (for desktop clients and agents that start the server
themselves); `neorag api` mounts the same server at /mcp over streamable HTTP. `cypher` is
read-only through app/cypher_service.py, the guard `neorag cypher` uses: a statement whose
plan writes, loads files or changes GDS catalogs is refused with the guard's reason.
Tool errors are the service's one-line messages, never tracebacks.

Each tool exercises one capability (`TOOLS`), checked against app/access.py on every call,
the same table the /v1 routes use: over /mcp the caller's scope is the one its key gave the
guard in app/api/server.py; over stdio the caller is the local user, with full rights.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from app import access, service
from app.cypher_service import run_cypher
from app.queries import LocalQueries, Queries
from app.retrieval import mode_names
from app.service import QueryOptions
from app.settings import Settings, load_settings
from graph.errors import NeoragError

INSTRUCTIONS = (
    "neorag answers questions from an indexed document collection. Use `search` to get the "
    "ranked evidence passages (with chunk ids) for a question, `ask` for a cited answer, "
    "`get_chunk` to read one passage in full, `status` for what a collection holds, and "
    "`cypher` for read-only Cypher on the Neo4j backend. Every tool but `cypher` takes "
    "`collection` (omitted: the server's). Modes: " + ", ".join(mode_names())
)
SEARCH_TEXT_CHARS = 1200  # passages are cut in search results; get_chunk reads one whole
# tool -> the capability it exercises (app/access.py says which scope that needs)
TOOLS: dict[str, str] = {
    "search": "read",
    "ask": "read",
    "get_chunk": "read",
    "status": "read",
    "cypher": "cypher",
}


def _run(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except NeoragError as exc:
        raise ToolError(str(exc).splitlines()[0]) from None
    except ValueError as exc:  # an invalid collection name
        raise ToolError(str(exc).splitlines()[0]) from None


def bound(settings: Settings, collection: str | None) -> Settings:
    """`settings` bound to `collection` (None: the server's own collection)."""
    return settings if collection is None else settings.for_collection(collection)


def caller_scope(context: Context[Any, Any] | None) -> str | None:
    """The scope of whoever sent this tool call: the /mcp guard's mark on an HTTP request,
    full rights over stdio or in-process (no HTTP request: the local user); None for an
    HTTP request the guard never saw, which is refused (fail closed)."""
    if context is None:
        return access.FULL
    try:
        request = context.request_context.request
    except ValueError:  # outside a request: called in-process
        return access.FULL
    if request is None:  # stdio
        return access.FULL
    scope = getattr(request, "scope", None)
    found = scope.get(access.CALLER_SCOPE) if isinstance(scope, dict) else None
    return found if isinstance(found, str) else None


class NeoragMCP(MCPServer):
    """The SDK's server with two gates before every tool: the caller's scope must grant
    the tool's capability (else a tool error saying which scope it needs), and every
    argument must be one the tool reads (the SDK would drop the others silently, so a
    `collection` given to `cypher` would be ignored instead of refused)."""

    _arguments: dict[str, set[str]] | None = None

    async def _known_arguments(self, name: str) -> set[str] | None:
        if self._arguments is None:
            self._arguments = {
                t.name: set((t.input_schema or {}).get("properties", {}))
                for t in await self.list_tools()
            }
        return self._arguments.get(name)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        capability = TOOLS.get(name, "admin")  # a tool missing from the table: full rights
        scope = caller_scope(context)
        if scope is None:
            raise ToolError("unauthorized: this request did not pass the /mcp key check")
        if not access.allows(scope, capability):
            raise ToolError("forbidden: " + access.refusal(scope, capability, f"the {name} tool"))
        known = await self._known_arguments(name)
        unknown = sorted(set(arguments) - known) if known is not None else []
        if unknown:
            raise ToolError(
                f"the {name} tool takes no {', '.join(unknown)} argument; it takes "
                f"{', '.join(sorted(known or ())) or 'no arguments'}"
                + ("" if "collection" in (known or ()) else " (it reads no collection)")
            )
        return await super().call_tool(name, arguments, context)


def build_server(queries: Queries, settings: Settings) -> MCPServer:
    server = NeoragMCP(name="neorag", instructions=INSTRUCTIONS, log_level="WARNING")
    max_chars = settings.question_limit

    @server.tool(description="Ranked evidence passages for a question (no answer).")
    def search(
        question: str,
        mode: str = "default",
        top_k: int | None = None,
        collection: str | None = None,
    ) -> dict[str, Any]:
        found = _run(
            queries.retrieve,
            _run(bound, settings, collection),
            question,
            QueryOptions(mode=mode, top_k=top_k),
            max_chars=max_chars,
        )
        payload = service.retrieval_payload(found)
        return {
            "collection": payload["collection"],
            "index_version": payload["index_version"],
            "mode": payload["mode"],
            "passages": [
                {
                    "n": n,
                    "chunk_id": c["chunk_id"],
                    "doc_id": c["doc_id"],
                    "title": c["title"],
                    "section": " / ".join(c["section_path"]),
                    "text": c["text"][:SEARCH_TEXT_CHARS],
                }
                for n, c in enumerate(payload["context"], start=1)
            ],
            "chains": payload["chains"],
        }

    @server.tool(description="A cited answer to a question; citations [n] name passages.")
    def ask(question: str, mode: str = "default", collection: str | None = None) -> dict[str, Any]:
        asked = _run(
            queries.ask,
            _run(bound, settings, collection),
            question,
            QueryOptions(mode=mode),
            max_chars=max_chars,
        )
        payload = asked.payload()
        return {
            "answer": payload["answer"],
            "citations": [
                {k: c[k] for k in ("n", "chunk_id", "doc_id", "title", "source")}
                for c in payload["citations"]
            ],
            "collection": payload["collection"],
            "index_version": payload["index_version"],
            "usage": payload["usage"],
        }

    @server.tool(description="One passage (chunk) in full, by the chunk id search returned.")
    def get_chunk(chunk_id: str, collection: str | None = None) -> dict[str, Any]:
        return _run(queries.get_chunk, _run(bound, settings, collection), chunk_id)  # type: ignore[no-any-return]

    @server.tool(description="A collection's documents, chunks, edges and recent ingest runs.")
    def status(collection: str | None = None) -> dict[str, Any]:
        return _run(service.status, _run(bound, settings, collection))

    @server.tool(
        description="Read-only Cypher on the Neo4j backend (writes, LOAD CSV and GDS catalog "
        "changes are refused). `params` are passed as Cypher parameters."
    )
    def cypher(statement: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        result = _run(run_cypher, settings, statement, params or {})
        return {"keys": result.keys, "rows": result.rows, "truncated": result.truncated}

    return server


def serve_stdio(settings: Settings | None = None) -> None:
    """`neorag mcp`: the tools over stdin/stdout until the client closes them."""
    settings = settings or load_settings()
    queries = LocalQueries()
    try:
        build_server(queries, settings).run("stdio")
    finally:
        queries.close()
