"""Co-occurrence counting for the token graph.

Weight of the unordered pair {a, b} = the number of position pairs (i, j), 0 < j − i < w,
in a chunk's valid-token sequence with {t_i, t_j} = {a, b} and a ≠ b, summed over chunks.
That is every pair inside a sliding window of w tokens, counted once per position pair (a
window-based count would count a pair once per window it sits in). Pairs are keyed
(min, max) so each is stored once; removing a chunk subtracts exactly what adding it added.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence


def cooccurrence(tokens: Sequence[str], window: int) -> Counter[tuple[str, str]]:
    counts: Counter[tuple[str, str]] = Counter()
    n = len(tokens)
    for offset in range(1, min(window, n)):
        for a, b in zip(tokens[: n - offset], tokens[offset:], strict=True):
            if a != b:
                counts[(a, b) if a < b else (b, a)] += 1
    return counts


def cooccurrence_delta(
    added: Iterable[Sequence[str]], removed: Iterable[Sequence[str]], window: int
) -> dict[tuple[str, str], int]:
    """Signed pair counts: + for the chunks added, − for the chunks removed; zeros dropped."""
    delta: Counter[tuple[str, str]] = Counter()
    for tokens in added:
        delta.update(cooccurrence(tokens, window))
    for tokens in removed:
        delta.subtract(cooccurrence(tokens, window))
    return {pair: w for pair, w in delta.items() if w != 0}
