"""Answers with citations.

With a chat model configured (app/llm.py), the model gets the numbered evidence and an
evidence-grounded prompt: reason briefly, then answer concisely, citing chunk numbers.
Without one, the answer is extractive: the evidence sentences closest to the question,
each cited with the number of the chunk it came from. Citation numbers always refer to
`RetrievalResult.context` (1-based), so the UI and CLI can open the cited chunk.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from app.retrieval.base import RetrievalResult
from ingest.sentences import split_sentences

if TYPE_CHECKING:
    from langchain_core.language_models.chat_models import BaseChatModel

    from app.engine import Engine

EXTRACTIVE_SENTENCES = 3
_CITATION = re.compile(r"\[(\d+)\]")

SYSTEM_PROMPT = (
    "You answer questions using only the numbered evidence passages you are given. "
    "First write a short line of reasoning that connects the evidence across passages "
    "(multi-hop questions need two or more), then the final answer on a line starting with "
    "'Answer:'. Keep the answer concise (a name, date, number or short phrase when possible). "
    "Cite the passages you used by their numbers in square brackets, like [1] or [2][3]. "
    "If the evidence does not contain the answer, say so instead of guessing."
)


@dataclass(slots=True)
class Answer:
    text: str
    citations: list[int]
    reasoning: str = ""
    extractive: bool = True
    evidence: list[tuple[int, str]] = field(default_factory=list)  # (chunk number, sentence)
    usage: dict[str, int] = field(default_factory=dict)  # the chat model's tokens, if any

    def as_dict(self) -> dict[str, object]:
        return {
            "text": self.text,
            "citations": self.citations,
            "reasoning": self.reasoning,
            "extractive": self.extractive,
            "evidence": [{"chunk": n, "sentence": s} for n, s in self.evidence],
        }


def evidence_block(result: RetrievalResult) -> str:
    parts = []
    for n, chunk in enumerate(result.context, start=1):
        where = " / ".join(p for p in (chunk.title, *chunk.section_path) if p)
        parts.append(f"[{n}] {where}\n{chunk.text}")
    if result.chains:
        parts.append("Reasoning chains found in the graph:\n" + "\n".join(result.chains))
    return "\n\n".join(parts)


def user_prompt(result: RetrievalResult) -> str:
    return f"Evidence:\n{evidence_block(result)}\n\nQuestion: {result.question}"


def citations_in(text: str, n_chunks: int) -> list[int]:
    return sorted({int(m) for m in _CITATION.findall(text) if 1 <= int(m) <= n_chunks})


def extractive_answer(engine: Engine, result: RetrievalResult) -> Answer:
    """The best sentence of each of the most relevant chunks (cosine of MiniLM embeddings
    plus word overlap with the question), in context order, each with its chunk number."""
    if not result.context:
        return Answer("No indexed passage matches this question.", [])
    sentences: list[tuple[int, str]] = []
    for n, chunk in enumerate(result.context, start=1):
        sentences += [(n, s) for s in split_sentences(chunk.text) if len(s.split()) >= 3]
    if not sentences:
        sentences = [(n, c.text) for n, c in enumerate(result.context, start=1)]
    vectors = engine.encode_queries([s for _, s in sentences])
    q_vec = engine.encode_queries([result.question])[0]
    q_words = set(engine.analyzer.tokens(result.question))
    scores = []
    for (n, s), v in zip(sentences, vectors, strict=True):
        words = set(engine.analyzer.tokens(s))
        overlap = len(words & q_words) / max(len(q_words), 1)
        rank_prior = 1.0 / (1.0 + 0.1 * (n - 1))
        scores.append(float(np.dot(v, q_vec)) + 0.3 * overlap + 0.05 * rank_prior)
    # One sentence per chunk: a multi-hop answer spans passages (the bridge passage names
    # the entity, another holds the fact), so the best sentence of each chunk competes.
    best_of: dict[int, int] = {}
    for i, (n, _) in enumerate(sentences):
        if n not in best_of or scores[i] > scores[best_of[n]]:
            best_of[n] = i
    top = sorted(best_of.values(), key=lambda i: -scores[i])[:EXTRACTIVE_SENTENCES]
    chosen = [sentences[i] for i in sorted(top)]
    text = " ".join(f"{s} [{n}]" for n, s in chosen)
    return Answer(text, sorted({n for n, _ in chosen}), extractive=True, evidence=chosen)


def parse_generation(text: str, n_chunks: int) -> Answer:
    reasoning, _, final = text.partition("Answer:")
    if not final:
        reasoning, final = "", text
    final = final.strip()
    return Answer(
        final,
        citations_in(text, n_chunks),
        reasoning=reasoning.strip(),
        extractive=False,
    )


def add_usage(total: dict[str, int], message: object) -> dict[str, int]:
    """Add a langchain message's `usage_metadata` to `total`, in the OpenAI names."""
    meta = getattr(message, "usage_metadata", None) or {}
    for ours, theirs in USAGE_NAMES.items():
        if theirs in meta:
            total[ours] = total.get(ours, 0) + int(meta[theirs])
    return total


USAGE_NAMES = {
    "prompt_tokens": "input_tokens",
    "completion_tokens": "output_tokens",
    "total_tokens": "total_tokens",
}


def generate(model: BaseChatModel, result: RetrievalResult) -> Answer:
    from langchain_core.messages import HumanMessage, SystemMessage

    from app.llm import model_error

    try:
        reply = model.invoke([SystemMessage(SYSTEM_PROMPT), HumanMessage(user_prompt(result))])
    except Exception as exc:
        raise model_error(exc) from None
    ans = parse_generation(str(reply.content), len(result.context))
    ans.usage = add_usage({}, reply)
    return ans


def stream(
    model: BaseChatModel, result: RetrievalResult, usage: dict[str, int] | None = None
) -> Iterator[str]:
    """Tokens as the model produces them (the UI streams them); parse the joined text with
    `parse_generation` at the end. `usage`, if given, receives the model's token counts."""
    from langchain_core.messages import HumanMessage, SystemMessage

    from app.llm import model_error

    messages = [SystemMessage(SYSTEM_PROMPT), HumanMessage(user_prompt(result))]
    try:
        for chunk in model.stream(messages):
            if usage is not None:
                add_usage(usage, chunk)
            if chunk.content:
                yield str(chunk.content)
    except Exception as exc:
        raise model_error(exc) from None


def answer(engine: Engine, result: RetrievalResult, model: BaseChatModel | None = None) -> Answer:
    if model is None or not result.context:
        return extractive_answer(engine, result)
    return generate(model, result)
