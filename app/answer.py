"""Answers with citations.

With a chat model configured (app/llm.py), the model gets the numbered evidence and an
evidence-grounded prompt: reason briefly, then answer concisely, citing chunk numbers.
Without one, the answer is extractive: a short answer (at most ten words) named by the
offline reader (app/reader), then the evidence sentences it rests on, each cited with the
number of the chunk it came from and each said once (overlapping chunks repeat
sentences). The short answer is shown only when the reading's support
(app/reader/confidence.py) reaches `Settings.answer_min_confidence`; below it the answer
says plainly that the corpus gives no short answer and cites the closest sentences
(`abstained`), so a nonsense or out-of-corpus question gets no confident guess. Citation
numbers always refer to `RetrievalResult.context` (1-based), so the UI and CLI can open the
cited chunk.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.eval.metrics import normalize_answer
from app.reader import Evidence, Reader, Reading, shared_reader
from app.reader.code import quotes_code
from app.reader.reader import DESCRIPTION_HOW
from app.retrieval.base import RetrievalResult
from ingest.sentences import split_sentences

if TYPE_CHECKING:
    from langchain_core.language_models.chat_models import BaseChatModel

    from app.engine import Engine

EXTRACTIVE_SENTENCES = 3
NOT_FOUND = "Not found in the corpus; the closest passages:"
NO_SHORT_ANSWER = "Not found in the corpus as a short answer; the closest passages:"
DESCRIPTION = "No short answer: the question asks for a description; the closest passages:"
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
    short: str = ""  # the reader's short answer (extractive only; "" when none was found)
    usage: dict[str, int] = field(default_factory=dict)  # the chat model's tokens, if any
    abstained: bool = False  # extractive, and no short answer is supported: `text` says so
    confidence: float | None = None  # the reader's support for its short answer, 0-1

    def as_dict(self) -> dict[str, object]:
        return {
            "short": self.short,
            "abstained": self.abstained,
            "confidence": self.confidence,
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


def evidence_sentences(engine: Engine, result: RetrievalResult) -> list[Evidence]:
    """Every sentence of the context once (the first chunk that has it keeps it), with
    its word overlap with the question as relevance. No embeddings: the reader weighs
    sentences by what they and the passages leading to them cover of the question."""
    q_words = set(engine.analyzer.tokens(result.question))
    seen: set[str] = set()
    out: list[Evidence] = []
    for n, chunk in enumerate(result.context, start=1):
        for position, s in enumerate(split_sentences(chunk.text)):
            key = normalize_answer(s)
            # a line of fewer than three words says little, unless it is code
            # ("immutable=1", a documented setting on a line of its own)
            if (len(s.split()) < 3 and not quotes_code(s)) or not key or key in seen:
                continue
            seen.add(key)
            overlap = len(set(engine.analyzer.tokens(s)) & q_words) / max(len(q_words), 1)
            out.append(
                Evidence(n, chunk.title, s, overlap + 0.05 / (1.0 + 0.1 * (n - 1)), position)
            )
    return out


def extractive_answer(
    engine: Engine, result: RetrievalResult, reader: Reader | None = None
) -> Answer:
    """The reader's short answer, then its evidence: the sentence it was read from first,
    then the best sentence of each other relevant chunk (a multi-hop answer spans
    passages: the bridge passage names the entity, another holds the fact), in context
    order, at most EXTRACTIVE_SENTENCES, each said once."""
    if not result.context:
        return Answer(
            "Not found in the corpus: no indexed passage matches this question.",
            [],
            abstained=True,
            confidence=0.0,
        )
    evidence = evidence_sentences(engine, result)
    if not evidence:
        chosen = [(n, c.text) for n, c in enumerate(result.context, start=1)][:1]
        text = f"{NO_SHORT_ANSWER}\n\n{chosen[0][1]} [1]"
        return Answer(text, [1], evidence=chosen, abstained=True, confidence=0.0)
    reader = reader or shared_reader(engine.settings.ingest.models.spacy_model)
    reading = reader.read(result.question, evidence)
    chosen = _cited_sentences(reading, evidence)
    cited = " ".join(f"{e.text} [{e.passage}]" for e in chosen)
    confidence = reading.support.confidence
    short = reading.short if shows_short(reading, engine.settings.answer_min_confidence) else ""
    if short:
        where = f" [{reading.evidence[0].passage}]" if reading.evidence else ""
        text = f"{short}{where}\n\n{cited}"
    else:
        text = f"{abstention_lead(reading)}\n\n{cited}"
    return Answer(
        text,
        sorted({e.passage for e in chosen}),
        extractive=True,
        evidence=[(e.passage, e.text) for e in chosen],
        short=short,
        abstained=not short,
        confidence=confidence,
    )


def shows_short(reading: Reading, min_confidence: float) -> bool:
    """Whether the reading's short answer is supported enough to be shown."""
    return bool(reading.short) and reading.support.confidence >= min_confidence


def abstention_lead(reading: Reading) -> str:
    """What an answer without a short answer says first, plainly: the corpus has nothing
    on the question, the question wants a description, or no short answer is supported."""
    if reading.support.found == 0.0:
        return NOT_FOUND
    if reading.how == DESCRIPTION_HOW:
        return DESCRIPTION
    return NO_SHORT_ANSWER


def _cited_sentences(reading: Reading, evidence: list[Evidence]) -> list[Evidence]:
    """The reading's own evidence, then the likeliest sentence of each other chunk."""
    best_of: dict[int, Evidence] = {}
    for e in reading.ranked or sorted(evidence, key=lambda e: -e.relevance):
        best_of.setdefault(e.passage, e)
    support = list(dict.fromkeys(reading.evidence))
    others = [e for e in best_of.values() if e not in support]
    chosen = (support + others)[:EXTRACTIVE_SENTENCES]
    return [*chosen[:1], *sorted(chosen[1:], key=lambda e: (e.passage, e.position))]


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
