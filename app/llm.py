"""Optional answer generation through the well-kept langchain integrations.

`chat_model(settings)` returns None (extractive answers) unless NEORAG_LLM__PROVIDER is set:
`openai` is langchain-openai's `ChatOpenAI` (any OpenAI-compatible endpoint: OpenAI, vLLM,
llama.cpp's server, LiteLLM, Ollama's /v1 …) with its retries, streaming and token usage;
`ollama` is langchain-ollama's `ChatOllama` over Ollama's native API. Models are built once
per process and configuration and shared by threads (their HTTP clients are thread-safe).
The API key comes from the environment and is never logged or shown in errors.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from app.settings import LlmConfig, Settings
from graph.errors import NeoragError

if TYPE_CHECKING:  # langchain loads in 0.4 s: only when a chat model is configured
    from langchain_core.language_models.chat_models import BaseChatModel

DEFAULT_URLS = {"ollama": "http://127.0.0.1:11434", "openai": "https://api.openai.com/v1"}
NO_KEY = "none"  # local OpenAI-compatible servers ignore the key but the client wants one


def chat_model(settings: Settings) -> BaseChatModel | None:
    cfg: LlmConfig = settings.llm
    if cfg.provider == "none":
        return None
    if not cfg.model:
        raise NeoragError("NEORAG_LLM__PROVIDER is set but NEORAG_LLM__MODEL is empty")
    return _build(
        cfg.provider,
        cfg.model,
        cfg.base_url or DEFAULT_URLS[cfg.provider],
        cfg.api_key.get_secret_value(),
        cfg.temperature,
        cfg.timeout,
        cfg.max_retries,
    )


@lru_cache(maxsize=8)
def _build(
    provider: str,
    model: str,
    base_url: str,
    api_key: str,
    temperature: float,
    timeout: float,
    max_retries: int,
) -> BaseChatModel:
    if provider == "ollama":
        from langchain_ollama import ChatOllama

        return ChatOllama(
            model=model,
            base_url=base_url.rstrip("/").removesuffix("/v1"),
            temperature=temperature,
            client_kwargs={"timeout": timeout},
        )
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    return ChatOpenAI(
        model=model,
        base_url=base_url,
        api_key=SecretStr(api_key or NO_KEY),
        temperature=temperature,
        timeout=timeout,
        max_retries=max_retries,
        stream_usage=True,
    )


def model_error(exc: Exception) -> NeoragError:
    """One line naming the fix for a chat model failure (never the key, never a trace)."""
    if isinstance(exc, NeoragError):
        return exc
    status = getattr(exc, "status_code", None) or getattr(
        getattr(exc, "response", None), "status_code", None
    )
    if status:
        return NeoragError(
            f"the chat model answered HTTP {status}; check NEORAG_LLM__MODEL, "
            "NEORAG_LLM__BASE_URL and NEORAG_LLM__API_KEY"
        )
    return NeoragError(
        f"cannot reach the chat model ({type(exc).__name__}): is it running at "
        "NEORAG_LLM__BASE_URL?"
    )
