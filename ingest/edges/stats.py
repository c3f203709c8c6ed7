"""Corpus-wide counts on a coarse grid, so that the weights depending on them stay put.

An idf depends on the corpus size n and a term's document frequency df. Exactly, every added
chunk changes n and so every weight in the corpus: no update could be local. So n enters
rounded to the nearest power of two (`octave`: its value changes only when the corpus
crosses 2^(j+½), i.e. about once per doubling, and an update then rebuilds in full), and a
term's df, where it matters (UTILITY, whose terms include very common words), enters
rounded to the nearest quarter octave (`quarter_octave`: a factor 2^(1/4) ≈ 1.19 per step;
a df of 1000 keeps its value for some 190 changes, while the small dfs of informative terms
stay nearly exact). An update recomputes exactly the vectors holding a term whose rounded
df moved. An idf moves by at most log(√2) ≈ 0.35 (n) and log(2^(1/8)) ≈ 0.09 (df) from its
unrounded value.
"""

from __future__ import annotations

import math


def _rounded(count: int, steps_per_octave: int) -> float:
    if count <= 0:
        return 0.0
    return 2.0 ** (round(steps_per_octave * math.log2(count)) / steps_per_octave)


def octave(count: int) -> float:
    """`count` rounded to the nearest power of two (0 stays 0)."""
    return _rounded(count, 1)


def quarter_octave(count: int) -> float:
    """`count` rounded to the nearest power of 2^(1/4) (0 stays 0)."""
    return _rounded(count, 4)
