"""Turn files and folders into typed documents, reporting (never raising on) bad input.

`scan(path, max_file_bytes)` yields `LoadedDocument` for everything it could read and
`SkippedFile` (with a short human-readable reason) for everything it could not, so one broken
file never stops an ingest and the user still learns what was left out. Only usage errors
raise: a path that does not exist is a `FileNotFoundError`.

Rules worth knowing:

- Formats by extension (case-insensitive): `.txt`, `.md`/`.markdown`, `.html`/`.htm`, `.pdf`,
  `.jsonl` (one `{"id", "title"?, "text"}` record a line, e.g. a dataset's `corpus.jsonl`).
- Folders are walked recursively in sorted name order, so ids and ordering are
  deterministic. Names starting with "." are ignored (the root itself may be hidden).
  Symbolic links are followed, but each directory is entered once, so loops cannot hang.
  Inside folders, files with other extensions and non-regular files (FIFOs, sockets, ...)
  are ignored silently — a folder of notes usually also holds images and build output, and a
  report line for each would bury the real problems. A `questions.jsonl` beside a
  `corpus.jsonl` (the evaluation-dataset layout) is not a document and is ignored too. A
  file named directly is always reported: unsupported extension, not a regular file, ...
- Document ids: a file's path relative to the scan root (posix), or its file name when the
  file itself was given; a jsonl record's `"id"`. The first document with an id wins, later
  ones are skipped as duplicates (this also covers a record id equal to a file id).
- `max_file_bytes` is checked before reading. For `.jsonl` it applies to each line instead of
  the file, so a large corpus of small passages loads while a single absurd record does not.
- Text is NFC-normalised, newlines unified, trailing spaces stripped and blank-line runs
  collapsed; paragraphs are kept (blank lines are sentence boundaries downstream).
- Headings are not repeated in section text; `Section.path` carries them.
- Links: Markdown inline / reference / auto links and `[[Wiki Title]]` (target before `|`, any
  `#fragment` dropped), HTML `<a href>`, bare http(s) URLs in any text format and PDF URI
  annotations. Targets are kept as written (relative paths are not resolved); same-page
  `#fragment` links, `javascript:` and `mailto:` are dropped. Link syntax is replaced by its
  visible text, and `Section.link_spans` records where that text sits, so chunkers can give
  each chunk only the links that occur in it.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import json
import os
import re
import stat
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import yaml
from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.element import PreformattedString

__all__ = [
    "SUPPORTED_EXTENSIONS",
    "LinkSpan",
    "LoadedDocument",
    "Section",
    "SkippedFile",
    "document_hash",
    "normalize_text",
    "parse_html",
    "parse_markdown",
    "scan",
    "scanned_sources",
]

SUPPORTED_EXTENSIONS: dict[str, str] = {
    ".txt": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".jsonl": "jsonl",
}
_BINARY_SNIFF_BYTES = 8192
_MAX_BUFFERED_SKIPS = 1000


class LinkSpan(NamedTuple):
    """Where a link's visible text sits in `Section.text` (character offsets)."""

    start: int
    end: int
    target: str


@dataclass(slots=True)
class Section:
    """A run of text under one heading path. `links` lists every target once, in order;
    `link_spans` locates those that have a place in the text (PDF annotations and links in
    headings have none and belong to the whole section)."""

    path: tuple[str, ...]
    text: str
    links: tuple[str, ...] = ()
    link_spans: tuple[LinkSpan, ...] = ()


@dataclass(slots=True)
class LoadedDocument:
    """One document ready for chunking. `content_hash` is derived from the content when not
    given (see `document_hash`)."""

    id: str
    source: str
    title: str
    sections: list[Section]
    content_hash: str = field(default="")

    def __post_init__(self) -> None:
        if not self.content_hash:
            self.content_hash = document_hash(self.title, self.sections)

    @property
    def text(self) -> str:
        return "\n\n".join(section.text for section in self.sections)


@dataclass(slots=True)
class SkippedFile:
    """Something that was not loaded and why; for a jsonl line `source` is `file:line`."""

    source: str
    reason: str


def document_hash(title: str, sections: Iterable[Section]) -> str:
    """sha256 over everything a document contributes to the graph (not its location), so a
    moved or touched-but-unchanged file is recognised as unchanged."""
    payload = [title, [[list(s.path), s.text, list(s.links)] for s in sections]]
    encoded = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(encoded).hexdigest()


