"""Which files a scan reads, how each is loaded by its format, and duplicate ids."""

from __future__ import annotations

import codecs
import hashlib
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path, PurePath

from ingest.loaders.html import parse_html
from ingest.loaders.jsonl import load_jsonl
from ingest.loaders.links import plain_section
from ingest.loaders.markdown import parse_markdown
from ingest.loaders.pdf import parse_pdf
from ingest.loaders.rst import parse_rst
from ingest.loaders.text import BINARY_SNIFF_BYTES, decode_text, read_bytes
from ingest.loaders.types import (
    DUPLICATE,
    EMPTY,
    HIDDEN,
    INVALID,
    OUTSIDE_ROOTS,
    UNREADABLE,
    UNSUPPORTED,
    LoadedDocument,
    Section,
    SkippedFile,
    UnchangedFile,
    make_document,
    normalize_text,
)

# (file's absolute path, sha256 of its bytes) → the keys of its documents if an earlier
# scan of the same bytes was ingested and the store still holds them unchanged, else None.
Known = Callable[[str, str], Sequence[str] | None]

SUPPORTED_EXTENSIONS: dict[str, str] = {
    ".txt": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".rst": "rst",
    ".rest": "rst",
    ".pdf": "pdf",
    ".jsonl": "jsonl",
}


# The evaluation-dataset layout: questions and metadata beside a corpus.jsonl are not
# documents (the dataset's own files, read by `neorag eval`), so not reported either.
DATASET_SIDECARS = frozenset({"questions.jsonl", "meta.json"})
HIDDEN_REASON = "hidden name (not walked)"


def upload_refusal(name: str, data: bytes) -> str | None:
    """Why an uploaded file would not be indexed, judged by its name and first bytes (an
    upload is refused instead of kept to be skipped): not a supported format, or binary
    content under a text format's name. None if it may be kept."""
    suffix = PurePath(name).suffix.lower()
    if suffix not in SUPPORTED_EXTENSIONS:
        what = f"extension {suffix}" if suffix else "no file extension"
        return f"{name}: unsupported type ({what}); neorag reads {' '.join(SUPPORTED_EXTENSIONS)}"
    utf16 = data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    if SUPPORTED_EXTENSIONS[suffix] != "pdf" and not utf16 and b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return f"{name}: binary content under a {suffix} name"
    return None


def _supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_EXTENSIONS


def _walk(root: Path, followed: list[Path] | None) -> Iterator[tuple[Path, str] | SkippedFile]:
    """Supported regular files under `root` as (path, id), depth first in sorted name order,
    and a SkippedFile for every other file met (another format, not a regular file, not
    readable); each directory entered once (by device and inode) so symlink loops
    terminate. Symbolic links are followed; linked folders outside `root` are added to
    `followed`, the scan's scope beside `root` (the scan names each file by the path it
    resolves to)."""
    todo: list[tuple[Path, str]] = [(root, "")]
    seen_dirs: set[tuple[int, int]] = set()
    while todo:
        path, rel = todo.pop()
        try:
            info = path.stat()
        except FileNotFoundError:
            yield SkippedFile(os.path.abspath(path), "broken symbolic link", UNREADABLE)
            continue
        except PermissionError:
            yield SkippedFile(os.path.abspath(path), "permission denied", UNREADABLE)
            continue
        except OSError as exc:
            reason = f"could not stat ({exc.strerror or exc})"
            yield SkippedFile(os.path.abspath(path), reason, UNREADABLE)
            continue
        if stat.S_ISDIR(info.st_mode):
            key = (info.st_dev, info.st_ino)
            if key in seen_dirs:
                continue
            seen_dirs.add(key)
            try:
                names = sorted(os.listdir(path))
            except PermissionError:
                reason = "permission denied (directory)"
                yield SkippedFile(os.path.abspath(path), reason, UNREADABLE)
                continue
            except OSError as exc:
                reason = f"could not list directory ({exc.strerror or exc})"
                yield SkippedFile(os.path.abspath(path), reason, UNREADABLE)
                continue
            skip = DATASET_SIDECARS if "corpus.jsonl" in names else frozenset()
            for name in names:
                if name.startswith("."):
                    yield SkippedFile(os.path.abspath(path / name), HIDDEN_REASON, HIDDEN)
            for name in reversed(names):
                if not name.startswith(".") and name not in skip:
                    child = path / name
                    _note_link(child, root, followed)
                    todo.append((child, f"{rel}/{name}" if rel else name))
        elif stat.S_ISREG(info.st_mode) and _supported(path):
            yield path, rel
        else:
            yield SkippedFile(os.path.abspath(path), _unsupported(path, info), UNSUPPORTED)


