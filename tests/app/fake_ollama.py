"""A local Ollama server for tests: a real HTTP server on 127.0.0.1 answering Ollama's
native `/api/chat` (what langchain-ollama's `ChatOllama` calls), whole or streamed as
newline-delimited JSON, with Ollama's token counts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.app.fake_openai import FakeChat, serving

PROMPT_TOKENS, COMPLETION_TOKENS = 222, 11


def _handler(state: FakeChat, reply: tuple[str, ...]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            if self.path != "/api/chat":
                self.send_error(404)
                return
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(body)
            base = {"model": body["model"], "created_at": "2026-12-04T00:00:00Z"}
            done = base | {
                "done": True,
                "done_reason": "stop",
                "prompt_eval_count": PROMPT_TOKENS,
                "eval_count": COMPLETION_TOKENS,
            }
            if body.get("stream", True):
                lines = [
                    base | {"message": {"role": "assistant", "content": t}, "done": False}
                    for t in reply
                ]
                lines.append(done | {"message": {"role": "assistant", "content": ""}})
            else:
                lines = [done | {"message": {"role": "assistant", "content": "".join(reply)}}]
            data = "".join(json.dumps(line) + "\n" for line in lines).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def fake_ollama_server(reply: tuple[str, ...]) -> Iterator[FakeChat]:
    state = FakeChat(url="")
    with serving(_handler(state, reply), state, ""):
        yield state
