"""Optional answer generation through a langchain-core chat model.

`chat_model(settings)` returns None (extractive answers) unless NEORAG_LLM__PROVIDER is set.
Both supported providers speak the OpenAI chat-completions protocol (Ollama serves it at
/v1), so one small langchain-core `BaseChatModel` over HTTP covers them without extra
packages; any other langchain-core chat model can be passed to `app.answer.answer` directly.
The API key comes from the environment and is never logged or shown in errors.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import SecretStr

from app.settings import LlmConfig, Settings
from graph.errors import NeoragError

DEFAULT_URLS = {"ollama": "http://127.0.0.1:11434/v1", "openai": "https://api.openai.com/v1"}
_ROLES = {"human": "user", "ai": "assistant", "system": "system"}


class OpenAICompatibleChat(BaseChatModel):
    base_url: str
    model: str
    api_key: SecretStr = SecretStr("")
    temperature: float = 0.0
    timeout: float = 60.0

    @property
    def _llm_type(self) -> str:
        return "openai-compatible"

    def _payload(self, messages: list[BaseMessage], stream: bool) -> dict[str, Any]:
        return {
            "model": self.model,
            "temperature": self.temperature,
            "stream": stream,
            "messages": [
                {"role": _ROLES.get(m.type, "user"), "content": str(m.content)} for m in messages
            ],
        }

    def _headers(self) -> dict[str, str]:
        key = self.api_key.get_secret_value()
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def _error(self, exc: Exception) -> NeoragError:
        if isinstance(exc, httpx.HTTPStatusError):
            return NeoragError(
                f"the chat model at {self.base_url} answered HTTP {exc.response.status_code}; "
                "check NEORAG_LLM__MODEL and NEORAG_LLM__API_KEY"
            )
        return NeoragError(f"cannot reach the chat model at {self.base_url}: is it running?")

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        try:
            response = httpx.post(
                self._url(),
                json=self._payload(messages, False),
                headers=self._headers(),
                timeout=self.timeout,
            )
            response.raise_for_status()
            text = response.json()["choices"][0]["message"]["content"] or ""
        except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
            raise self._error(exc) from None
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        try:
            with httpx.stream(
                "POST",
                self._url(),
                json=self._payload(messages, True),
                headers=self._headers(),
                timeout=self.timeout,
            ) as response:
                response.raise_for_status()
                for line in response.iter_lines():
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        break
                    delta = json.loads(data)["choices"][0].get("delta", {}).get("content")
                    if delta:
                        if run_manager:
                            run_manager.on_llm_new_token(delta)
                        yield ChatGenerationChunk(message=AIMessageChunk(content=delta))
        except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
            raise self._error(exc) from None


def chat_model(settings: Settings) -> BaseChatModel | None:
    cfg: LlmConfig = settings.llm
    if cfg.provider == "none":
        return None
    if not cfg.model:
        raise NeoragError("NEORAG_LLM__PROVIDER is set but NEORAG_LLM__MODEL is empty")
    return OpenAICompatibleChat(
        base_url=cfg.base_url or DEFAULT_URLS[cfg.provider],
        model=cfg.model,
        api_key=cfg.api_key,
        temperature=cfg.temperature,
        timeout=cfg.timeout,
    )
