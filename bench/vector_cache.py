"""Chunk vectors and NER analyses kept across benchmark runs, so a text is embedded and
analysed once per model.

The scale suite ingests the same 200k+ chunks into each backend, and again after a change
to the store's layout; embedding is most of a fresh ingest (about an hour at 200k on two
cores), the rest is what those runs measure. `CachedEmbedder` wraps the ingest's embedder:
a text whose vector is in the cache is not encoded again, the others are encoded by the
model and added. Keys are the SHA-1 of the exact text the ingest embeds (title, section
path and chunk text), per model identity, so a changed chunker or model never meets a
stale vector. A run that reused vectors records how many (`vectors_reused`), and its
ingest time is then not a fresh ingest's: the suite reports it beside the embedding-only
time it did not pay.

NER (spaCy) is the other half of a fresh ingest's time (it runs beside the embedding: at
200k chunks about 45 minutes of one core), so `CachedExtractor` does the same for the
entity extractor's analyses, keyed by the title and text it analyses.

The caches are SQLite files under the benchmark cache (never in the repository).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np


class VectorCache:
    """text SHA-1 → float32 vector, one file per model identity."""

    def __init__(self, folder: Path, identity: str, dimension: int) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha1(identity.encode()).hexdigest()[:12]
        self.path = folder / f"vectors-{name}-{dimension}.sqlite"
        self.dimension = dimension
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS v (k BLOB PRIMARY KEY, vec BLOB) WITHOUT ROWID"
        )
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
        self._db.execute("INSERT OR IGNORE INTO meta VALUES ('identity', ?)", (identity,))
        self._db.commit()

    @staticmethod
    def key(text: str) -> bytes:
        return hashlib.sha1(text.encode()).digest()

    def get(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                part = keys[start : start + 500]
                marks = ",".join("?" * len(part))
                for k, blob in self._db.execute(f"SELECT k, vec FROM v WHERE k IN ({marks})", part):
                    found[k] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put(self, pairs: Sequence[tuple[bytes, np.ndarray]]) -> None:
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO v VALUES (?, ?)",
                [(k, np.ascontiguousarray(v, dtype=np.float32).tobytes()) for k, v in pairs],
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM v").fetchone()[0])


class CachedEmbedder:
    """The ingest embedder's interface (`encode`, `count_tokens`, `dimension`, …) over a
    `VectorCache`: only texts the cache lacks reach the model."""

    def __init__(self, inner: Any, cache: VectorCache) -> None:
        self._inner = inner
        self.cache = cache
        self.reused = 0
        self.encoded = 0

    def __getattr__(self, name: str) -> Any:  # device, name, identity, batch_size, …
        return getattr(self._inner, name)

    def count_tokens(self, text: str) -> int:
        return int(self._inner.count_tokens(text))

    def encode(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> np.ndarray:
        keys = [VectorCache.key(t) for t in texts]
        found = self.cache.get(keys)
        out = np.zeros((len(texts), self.cache.dimension), dtype=np.float32)
        missing = [i for i, k in enumerate(keys) if k not in found]
        for i, k in enumerate(keys):
            if k in found:
                out[i] = found[k]
        self.reused += len(texts) - len(missing)
        if progress and len(texts) > len(missing):
            progress(len(texts) - len(missing))
        if missing:
            vectors = self._inner.encode([texts[i] for i in missing], progress)
            out[missing] = vectors
            self.cache.put([(keys[i], vectors[j]) for j, i in enumerate(missing)])
            self.encoded += len(missing)
        return out


class CachedExtractor:
    """`EntityExtractor.analyze` over a cache of earlier analyses (entities and cloze
    questions as JSON), keyed by the exact title and text."""

    def __init__(self, inner: Any, folder: Path, identity: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha1(identity.encode()).hexdigest()[:12]
        self._inner = inner
        self._lock = threading.Lock()
        self._db = sqlite3.connect(folder / f"analyses-{name}.sqlite", check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS a (k BLOB PRIMARY KEY, v TEXT) WITHOUT ROWID")
        self._db.commit()
        self.reused = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def analyze(self, texts: Sequence[str], titles: Sequence[str]) -> list[Any]:
        from graph.types import EntityMention
        from ingest.entities import TextAnalysis

        keys = [
            hashlib.sha1(f"{t}\0{x}".encode()).digest() for t, x in zip(titles, texts, strict=True)
        ]
        with self._lock:
            marks = ",".join("?" * len(keys))
            found = dict(self._db.execute(f"SELECT k, v FROM a WHERE k IN ({marks})", keys))
        missing = [i for i, k in enumerate(keys) if k not in found]
        fresh = (
            self._inner.analyze([texts[i] for i in missing], [titles[i] for i in missing])
            if missing
            else []
        )
        out: list[Any] = [None] * len(keys)
        rows = []
        for i, a in zip(missing, fresh, strict=True):
            out[i] = a
            value = [[[e.name, e.label, e.count] for e in a.entities], list(a.questions)]
            rows.append((keys[i], json.dumps(value)))
        for i, k in enumerate(keys):
            if out[i] is None:
                entities, questions = json.loads(found[k])
                out[i] = TextAnalysis(
                    tuple(EntityMention(n, lb, c) for n, lb, c in entities), tuple(questions)
                )
                self.reused += 1
        if rows:
            with self._lock:
                self._db.executemany("INSERT OR REPLACE INTO a VALUES (?, ?)", rows)
                self._db.commit()
        return out


def cached(models: Any, folder: Path) -> CachedEmbedder:
    """Put a `CachedEmbedder` in front of `models.embedder` and a `CachedExtractor` in front
    of `models.extractor` (an `IngestModels`)."""
    inner = models.embedder
    cache = VectorCache(folder, str(getattr(inner, "identity", inner.name)), inner.dimension)
    wrapper = CachedEmbedder(inner, cache)
    models.__dict__["embedder"] = wrapper  # the cached_property's slot
    cfg = models.cfg
    identity = f"{cfg.spacy_model}|{','.join(sorted(cfg.entity_labels))}"
    models.__dict__["extractor"] = CachedExtractor(models.extractor, folder, identity)
    return wrapper
