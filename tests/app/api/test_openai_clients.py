"""The OpenAI-compatible endpoint through the clients people point at it: the `openai`
Python client and langchain-openai's ChatOpenAI, against a real uvicorn server, streaming
and not; with no chat model (extractive answers) and with one (a local OpenAI-compatible
fake), whose token usage reaches the response and /metrics."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI
from openai import BadRequestError, OpenAI

from app.api.server import create_app
from app.overrides import with_overrides
from app.settings import Settings
from tests.app.api.conftest import LiveServer, live_server, wait_ready
from tests.app.fake_openai import USAGE, fake_chat_server
from tests.app.test_streamlit_app import QUESTION


def openai_client(server: LiveServer) -> OpenAI:
    return OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0, timeout=120)


def test_openai_client_lists_models_and_answers(server: LiveServer) -> None:
    client = openai_client(server)
    assert "tigrag" in [m.id for m in client.models.list()]
    reply = client.chat.completions.create(
        model="tigrag",
        messages=[
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Tell me about rivers."},
            {"role": "assistant", "content": "Which one?"},
            {"role": "user", "content": QUESTION},
        ],
    )
    text = reply.choices[0].message.content or ""
    assert reply.object == "chat.completion" and reply.model == "tigrag"
    assert reply.choices[0].finish_reason == "stop"
    assert "Silverrun" in text and "Sources:\n[1]" in text
    extension = reply.model_extra["neorag"]
    assert extension["mode"] == "tigrag" and extension["citations"]
    assert text.split("\n\nSources:")[0] == extension["answer"]["text"]


def test_openai_client_streams(server: LiveServer) -> None:
    client = openai_client(server)
    chunks = list(
        client.chat.completions.create(
            model="default",
            messages=[{"role": "user", "content": QUESTION}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert len(chunks) >= 4 and all(c.object == "chat.completion.chunk" for c in chunks)
    assert "Silverrun" in text and "Sources:\n[1]" in text
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 0
    whole = client.chat.completions.create(
        model="default", messages=[{"role": "user", "content": QUESTION}]
    )
    assert text == whole.choices[0].message.content


def test_openai_client_sees_errors_as_api_errors(server: LiveServer) -> None:
    client = openai_client(server)
    with pytest.raises(BadRequestError) as info:
        client.chat.completions.create(
            model="no-such-mode", messages=[{"role": "user", "content": QUESTION}]
        )
    assert info.value.status_code == 400
    assert "unknown mode 'no-such-mode'" in str(info.value)


def test_chatopenai_invoke_and_stream(server: LiveServer) -> None:
    llm = ChatOpenAI(
        base_url=f"{server.url}/v1", api_key="unused", model="hybrid", max_retries=0, timeout=120
    )
    messages = [SystemMessage("Answer from the documents."), HumanMessage(QUESTION)]
    whole = llm.invoke(messages)
    assert "Silverrun" in str(whole.content) and "Sources:" in str(whole.content)
    pieces = [str(p.content) for p in llm.stream(messages)]
    assert len(pieces) > 2 and "".join(pieces) == whole.content


@pytest.fixture(scope="module")
def generating(index_settings: Settings) -> Iterator[tuple[LiveServer, object]]:
    """The API with a chat model: ChatOpenAI inside neorag, talking to a local fake."""
    reply = ("The Silverrun flows there [1].\n", "Answer: ", "the Silverrun [1]")
    with fake_chat_server(reply) as chat:
        settings = with_overrides(
            index_settings,
            {"llm.provider": "openai", "llm.model": "fake-model", "llm.base_url": chat.url},
        )
        with live_server(create_app(settings)) as live:
            wait_ready(live.url)
            yield live, chat


def test_generated_answers_carry_token_usage(generating: tuple[LiveServer, object]) -> None:
    server, chat = generating
    before = _token_total(server)
    client = openai_client(server)
    reply = client.chat.completions.create(
        model="default", messages=[{"role": "user", "content": QUESTION}]
    )
    assert reply.choices[0].message.content.startswith("the Silverrun [1]")
    assert reply.usage.prompt_tokens == USAGE["prompt_tokens"]
    assert reply.usage.completion_tokens == USAGE["completion_tokens"]
    assert QUESTION in chat.last["messages"][-1]["content"]  # type: ignore[attr-defined]
    chunks = list(
        client.chat.completions.create(
            model="default",
            messages=[{"role": "user", "content": QUESTION}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert "Silverrun" in text and "Sources:\n[1]" in text
    assert chunks[-1].usage.total_tokens == USAGE["total_tokens"]
    asked = httpx.post(f"{server.url}/v1/ask", json={"question": QUESTION}, timeout=120).json()
    assert asked["usage"] == USAGE and asked["answer"]["extractive"] is False
    assert _token_total(server) - before == 3 * (
        USAGE["prompt_tokens"] + USAGE["completion_tokens"]
    )


def _token_total(server: LiveServer) -> float:
    text = httpx.get(f"{server.url}/metrics", timeout=30).text
    total = 0.0
    for line in text.splitlines():
        if line.startswith("neorag_llm_tokens_total{"):
            total += float(line.rsplit(" ", 1)[1])
    return total
