"""Request bodies. Types are strict (a number is not a question, a string is not a top-k),
so wrong JSON types are a 422 naming the field, never a coercion surprise or a 500."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

SERVER_COLLECTION = "a collection (default: the one the server was started with)"


class Strict(BaseModel):
    """neorag's own bodies: an unknown field (a misspelt `collection`, a `collection` on
    /v1/cypher) is a 422 naming it, never a silent default."""

    model_config = ConfigDict(strict=True, extra="forbid")


class RetrieveRequest(Strict):
    question: str = Field(
        description="the question, at most NEORAG_RETRIEVAL__MAX_QUESTION_CHARS characters "
        "(or NEORAG_API__MAX_QUESTION_CHARS when lower)"
    )
    mode: str = Field("default", description="a retrieval mode (GET /v1/models lists them)")
    top_k: int | None = Field(None, ge=1, le=50, description="chunks of context")
    budget: int | None = Field(None, ge=64, le=16000, description="token budget (budgeted modes)")
    hops: int | None = Field(None, ge=0, le=3, description="entity hops (TIGRAG)")
    collection: str | None = Field(
        None, description=f"{SERVER_COLLECTION}; older spelling of ?collection="
    )


class AskRequest(RetrieveRequest):
    stream: bool = Field(False, description="answer as Server-Sent Events")


class IngestRequest(Strict):
    path: str = Field(description="a file or folder under the allowed ingest roots")
    collection: str | None = Field(
        None, description=f"{SERVER_COLLECTION}; older spelling of ?collection="
    )


class CypherRequest(Strict):
    statement: str
    params: dict[str, Any] = Field(default_factory=dict)


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: str
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return " ".join(str(p.get("text", "")) for p in self.content if p.get("type") == "text")
        return self.content or ""


class ChatRequest(BaseModel):
    """The OpenAI Chat Completions request; `model` is a retrieval mode. Fields neorag does
    not use (temperature, …) are accepted and ignored, as OpenAI clients send them;
    `collection` (what openai's `extra_body` sends; ?collection= is the one documented
    way) and `top_k` are extras."""

    model_config = ConfigDict(extra="ignore")
    model: str = "default"
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    collection: str | None = Field(None, description=SERVER_COLLECTION)
    top_k: int | None = Field(None, ge=1, le=50)
