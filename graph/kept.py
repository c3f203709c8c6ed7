"""A graph's adjacency kept on local disk, so a later process maps it instead of reading
every relationship from the store again.

Both backends keep the published token graph this way: the embedded store beside its
SQLite file, the Neo4j backend beside the collection's search files (the copy it runs
per-query PageRank on, `graph/neo4j/token_mirror.py`). At 200k chunks the token graph holds
millions of co-occurrence pairs: read from the store that is seconds (SQLite) to more than a
minute (Neo4j over Bolt) before a restarted server answers at full speed; mapped, a few
milliseconds, and the pages are shared by every process that maps them.

A kept graph is a folder: the node names (JSON), the CSR arrays (`.npy`, opened
memory-mapped, read-only) and `meta.json` with the key it was kept for. The key names the
content exactly (the store's identity, which a rebuilt store renews, and the published
version), so a copy of another store, of an older version or of another format is never
used. Written aside and renamed into place; a folder that cannot be read or written only
costs the next start a read from the store.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
from scipy import sparse

from graph.adjacency import csr_view

log = logging.getLogger(__name__)

STORE_ID = "store_id"  # the meta key both stores set once, when they are created


class KeptGraph:
    """One graph's node names and arrays in `folder`, for the content `key` names."""

    FORMAT = 2

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def load(self, key: str) -> tuple[list[str], dict[str, np.ndarray]] | None:
        """The kept names and arrays (mapped from disk, read-only), or None when the folder
        holds another key, another format, or cannot be read."""
        held = self.held(key)
        return (held[1], held[2]) if held is not None else None

    def held(self, key: str | None = None) -> tuple[str, list[str], dict[str, np.ndarray]] | None:
        """What the folder keeps, with its key (an older version a change can be followed
        from), or None when it keeps nothing readable of this format (or not `key`)."""
        try:
            meta = json.loads((self.folder / "meta.json").read_text())
            if meta.get("format") != self.FORMAT or not isinstance(meta.get("key"), str):
                return None
            if key is not None and meta["key"] != key:
                return None
            names = json.loads((self.folder / "names.json").read_text())
            arrays = {
                name: np.load(self.folder / f"{name}.npy", mmap_mode="r") for name in meta["arrays"]
            }
            return meta["key"], names, arrays
        except (OSError, ValueError, TypeError, KeyError):
            return None

    def save(self, key: str, names: list[str], arrays: dict[str, np.ndarray]) -> None:
        try:
            self.folder.parent.mkdir(parents=True, exist_ok=True)
            building = Path(
                tempfile.mkdtemp(prefix=f".{self.folder.name}-", dir=self.folder.parent)
            )
            for name, array in arrays.items():
                np.save(building / f"{name}.npy", np.asarray(array))
            (building / "names.json").write_text(json.dumps(names))
            meta = {"format": self.FORMAT, "key": key, "arrays": sorted(arrays)}
            (building / "meta.json").write_text(json.dumps(meta))
            old = self.folder.with_name(f".{self.folder.name}-old-{os.getpid()}")
            if self.folder.exists():
                self.folder.rename(old)
            building.rename(self.folder)
            shutil.rmtree(old, ignore_errors=True)
        except OSError as exc:
            log.warning("graph copy: cannot keep it in %s (%s)", self.folder, exc)


def adjacency_arrays(adj: sparse.csr_matrix) -> dict[str, np.ndarray]:
    adj = adj.tocsr()
    adj.sort_indices()
    return {"adj_data": adj.data, "adj_indices": adj.indices, "adj_indptr": adj.indptr}


def adjacency_of(arrays: dict[str, np.ndarray]) -> sparse.csr_matrix:
    n = len(arrays["adj_indptr"]) - 1
    return csr_view(arrays["adj_data"], arrays["adj_indices"], arrays["adj_indptr"], (n, n))
