"""Technical answers: the identifiers, commands and settings documentation answers with.

A developer asking documentation "how do I make the connection wait for the lock" wants
`busy_timeout`, not a noun phrase: the answer to a how-to question over technical text is
usually something to type — a setting, a function, a keyword, a flag, a compile-time
option, a URI. spaCy's English models tag such tokens as nouns or proper nouns at best, so
they are found here by their shape, which is the same in any project's documentation:

- `snake_case` and `UPPER_CASE` identifiers (`journal_size_limit`, `SQLITE_FULL`);
- calls with their parentheses (`format()`, `group_concat(X,Y)`);
- assignments and URI parameters (`immutable=1`, `file::memory:?cache=shared`);
- command-line flags and shell dot-commands (`--skip 1`, `.excel`);
- runs of upper-case keywords (`BEGIN IMMEDIATE`, `VACUUM INTO`);
- dotted names: configuration keys and qualified names (`core.autocrlf`,
  `submodule.<name>.shallow`, `os.path.join`), every part at least two characters, so
  abbreviations ("e.g.", "U.S.") are not names;
- dotted version numbers (`3.35.0`), labelled `VERSION`;
- whatever Markdown quotes as code between backticks (`make neo4j-start`), a command
  with its arguments as much as a name.

A manual-page reference (`git-config(1)`, `printf(3)`) points to another page; it is not a
call, and not an answer.

Prose, Wikipedia's included, seldom has these shapes (an acronym such as "NASA" is the
exception, and the entity tagger names it too), and the question decides whether they are
wanted at all (`question.technical`), so they do not compete with names and dates for a
factoid question.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Doc

CODE_LABEL = "CODE"
VERSION_LABEL = "VERSION"

# after a compiler's -D ("-DSQLITE_ENABLE_FTS5") the option's name starts past the D
_SNAKE = r"(?:(?<=-D)|(?<![A-Za-z0-9_\-]))[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+"
_CALL = r"[A-Za-z_][A-Za-z0-9_.]*\((?!\d\))[^()\s]{0,24}\)"
_ASSIGN = r"[A-Za-z_][A-Za-z0-9_]*=[A-Za-z0-9_.\-]+"
_URI = r"[A-Za-z][A-Za-z0-9+.\-]*:[^\s\"'(),;]*[?=/:][^\s\"'(),;]*"
_FLAG = r"(?<![\w\-])--?[a-z][a-z0-9\-]*(?:[ =][0-9]+)?"
_DOT_COMMAND = r"(?<![\w.])\.[a-z][a-z0-9_]+(?:\s+(?:on|off))?"
_KEYWORDS = r"\b[A-Z]{3,}(?:\s+[A-Z]{2,}){0,2}\b"
_VERSION = r"\b\d+\.\d+\.\d+\b"
_PART = r"(?:<[a-z]+>|[A-Za-z][A-Za-z0-9_\-]*[A-Za-z0-9])"
_DOTTED = rf"(?<![\w.\-/@<>:]){_PART}(?:\.{_PART})+(?![\w\-/@(<])"
_BACKTICKED = re.compile(r"`([^`\n]{2,60})`")  # Markdown's inline code
# Shapes only code has; upper-case runs are also acronyms ("NASA", "NFL") in prose, and
# dotted names also web addresses ("Amazon.com"), so neither says a text is technical.
_STRICT = [re.compile(p) for p in (_URI, _CALL, _ASSIGN, _SNAKE, _FLAG, _DOT_COMMAND)]
_PATTERNS = [
    *((p, CODE_LABEL) for p in _STRICT),
    (re.compile(_KEYWORDS), CODE_LABEL),
    (re.compile(_DOTTED), CODE_LABEL),
    (re.compile(_VERSION), VERSION_LABEL),
]


def code_spans(doc: Doc) -> list[tuple[str, str, int, int]]:
    """(text, label, first token, end token) of every code-shaped span of a parsed
    sentence."""
    found: list[tuple[str, str, int, int]] = []
    for text, label, start, end in _matches(doc.text, backticked=True):
        span = doc.char_span(start, end, alignment_mode="expand")
        if span is not None:
            found.append((text, label, span.start, span.end))
    return found


def code_in(text: str) -> set[str]:
    """The code-shaped strings of a plain text (a question), as written."""
    return {code for code, _, _, _ in _matches(text)}


def quotes_code(text: str) -> bool:
    """Whether a text holds a shape only code has (not a mere upper-case word)."""
    return any(p.search(text) for p in _STRICT)


def has_keywords(text: str) -> bool:
    """Whether a text holds an upper-case run (a keyword, or an acronym)."""
    return _PATTERNS[len(_STRICT)][0].search(text) is not None


def technical_share(texts: list[str]) -> float:
    """The share of `texts` that quote code: documentation, not prose, when it is high."""
    return sum(1 for t in texts if quotes_code(t)) / len(texts) if texts else 0.0


def _matches(text: str, *, backticked: bool = False) -> Iterator[tuple[str, str, int, int]]:
    """(code, label, first char, end char) of every shape in `text`, without the full stop
    or colon of the sentence around it; with `backticked`, also whatever the text quotes
    between backticks (evidence: a documented command; a question's own quoting is read
    by shape alone, so that `git push --force-with-lease` still quotes the flag)."""
    for pattern, label in _PATTERNS:
        for m in pattern.finditer(text):
            code = m.group(0).rstrip(".:")
            if len(code) >= 2:
                yield code, label, m.start(), m.start() + len(code)
    for m in _BACKTICKED.finditer(text) if backticked else ():
        code = m.group(1).strip()
        if len(code) >= 2 and code == m.group(1):
            yield code, CODE_LABEL, m.start(1), m.end(1)
