"""The search-index files: immutable segments and the manifest that publishes them.

    indexes/manifest.json     the published state: corpus key, settings, indexed documents
                              (content hash, chunk count) and the segment list, base first
    indexes/seg-<sha16>.bin   a segment; its name is its content's hash

A base segment holds every chunk; a delta segment names documents whose earlier chunks are
dropped and carries the chunks added after them. An update therefore writes only the
change (one small delta and a new manifest), and a reader folds base + deltas back into the
state a fresh build gives. Both file kinds are written aside and renamed into place, and
the manifest records each segment's sha256, so a reader sees the old manifest or the new
one, never half a file, and refuses a damaged or foreign segment instead of using it.

Segments no published manifest names are deleted once they are older than `_GRACE_SECONDS`
and not named by the previous manifest either, so a reader that has just read the old
manifest still finds its files.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from scipy import sparse

from graph.base import TermMatrix

FORMAT = 2
MANIFEST = "manifest.json"
_SEGMENT_GLOB = "seg-*.bin"
_GRACE_SECONDS = 600.0
_STALE_TMP_SECONDS = 3600.0
# Files of the format before segments (one snapshot per index); replaced on first publish.
_LEGACY = ("dense.faiss", "dense.json", "bm25.npz", "bm25.json", "utility.npz", "utility.json")
BASE = "base"
DELTA = "delta"


class IndexFileError(Exception):
    """A segment or manifest that is missing, damaged or not what the manifest says."""


@dataclass(slots=True)
class Segment:
    """One segment's content. `chunk_ids` (sorted) are the chunks it adds and `chunk_docs`
    their documents; `terms` and `questions` have one row per such chunk; `dense_ids`
    (sorted) are the chunks with an embedding, and `dense` their arrays:
    `DenseIndex.to_arrays()` for a base, the store's raw vectors as {"raw": (n, dim)} for
    a delta."""

    kind: str
    removed_docs: list[str]
    chunk_ids: list[str]
    chunk_docs: list[str]
    terms: TermMatrix
    questions: TermMatrix
    dense_ids: list[str]
    dense: dict[str, np.ndarray]


@dataclass(slots=True)
class SegmentRef:
    """A segment as the manifest names it: `chunks` it adds, `dropped` chunks of earlier
    segments it removes (both count towards compaction)."""

    file: str
    sha256: str
    bytes: int
    kind: str
    chunks: int
    dropped: int = 0


@dataclass(slots=True)
class Manifest:
    key: str
    settings: dict[str, object]
    documents: dict[str, str | None]  # indexed document -> its content hash (None: stale)
    chunk_counts: dict[str, int]  # indexed document -> its chunks
    segments: list[SegmentRef]
    dense_kind: str
    trained_size: int = 0
    previous: list[str] = field(default_factory=list)

    @property
    def chunks(self) -> int:
        """Chunks the folded state holds (the sum over the indexed documents)."""
        return sum(self.chunk_counts.values())

    @property
    def churn(self) -> int:
        """Chunks the deltas add or drop: the work a fold repeats until the next compaction."""
        return sum(s.chunks + s.dropped for s in self.segments[1:])


# ---- segments ----------------------------------------------------------------------------
# A segment file: magic, the header's length (8 bytes, little-endian), the header (JSON:
# the segment's metadata and where each array lies), then the arrays' raw bytes, each
# 64-byte aligned. Not npz: a reader takes every array as a view of the bytes it has just
# hashed, where np.load would copy and CRC each member again (measured at 50k chunks:
# about 0.4 s of CPU per load, more than the old format's whole load).
_MAGIC = b"NEORAG-SEGMENT-2\n"
_ALIGN = 64


def write_segment(directory: Path, segment: Segment, dropped: int = 0) -> SegmentRef:
    """Write one segment file (aside, fsync, rename to its hash-derived name)."""
    directory.mkdir(parents=True, exist_ok=True)
    ids = segment.chunk_ids

    def same_or(other: list[str]) -> list[str] | None:
        return None if other == ids else other

    meta = {
        "format": FORMAT,
        "kind": segment.kind,
        "removed_docs": segment.removed_docs,
        "chunk_ids": ids,
        "chunk_docs": segment.chunk_docs,
        "terms_ids": same_or(segment.terms.chunk_ids),
        "terms_vocabulary": segment.terms.vocabulary,
        "questions_ids": same_or(segment.questions.chunk_ids),
        "questions_vocabulary": segment.questions.vocabulary,
        "dense_ids": same_or(segment.dense_ids),
    }
    arrays: dict[str, np.ndarray] = {}
    for prefix, terms in (("terms", segment.terms), ("questions", segment.questions)):
        tf = sparse.csr_matrix(terms.tf, dtype=np.float64)
        arrays[f"{prefix}_data"] = tf.data
        arrays[f"{prefix}_indices"] = tf.indices
        arrays[f"{prefix}_indptr"] = tf.indptr
    for name, value in segment.dense.items():
        arrays[f"dense_{name}"] = np.asarray(value)
    sha, size, tmp = _write_aside(directory, "seg", lambda fh: _pack(fh, meta, arrays))
    name = f"seg-{sha[:16]}.bin"
    _rename(tmp, directory / name)
    return SegmentRef(name, sha, size, segment.kind, len(ids), dropped)


def read_segment(directory: Path, ref: SegmentRef) -> Segment:
    """The segment `ref` names, checked against its recorded size and sha256. Its arrays
    are read-only views of the file's bytes."""
    path = directory / ref.file
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise IndexFileError(f"{ref.file}: {exc.strerror or exc}") from exc
    if len(raw) != ref.bytes or hashlib.sha256(raw).hexdigest() != ref.sha256:
        raise IndexFileError(f"{ref.file} does not match the manifest")
    try:
        meta, arrays = _unpack(raw)
        if meta["format"] != FORMAT or meta["kind"] != ref.kind:
            raise IndexFileError(f"{ref.file} is not a format-{FORMAT} {ref.kind} segment")
        ids: list[str] = meta["chunk_ids"]

        def terms(prefix: str) -> TermMatrix:
            rows, vocabulary = meta[f"{prefix}_ids"] or ids, meta[f"{prefix}_vocabulary"]
            tf = sparse.csr_matrix(
                (
                    arrays[f"{prefix}_data"],
                    arrays[f"{prefix}_indices"],
                    arrays[f"{prefix}_indptr"],
                ),
                shape=(len(rows), len(vocabulary)),
            )
            return TermMatrix(rows, vocabulary, tf)

        if len(meta["chunk_docs"]) != len(ids):
            raise IndexFileError(f"{ref.file}: chunk and document lists differ in length")
        return Segment(
            kind=meta["kind"],
            removed_docs=meta["removed_docs"],
            chunk_ids=ids,
            chunk_docs=meta["chunk_docs"],
            terms=terms("terms"),
            questions=terms("questions"),
            dense_ids=meta["dense_ids"] or ids,
            dense={k[len("dense_") :]: v for k, v in arrays.items() if k.startswith("dense_")},
        )
    except IndexFileError:
        raise
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise IndexFileError(f"{ref.file} is damaged: {exc}") from exc


