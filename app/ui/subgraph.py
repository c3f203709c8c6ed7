"""The retrieved subgraph: the context chunks and the typed edges among them, as a Graphviz
picture for the chat. The Cypher that shows the same subgraph in Neo4j Browser is the query
layer's (`app.service.subgraph_cypher`): every adapter prints it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graph.base import GraphStore
from graph.types import EDGE_KINDS, ChunkEdge

# One colour per edge kind (colour-blind-safe Okabe–Ito order) and a pale fill per community.
EDGE_COLOURS: dict[str, str] = {
    "SEMANTIC": "#0072B2",
    "NEXT": "#7F7F7F",
    "SAME_SECTION": "#009E73",
    "SHARES_ENTITY": "#E69F00",
    "CITES": "#D55E00",
    "UTILITY": "#CC79A7",
    "RELATED": "#56B4E9",
}
COMMUNITY_FILLS: tuple[str, ...] = (
    "#DCEBFA",
    "#FBE3CC",
    "#D9F2E6",
    "#F6D9E8",
    "#FFF4C2",
    "#E4DDF4",
    "#D8EEF2",
    "#EFE6DA",
)
_DIRECTED = {"NEXT", "CITES"}  # stored with their direction; the others are symmetric


@dataclass(frozen=True, slots=True)
class Node:
    """What the picture needs of a context chunk: its citation number and labels."""

    chunk_id: str
    n: int
    title: str
    section: str
    community: int | None


def edges_among(
    store: GraphStore, ids: Sequence[str], kinds: Sequence[str] = EDGE_KINDS
) -> list[ChunkEdge]:
    """The stored edges of `kinds` whose two ends are both in `ids`. RELATED (the fused
    weight) is left out by default: it duplicates the typed edges it was made from."""
    ordered = list(dict.fromkeys(ids))
    wanted = set(ordered)
    return [e for e in store.neighbours(ordered, kinds) if e.src in wanted and e.dst in wanted]


def _quote(*lines: str) -> str:
    """A DOT string literal; several arguments become centred lines."""
    escaped = (t.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") for t in lines)
    return '"' + "\\n".join(escaped) + '"'


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def community_fill(community: int | None) -> str:
    return "#FFFFFF" if community is None else COMMUNITY_FILLS[community % len(COMMUNITY_FILLS)]


def subgraph_dot(nodes: Sequence[Node], edges: Sequence[ChunkEdge]) -> str:
    """DOT for `st.graphviz_chart`: nodes labelled with their citation number, title and
    section, filled by community; edges coloured by kind, thicker when heavier."""
    lines = [
        "graph retrieved {",
        '  graph [rankdir=LR, bgcolor="transparent", pad=0.2, nodesep=0.35, ranksep=0.6];',
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11,'
        ' color="#5A6270", penwidth=1];',
        '  edge [fontname="Helvetica", fontsize=9, fontcolor="#5A6270"];',
    ]
    known = {n.chunk_id for n in nodes}
    for node in nodes:
        label = [f"[{node.n}] {_short(node.title, 28)}"]
        if node.section:
            label.append(_short(node.section, 32))
        tooltip = node.chunk_id
        if node.community is not None:
            tooltip += f" · community {node.community}"
        lines.append(
            f"  {_quote(node.chunk_id)} [label={_quote(*label)},"
            f" fillcolor={_quote(community_fill(node.community))}, tooltip={_quote(tooltip)}];"
        )
    for e in edges:
        if e.src not in known or e.dst not in known:
            continue
        colour = EDGE_COLOURS.get(e.kind, "#333333")
        width = 1.0 + 2.0 * max(0.0, min(e.weight, 1.0))
        direction = "forward" if e.kind in _DIRECTED else "none"
        lines.append(
            f"  {_quote(e.src)} -- {_quote(e.dst)} [color={_quote(colour)}, penwidth={width:.2f},"
            f" dir={direction}, tooltip={_quote(f'{e.kind} {e.weight:.2f}')}];"
        )
    lines.append("}")
    return "\n".join(lines)
