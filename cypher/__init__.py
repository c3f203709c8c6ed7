"""Every Cypher statement neorag runs, one `.cypher` file each, loaded by name.

The same files are what people paste into Neo4j Browser: parameters are `$names`, never
string-built. `load("token_ppr")` returns the text of `cypher/token_ppr.cypher` with its
leading `//` comment lines removed.
"""

from __future__ import annotations

from functools import cache
from importlib import resources


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
