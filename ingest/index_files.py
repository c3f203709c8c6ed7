"""The search-index files: immutable segments and the manifest that publishes them.

    indexes/manifest.json     the published state: corpus key, settings, indexed documents
                              (content hash, chunk count) and the segment list, base first
    indexes/seg-<sha16>.bin   a segment; its name is its content's hash
    indexes/vec-<sha16>.faiss a base segment's dense index (FAISS), named by its hash

A base segment holds every chunk; a delta segment names documents whose earlier chunks are
dropped and carries the chunks added after them. An update therefore writes only the
change (one small delta and a new manifest), and a reader folds base + deltas back into the
state a fresh build gives. Both file kinds are written aside and renamed into place, and
the manifest records each segment's sha256, so a reader sees the old manifest or the new
one, never half a file, and refuses a damaged or foreign segment instead of using it.

Readers map the files instead of reading them (`read_segment`, graph/dense_mapped.py): a
query process holds only the pages its queries touch, and those are shared with every other
process that maps the same files, so neither a start nor a process's memory grows with the
corpus the way a copy would.

Segments no published manifest names are deleted once they are older than `_GRACE_SECONDS`
and not named by the previous manifest either, so a reader that has just read the old
manifest still finds its files.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from graph.base import TermMatrix
from graph.dense import DenseIndex
from graph.postings import ARRAYS as POSTINGS_ARRAYS
from graph.postings import Postings

FORMAT = 3  # 3: term postings by column and by row (graph/postings.py), files mapped
MANIFEST = "manifest.json"
_SEGMENT_GLOBS = ("seg-*.bin", "vec-*.faiss")
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
    their documents; `terms` and `questions` are postings whose rows are `terms_ids` and
    `questions_ids` (sorted; usually `chunk_ids`); `dense_ids` (sorted) are the chunks
    with an embedding, and `dense` their arrays: `DenseIndex.to_arrays()` for a base, the
    store's raw vectors as {"raw": (n, dim)} for a delta. A segment read from disk holds
    views of the mapped file."""

    kind: str
    removed_docs: list[str]
    chunk_ids: list[str]
    chunk_docs: list[str]
    terms: Postings
    terms_ids: list[str]
    questions: Postings
    questions_ids: list[str]
    dense_ids: list[str]
    dense: dict[str, np.ndarray]
    # A base's dense index lies in a FAISS file of its own (mapped by readers): the index
    # to write, or the file that was read.
    dense_index: DenseIndex | None = None
    dense_file: Path | None = None

    @classmethod
    def of(
        cls,
        kind: str,
        removed_docs: list[str],
        chunk_ids: list[str],
        chunk_docs: list[str],
        terms: TermMatrix,
        questions: TermMatrix,
        dense_ids: list[str],
        dense: dict[str, np.ndarray],
        dense_index: DenseIndex | None = None,
    ) -> Segment:
        """A segment from term matrices (canonical: rows sorted by id)."""
        return cls(
            kind,
            removed_docs,
            chunk_ids,
            chunk_docs,
            Postings.from_matrix(list(terms.vocabulary), terms.tf),
            list(terms.chunk_ids),
            Postings.from_matrix(list(questions.vocabulary), questions.tf),
            list(questions.chunk_ids),
            dense_ids,
            dense,
            dense_index,
        )

    def term_matrix(self) -> TermMatrix:
        return TermMatrix(self.terms_ids, self.terms.vocabulary, self.terms.matrix())

    def question_matrix(self) -> TermMatrix:
        return TermMatrix(self.questions_ids, self.questions.vocabulary, self.questions.matrix())


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
    files: list[str] = field(default_factory=list)  # files beside it (its FAISS file)


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
# 64-byte aligned. Not npz: a reader takes every array as a view of the mapped file, where
# np.load would copy and CRC each member again (measured at 50k chunks: about 0.4 s of CPU
# per load, more than the old format's whole load).
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
        "terms_ids": same_or(segment.terms_ids),
        "terms_vocabulary": segment.terms.vocabulary,
        "questions_ids": same_or(segment.questions_ids),
        "questions_vocabulary": segment.questions.vocabulary,
        "dense_ids": same_or(segment.dense_ids),
    }
    arrays: dict[str, np.ndarray] = {}
    for prefix, postings in (("terms", segment.terms), ("questions", segment.questions)):
        for name, value in postings.arrays().items():
            arrays[f"{prefix}_{name}"] = value
    for name, value in segment.dense.items():
        arrays[f"dense_{name}"] = np.asarray(value)
    beside: list[str] = []
    if segment.dense_index is not None:
        vectors = _write_dense_file(directory, segment.dense_index)
        meta["dense_file"] = vectors
        beside.append(vectors["name"])
    sha, size, tmp = _write_aside(directory, "seg", lambda fh: _pack(fh, meta, arrays))
    name = f"seg-{sha[:16]}.bin"
    _rename(tmp, directory / name)
    return SegmentRef(name, sha, size, segment.kind, len(ids), dropped, beside)


