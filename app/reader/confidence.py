"""How far the evidence supports the reader's short answer, from the reader's own signals.

The reader always names its likeliest candidate; that is not the same as knowing the
answer. A nonsense question ("asdkjh qwpoeiru"), one about something the corpus never
mentions ("Who won the 2022 FIFA World Cup?") or one that asks for a description ("What
is the graph model?") still gets a likeliest span. So a reading carries its `Support`:

- `found`: the share of the question's content words the evidence contains at all (none
  for a question of emoji or punctuation, or about words the corpus lacks);
- `align`: the weighted share of the question the answer's sentence covers, with the
  sentence of another passage that leads to its page (`Context.chain`), and 0 when the
  sentence itself says no word of the question: an answer read from a sentence that says
  little of the question is a guess;
- `typed`: the question's prior for the answer's entity type (1 = what it asks for), or 1
  when the parse has the answer fill the wh-word's slot (the small NER model mislabels
  names; "Ottilie Brand made the first ascent" answers "Who made …" whatever its label);
- `margin`: the answer's score over the best rival that shares none of its words, as a
  share of the answer's score (none for options and yes/no, which pick among named
  answers);
- `score`: the answer's own score.

`confidence` folds them into one number in [0, 1]: the product of the evidence's
coverage of the question, the answer sentence's alignment and the type match, raised by
the margin. A caller shows the short answer only at or above a threshold
(`Settings.answer_min_confidence`), chosen on half of a question set and reported on the
other half (`python -m bench reader --support`, bench/suites/reader.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from app.eval.metrics import normalize_answer

# A rival answer this much below the best leaves the best standing alone.
FULL_MARGIN = 0.25


@dataclass(frozen=True, slots=True)
class Support:
    found: float
    align: float
    typed: float = 1.0
    margin: float | None = None
    score: float | None = None

    @property
    def confidence(self) -> float:
        """The answer's support in [0, 1]; 0 when the evidence has no word of the question."""
        base = self.found * self.align * min(max(self.typed, 0.0), 1.0)
        if self.margin is None:
            return round(base, 4)
        lift = 0.5 + 0.5 * min(max(self.margin, 0.0) / FULL_MARGIN, 1.0)
        return round(base * lift, 4)

    def as_dict(self) -> dict[str, float | None]:
        return {**asdict(self), "confidence": self.confidence}


NO_SUPPORT = Support(0.0, 0.0, 0.0)


def found_share(question_words: Sequence[tuple[str, str]], evidence_words: set[str]) -> float:
    """The share of the question's content words (each as its form and its lemma) the
    evidence contains in either form."""
    if not question_words:
        return 0.0
    hits = sum(1 for forms in question_words if any(f in evidence_words for f in forms))
    return hits / len(question_words)


def margin(best: tuple[str, float], rivals: Iterable[tuple[str, float]]) -> float:
    """The best answer's lead over the first rival that shares none of its words ("Giotto
    di Bondone" is the same answer as "Giotto"), as a share of its score; 1 when no
    rival is left or the best score is not positive."""
    text, score = best
    words = set(normalize_answer(text).split())
    for other, other_score in rivals:
        if set(normalize_answer(other).split()) & words:
            continue
        if score <= 0:
            return 0.0
        return max(score - other_score, 0.0) / score
    return 1.0
