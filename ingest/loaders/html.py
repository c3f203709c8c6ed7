"""HTML to sections by heading tags, walked without recursion."""

from __future__ import annotations

import unicodedata

from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.element import PreformattedString

from ingest.loaders.links import keep_target, unique_targets
from ingest.loaders.types import WHITESPACE, LinkSpan, Section, one_line

_DROP_TAGS = frozenset(
    {"script", "style", "nav", "noscript", "template", "svg", "head", "iframe", "object"}
)
_HEADING_TAGS = {f"h{level}": level for level in range(1, 7)}
_PARAGRAPH_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "details", "dialog", "div", "dl",
        "fieldset", "figcaption", "figure", "footer", "form", "header", "main", "ol", "p",
        "pre", "section", "summary", "table", "ul", "caption", "hr",
    }
)  # fmt: skip
_LINE_TAGS = frozenset({"li", "tr", "dt", "dd", "br", "option", "thead", "tbody", "tfoot"})
_CELL_TAGS = frozenset({"td", "th"})
_BREAKS = {
    **dict.fromkeys(_CELL_TAGS, 0),
    **dict.fromkeys(_LINE_TAGS, 1),
    **dict.fromkeys(_PARAGRAPH_TAGS, 2),
}


class _TextBuilder:
    """Accumulates HTML text with whitespace collapsed as it goes, so offsets recorded
    while building (link spans) are final."""

    __slots__ = ("_breaks", "_length", "_parts", "_space")

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._breaks = 0
        self._space = False

    @property
    def position(self) -> int:
        return self._length

    def separate(self, newlines: int) -> None:
        if newlines:
            self._breaks = max(self._breaks, newlines)
        else:
            self._space = True

    def _append(self, piece: str) -> None:
        self._parts.append(piece)
        self._length += len(piece)

    def _flush_pending(self) -> None:
        if self._length:
            if self._breaks:
                self._append("\n" * self._breaks)
            elif self._space:
                self._append(" ")
        self._breaks = 0
        self._space = False

    def add(self, text: str, preformatted: bool = False) -> None:
        text = unicodedata.normalize("NFC", text)
        if preformatted:
            if text.strip():
                self._flush_pending()
                self._append(text.strip("\n"))
            return
        collapsed = WHITESPACE.sub(" ", text)
        core = collapsed.strip()
        if not core:
            if collapsed:
                self._space = True
            return
        if collapsed[0] == " ":
            self._space = True
        self._flush_pending()
        self._append(core)
        if collapsed[-1] == " ":
            self._space = True

    def value(self) -> str:
        return "".join(self._parts)


def _separate(builder: _TextBuilder, tag: str) -> None:
    """The break a block tag puts around its text: a paragraph, a line, or a cell gap."""
    lines = _BREAKS.get(tag)
    if lines is not None:
        builder.separate(lines)


def _html_section(
    path: tuple[str, ...], builder: _TextBuilder, raw_spans: list[LinkSpan], extra: list[str]
) -> Section | None:
    text = builder.value()
    if not text.strip():
        return None
    spans: list[LinkSpan] = []
    for start, end, target in raw_spans:
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            spans.append(LinkSpan(start, end, target))
    links = unique_targets([s.target for s in spans] + extra)
    return Section(path, text, links, tuple(spans))


def parse_html(text: str, fallback_title: str) -> tuple[str, list[Section]]:
    """Sections by `<h1>`–`<h6>`; scripts, styles, navigation and `<head>` are dropped.
    Title: `<title>`, else the first `<h1>`, else `fallback_title`. The tree is walked with
    an explicit stack, so deeply nested markup cannot hit the recursion limit."""
    soup = BeautifulSoup(text, "html.parser")
    title_tag = soup.find("title")
    title = one_line(title_tag.get_text(" ")) if title_tag is not None else ""
    root: Tag = soup.body if soup.body is not None else soup

    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    builder = _TextBuilder()
    spans: list[LinkSpan] = []
    heading_links: list[str] = []
    open_links: dict[int, tuple[_TextBuilder, int, str]] = {}
    first_h1: str | None = None
    pre_depth = 0

    todo: list[tuple[object, bool]] = [(root, True)]
    while todo:
        node, entering = todo.pop()
        if isinstance(node, NavigableString):
            if not isinstance(node, PreformattedString):
                builder.add(str(node), preformatted=pre_depth > 0)
            continue
        if not isinstance(node, Tag):
            continue
        name = node.name
        if not entering:
            if name == "pre":
                pre_depth -= 1
            opened = open_links.pop(id(node), None)
            if opened is not None and opened[0] is builder:
                spans.append(LinkSpan(opened[1], builder.position, opened[2]))
            _separate(builder, name)
            continue
        if name in _DROP_TAGS:
            continue
        level = _HEADING_TAGS.get(name)
        if level is not None:
            section = _html_section(tuple(t for _, t in stack), builder, spans, heading_links)
            if section is not None:
                sections.append(section)
            builder, spans = _TextBuilder(), []
            heading = one_line(node.get_text(" "))
            heading_links = [
                kept
                for anchor in node.find_all("a", href=True)
                if (kept := keep_target(str(anchor["href"]))) is not None
            ]
            while stack and stack[-1][0] >= level:
                stack.pop()
            if heading:
                stack.append((level, heading))
                if level == 1 and first_h1 is None:
                    first_h1 = heading
            continue
        if name == "br":
            builder.separate(1)
            continue
        _separate(builder, name)
        if name == "a":
            href = node.get("href")
            kept = keep_target(str(href)) if isinstance(href, str) else None
            if kept is not None:
                open_links[id(node)] = (builder, builder.position, kept)
        if name == "pre":
            pre_depth += 1
        todo.append((node, False))
        todo.extend((child, True) for child in reversed(node.contents))

    section = _html_section(tuple(t for _, t in stack), builder, spans, heading_links)
    if section is not None:
        sections.append(section)
    return title or first_h1 or fallback_title, sections
