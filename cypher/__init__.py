"""Every Cypher statement neorag runs, one `.cypher` file each, loaded by name.

The same files are what people paste into Neo4j Browser: parameters are `$names`, never
string-built. `load("token_ppr")` returns the text of `cypher/token_ppr.cypher` with its
leading `//` comment lines removed.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any


@cache
def load(name: str) -> str:
    if not name.replace("_", "").isalnum():
        raise ValueError(f"invalid Cypher file name: {name!r}")
    text = resources.files(__package__).joinpath(f"{name}.cypher").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("//")]
    return "\n".join(lines).strip()


def statements(name: str) -> list[str]:
    """A file holding several statements separated by semicolons (schema.cypher)."""
    return [part.strip() for part in load(name).split(";") if part.strip()]


def names() -> list[str]:
    return sorted(
        p.name.removesuffix(".cypher")
        for p in resources.files(__package__).iterdir()
        if p.name.endswith(".cypher")
    )


# ---- saved queries for Neo4j Browser (cypher/browser/*.cypher) ---------------------------
# Each file starts with `// title: ...` and lists its parameters as Browser commands in
# comments, `// :param name => <JSON value>`, so a person can paste them as they are and the
# tests can run every query with the same example values.

_PARAM_HINT = re.compile(r"^//\s*:param\s+([A-Za-z_][A-Za-z0-9_]*)\s*=>\s*(.+?)\s*$")
_TITLE = re.compile(r"^//\s*title:\s*(.+?)\s*$")


@cache
def _browser_files() -> tuple[tuple[str, str], ...]:
    folder = resources.files(__package__).joinpath("browser")
    return tuple(
        sorted(
            (p.name.removesuffix(".cypher"), p.read_text(encoding="utf-8").strip())
            for p in folder.iterdir()
            if p.name.endswith(".cypher")
        )
    )


def browser_queries() -> dict[str, str]:
    """Saved Browser queries by name, as the full file text: comments included, because
    they are what a person reads after pasting, and Cypher ignores them."""
    return dict(_browser_files())


def _browser_text(name: str) -> str:
    queries = browser_queries()
    if name not in queries:
        raise KeyError(f"no saved Browser query {name!r}; choose one of {', '.join(queries)}")
    return queries[name]


def browser_title(name: str) -> str:
    """The `// title:` line of a saved query (its name when there is none)."""
    for line in _browser_text(name).splitlines():
        if match := _TITLE.match(line.strip()):
            return match.group(1)
    return name


def browser_params(name: str) -> dict[str, Any]:
    """The example parameters of a saved query, from its `// :param name => value` hints
    (values are JSON, which Browser also reads as Cypher literals)."""
    params: dict[str, Any] = {}
    for line in _browser_text(name).splitlines():
        if match := _PARAM_HINT.match(line.strip()):
            key, raw = match.groups()
            try:
                params[key] = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{name}.cypher: :param {key} is not JSON ({exc.msg})") from None
    return params
