"""How likely a short answer is right, from the reading's own signals, as one calibrated
probability.

The support's parts (`confidence.Support`) each say something of a reading: how much of the
question the evidence holds, how well the answer's sentence aligns with it, whether the
answer is the type asked for, how far it leads its rivals, which passage it came from, and
which rule named it. Multiplied by hand they ranked right answers above wrong ones with an
AUC of 0.79 on questions they were not tried on; weighed by a logistic regression fitted on
half of the question sets, the same signals reach 0.83 on the other half. No word of any
question is a feature: only the reader's signals, the answer's kind and entity type, and
the retrieval rank of its passage.

The weights live in `calibration.json` beside this module. `python -m bench reader
--support --fit` writes them from the even-indexed questions of every set it reads and
reports the odd ones (bench/suites/reader.py); the JSON names the command, the commit and
the sets it was fitted on.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Protocol


class Support(Protocol):
    """The signals of `confidence.Support` the calibration weighs."""

    found: float
    align: float
    typed: float
    margin: float | None
    kind: str
    by_value: bool
    rank: int
    technical: bool
    words: int
    label: str

    @property
    def product(self) -> float: ...


FILE = Path(__file__).with_name("calibration.json")
NAMED_LABELS = frozenset(
    {"PERSON", "ORG", "GPE", "LOC", "FAC", "NORP", "WORK_OF_ART", "EVENT", "PRODUCT", "PROPN"}
)
NUMBER_LABELS = frozenset(
    {"CARDINAL", "DATE", "YEAR", "QUANTITY", "MONEY", "PERCENT", "TIME", "ORDINAL"}
)
FEATURES = (
    "found",
    "align",
    "typed",
    "margin",
    "product",
    "yesno",
    "choice_by_value",
    "choice_by_coverage",
    "rank",
    "technical",
    "words",
    "named",
    "code",
    "number",
)


def features(support: Support) -> dict[str, float]:
    """The reading's signals as the calibration weighs them (each in about [0, 1])."""
    kind = support.kind
    return {
        "found": support.found,
        "align": support.align,
        "typed": min(max(support.typed, 0.0), 1.0),
        "margin": support.margin if support.margin is not None else 0.0,
        "product": support.product,
        "yesno": float(kind == "yesno"),
        "choice_by_value": float(kind == "choice" and support.by_value),
        "choice_by_coverage": float(kind == "choice" and not support.by_value),
        "rank": math.log(max(support.rank, 1)),
        "technical": float(support.technical),
        "words": support.words / 10,
        "named": float(support.label in NAMED_LABELS),
        "code": float(support.label == "CODE"),
        "number": float(support.label in NUMBER_LABELS),
    }


@dataclass(frozen=True, slots=True)
class Calibration:
    weights: dict[str, float]
    bias: float

    def probability(self, support: Support) -> float:
        x = features(support)
        z = self.bias + sum(self.weights.get(k, 0.0) * v for k, v in x.items())
        return 1.0 / (1.0 + math.exp(-z))

    def to_json(self, **about: object) -> str:
        return json.dumps({**about, "bias": self.bias, "weights": self.weights}, indent=2) + "\n"


@cache
def shipped() -> Calibration:
    """The weights shipped in calibration.json."""
    data = json.loads(FILE.read_text(encoding="utf-8"))
    return Calibration({k: float(data["weights"][k]) for k in FEATURES}, float(data["bias"]))
