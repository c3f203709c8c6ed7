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
  little of the question is a guess; and 0 for a yes/no that compared passages the
  question does not name ("Does SQLite enforce …?" names one thing, not two);
- `typed`: the question's prior for the answer's entity type (1 = what it asks for), or 1
  when the parse has the answer fill the wh-word's slot (the small NER model mislabels
  names; "Ottilie Brand made the first ascent" answers "Who made …" whatever its label),
  and 0 when the question asks for a quantity and the answer names no number;
- `margin`: the answer's score over the best rival that shares none of its words, as a
  share of the answer's score (none for options and yes/no, which pick among named
  answers);
- `score`: the answer's own score.

With them it records what the calibration also weighs: the reading's kind, whether a choice
was decided by comparing values ("earlier date") or by coverage, the retrieval rank of the
answer's passage, whether the question is technical, the answer's length and entity type.

`confidence` is 0 when a part rules the answer out (the evidence lacks the question, the
answer's sentence says none of it, or the answer is not the type asked for); otherwise it is
the calibrated probability that the answer is right (`calibration.py`: a logistic
regression over these signals, fitted on half of the question sets). A caller shows the
short answer only at or above a threshold (`Settings.answer_min_confidence`), chosen on the
same half and reported on the other (`python -m bench reader --support`,
bench/suites/reader.py). `product`, the hand-made fold the calibration replaced (coverage ×
alignment × type, raised by the margin), is one of its features.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from app.eval.metrics import normalize_answer
from app.reader.calibration import shipped

# A rival answer this much below the best leaves the best standing alone.
FULL_MARGIN = 0.25


@dataclass(frozen=True, slots=True)
class Support:
    found: float
    align: float
    typed: float = 1.0
    margin: float | None = None
    score: float | None = None
    kind: str = "span"  # the reading's kind: span, yesno or choice
    by_value: bool = False  # a choice decided by comparing values, not by coverage
    rank: int = 1  # the retrieval rank of the answer's passage (1: the best)
    technical: bool = False  # the question asks for something to type
    words: int = 0  # the short answer's length
    label: str = ""  # the answer's entity type ("" for options and yes/no)

    @property
    def product(self) -> float:
        """Coverage × alignment × type, raised by the margin: in [0, 1]."""
        base = self.found * self.align * min(max(self.typed, 0.0), 1.0)
        if self.margin is None:
            return base
        return base * (0.5 + 0.5 * min(max(self.margin, 0.0) / FULL_MARGIN, 1.0))

    @property
    def confidence(self) -> float:
        """The calibrated probability that the answer is right; 0 when a part rules it out."""
        if self.product <= 0.0:
            return 0.0
        return round(shipped().probability(self), 4)

    def as_dict(self) -> dict[str, float | int | str | bool | None]:
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