def _write_dense_file(directory: Path, index: DenseIndex) -> dict[str, Any]:
    """The base's FAISS file, written aside and renamed to a name made of its hash."""
    fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=".vec.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        index.write_file(tmp)
        with tmp.open("rb+") as fh:
            os.fsync(fh.fileno())
        sha, size = _digest(tmp)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    name = f"vec-{sha[:16]}.faiss"
    _rename(tmp, directory / name)
    return {"name": name, "sha256": sha, "bytes": size}


def _digest(path: Path) -> tuple[str, int]:
    """sha256 and size of a file, read through a small buffer (not mapped: the pages it
    reads do not join this process's resident set)."""
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def read_segment(directory: Path, ref: SegmentRef, *, verify: bool = True) -> Segment:
    """The segment `ref` names, checked against its recorded size and (with `verify`: not
    needed by the process that has just written it) its sha256. Its arrays
    are read-only views of the file, mapped into memory: its pages are read as queries
    touch them and shared by every process that maps the same file (segments are never
    rewritten; a deleted one stays readable while mapped)."""
    path = directory / ref.file
    try:
        with path.open("rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            # Hashed through a small buffer, not the mapping: a page only becomes part of
            # this process's resident set when a query touches it.
            if size != ref.bytes:
                raise IndexFileError(f"{ref.file} does not match the manifest")
            if verify:
                digest = hashlib.sha256()
                while block := fh.read(1 << 20):
                    digest.update(block)
                if digest.hexdigest() != ref.sha256:
                    raise IndexFileError(f"{ref.file} does not match the manifest")
            raw = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    except OSError as exc:
        raise IndexFileError(f"{ref.file}: {exc.strerror or exc}") from exc
    try:
        meta, arrays = _unpack(raw)
        if meta["format"] != FORMAT or meta["kind"] != ref.kind:
            raise IndexFileError(f"{ref.file} is not a format-{FORMAT} {ref.kind} segment")
        ids: list[str] = meta["chunk_ids"]

        def postings(prefix: str) -> tuple[Postings, list[str]]:
            rows, vocabulary = meta[f"{prefix}_ids"] or ids, meta[f"{prefix}_vocabulary"]
            found = Postings.from_arrays(
                vocabulary, {name: arrays[f"{prefix}_{name}"] for name in POSTINGS_ARRAYS}
            )
            if found.rows != len(rows):
                raise IndexFileError(f"{ref.file}: {prefix} rows do not match their ids")
            return found, rows

        if len(meta["chunk_docs"]) != len(ids):
            raise IndexFileError(f"{ref.file}: chunk and document lists differ in length")
        terms, terms_ids = postings("terms")
        questions, questions_ids = postings("questions")
        dense_file = None
        if meta.get("dense_file"):
            found = meta["dense_file"]
            dense_file = directory / found["name"]
            try:
                sha, size = _digest(dense_file) if verify else ("", dense_file.stat().st_size)
            except OSError as exc:
                raise IndexFileError(f"{found['name']}: {exc.strerror or exc}") from exc
            if size != found["bytes"] or (verify and sha != found["sha256"]):
                raise IndexFileError(f"{found['name']} does not match its segment")
        return Segment(
            kind=meta["kind"],
            removed_docs=meta["removed_docs"],
            chunk_ids=ids,
            chunk_docs=meta["chunk_docs"],
            terms=terms,
            terms_ids=terms_ids,
            questions=questions,
            questions_ids=questions_ids,
            dense_ids=meta["dense_ids"] or ids,
            dense={k[len("dense_") :]: v for k, v in arrays.items() if k.startswith("dense_")},
            dense_file=dense_file,
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


def _unpack(raw: bytes | mmap.mmap) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    if raw[: len(_MAGIC)] != _MAGIC:
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
            if not all((directory / f).is_file() for f in ref.files):
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
    keep = {f for s in manifest.segments for f in (s.file, *s.files)} | set(manifest.previous)
    deleted = []
    for pattern in _SEGMENT_GLOBS:
        for path in directory.glob(pattern):
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
