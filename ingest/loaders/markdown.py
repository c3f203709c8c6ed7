"""Markdown to sections: headings, front-matter title, links replaced by their text."""

from __future__ import annotations

import re

import yaml

from ingest.loaders.links import keep_target, trim_url, unique_targets
from ingest.loaders.types import WHITESPACE, LinkSpan, Section, one_line

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
    return WHITESPACE.sub(" ", label).strip().casefold()


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
            anchor = target = trim_url(match.group("bare"))
        kept = keep_target(target) if target else None
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
    return one_line(_EMPHASIS.sub("", text)), [s.target for s in spans]


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
        return one_line(title) if isinstance(title, str) and title.strip() else None
    match = re.search(r"^title\s*=\s*[\"'](.+?)[\"']\s*$", block, re.MULTILINE)
    return one_line(match.group(1)) if match else None


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
    links = unique_targets([s.target for s in spans] + extra)
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
