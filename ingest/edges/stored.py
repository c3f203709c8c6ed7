"""What an update reads back from the store: the stored chunk edges around some chunks and
each chunk's edge state, each read once per chunk."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from graph.base import GraphStore
from graph.types import ChunkEdge
from ingest.edges.model import EdgeKey, Kth

_BATCH = 500


class StoredEdges:
    """Stored edges read per (chunk, kind), each once: a kind's update asks only for its own
    kind, so a chunk's many edges of other kinds (a long section's SAME_SECTION pairs, say)
    are never read for it."""

    def __init__(self, store: GraphStore) -> None:
        self._store = store
        self._by_chunk: dict[tuple[str, str], list[ChunkEdge]] = {}

    def load(self, ids: Iterable[str], kind: str) -> None:
        missing = sorted({i for i in ids if (i, kind) not in self._by_chunk})
        for start in range(0, len(missing), _BATCH):
            batch = missing[start : start + _BATCH]
            wanted = set(batch)
            for cid in batch:
                self._by_chunk[cid, kind] = []
            for e in self._store.neighbours(batch, [kind]):
                for end in {e.src, e.dst} & wanted:
                    self._by_chunk[end, kind].append(e)

    def around(self, ids: Iterable[str], kind: str) -> dict[EdgeKey, float]:
        """Every stored edge of `kind` touching one of `ids`."""
        ids = list(ids)
        self.load(ids, kind)
        return {(e.src, e.dst): e.weight for cid in ids for e in self._by_chunk[cid, kind]}

    def partners(self, chunk_id: str, kind: str) -> dict[str, float]:
        self.load([chunk_id], kind)
        return {
            (e.dst if e.src == chunk_id else e.src): e.weight
            for e in self._by_chunk[chunk_id, kind]
        }


@dataclass(slots=True)
class ChunkState:
    """What the store keeps per chunk for the next update: the kth key of each top-k kind
    it belongs to, and its question-term counts (the UTILITY input, so an update need not
    re-tokenise every chunk's questions)."""

    kth: dict[str, Kth] = field(default_factory=dict)
    terms: dict[str, int] | None = None


class StoredStates:
    def __init__(self, store: GraphStore) -> None:
        self._store = store
        self._by_chunk: dict[str, ChunkState] = {}

    def load(self, ids: Iterable[str]) -> None:
        missing = sorted({i for i in ids if i not in self._by_chunk})
        for start in range(0, len(missing), _BATCH):
            batch = missing[start : start + _BATCH]
            found = self._store.chunk_edge_states(batch)
            for cid in batch:
                self._by_chunk[cid] = decode_state(found[cid]) if cid in found else ChunkState()

    def state(self, chunk_id: str) -> ChunkState:
        self.load([chunk_id])
        return self._by_chunk[chunk_id]

    def of(self, chunk_id: str) -> dict[str, Kth]:
        return self.state(chunk_id).kth


def decode_state(text: str) -> ChunkState:
    raw = json.loads(text)
    kth = {k: None if v is None else (float(v[0]), str(v[1])) for k, v in raw["kth"].items()}
    return ChunkState(kth, raw.get("terms"))


def encode_state(state: ChunkState) -> str:
    raw: dict[str, object] = {
        "kth": {k: None if v is None else [v[0], v[1]] for k, v in sorted(state.kth.items())}
    }
    if state.terms is not None:
        raw["terms"] = dict(sorted(state.terms.items()))
    return json.dumps(raw, separators=(",", ":"))