# --------------------------------------------------------------------------- text helpers

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_BLANK_RUNS = re.compile(r"\n{3,}")
_WHITESPACE = re.compile(r"\s+")
_BARE_URL = re.compile(r"https?://[^\s<>\"'`\[\]{}|\\^]+")


def normalize_text(text: str) -> str:
    """NFC, `\\n` newlines (also for CR, U+2028/9 and form feeds), no control characters,
    no trailing spaces, at most one blank line in a row, no leading/trailing blank lines."""
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\u2028", "\n").replace("\u2029", "\n\n").replace("\f", "\n\n")
    text = _CONTROL.sub("", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    text = _BLANK_RUNS.sub("\n\n", text)
    return text.strip("\n").rstrip()


def _one_line(text: str) -> str:
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()


def _trim_url(url: str) -> str:
    """Drop sentence punctuation glued to a bare URL; keep a `)` only if it is balanced."""
    while url:
        last = url[-1]
        if last in ".,;:!?*'\"" or (last == ")" and url.count("(") < url.count(")")):
            url = url[:-1]
        else:
            break
    return url


def _keep_target(target: str) -> str | None:
    target = target.strip()
    if not target or target.startswith("#"):
        return None
    lowered = target.lower()
    if lowered.startswith(("javascript:", "mailto:", "data:", "tel:")):
        return None
    return target


def _unique(targets: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(targets))


def _plain_section(path: tuple[str, ...], text: str, extra_links: Iterable[str] = ()) -> Section:
    spans: list[LinkSpan] = []
    for match in _BARE_URL.finditer(text):
        url = _trim_url(match.group())
        if len(url) > len("https://"):
            spans.append(LinkSpan(match.start(), match.start() + len(url), url))
    links = _unique([s.target for s in spans] + list(extra_links))
    return Section(path, text, links, tuple(spans))


def _human_size(n_bytes: int) -> str:
    if n_bytes < 1024:
        return f"{n_bytes} B"
    if n_bytes < 1024**2:
        return f"{n_bytes / 1024:.1f} KB"
    if n_bytes < 1024**3:
        return f"{n_bytes / 1024**2:.1f} MB"
    return f"{n_bytes / 1024**3:.1f} GB"


def _too_large(size: int, limit: int) -> str:
    return f"too large ({_human_size(size)} > {_human_size(limit)} limit)"


# --------------------------------------------------------------------------- markdown

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_THEMATIC = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_BLOCK_START = re.compile(r"^ {0,3}(?:[-+*>|]|\d+[.)])(?:\s|$)")
_REF_DEF = re.compile(r"^ {0,3}\[([^\[\]\n]+)\]:[ \t]*<?([^\s>]+)>?(?:[ \t]+.*)?$")
_EMPHASIS = re.compile(r"\*\*|__|`")
_IMAGE = re.compile(
    r"!\[(?P<alt>[^\[\]\n]*)\]"
    r"(?:\((?:[^()\s]|\([^()\s]*\))*(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'))?[ \t]*\)"
    r"|\[[^\[\]\n]*\])"
)
_INLINE = re.compile(
    r"\[\[(?P<wiki>[^\[\]\n]+)\]\]"
    r"|\[(?P<text>[^\[\]\n]*)\]\([ \t]*<?(?P<target>(?:[^()\s<>]|\([^()\s]*\))+)>?"
    r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*\)"
    r"|\[(?P<rtext>[^\[\]\n]+)\]\[(?P<ref>[^\[\]\n]*)\]"
    r"|\[(?P<short>[^\[\]\n]+)\](?![\[(:])"
    r"|<(?P<auto>[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]+)>"
    r"|(?P<bare>https?://[^\s<>\"'`\[\]{}|\\^]+)"
)


def _strip_comments(text: str) -> str:
    """Remove `<!-- ... -->` in linear time (a lazy regex rescans the rest of the text for
    every unclosed `<!--`)."""
    parts: list[str] = []
    pos = 0
    while (start := text.find("<!--", pos)) != -1:
        end = text.find("-->", start + 4)
        if end == -1:
            break
        parts.append(text[pos:start])
        pos = end + 3
    parts.append(text[pos:])
    return "".join(parts)


def _atx_title(body: str) -> str:
    """Heading text without an optional closing run of `#` (done by hand: the equivalent
    regex backtracks quadratically over long runs of spaces)."""
    body = body.rstrip()
    bare = body.rstrip("#")
    if bare != body and (not bare or bare[-1] in " \t"):
        body = bare.rstrip()
    return body


