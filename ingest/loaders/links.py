"""Link targets shared by every format: which to keep, bare URLs in plain text."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ingest.loaders.types import LinkSpan, Section

_BARE_URL = re.compile(r"https?://[^\s<>\"'`\[\]{}|\\^]+")


def trim_url(url: str) -> str:
    """Drop sentence punctuation glued to a bare URL; keep a `)` only if it is balanced."""
    while url:
        last = url[-1]
        if last in ".,;:!?*'\"" or (last == ")" and url.count("(") < url.count(")")):
            url = url[:-1]
        else:
            break
    return url


def keep_target(target: str) -> str | None:
    target = target.strip()
    if not target or target.startswith("#"):
        return None
    lowered = target.lower()
    if lowered.startswith(("javascript:", "mailto:", "data:", "tel:")):
        return None
    return target


def unique_targets(targets: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(targets))


def plain_section(path: tuple[str, ...], text: str, extra_links: Iterable[str] = ()) -> Section:
    spans: list[LinkSpan] = []
    for match in _BARE_URL.finditer(text):
        url = trim_url(match.group())
        if len(url) > len("https://"):
            spans.append(LinkSpan(match.start(), match.start() + len(url), url))
    links = unique_targets([s.target for s in spans] + list(extra_links))
    return Section(path, text, links, tuple(spans))