def _note_link(path: Path, root: Path, followed: list[Path] | None) -> None:
    """Add to `followed` where `path` leads if it is a link to a folder outside `root`."""
    if followed is not None and path.is_symlink() and path.is_dir():
        real = Path(os.path.realpath(path))
        if not real.is_relative_to(os.path.realpath(root)):
            followed.append(real)


def _unsupported(path: Path, info: os.stat_result) -> str:
    """Why a file met is not read: not a regular file, or not a supported format."""
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if not path.suffix:
        return "no file extension (supported: " + ", ".join(SUPPORTED_EXTENSIONS) + ")"
    return f"unsupported extension {path.suffix}"


def _direct_file_problem(path: Path) -> SkippedFile | None:
    source = os.path.abspath(path)
    try:
        info = path.stat()
    except PermissionError:
        return SkippedFile(source, "permission denied", UNREADABLE)
    except OSError as exc:
        return SkippedFile(source, f"could not stat ({exc.strerror or exc})", UNREADABLE)
    if not stat.S_ISREG(info.st_mode) or not _supported(path):
        return SkippedFile(source, _unsupported(path, info), UNSUPPORTED)
    return None


def _check_exists(path: Path) -> None:
    if not os.path.lexists(path):
        raise FileNotFoundError(f"no such file or folder to ingest: {path}")
    if not path.exists():
        raise FileNotFoundError(f"broken symbolic link, nothing to ingest: {path}")


def _candidates(
    path: Path, followed: list[Path] | None = None
) -> Iterator[tuple[Path, str] | SkippedFile]:
    if path.is_dir():
        yield from _walk(path, followed)
        return
    problem = _direct_file_problem(path)
    if problem is not None:
        yield problem
    else:
        yield path, path.name


def scanned_sources(path: Path | str) -> list[Path]:
    """The files `scan` would open, in scan order, without reading them — for callers that
    want to compare modification times or notice deleted files cheaply."""
    path = Path(path)
    _check_exists(path)
    return [item[0] for item in _candidates(path) if not isinstance(item, SkippedFile)]


def scan(
    path: Path | str,
    max_file_bytes: int,
    allowed_roots: Sequence[Path] | None = None,
    known: Known | None = None,
    followed: list[Path] | None = None,
) -> Iterator[LoadedDocument | SkippedFile | UnchangedFile]:
    """Documents and skip reports for a file or folder (see the `ingest.loaders` docstring).
    With `allowed_roots`, a file whose real path (symbolic links resolved) lies outside all
    of them is skipped and reported, so a link inside an allowed folder cannot reach out.
    With `known`, every file's bytes are hashed first (`LoadedDocument.file_hash`), and a
    file `known` recognises is reported as `UnchangedFile` instead of being parsed: a
    re-ingest of a large tree costs reading its bytes, not parsing every page again.
    `followed` collects the linked folders outside `path` the scan entered (also in scope).

    Raises `FileNotFoundError` immediately (not on first iteration) if `path` is missing,
    and `ValueError` for a non-positive `max_file_bytes`.
    """
    path = Path(path)
    _check_exists(path)
    if max_file_bytes < 1:
        raise ValueError("max_file_bytes must be positive")
    return _scan(path, max_file_bytes, allowed_roots, known, followed)