def _pack(fh: BinaryIO, meta: dict[str, object], arrays: dict[str, np.ndarray]) -> None:
    layout: dict[str, list[object]] = {}
    contiguous: list[np.ndarray] = []
    offset = 0
    for name, value in arrays.items():
        array = np.ascontiguousarray(value)
        if array.dtype.hasobject:
            raise ValueError(f"array {name} holds Python objects")
        layout[name] = [array.dtype.str, list(array.shape), offset]
        contiguous.append(array)
        offset = _aligned(offset + array.nbytes)
    header = json.dumps({"meta": meta, "arrays": layout}, ensure_ascii=False).encode("utf-8")
    start = _aligned(len(_MAGIC) + 8 + len(header))
    fh.write(_MAGIC + len(header).to_bytes(8, "little") + header)
    fh.write(b"\0" * (start - len(_MAGIC) - 8 - len(header)))
    written = 0
    for array in contiguous:
        fh.write(array.reshape(-1).view(np.uint8))
        written += array.nbytes
        fh.write(b"\0" * (_aligned(written) - written))
        written = _aligned(written)


def _unpack(raw: bytes) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    if not raw.startswith(_MAGIC):
        raise ValueError("not a neorag segment")
    size = int.from_bytes(raw[len(_MAGIC) : len(_MAGIC) + 8], "little")
    head = len(_MAGIC) + 8
    header = json.loads(raw[head : head + size].decode("utf-8"))
    start = _aligned(head + size)
    arrays = {}
    for name, (dtype, shape, offset) in header["arrays"].items():
        kind = np.dtype(dtype)
        if kind.hasobject:
            raise ValueError(f"array {name} would hold Python objects")
        count = int(np.prod(shape, dtype=np.int64))
        if start + offset + count * kind.itemsize > len(raw):
            raise ValueError(f"array {name} runs past the end of the file")
        arrays[name] = np.frombuffer(raw, kind, count, start + offset).reshape(shape)
    return header["meta"], arrays


