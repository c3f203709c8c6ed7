"""reStructuredText to sections, parsed by docutils: the section tree gives the heading
paths, the body gives the text with its markup removed and its links kept.

docutils runs locked down: no configuration files read, no `include`, `raw` or file-reading
directives (a document must not pull in other files of the host), no messages printed or
raised (a malformed document still yields what parsed). Sphinx documentation is full of
roles and directives docutils does not know (`:class:`, `:ref:`, `.. versionadded::`, …);
the common ones are registered here so their text is kept instead of becoming error
messages: a role gives its visible text (`:ref:`Label <target>`` → "Label", `~a.b.C` → "C"),
a directive keeps its body (`.. seealso::`) or is dropped when its body is not prose
(`.. toctree::`, `.. autoclass::`). The registration is process-wide, in docutils' own
registry, and happens on the first parse.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from functools import cache
from typing import Any

from ingest.loaders.links import keep_target, unique_targets
from ingest.loaders.types import WHITESPACE, LinkSpan, Section, one_line

_SETTINGS: dict[str, Any] = {
    "_disable_config": True,
    "report_level": 5,  # keep no system messages in the tree and print none
    "halt_level": 5,  # never raise on a malformed document
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "doctitle_xform": False,  # the top heading stays a section, as in Markdown
    "sectsubtitle_xform": False,
    "smart_quotes": False,
    "syntax_highlight": "none",
}
SPHINX_ROLES = (
    "ref", "doc", "term", "any", "numref", "keyword", "option", "envvar", "token",
    "download", "abbr", "command", "dfn", "file", "guilabel", "kbd", "mailheader",
    "makevar", "manpage", "menuselection", "mimetype", "newsgroup", "program", "regexp",
    "samp", "pep", "func", "meth", "class", "mod", "attr", "obj", "data", "const", "exc",
    "type", "py:func", "py:meth", "py:class", "py:mod", "py:attr", "py:obj", "py:data",
    "py:const", "py:exc", "c:func", "c:macro", "c:type", "c:data", "c:member",
    "cpp:func", "cpp:class", "cpp:type", "js:func", "js:class", "js:data", "js:attr",
)  # fmt: skip
KEPT_DIRECTIVES = (
    "seealso", "versionadded", "versionchanged", "deprecated", "versionremoved", "only",
    "glossary", "centered", "hlist", "tab", "tabs", "dropdown", "card", "grid",
    "grid-item-card", "tab-set", "tab-item", "plot", "ipython", "testcode", "testoutput",
    "doctest",
)  # fmt: skip
VERSION_LABELS = {
    "versionadded": "Added in version",
    "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version",
    "versionremoved": "Removed in version",
}
DROPPED_DIRECTIVES = (
    "toctree", "autosummary", "automodule", "autoclass", "autofunction", "automethod",
    "autoattribute", "autodata", "autoexception", "currentmodule", "module", "py:module",
    "py:currentmodule", "literalinclude", "highlight", "index", "tabularcolumns",
    "sectionauthor", "moduleauthor", "codeauthor", "include", "raw", "graphviz",
    "inheritance-diagram", "galleryitem", "minigallery", "bibliography",
)  # fmt: skip
_TARGET = re.compile(r"^(?P<label>.*?)\s*<(?P<target>[^<>]+)>$", re.DOTALL)


def parse_rst(text: str, fallback_title: str) -> tuple[str, list[Section]]:
    """Sections by the document's section tree (the path is the stack of enclosing titles);
    title: the first top-level section's, else `fallback_title`. Literal blocks are kept
    verbatim; comments, targets and substitution definitions are not text."""
    from docutils import nodes
    from docutils.core import publish_doctree

    _register_sphinx_names()
    overrides = {**_SETTINGS, "warning_stream": io.StringIO()}  # nothing reaches a terminal
    tree = publish_doctree(text, settings_overrides=overrides)
    sections: list[Section] = []
    _collect(nodes, tree, (), [], sections)
    first = next((child for child in tree.children if isinstance(child, nodes.section)), None)
    title = _title_text(nodes, first) if first is not None else ""
    return (title or fallback_title), sections


def _title_text(nodes: Any, section: Any) -> str:
    found = section.next_node(nodes.title)
    return one_line(found.astext()) if found is not None else ""


def _collect(
    nodes: Any,
    node: Any,
    path: tuple[str, ...],
    heading_links: list[str],
    out: list[Section],
) -> None:
    """The body of `node` (the document or a section) as one Section, then its
    subsections. Nesting follows the document's sections, a few levels deep."""
    text = _Text()
    for child in node.children:
        if isinstance(child, nodes.section):
            continue
        if isinstance(child, nodes.title):  # the section's own: its path
            continue
        text.block(nodes, child)
    section = text.section(path, heading_links)
    if section is not None:
        out.append(section)
    for child in node.children:
        if isinstance(child, nodes.section):
            title_node = child.next_node(nodes.title)
            title = _title_text(nodes, child)
            links = [] if title_node is None else _refuris(nodes, title_node)
            _collect(nodes, child, (*path, title) if title else path, links, out)


def _refuris(nodes: Any, node: Any) -> list[str]:
    return [
        kept
        for ref in node.findall(nodes.reference)
        if (kept := keep_target(str(ref.get("refuri", "")))) is not None
    ]


