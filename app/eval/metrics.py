"""Retrieval metrics (HippoRAG protocol), SQuAD answer metrics and latency summaries.

Retrieval is scored at the passage level: a retriever that returns two chunks of one
passage must not get two of the k slots, so rankings are de-duplicated (first occurrence
kept) before the cut. Recall@k is |top-k ∩ gold| / |gold| per question; the harness
averages it over questions. Answer metrics follow the SQuAD evaluation script: answers are
normalised (lowercase, no punctuation, no articles a/an/the, single spaces) and the best
score over the answer aliases counts.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Collection, Iterable, Sequence

import numpy as np

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)


def dedupe(ranked_ids: Iterable[str]) -> list[str]:
    """The ranking with repeats removed, keeping each id's first (best) position."""
    return list(dict.fromkeys(ranked_ids))


def recall_at_k(ranked_doc_ids: Sequence[str], gold: Collection[str], k: int) -> float:
    """Fraction of the gold passages among the first k distinct retrieved passages."""
    gold_set = _gold_set(gold)
    if k < 0:
        raise ValueError(f"k must be non-negative, got {k}")
    top = dedupe(ranked_doc_ids)[:k]
    return sum(1 for doc_id in top if doc_id in gold_set) / len(gold_set)


def mrr(ranked_doc_ids: Sequence[str], gold: Collection[str]) -> float:
    """Reciprocal rank of the first gold passage in the de-duplicated ranking; 0 if none."""
    gold_set = _gold_set(gold)
    for rank, doc_id in enumerate(dedupe(ranked_doc_ids), start=1):
        if doc_id in gold_set:
            return 1.0 / rank
    return 0.0


def _gold_set(gold: Collection[str]) -> set[str]:
    # A question without gold passages cannot be scored; averaging a silent 0 or 1 for it
    # would bias the reported recall, so the harness must skip or fix such rows.
    gold_set = set(gold)
    if not gold_set:
        raise ValueError("gold is empty: recall is undefined")
    return gold_set


def normalize_answer(s: str) -> str:
    """SQuAD normalisation: lowercase, drop punctuation and articles, collapse whitespace."""
    lowered = s.lower()
    no_punct = "".join(ch for ch in lowered if ch not in _PUNCTUATION)
    no_articles = _ARTICLES.sub(" ", no_punct)
    return " ".join(no_articles.split())


def exact_match(prediction: str, answers: Sequence[str]) -> float:
    """1.0 if the normalised prediction equals any normalised answer alias, else 0.0."""
    _require_answers(answers)
    pred = normalize_answer(prediction)
    return float(any(pred == normalize_answer(answer) for answer in answers))


def token_f1(prediction: str, answers: Sequence[str]) -> float:
    """SQuAD token-overlap F1 (multiset of normalised tokens), best over the aliases.

    When either side normalises to no tokens, F1 is 1.0 if both are empty and 0.0 otherwise
    (as in the SQuAD 2.0 script), rather than a division by zero.
    """
    _require_answers(answers)
    pred_tokens = normalize_answer(prediction).split()
    return max(_f1(pred_tokens, normalize_answer(answer).split()) for answer in answers)


def _f1(pred_tokens: list[str], gold_tokens: list[str]) -> float:
    if not pred_tokens or not gold_tokens:
        return float(pred_tokens == gold_tokens)
    overlap = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(pred_tokens)
    recall = overlap / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def _require_answers(answers: Sequence[str]) -> None:
    if isinstance(answers, str):
        # A bare string would be scored character by character; that is always a bug.
        raise TypeError("answers must be a sequence of alias strings, not a string")
    if not answers:
        raise ValueError("answers is empty: the question has no reference answer")


def percentile(values: Iterable[float], q: float) -> float:
    """The q-th percentile (0–100) with linear interpolation (numpy's default)."""
    arr = np.asarray(list(values), dtype=np.float64)
    if arr.size == 0:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"q must be within [0, 100], got {q}")
    return float(np.percentile(arr, q, method="linear"))


def summarize(values: Iterable[float], percentiles: Sequence[float] = (50, 95)) -> dict[str, float]:
    """Count, mean, min, max and the given percentiles (keys `p50`, `p95`, …) of a series,
    typically per-query latencies in milliseconds or per-question recall.

    An empty series gives count 0 and NaN statistics so a report table can still be drawn.
    """
    arr = np.asarray(list(values), dtype=np.float64)
    summary: dict[str, float] = {"count": arr.size}
    empty = arr.size == 0
    summary["mean"] = math.nan if empty else float(arr.mean())
    summary["min"] = math.nan if empty else float(arr.min())
    summary["max"] = math.nan if empty else float(arr.max())
    for q in percentiles:
        summary[f"p{q:g}"] = math.nan if empty else percentile(arr, q)
    return summary


_RUNS = re.compile(r"\s+")


def _plain(text: str) -> str:
    return _RUNS.sub(" ", text).strip().casefold()


def answer_in_texts(texts: Sequence[str], answers: Sequence[str]) -> float:
    """1.0 if any answer string (case-insensitive, whitespace-normalised) occurs in any of
    the texts: does the retrieved context hold the answer at all?"""
    plain = [_plain(t) for t in texts]
    return float(any(a.strip() and _plain(a) in t for a in answers for t in plain))
