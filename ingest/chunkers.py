"""Split loaded documents into chunks: sentence windows, token windows or sections.

Every strategy works inside one section at a time (a chunk never spans two headings, so
`section_path` is exact), and every chunk is a slice of its section's text, so paragraph
breaks survive and link offsets (`Section.link_spans`) tell exactly which links a chunk holds.

- `sentences` (TIGRAG): windows of s sentences advancing by s − o. The last window always
  ends at the last sentence and starts one stride after the previous one, so it is never a
  subset of it; a section with at most s sentences is one chunk.
- `tokens`: windows of at most `window_tokens` tokens (exact, by the supplied counter) that
  overlap by at most `window_overlap`. Cuts fall between words; a window is pulled back to
  the last sentence end inside it when that keeps it at least half full, and the overlap
  starts at a sentence start when one lies inside it.
- `markdown`: one chunk per section; a section over `max_section_tokens` is cut at sentence
  ends into the fewest pieces under the limit, balanced in size (a 400-token section with a
  384 limit gives two ~200-token pieces, not 384 + 16). Small sections are not merged: the
  heading path feeds SAME_SECTION edges and citations, and a merged chunk would carry a
  path that is only true for part of its text.

Token windows estimate a word's tokens as count(word) − count(""), which is exact for
WordPiece (BERT-family tokenizers split at whitespace first) and close for BPE, then confirm
each window with one exact count. Counting words is the expensive part with a real tokenizer:
wrap it once with `cached_token_counter` and reuse the wrapper across documents.
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from math import ceil

from ingest.config import ChunkingConfig
from ingest.loaders import LoadedDocument, Section
from ingest.sentences import sentence_spans

__all__ = [
    "ChunkText",
    "TokenCounter",
    "cached_token_counter",
    "chunk_document",
    "chunk_id",
]

TokenCounter = Callable[[str], int]
Span = tuple[int, int]

_WORD = re.compile(r"\S+")


@dataclass(slots=True)
class ChunkText:
    ordinal: int
    text: str
    section_path: tuple[str, ...]
    links: tuple[str, ...]
    n_tokens: int


def chunk_id(doc_id: str, ordinal: int, text: str) -> str:
    """Stable, content-derived chunk id: re-chunking unchanged text gives the same ids."""
    digest = hashlib.sha1(text.encode("utf-8"), usedforsecurity=False).hexdigest()
    return f"{doc_id}#{ordinal}-{digest[:8]}"


def cached_token_counter(count_tokens: TokenCounter, maxsize: int = 262_144) -> TokenCounter:
    """Memoise a token counter (bounded LRU); words repeat across a corpus, so the `tokens`
    and `markdown` strategies call the real tokenizer far less through this."""
    return lru_cache(maxsize=maxsize)(count_tokens)


def chunk_document(
    doc: LoadedDocument, cfg: ChunkingConfig, count_tokens: TokenCounter
) -> list[ChunkText]:
    """Chunks of `doc` with ordinals 0..n−1 in reading order. Deterministic. Raises
    `ValueError` when an overlap is not smaller than its window (a configuration error)."""
    if cfg.strategy == "sentences" and cfg.sentence_overlap >= cfg.sentences_per_chunk:
        raise ValueError(
            f"sentence_overlap ({cfg.sentence_overlap}) must be smaller than "
            f"sentences_per_chunk ({cfg.sentences_per_chunk})"
        )
    if cfg.strategy == "tokens" and cfg.window_overlap >= cfg.window_tokens:
        raise ValueError(
            f"window_overlap ({cfg.window_overlap}) must be smaller than "
            f"window_tokens ({cfg.window_tokens})"
        )
    chunks: list[ChunkText] = []
    costs = _WordCosts(count_tokens)
    for section in doc.sections:
        links = _SectionLinks(section)
        measured: list[tuple[int, int, int | None]]
        if cfg.strategy == "sentences":
            pieces = _sentence_windows(section.text, cfg.sentences_per_chunk, cfg.sentence_overlap)
            measured = [(start, end, None) for start, end in pieces]
        elif cfg.strategy == "tokens":
            measured = _token_windows(section.text, costs, cfg.window_tokens, cfg.window_overlap)
        else:
            measured = _section_pieces(section.text, costs, cfg.max_section_tokens)
        for start, end, n_tokens in measured:
            text = section.text[start:end].strip()
            if not text:
                continue
            chunks.append(
                ChunkText(
                    ordinal=len(chunks),
                    text=text,
                    section_path=section.path,
                    links=links.between(start, end),
                    n_tokens=n_tokens if n_tokens is not None else count_tokens(text),
                )
            )
    return chunks


class _SectionLinks:
    """Answers "which links does [start, end) of this section hold" for many chunks: the
    targets whose link text overlaps the range, plus the section's links that have no place
    in the text (PDF annotations, links in headings), which belong to every chunk. Link
    spans come in text order without overlaps, so a bisection finds the first candidate."""

    __slots__ = ("_ends", "_located", "_ordered", "_spans", "_targets")

    def __init__(self, section: Section) -> None:
        self._targets = section.links
        self._spans = sorted(section.link_spans)
        self._ends = [span.end for span in self._spans]
        self._ordered = all(a <= b for a, b in pairwise(self._ends))
        self._located = {span.target for span in self._spans}

    def between(self, start: int, end: int) -> tuple[str, ...]:
        if not self._targets:
            return ()
        if not self._located:
            return self._targets
        inside: set[str] = set()
        index = bisect_right(self._ends, start) if self._ordered else 0
        while index < len(self._spans) and self._spans[index].start < end:
            if self._spans[index].end > start:
                inside.add(self._spans[index].target)
            index += 1
        return tuple(t for t in self._targets if t in inside or t not in self._located)


def _sentence_windows(text: str, size: int, overlap: int) -> list[Span]:
    sentences = sentence_spans(text)
    if not sentences:
        return []
    stride = size - overlap
    windows: list[Span] = []
    first = 0
    while True:
        last = min(first + size, len(sentences)) - 1
        windows.append((sentences[first][0], sentences[last][1]))
        if last == len(sentences) - 1:
            return windows
        first += stride


class _WordCosts:
    """Per-document memo of word → estimated token count (count(word) − count(""))."""

    __slots__ = ("_cache", "base", "count")

    def __init__(self, count_tokens: TokenCounter) -> None:
        self.count = count_tokens
        self.base = count_tokens("")
        self._cache: dict[str, int] = {}

    def cost(self, word: str) -> int:
        value = self._cache.get(word)
        if value is None:
            value = max(self.count(word) - self.base, 0)
            self._cache[word] = value
        return value


@dataclass(slots=True)
class _Words:
    spans: list[Span]
    prefix: list[int]  # prefix[i] = estimated tokens of words[:i]
    sentence_start: list[bool]  # len n + 1; True at n (end of text is a sentence end)


def _words(text: str, costs: _WordCosts, limit: int) -> _Words:
    """Words with token estimates and sentence starts. A single word above `limit` (a long
    URL, base64) is cut into character slices so no window is forced over the limit."""
    spans: list[Span] = []
    starts: list[bool] = []
    prefix = [0]
    for sent_start, sent_end in sentence_spans(text):
        first = True
        for match in _WORD.finditer(text, sent_start, sent_end):
            cost = costs.cost(match.group())
            pieces = [(match.start(), match.end())]
            if cost > limit:
                length = match.end() - match.start()
                step = max(1, length // ceil(2 * cost / limit))
                pieces = [
                    (pos, min(pos + step, match.end()))
                    for pos in range(match.start(), match.end(), step)
                ]
            for piece in pieces:
                piece_cost = cost if len(pieces) == 1 else costs.cost(text[piece[0] : piece[1]])
                spans.append(piece)
                starts.append(first)
                prefix.append(prefix[-1] + piece_cost)
                first = False
    starts.append(True)
    return _Words(spans, prefix, starts)


def _pack(
    text: str,
    words: _Words,
    costs: _WordCosts,
    limit: int,
    overlap: int,
    min_fill: float,
    target: float | None,
) -> list[tuple[int, int, int | None]]:
    """Greedy windows over `words` as (char start, char end, exact tokens).

    The end is the furthest word that fits the estimate, moved back to a sentence end if
    one leaves the window at least `min_fill`·limit full (with `target`, the first sentence
    end reaching `target` tokens, which balances pieces). Each window is then counted
    exactly and shrunk while it is over the limit.
    """
    prefix, starts, spans = words.prefix, words.sentence_start, words.spans
    n = len(spans)
    budget = max(1, limit - costs.base)
    windows: list[tuple[int, int, int | None]] = []
    start = 0
    while start < n:
        end = max(start + 1, min(n, bisect_right(prefix, prefix[start] + budget) - 1))
        if end < n:
            boundaries = [
                b
                for b in range(start + 1, end + 1)
                if starts[b] and prefix[b] - prefix[start] >= min_fill * budget
            ]
            if boundaries:
                end = boundaries[-1]
                if target is not None:
                    end = next((b for b in boundaries if prefix[b] - prefix[start] >= target), end)
        exact = costs.count(text[spans[start][0] : spans[end - 1][1]])
        while exact > limit and end > start + 1:
            end -= max(1, min(end - start - 1, (exact - limit) // 2))
            exact = costs.count(text[spans[start][0] : spans[end - 1][1]])
        windows.append((spans[start][0], spans[end - 1][1], exact))
        if end >= n:
            break
        following = end
        if overlap:
            following = min(end, bisect_left(prefix, prefix[end] - overlap, lo=start + 1))
            following = next((b for b in range(following, end) if starts[b]), following)
        start = max(following, start + 1)
    return windows


def _token_windows(
    text: str, costs: _WordCosts, limit: int, overlap: int
) -> list[tuple[int, int, int | None]]:
    words = _words(text, costs, max(1, limit - costs.base))
    return _pack(text, words, costs, limit, overlap, 0.5, None)


def _section_pieces(text: str, costs: _WordCosts, limit: int) -> list[tuple[int, int, int | None]]:
    whole = costs.count(text.strip())
    if whole <= limit:
        return [(0, len(text), whole)]
    words = _words(text, costs, max(1, limit - costs.base))
    total = words.prefix[-1]
    target = total / max(1, ceil(total / max(1, limit - costs.base)))
    return _pack(text, words, costs, limit, 0, 0.0, target)