def _load_file(
    path: Path, doc_id: str, limit: int, kind: str
) -> Iterator[tuple[LoadedDocument, str] | SkippedFile]:
    """Documents of one supported file (`kind`: its format, by the extension of the name it
    was found under), each with the origin used in duplicate reports."""
    source = os.path.abspath(path)
    if kind == "jsonl":
        yield from load_jsonl(path, source, limit)
        return
    data = read_bytes(path, source, limit)
    if isinstance(data, SkippedFile):
        yield data
        return
    if kind == "pdf":
        parsed = parse_pdf(data, path.stem)
        if isinstance(parsed, str):
            yield SkippedFile(source, parsed, EMPTY if parsed.startswith("no ") else INVALID)
            return
        title, sections = parsed
    else:
        decoded = decode_text(data, source)
        if isinstance(decoded, SkippedFile):
            yield decoded
            return
        text = normalize_text(decoded)
        if kind == "markdown":
            title, sections = parse_markdown(text, path.stem)
        elif kind in _MARKUP:
            parsed = _parse_markup(kind, text, path.stem)
            if isinstance(parsed, str):
                yield SkippedFile(source, parsed, INVALID)
                return
            title, sections = parsed
        else:
            title, sections = path.stem, [plain_section((), text)]
    if not sections:
        yield SkippedFile(source, "no text content", EMPTY)
        return
    yield make_document(doc_id, source, title, sections), source


_MARKUP = {"html": ("HTML", parse_html), "rst": ("reStructuredText", parse_rst)}


def _parse_markup(kind: str, text: str, stem: str) -> tuple[str, list[Section]] | str:
    """(title, sections) from a markup parser, or why it could not parse: one parser's
    failure is one file's skip, never the ingest's (html.parser and docutils reject some
    input outright, and deep nesting exhausts the stack)."""
    name, parse = _MARKUP[kind]
    try:
        return parse(text, stem)
    except RecursionError:
        return f"{name} nested too deeply to parse"
    except Exception as exc:
        return f"could not parse {name} ({type(exc).__name__})"


def within(path: Path, roots: Sequence[Path]) -> bool:
    """Whether `path`, with every symbolic link resolved, lies under one of `roots` (also
    resolved)."""
    real = Path(os.path.realpath(path))
    return any(real.is_relative_to(os.path.realpath(root)) for root in roots)


def _file_hash(path: Path) -> str | None:
    """sha256 of the file's bytes; None if it cannot be read (loading then says why)."""
    try:
        with open(path, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return None


def _scan(
    path: Path,
    limit: int,
    allowed_roots: Sequence[Path] | None,
    known: Known | None,
    followed: list[Path] | None,
) -> Iterator[LoadedDocument | SkippedFile | UnchangedFile]:
    first_seen: dict[str, str] = {}
    reached: set[Path] = set()
    for item in _candidates(path, followed):
        if isinstance(item, SkippedFile):
            yield item
            continue
        linked_path, doc_id = item
        # A file is named by the path it resolves to: one id however it is reached (through
        # a linked folder or link, or by naming the folder a link leads to).
        file_path = Path(os.path.realpath(linked_path))
        if allowed_roots is not None and not within(file_path, allowed_roots):
            reason = "outside the allowed ingest roots"
            yield SkippedFile(os.path.abspath(linked_path), reason, OUTSIDE_ROOTS)
            continue
        if file_path in reached:
            continue  # the same file again, through another link: one document
        reached.add(file_path)
        digest = _file_hash(file_path) if known is not None else None
        if digest is not None and known is not None:
            source = os.path.abspath(file_path)
            keys = known(source, digest)
            if keys:
                first_seen.update((k, source) for k in keys)
                yield UnchangedFile(source, digest, tuple(keys))
                continue
        kind = SUPPORTED_EXTENSIONS[linked_path.suffix.lower()]
        for result in _load_file(file_path, doc_id, limit, kind):
            if isinstance(result, SkippedFile):
                yield result
                continue
            document, origin = result
            document.file_hash = digest or ""
            earlier = first_seen.get(document.key)
            if earlier is not None:
                reason = f"duplicate document id {document.id!r} (first loaded from {earlier})"
                yield SkippedFile(origin, reason, DUPLICATE)
                continue
            first_seen[document.key] = origin
            yield document
