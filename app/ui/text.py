"""Showing untrusted text (documents, questions, answers) through Streamlit's Markdown without
it being read as Markdown, LaTeX (`$...$`) or Streamlit directives (`:red[...]`)."""

from __future__ import annotations

import re
from collections.abc import Iterable

_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|$<>~:])")
_CITED = re.compile(r"\\\[(\d+)\\\]")
_MARK = '<mark style="background:#FFF0B3;padding:0 .1em;border-radius:.2em">'


def escape(text: str) -> str:
    """Backslash-escape every Markdown punctuation character (always valid CommonMark)."""
    return _SPECIAL.sub(r"\\\1", text)


def with_citations(text: str) -> str:
    """Escaped text whose `[n]` markers stand out as small highlighted labels."""
    return _CITED.sub(r":blue-background[**[\1]**]", escape(text))


def highlighted(text: str, sentences: Iterable[str]) -> str:
    """Escaped text with the given sentences (the answer's evidence) marked, so the reader
    sees at a glance which lines of the chunk were cited."""
    out = escape(text)
    for sentence in sorted(set(sentences), key=len, reverse=True):
        marked = escape(sentence.strip())
        if marked:
            out = out.replace(marked, f"{_MARK}{marked}</mark>", 1)
    return out


def section_path_without_title(title: str, section_path: Iterable[str]) -> list[str]:
    """A Markdown page's top heading is usually its title; don't say it twice."""
    path = [p for p in section_path if p]
    return path[1:] if path and path[0].strip() == title.strip() else path


def section_label(title: str, section_path: Iterable[str]) -> str:
    """ "Title › Part › Section", the way a chunk is named everywhere in the chat."""
    return " › ".join(p for p in (title, *section_path_without_title(title, section_path)) if p)
