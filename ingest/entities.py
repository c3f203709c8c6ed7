"""Named entities (spaCy NER) and the deterministic utility questions built from them.

Only the `tok2vec` and `ner` pipes run: the parser, tagger and lemmatizer would double the
cost and nothing downstream needs them. Utility questions (SpectRAG's UTILITY signal) come
from a configured LLM when there is one; without one they are cloze questions: a sentence
that mentions an entity, with that entity replaced by the wh-word its label asks for
("Teutberga died [when] ..." for a DATE). They describe what the chunk can answer, and
query-to-question matching and question-set similarity both work on them.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from graph.types import EntityMention
from ingest import spacy_models

_WH = {
    "PERSON": "who",
    "NORP": "which group",
    "ORG": "which organization",
    "GPE": "where",
    "LOC": "where",
    "FAC": "where",
    "DATE": "when",
    "TIME": "when",
    "EVENT": "which event",
    "WORK_OF_ART": "which work",
    "PRODUCT": "which product",
    "LAW": "which law",
    "LANGUAGE": "which language",
    "MONEY": "how much",
    "QUANTITY": "how much",
    "CARDINAL": "how many",
    "PERCENT": "what percentage",
    "ORDINAL": "which",
}
MAX_QUESTIONS = 8
_GLUED_PAREN = re.compile(r"(\w)([(\[])")


def ner_text(text: str) -> str:
    """Text as NER sees it: "Teutberga( died" → "Teutberga ( died" (the glued bracket
    hides the name from spaCy's tokenizer; several corpora have it)."""
    return _GLUED_PAREN.sub(r"\1 \2", text)


@dataclass(slots=True)
class Span:
    text: str
    label: str
    start: int
    end: int


@dataclass(slots=True)
class TextAnalysis:
    entities: tuple[EntityMention, ...]
    questions: tuple[str, ...]


@cache
def _nlp(model: str):
    return spacy_models.load(
        model, exclude=["parser", "tagger", "lemmatizer", "attribute_ruler", "senter"]
    )


class EntityExtractor:
    """Batched NER over many texts; one spaCy pipeline per process."""

    def __init__(self, model: str, labels: Sequence[str]) -> None:
        self._nlp = _nlp(model)
        self._labels = frozenset(labels)
        self._lock = threading.Lock()

    def spans(self, texts: Sequence[str], batch_size: int = 64) -> list[list[Span]]:
        with self._lock:
            docs = self._nlp.pipe(texts, batch_size=batch_size)
            return [
                [Span(e.text.strip(), e.label_, e.start_char, e.end_char) for e in doc.ents]
                for doc in docs
            ]

    def analyze(self, texts: Sequence[str], titles: Sequence[str]) -> list[TextAnalysis]:
        out = []
        texts = [ner_text(t) for t in texts]
        for text, title, spans in zip(texts, titles, self.spans(texts), strict=True):
            out.append(
                TextAnalysis(
                    entities=mentions(spans, self._labels),
                    questions=cloze_questions(text, title, spans),
                )
            )
        return out


def mentions(spans: Sequence[Span], labels: frozenset[str]) -> tuple[EntityMention, ...]:
    counts: Counter[tuple[str, str]] = Counter()
    names: dict[tuple[str, str], str] = {}
    for s in spans:
        if s.label not in labels or len(s.text) < 2:
            continue
        key = (s.label, s.text.casefold())
        counts[key] += 1
        names.setdefault(key, s.text)
    return tuple(EntityMention(names[key], key[0], n) for key, n in sorted(counts.items()))


def _sentence_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    left = max(text.rfind(". ", 0, start), text.rfind("\n", 0, start))
    right_candidates = [i for i in (text.find(". ", end), text.find("\n", end)) if i != -1]
    right = min(right_candidates) if right_candidates else len(text)
    return (left + 2 if left >= 0 else 0), right


def cloze_questions(text: str, title: str, spans: Sequence[Span]) -> tuple[str, ...]:
    """One question per entity mention (first mention of each), at most MAX_QUESTIONS."""
    questions: list[str] = []
    seen: set[str] = set()
    for s in spans:
        wh = _WH.get(s.label)
        if wh is None or s.text.casefold() in seen:
            continue
        seen.add(s.text.casefold())
        lo, hi = _sentence_bounds(text, s.start, s.end)
        sentence = f"{text[lo : s.start]}[{wh}]{text[s.end : hi]}".strip()
        if title and title.casefold() not in sentence.casefold():
            sentence = f"{title}: {sentence}"
        questions.append(" ".join(sentence.split())[:300])
        if len(questions) >= MAX_QUESTIONS:
            break
    return tuple(questions)