def _ref_label(label: str) -> str:
    return _WHITESPACE.sub(" ", label).strip().casefold()


def _wiki_link(inner: str) -> tuple[str, str | None]:
    page, _, alias = inner.partition("|")
    target = page.split("#", 1)[0].strip()
    anchor = (alias or page).strip()
    return anchor, (target or None)


def _render_inline(line: str, refs: dict[str, str]) -> tuple[str, list[LinkSpan]]:
    """Replace Markdown link syntax in one line by its visible text; return the new line and
    where each kept link's text landed. Undefined `[shortcut]` references stay as written."""
    line = _IMAGE.sub(lambda m: m.group("alt"), line)
    parts: list[str] = []
    spans: list[LinkSpan] = []
    pos = 0
    length = 0
    for match in _INLINE.finditer(line):
        target: str | None
        if match.group("wiki") is not None:
            anchor, target = _wiki_link(match.group("wiki"))
        elif match.group("target") is not None:
            anchor, target = match.group("text"), match.group("target")
        elif match.group("rtext") is not None:
            anchor = match.group("rtext")
            target = refs.get(_ref_label(match.group("ref") or anchor))
        elif match.group("short") is not None:
            anchor = match.group("short")
            target = refs.get(_ref_label(anchor))
            if target is None:
                continue
        elif match.group("auto") is not None:
            anchor = target = match.group("auto")
        else:
            anchor = target = _trim_url(match.group("bare"))
        kept = _keep_target(target) if target else None
        before = line[pos : match.start()]
        parts.append(before)
        length += len(before)
        parts.append(anchor)
        if kept and anchor.strip():
            spans.append(LinkSpan(length, length + len(anchor), kept))
        length += len(anchor)
        # A bare URL's trimmed trailing punctuation stays behind as ordinary text.
        pos = match.start() + len(anchor) if match.group("bare") is not None else match.end()
    parts.append(line[pos:])
    return "".join(parts), spans


def _plain_heading(raw: str, refs: dict[str, str]) -> tuple[str, list[str]]:
    text, spans = _render_inline(raw, refs)
    return _one_line(_EMPHASIS.sub("", text)), [s.target for s in spans]


def _front_matter(lines: list[str]) -> tuple[str | None, int]:
    """Title from a leading YAML (`---`) or TOML (`+++`) block and the index of the first
    body line. An unterminated block is not front matter."""
    if not lines or lines[0].strip() not in ("---", "+++"):
        return None, 0
    fence = lines[0].strip()
    closers = ("---", "...") if fence == "---" else ("+++",)
    for index in range(1, len(lines)):
        if lines[index].strip() in closers:
            block = "\n".join(lines[1:index])
            return _front_matter_title(block, fence), index + 1
    return None, 0


def _front_matter_title(block: str, fence: str) -> str | None:
    if fence == "---":
        try:
            data = yaml.safe_load(block)
        except yaml.YAMLError:
            return None
        title = data.get("title") if isinstance(data, dict) else None
        return _one_line(title) if isinstance(title, str) and title.strip() else None
    match = re.search(r"^title\s*=\s*[\"'](.+?)[\"']\s*$", block, re.MULTILINE)
    return _one_line(match.group(1)) if match else None


def _closes_fence(match: re.Match[str] | None, fence: str, line: str) -> bool:
    return (
        match is not None
        and match.group(1)[0] == fence[0]
        and len(match.group(1)) >= len(fence)
        and not line.strip(" `~")
    )


def _reference_definitions(lines: list[str]) -> tuple[dict[str, str], set[int]]:
    refs: dict[str, str] = {}
    def_lines: set[int] = set()
    fence: str | None = None
    for index, line in enumerate(lines):
        fence_match = _FENCE.match(line)
        if fence is not None:
            if _closes_fence(fence_match, fence, line):
                fence = None
            continue
        if fence_match:
            fence = fence_match.group(1)
            continue
        match = _REF_DEF.match(line)
        if match:
            refs.setdefault(_ref_label(match.group(1)), match.group(2))
            def_lines.add(index)
    return refs, def_lines