def _aligned(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


def segments_present(directory: Path, manifest: Manifest) -> bool:
    """Every segment the manifest names exists with its recorded size (a cheap check; the
    sha256 is verified when a segment is read)."""
    for ref in manifest.segments:
        try:
            if (directory / ref.file).stat().st_size != ref.bytes:
                return False
        except OSError:
            return False
    return True


# ---- manifest ----------------------------------------------------------------------------
def read_manifest(directory: Path) -> Manifest | None:
    """The published manifest, or None when there is none or it is unreadable."""
    try:
        meta = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            return None
        segments = [SegmentRef(**s) for s in meta["segments"]]
        if not segments or segments[0].kind != BASE or any(s.kind != DELTA for s in segments[1:]):
            return None
        return Manifest(
            key=str(meta["key"]),
            settings=dict(meta["settings"]),
            documents=dict(meta["documents"]),
            chunk_counts=dict(meta["chunk_counts"]),
            segments=segments,
            dense_kind=str(meta["dense_kind"]),
            trained_size=int(meta["trained_size"]),
            previous=list(meta.get("previous", [])),
        )
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None


def publish(directory: Path, manifest: Manifest) -> None:
    """Make `manifest` the published state (atomic rename), then collect garbage."""
    directory.mkdir(parents=True, exist_ok=True)
    payload = {
        "format": FORMAT,
        "key": manifest.key,
        "settings": manifest.settings,
        "documents": manifest.documents,
        "chunk_counts": manifest.chunk_counts,
        "segments": [asdict(s) for s in manifest.segments],
        "dense_kind": manifest.dense_kind,
        "trained_size": manifest.trained_size,
        "previous": manifest.previous,
        "written_at": time.time(),
    }
    text = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    _, _, tmp = _write_aside(directory, MANIFEST, lambda fh: fh.write(text))
    _rename(tmp, directory / MANIFEST)
    collect_garbage(directory, manifest)


def collect_garbage(directory: Path, manifest: Manifest, now: float | None = None) -> list[str]:
    """Delete segments neither this manifest nor its predecessor names once older than the
    grace period, temporary files a crashed writer left, and the pre-segment files."""
    now = time.time() if now is None else now
    keep = {s.file for s in manifest.segments} | set(manifest.previous)
    deleted = []
    for path in directory.glob(_SEGMENT_GLOB):
        if path.name not in keep and _age(path, now) > _GRACE_SECONDS:
            deleted.append(path.name)
    for path in directory.glob(".*.tmp"):
        if _age(path, now) > _STALE_TMP_SECONDS:
            deleted.append(path.name)
    deleted += [name for name in _LEGACY if (directory / name).exists()]
    for name in deleted:
        (directory / name).unlink(missing_ok=True)
    return deleted


def _age(path: Path, now: float) -> float:
    try:
        return now - path.stat().st_mtime
    except OSError:
        return 0.0


def _rename(tmp: Path, target: Path) -> None:
    """The atomic step; a failure leaves no temporary file behind (a kill does: the next
    garbage collection removes it)."""
    try:
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _write_aside(
    directory: Path, name: str, write: Callable[[BinaryIO], object]
) -> tuple[str, int, Path]:
    """Write a temporary file in `directory` and fsync it; return its sha256, size and path
    (the caller renames it into place, which is what makes the write atomic)."""
    fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        digest = hashlib.sha256()
        size = 0
        with tmp.open("rb") as fh:
            while block := fh.read(1 << 20):
                digest.update(block)
                size += len(block)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return digest.hexdigest(), size, tmp
