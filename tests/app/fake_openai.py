"""A local OpenAI-compatible chat server for tests: a real HTTP server on 127.0.0.1 that
answers `/v1/chat/completions` with a fixed reply, whole or streamed as Server-Sent Events,
with token usage, in the wire format the `openai` client (and so `ChatOpenAI`) parses."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = ("The ", "Silverrun ", "links them [1].\n", "Answer: ", "the Silverrun [1]")
USAGE = {"prompt_tokens": 321, "completion_tokens": 17, "total_tokens": 338}


@dataclass
class FakeChat:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def last(self) -> dict[str, Any]:
        return self.requests[-1]


def _handler(state: FakeChat, reply: tuple[str, ...]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(body)
            base = {"id": "chatcmpl-fake", "created": int(time.time()), "model": body["model"]}
            if not body.get("stream"):
                data = json.dumps(
                    base
                    | {
                        "object": "chat.completion",
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": "".join(reply)},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": USAGE,
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            chunk = base | {"object": "chat.completion.chunk"}
            for token in reply:
                delta = {"index": 0, "delta": {"content": token}, "finish_reason": None}
                self._event(chunk | {"choices": [delta]})
            self._event(chunk | {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            if (body.get("stream_options") or {}).get("include_usage"):
                self._event(chunk | {"choices": [], "usage": USAGE})
            self.wfile.write(b"data: [DONE]\n\n")

        def _event(self, data: dict[str, Any]) -> None:
            self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler], state: FakeChat, path: str) -> Iterator[None]:
    """Run `handler` on a free port of 127.0.0.1 for the block; `state.url` is its address
    followed by `path`."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}{path}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def fake_chat_server(reply: tuple[str, ...] = REPLY) -> Iterator[FakeChat]:
    state = FakeChat(url="")
    with serving(_handler(state, reply), state, "/v1"):
        yield state
