"""The evidence of one question, read once: which question words each sentence, passage and
chain of passages covers, and what the evidence says around any name.

Multi-hop evidence rarely puts the whole question in one sentence. "Hugo Rodríguez Romero …
plays for a team in the autonomous community of what?" is answered by a sentence of the
FC Cartagena page ("… in the autonomous community of Murcia") that says nothing of Hugo; the
Hugo page names FC Cartagena. So a sentence is scored by what it covers together with the
best sentence of another passage that names its page (`chain`), not alone.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from app.eval.metrics import normalize_answer
from app.reader.question import QuestionAnalysis

DESCRIBE_WINDOW = 6  # words either side of a mention searched for the described noun phrase
FOCUS_WEIGHT = 0.5  # weight of the wh-word's neighbours in a sentence's score
_DISAMBIGUATION = re.compile(r"\s*\([^)]*\)\s*$")


@dataclass(frozen=True, slots=True)
class Evidence:
    """One sentence of the retrieved context."""

    passage: int  # citation number: 1 is the best-ranked chunk
    title: str
    text: str
    relevance: float  # the caller's closeness to the question (embedding cosine, overlap)
    position: int = 0  # sentence index inside its passage


@dataclass(frozen=True, slots=True)
class Profile:
    mentions: float  # log(1 + sentences naming the candidate)
    describe: float  # share of the asked-about noun phrase found around its mentions
    cover: float  # weighted share of the question found where it is named or on its page


def clean_title(title: str) -> str:
    """A page title as a name: "Steve Smith (musician)" → "Steve Smith"."""
    return _DISAMBIGUATION.sub("", title).strip()


class Context:
    def __init__(self, question: QuestionAnalysis, evidence: Sequence[Evidence]) -> None:
        self.question = question
        self.evidence = list(evidence)
        self.texts = [normalize_answer(e.text) for e in self.evidence]
        self.words = [
            set(t.split()) | set(normalize_answer(e.title).split())
            for t, e in zip(self.texts, self.evidence, strict=True)
        ]
        self.titles = {e.passage: clean_title(e.title) for e in self.evidence}
        self.title_keys = {normalize_answer(t) for t in self.titles.values()} - {""}
        passage_words: dict[int, set[str]] = {}
        for e, words in zip(self.evidence, self.words, strict=True):
            passage_words.setdefault(e.passage, set()).update(words)
        self.passage_words = passage_words
        self.idf = _idf(question.content, passage_words)
        self._index = {e: i for i, e in enumerate(self.evidence)}
        self._profiles: dict[str, Profile] = {}
        self._partners: dict[int, int] = {}  # sentence -> the sentence leading to its page

    def share(self, words: set[str], leave_out: set[str] = frozenset()) -> float:  # type: ignore[assignment]
        """Weighted share of the question's words among `words`."""
        return _weighted_share({w: v for w, v in self.idf.items() if w not in leave_out}, words)

    def words_of(self, e: Evidence) -> set[str]:
        """The sentence's words, with its page title's."""
        return self.words[self._index[e]]

    def cover(self, e: Evidence) -> float:
        return self.sentence_features[self._index[e]][0]

    def chain(self, e: Evidence) -> float:
        return self.sentence_features[self._index[e]][1]

    def focus(self, e: Evidence) -> float:
        return self.sentence_features[self._index[e]][2]

    def in_partner(self, e: Evidence, key: str) -> bool:
        """Whether `key` is named by the sentence that leads to `e`'s page (the first hop):
        that is the bridge, not what the question asks for."""
        partner = self._partners.get(self._index[e])
        return partner is not None and f" {key} " in f" {self.texts[partner]} "

    def sentence_score(self, e: Evidence) -> float:
        """How likely the sentence is to hold the answer: what it covers of the question
        with the passage that leads to it, plus the wh-word's neighbours it repeats."""
        return self.chain(e) + FOCUS_WEIGHT * self.focus(e)

    @cached_property
    def sentence_features(self) -> list[tuple[float, float, float]]:
        """(cover, chain cover, focus share) of every sentence."""
        padded = [f" {t} " for t in self.texts]
        inbound: dict[int, list[int]] = {}
        for passage, title in self.titles.items():
            key = normalize_answer(title)
            if key:
                # Only another page leads here: a second chunk of the same page naming
                # its own title is not a hop, and would lend every sentence of this page
                # the words of the one that answers.
                inbound[passage] = [
                    j
                    for j, e in enumerate(self.evidence)
                    if normalize_answer(self.titles[e.passage]) != key and f" {key} " in padded[j]
                ]
        focus = self.question.focus
        out = []
        for i, e in enumerate(self.evidence):
            cover = self.share(self.words[i])
            chain, partner = cover, None
            for j in inbound.get(e.passage, []):
                joint = self.share(self.words[i] | self.words[j])
                if joint > chain:
                    chain, partner = joint, j
            if partner is not None:
                self._partners[i] = partner
            out.append((cover, chain, len(focus & self.words[i]) / max(len(focus), 1)))
        return out

    def page(self, key: str) -> list[int]:
        """Indexes of the sentences of the passage titled `key` (normalised), in order."""
        passages = {p for p, t in self.titles.items() if normalize_answer(t) == key}
        found = [i for i, e in enumerate(self.evidence) if e.passage in passages]
        return sorted(found, key=lambda i: self.evidence[i].position)

    def profile(self, key: str) -> Profile:
        """What the evidence says around one name, wherever it is named and on its own
        page. Its own words do not count."""
        if key in self._profiles:
            return self._profiles[key]
        own = key.split()
        named = [i for i, t in enumerate(self.texts) if f" {key} " in f" {t} "]
        near: set[str] = set()
        around: set[str] = set()
        for i in named:
            words = self.texts[i].split()
            around |= self.words[i]
            for k in range(len(words) - len(own) + 1):
                if words[k : k + len(own)] == own:
                    near.update(words[max(k - DESCRIBE_WINDOW, 0) : k + len(own) + DESCRIBE_WINDOW])
        page = self.page(key)
        if page:
            near |= self.words[page[0]]
            for i in page:
                around |= self.words[i]
        profile = Profile(
            mentions=math.log1p(len(named)),
            describe=_share(self.question.describe, near - set(own)),
            cover=self.share(around - set(own), leave_out=set(own)),
        )
        self._profiles[key] = profile
        return profile


def _idf(words: frozenset[str], passages: dict[int, set[str]]) -> dict[str, float]:
    """Question words weighted by how few passages contain them: a word every passage has
    ("drummer") tells the passages apart less than one only a single passage has
    ("Canadian"). Words no passage has are left out."""
    n = len(passages)
    weights = {}
    for w in words:
        df = sum(1 for p in passages.values() if w in p)
        if df:
            weights[w] = math.log(1.0 + n / df)
    return weights


def _weighted_share(weights: dict[str, float], found: set[str]) -> float:
    total = sum(weights.values())
    return sum(v for w, v in weights.items() if w in found) / total if total else 0.0


def _share(wanted: frozenset[str], found: set[str]) -> float:
    return len(wanted & found) / len(wanted) if wanted else 0.0