class _Text:
    """A section's text built block by block, whitespace collapsed inside paragraphs, so the
    link spans recorded while building are final offsets."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.spans: list[LinkSpan] = []
        self.pending_break = False

    def _append(self, piece: str) -> None:
        if not piece:
            return
        if self.pending_break and self.length:
            self.parts.append("\n\n")
            self.length += 2
        self.pending_break = False
        self.parts.append(piece)
        self.length += len(piece)

    def _inline_text(self, piece: str) -> None:
        collapsed = WHITESPACE.sub(" ", piece)
        if not self.parts or self.pending_break or self.parts[-1].endswith(" "):
            collapsed = collapsed.lstrip()
        self._append(collapsed)

    def paragraph_break(self) -> None:
        if self.parts and self.parts[-1].endswith(" "):
            self.parts[-1] = self.parts[-1].rstrip(" ")
            self.length = sum(map(len, self.parts))
        self.pending_break = True

    def block(self, nodes: Any, node: Any) -> None:
        """A body element: prose, verbatim text, or a container of more blocks."""
        skipped = (
            nodes.comment,
            nodes.substitution_definition,
            nodes.target,
            nodes.system_message,
            nodes.raw,
            nodes.pending,
            nodes.image,
            nodes.colspec,
            nodes.label,
        )
        if isinstance(node, skipped):
            return
        if isinstance(node, nodes.row):  # a table row: one line, its cells apart
            if not node.astext().strip():
                return
            self.paragraph_break()
            for n, entry in enumerate(node.children):
                if n:
                    self._inline_text(" | ")
                for m, part in enumerate(entry.findall(nodes.TextElement)):
                    if m:
                        self._inline_text(" ")
                    self.inline(nodes, part)
            self.paragraph_break()
        elif isinstance(node, (nodes.literal_block, nodes.doctest_block, nodes.math_block)):
            self.paragraph_break()
            self._append(node.astext().strip("\n"))
            self.paragraph_break()
        elif isinstance(node, nodes.TextElement):
            self.paragraph_break()
            self.inline(nodes, node)
            self.paragraph_break()
        elif isinstance(node, nodes.Text):
            self._inline_text(str(node))
        else:
            for child in node.children:
                self.block(nodes, child)

    def inline(self, nodes: Any, node: Any) -> None:
        for child in node.children:
            if isinstance(child, nodes.Text):
                self._inline_text(str(child))
            elif isinstance(child, (nodes.footnote_reference, nodes.citation_reference)):
                continue
            elif isinstance(child, nodes.image):
                self._inline_text(str(child.get("alt", "")))
            elif isinstance(child, (nodes.target, nodes.system_message, nodes.raw)):
                continue
            elif isinstance(child, nodes.reference):
                target = keep_target(str(child.get("refuri", "")))
                start = self.length + (2 if self.pending_break and self.length else 0)
                self.inline(nodes, child)
                if target is not None and self.length > start:
                    self.spans.append(LinkSpan(start, self.length, target))
            else:
                self.inline(nodes, child)

    def section(self, path: tuple[str, ...], heading_links: Iterable[str]) -> Section | None:
        text = "".join(self.parts).strip()
        if not text:
            return None
        links = unique_targets([s.target for s in self.spans] + list(heading_links))
        return Section(path, text, links, tuple(self.spans))


@cache
def _register_sphinx_names() -> None:
    from docutils import nodes
    from docutils.parsers.rst import Directive, directives, roles

    def text_role(
        name: str, rawtext: str, text: str, lineno: int, inliner: Any, options: Any = None,
        content: Any = None,
    ) -> tuple[list[Any], list[Any]]:  # fmt: skip
        return [nodes.literal(rawtext, visible_text(text))], []

    class AnyOptions(dict):  # type: ignore[type-arg]
        """Every option is accepted (and ignored): Sphinx directives have many."""

        def __missing__(self, key: str) -> Any:
            return directives.unchanged

    class Kept(Directive):
        has_content = True
        optional_arguments = 1
        final_argument_whitespace = True
        option_spec = AnyOptions(name=directives.unchanged)

        def run(self) -> list[Any]:
            node = nodes.container()
            if self.arguments and self.name != "only":  # `only`'s is a build condition
                words = self.arguments[0]
                if self.name in VERSION_LABELS:
                    version, *rest = words.split(None, 1)
                    label = f"{VERSION_LABELS[self.name]} {version}"
                    words = label + "".join(f": {r}" for r in rest)
                inline, _ = self.state.inline_text(words, self.lineno)
                node += nodes.paragraph(words, "", *inline)
            if self.content:
                self.state.nested_parse(self.content, self.content_offset, node)
            return [node]

    class Dropped(Kept):
        def run(self) -> list[Any]:
            return []

    for role in SPHINX_ROLES:
        roles.register_local_role(role, text_role)
    for name in KEPT_DIRECTIVES:
        directives.register_directive(name, Kept)
    for name in DROPPED_DIRECTIVES:
        directives.register_directive(name, Dropped)


def visible_text(role_text: str) -> str:
    """What a Sphinx cross-reference shows: the label of `Label <target>`, else the target
    without a leading `~` path (`~a.b.C` → "C") or `!`."""
    match = _TARGET.match(role_text)
    if match and match.group("label"):
        return match.group("label")
    target = match.group("target") if match else role_text
    if target.startswith("~"):
        return target[1:].rsplit(".", 1)[-1]
    return target.lstrip("!")
