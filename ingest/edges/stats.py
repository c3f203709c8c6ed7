"""Corpus-wide counts on a coarse grid, so that the weights depending on them stay put.

An idf depends on the corpus size n and a term's document frequency df. Exactly, every added
chunk changes n and so every weight in the corpus: no update could be local. So both enter
rounded to the nearest power of two (`octave`). The rounded n changes only when the corpus
crosses 2^(j+½), about once per doubling (an update then rebuilds in full). A rounded df
changes when a term crosses such a boundary: a term in d chunks does so about once per
0.4·d changes and then moves the vectors of its d holders — about 2.4 vectors per changed
term on average whatever d is (23 per removed 2wiki-dev chunk on average, 134 at the 99th
percentile, against 85 and 326 with quarter octaves). An idf moves by at most log(√2) ≈ 0.35
from its unrounded value, the same for every term of one band.
"""

from __future__ import annotations

import math


def octave(count: int) -> float:
    """`count` rounded to the nearest power of two (0 stays 0)."""
    if count <= 0:
        return 0.0
    return 2.0 ** round(math.log2(count))