def _collapse_blank_lines(lines: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    out: list[tuple[str, bool]] = []
    for line, is_code in lines:
        if not line.strip() and not is_code and (not out or not out[-1][0].strip()):
            continue
        out.append((line, is_code))
    while out and not out[-1][0].strip():
        out.pop()
    return out


def _markdown_section(
    path: tuple[str, ...], lines: list[tuple[str, bool]], refs: dict[str, str], extra: list[str]
) -> Section | None:
    parts: list[str] = []
    spans: list[LinkSpan] = []
    offset = 0
    for line, is_code in _collapse_blank_lines(lines):
        if is_code:
            rendered, line_spans = line, []
        else:
            rendered, line_spans = _render_inline(line, refs)
        spans.extend(LinkSpan(s.start + offset, s.end + offset, s.target) for s in line_spans)
        parts.append(rendered)
        offset += len(rendered) + 1
    text = "\n".join(parts)
    if not text.strip():
        return None
    links = _unique([s.target for s in spans] + extra)
    return Section(path, text, links, tuple(spans))


def parse_markdown(text: str, fallback_title: str) -> tuple[str, list[Section]]:
    """Sections by ATX (`## x`) and setext (`x` over `===`/`---`) headings; the path is the
    stack of enclosing headings. Title: front-matter `title`, else the first H1, else
    `fallback_title`. Code fences are kept verbatim and never read as headings or links."""
    text = _strip_comments(text)
    lines = text.split("\n")
    meta_title, body_start = _front_matter(lines)
    lines = lines[body_start:]
    refs, def_lines = _reference_definitions(lines)

    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    heading_links: list[str] = []
    current: list[tuple[str, bool]] = []
    first_h1: str | None = None
    fence: str | None = None

    def flush() -> None:
        section = _markdown_section(
            tuple(title for _, title in stack), current, refs, heading_links
        )
        if section is not None:
            sections.append(section)
        current.clear()

    def open_heading(level: int, raw: str) -> None:
        nonlocal first_h1, heading_links
        flush()
        title, heading_links = _plain_heading(raw, refs)
        while stack and stack[-1][0] >= level:
            stack.pop()
        if title:
            stack.append((level, title))
        if level == 1 and first_h1 is None and title:
            first_h1 = title

    for index, line in enumerate(lines):
        fence_match = _FENCE.match(line)
        if fence is not None:
            current.append((line, True))
            if _closes_fence(fence_match, fence, line):
                fence = None
            continue
        if fence_match:
            fence = fence_match.group(1)
            current.append((line, True))
            continue
        if index in def_lines:
            continue
        atx = _ATX.match(line)
        if atx:
            open_heading(len(atx.group(1)), _atx_title(atx.group(2) or ""))
            continue
        if _SETEXT.match(line) and _is_setext_candidate(current):
            raw = current.pop()[0]
            open_heading(1 if line.strip()[0] == "=" else 2, raw.strip())
            continue
        if _THEMATIC.match(line):
            current.append(("", False))
            continue
        current.append((line, False))
    flush()
    return meta_title or first_h1 or fallback_title, sections


def _is_setext_candidate(current: list[tuple[str, bool]]) -> bool:
    """A setext underline turns the previous line into a heading only when that line is a
    one-line paragraph (not code, not a list item, quote or table row)."""
    if not current:
        return False
    previous, is_code = current[-1]
    if is_code or not previous.strip() or _BLOCK_START.match(previous):
        return False
    return len(current) == 1 or not current[-2][0].strip()


# --------------------------------------------------------------------------- html

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
        collapsed = _WHITESPACE.sub(" ", text)
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
    links = _unique([s.target for s in spans] + extra)
    return Section(path, text, links, tuple(spans))


def parse_html(text: str, fallback_title: str) -> tuple[str, list[Section]]:
    """Sections by `<h1>`–`<h6>`; scripts, styles, navigation and `<head>` are dropped.
    Title: `<title>`, else the first `<h1>`, else `fallback_title`. The tree is walked with
    an explicit stack, so deeply nested markup cannot hit the recursion limit."""
    soup = BeautifulSoup(text, "html.parser")
    title_tag = soup.find("title")
    title = _one_line(title_tag.get_text(" ")) if title_tag is not None else ""
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
            if name in _PARAGRAPH_TAGS:
                builder.separate(2)
            elif name in _LINE_TAGS:
                builder.separate(1)
            elif name in _CELL_TAGS:
                builder.separate(0)
            continue
        if name in _DROP_TAGS:
            continue
        level = _HEADING_TAGS.get(name)
        if level is not None:
            section = _html_section(tuple(t for _, t in stack), builder, spans, heading_links)
            if section is not None:
                sections.append(section)
            builder, spans = _TextBuilder(), []
            heading = _one_line(node.get_text(" "))
            heading_links = [
                kept
                for anchor in node.find_all("a", href=True)
                if (kept := _keep_target(str(anchor["href"]))) is not None
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
        if name in _PARAGRAPH_TAGS:
            builder.separate(2)
        elif name in _LINE_TAGS:
            builder.separate(1)
        elif name in _CELL_TAGS:
            builder.separate(0)
        if name == "a":
            href = node.get("href")
            kept = _keep_target(str(href)) if isinstance(href, str) else None
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


# --------------------------------------------------------------------------- pdf


def _parse_pdf(data: bytes, fallback_title: str) -> tuple[str, list[Section]] | str:
    """One section per page with text, path ("page N",). Returns a skip reason on failure."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            try:
                unlocked = reader.decrypt("")
            except Exception:
                unlocked = 0
            if not unlocked:
                return "encrypted PDF (needs a password)"
        title = fallback_title
        metadata = reader.metadata
        if metadata is not None and isinstance(metadata.title, str) and metadata.title.strip():
            title = _one_line(metadata.title)
        sections: list[Section] = []
        for number, page in enumerate(reader.pages, start=1):
            page_text = normalize_text(page.extract_text() or "")
            if page_text:
                sections.append(_plain_section((f"page {number}",), page_text, _pdf_uris(page)))
    except PdfReadError as exc:
        return f"PDF parse failure: {exc}"
    except Exception as exc:  # pypdf raises many types on damaged files
        return f"PDF parse failure: {type(exc).__name__}: {exc}"
    if not sections:
        return "no extractable text in PDF (scanned images?)"
    return title, sections


def _pdf_uris(page: object) -> list[str]:
    uris: list[str] = []
    try:
        annotations = page.get("/Annots") or []  # type: ignore[attr-defined]
        for reference in annotations:
            action = reference.get_object().get("/A")
            uri = action.get_object().get("/URI") if action is not None else None
            kept = _keep_target(str(uri)) if uri is not None else None
            if kept is not None:
                uris.append(kept)
    except Exception:
        return uris
    return uris


# --------------------------------------------------------------------------- reading


def _read_bytes(path: Path, source: str, limit: int) -> bytes | SkippedFile:
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > limit:
                return SkippedFile(source, _too_large(size, limit))
            data = handle.read(limit + 1)
    except PermissionError:
        return SkippedFile(source, "permission denied")
    except OSError as exc:
        return SkippedFile(source, f"could not read ({exc.strerror or exc})")
    if len(data) > limit:
        return SkippedFile(source, _too_large(len(data), limit))
    if not data:
        return SkippedFile(source, "empty file")
    return data


def _decode_text(data: bytes, source: str) -> str | SkippedFile:
    """UTF-8 (BOM tolerated) or BOM-marked UTF-16; NUL bytes early on mean binary."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            return SkippedFile(source, f"invalid UTF-16 at byte {exc.start}")
    else:
        if b"\x00" in data[:_BINARY_SNIFF_BYTES]:
            return SkippedFile(source, "binary file")
        skip = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
        try:
            text = data[skip:].decode("utf-8")
        except UnicodeDecodeError as exc:
            return SkippedFile(source, f"invalid UTF-8 at byte {exc.start + skip}")
    if not text.strip():
        return SkippedFile(source, "empty file (whitespace only)")
    return text


def _document(doc_id: str, source: str, title: str, sections: list[Section]) -> LoadedDocument:
    return LoadedDocument(doc_id, source, _one_line(title) or doc_id, sections)


def _load_file(
    path: Path, doc_id: str, limit: int
) -> Iterator[tuple[LoadedDocument, str] | SkippedFile]:
    """Documents of one supported file, each with the origin used in duplicate reports."""
    source = os.path.abspath(path)
    kind = SUPPORTED_EXTENSIONS[path.suffix.lower()]
    if kind == "jsonl":
        yield from _load_jsonl(path, source, limit)
        return
    data = _read_bytes(path, source, limit)
    if isinstance(data, SkippedFile):
        yield data
        return
    if kind == "pdf":
        parsed = _parse_pdf(data, path.stem)
        if isinstance(parsed, str):
            yield SkippedFile(source, parsed)
            return
        title, sections = parsed
    else:
        decoded = _decode_text(data, source)
        if isinstance(decoded, SkippedFile):
            yield decoded
            return
        text = normalize_text(decoded)
        if kind == "markdown":
            title, sections = parse_markdown(text, path.stem)
        elif kind == "html":
            try:
                title, sections = parse_html(text, path.stem)
            except RecursionError:
                yield SkippedFile(source, "HTML nested too deeply to parse")
                return
            except Exception as exc:  # html.parser rejects some markup outright
                yield SkippedFile(source, f"could not parse HTML ({type(exc).__name__})")
                return
        else:
            title, sections = path.stem, [_plain_section((), text)]
    if not sections:
        yield SkippedFile(source, "no text content")
        return
    yield _document(doc_id, source, title, sections), source


# --------------------------------------------------------------------------- jsonl


def _parse_record(raw: bytes, lineno: int, offset: int) -> tuple[str, str, str] | str | None:
    """(id, title, text) of one corpus line, a reason it is unusable, or None if blank."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"line {lineno}: invalid UTF-8 at byte {offset + exc.start}"
    if lineno == 1:
        line = line.removeprefix("\ufeff")
    if not line.strip():
        return None
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        return f"line {lineno}: malformed JSON ({exc.msg} at column {exc.colno})"
    if not isinstance(record, dict):
        return f"line {lineno}: expected a JSON object, got {type(record).__name__}"
    values: dict[str, str] = {}
    for key in ("id", "text", "title"):
        value = record.get(key)
        if value is None:
            if key == "title":
                continue
            return f"line {lineno}: missing {key!r}"
        if not isinstance(value, str):
            return f"line {lineno}: {key!r} must be a string, got {type(value).__name__}"
        values[key] = value
    if not values["id"].strip():
        return f"line {lineno}: empty 'id'"
    if not values["text"].strip():
        return f"line {lineno}: empty 'text'"
    return values["id"], values.get("title") or values["id"], values["text"]


def _load_jsonl(
    path: Path, source: str, limit: int
) -> Iterator[tuple[LoadedDocument, str] | SkippedFile]:
    """Stream a corpus file. Problems before the first good record are held back: if the file
    has no good record at all (say a `questions.jsonl` next to the corpus) it is reported
    once, as a whole, instead of once per line."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed by the `with` below
    except PermissionError:
        yield SkippedFile(source, "permission denied")
        return
    except OSError as exc:
        yield SkippedFile(source, f"could not read ({exc.strerror or exc})")
        return
    with handle:
        try:
            head = handle.read(_BINARY_SNIFF_BYTES)
        except OSError as exc:
            yield SkippedFile(source, f"could not read ({exc.strerror or exc})")
            return
        if not head.strip():
            yield SkippedFile(source, "empty file")
            return
        if b"\x00" in head:
            yield SkippedFile(source, "binary file")
            return
        handle.seek(0)
        held: list[SkippedFile] = []
        held_overflow = 0
        good = 0
        lineno = 0
        offset = 0
        while raw := handle.readline(limit + 1):
            lineno += 1
            line_start = offset
            offset += len(raw)
            if len(raw) > limit and not raw.endswith(b"\n"):
                while rest := handle.readline(1 << 20):
                    offset += len(rest)
                    if rest.endswith(b"\n"):
                        break
                size = offset - line_start
                parsed: tuple[str, str, str] | str | None = (
                    f"line {lineno}: record too large ({_human_size(size)} > "
                    f"{_human_size(limit)} limit)"
                )
            else:
                parsed = _parse_record(raw, lineno, line_start)
            if parsed is None:
                continue
            origin = f"{source}:{lineno}"
            if isinstance(parsed, str):
                skipped = SkippedFile(origin, parsed)
                if good:
                    yield skipped
                elif len(held) < _MAX_BUFFERED_SKIPS:
                    held.append(skipped)
                else:
                    held_overflow += 1
                continue
            if not good:
                yield from held
                if held_overflow:
                    yield SkippedFile(
                        source, f"{held_overflow} more bad lines before line {lineno}"
                    )
            good += 1
            doc_id, title, text = parsed
            normalized = normalize_text(text)
            yield _document(doc_id, source, title, [_plain_section((), normalized)]), origin
        if not good:
            if lineno == 0 or not held:
                yield SkippedFile(source, "no records")
            else:
                bad = len(held) + held_overflow
                yield SkippedFile(
                    source, f"no valid records ({bad} bad lines; first: {held[0].reason})"
                )


# --------------------------------------------------------------------------- walking


# The evaluation-dataset layout: questions beside a corpus.jsonl are not documents.
DATASET_SIDECARS = frozenset({"questions.jsonl"})


def _supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_EXTENSIONS


def _walk(root: Path) -> Iterator[tuple[Path, str] | SkippedFile]:
    """Supported regular files under `root` as (path, id), depth first in sorted name order,
    each directory entered once (by device and inode) so symlink loops terminate."""
    todo: list[tuple[Path, str]] = [(root, "")]
    seen_dirs: set[tuple[int, int]] = set()
    while todo:
        path, rel = todo.pop()
        try:
            info = path.stat()
        except FileNotFoundError:
            yield SkippedFile(os.path.abspath(path), "broken symbolic link")
            continue
        except PermissionError:
            yield SkippedFile(os.path.abspath(path), "permission denied")
            continue
        except OSError as exc:
            yield SkippedFile(os.path.abspath(path), f"could not stat ({exc.strerror or exc})")
            continue
        if stat.S_ISDIR(info.st_mode):
            key = (info.st_dev, info.st_ino)
            if key in seen_dirs:
                continue
            seen_dirs.add(key)
            try:
                names = sorted(os.listdir(path))
            except PermissionError:
                yield SkippedFile(os.path.abspath(path), "permission denied (directory)")
                continue
            except OSError as exc:
                reason = f"could not list directory ({exc.strerror or exc})"
                yield SkippedFile(os.path.abspath(path), reason)
                continue
            skip = DATASET_SIDECARS if "corpus.jsonl" in names else frozenset()
            for name in reversed(names):
                if not name.startswith(".") and name not in skip:
                    todo.append((path / name, f"{rel}/{name}" if rel else name))
        elif stat.S_ISREG(info.st_mode) and _supported(path):
            yield path, rel


def _direct_file_problem(path: Path) -> str | None:
    try:
        info = path.stat()
    except PermissionError:
        return "permission denied"
    except OSError as exc:
        return f"could not stat ({exc.strerror or exc})"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if not path.suffix:
        return "no file extension (supported: " + ", ".join(SUPPORTED_EXTENSIONS) + ")"
    if not _supported(path):
        return f"unsupported extension {path.suffix}"
    return None


def _check_exists(path: Path) -> None:
    if not os.path.lexists(path):
        raise FileNotFoundError(f"no such file or folder to ingest: {path}")
    if not path.exists():
        raise FileNotFoundError(f"broken symbolic link, nothing to ingest: {path}")


def _candidates(path: Path) -> Iterator[tuple[Path, str] | SkippedFile]:
    if path.is_dir():
        yield from _walk(path)
        return
    problem = _direct_file_problem(path)
    if problem is not None:
        yield SkippedFile(os.path.abspath(path), problem)
    else:
        yield path, path.name


def scanned_sources(path: Path | str) -> list[Path]:
    """The files `scan` would open, in scan order, without reading them — for callers that
    want to compare modification times or notice deleted files cheaply."""
    path = Path(path)
    _check_exists(path)
    return [item[0] for item in _candidates(path) if not isinstance(item, SkippedFile)]


def scan(path: Path | str, max_file_bytes: int) -> Iterator[LoadedDocument | SkippedFile]:
    """Documents and skip reports for a file or folder (see the module docstring).

    Raises `FileNotFoundError` immediately (not on first iteration) if `path` is missing,
    and `ValueError` for a non-positive `max_file_bytes`.
    """
    path = Path(path)
    _check_exists(path)
    if max_file_bytes < 1:
        raise ValueError("max_file_bytes must be positive")
    return _scan(path, max_file_bytes)


def _scan(path: Path, limit: int) -> Iterator[LoadedDocument | SkippedFile]:
    first_seen: dict[str, str] = {}
    for item in _candidates(path):
        if isinstance(item, SkippedFile):
            yield item
            continue
        file_path, doc_id = item
        for result in _load_file(file_path, doc_id, limit):
            if isinstance(result, SkippedFile):
                yield result
                continue
            document, origin = result
            earlier = first_seen.get(document.id)
            if earlier is not None:
                reason = f"duplicate document id {document.id!r} (first loaded from {earlier})"
                yield SkippedFile(origin, reason)
                continue
            first_seen[document.id] = origin
            yield document
