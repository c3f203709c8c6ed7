"""Loaders: structure, links, bad input reported (never raised), determinism."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import pytest

from ingest.loaders import LoadedDocument, Section, SkippedFile, scan, scanned_sources
from tests.conftest import DATASETS, dataset_file

LIMIT = 1024 * 1024
CORPUS_2WIKI = DATASETS / "2wiki-dev" / "corpus.jsonl"


def load(path: Path, limit: int = LIMIT) -> tuple[list[LoadedDocument], list[SkippedFile]]:
    docs: list[LoadedDocument] = []
    skipped: list[SkippedFile] = []
    for item in scan(path, limit):
        (docs if isinstance(item, LoadedDocument) else skipped).append(item)
    return docs, skipped


def only_doc(path: Path) -> LoadedDocument:
    docs, skipped = load(path)
    assert skipped == []
    assert len(docs) == 1
    return docs[0]


def linked(section: Section) -> list[tuple[str, str]]:
    """(visible text, target) for every located link."""
    return [(section.text[s.start : s.end], s.target) for s in section.link_spans]


MARKDOWN = """\
---
title: "Front Matter Title"
tags: [x]
---
Intro with [Neo4j](https://neo4j.com "Neo4j site") and <https://auto.example/a>.

# Guide

See [[Other Page|the other page]], [[Third Page#History]] and [the spec][spec].
![logo](logo.png) [Jump](#install) is same-page.

## Install

```bash
# a comment, not a heading; [not](a-link)
pip install neorag
```

### Linux

Run it. Details at https://example.org/linux.

Windows Notes
-------------

Use WSL.

#### Deep

Skipped a level.

## Empty

## Usage

Final words.

[spec]: https://spec.example/v1 "Spec"
"""


def test_markdown_headings_give_section_paths(tmp_path: Path) -> None:
    (tmp_path / "guide.md").write_text(MARKDOWN)
    doc = only_doc(tmp_path / "guide.md")
    assert doc.id == "guide.md"
    assert doc.title == "Front Matter Title"
    assert [s.path for s in doc.sections] == [
        (),
        ("Guide",),
        ("Guide", "Install"),
        ("Guide", "Install", "Linux"),
        ("Guide", "Windows Notes"),
        ("Guide", "Windows Notes", "Deep"),
        ("Guide", "Usage"),
    ]
    code = doc.sections[2].text
    assert code.startswith("```bash\n# a comment") and "[not](a-link)" in code
    assert "title:" not in doc.text and "[spec]:" not in doc.text
    assert doc.sections[-1].text == "Final words."


def test_markdown_title_falls_back_to_first_h1_then_stem(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("Preamble.\n\n# Real Title\n\nBody.\n")
    (tmp_path / "b.md").write_text("## Only a subsection\n\nBody.\n")
    docs, _ = load(tmp_path)
    assert [(d.id, d.title) for d in docs] == [("a.md", "Real Title"), ("b.md", "b")]


def test_markdown_links_inline_auto_wiki_reference(tmp_path: Path) -> None:
    (tmp_path / "guide.md").write_text(MARKDOWN)
    sections = only_doc(tmp_path / "guide.md").sections
    intro, guide = sections[0], sections[1]
    assert intro.text == "Intro with Neo4j and https://auto.example/a."
    assert linked(intro) == [
        ("Neo4j", "https://neo4j.com"),
        ("https://auto.example/a", "https://auto.example/a"),
    ]
    assert guide.links == ("Other Page", "Third Page", "https://spec.example/v1")
    assert linked(guide) == [
        ("the other page", "Other Page"),
        ("Third Page#History", "Third Page"),
        ("the spec", "https://spec.example/v1"),
    ]
    assert "logo" in guide.text and "logo.png" not in guide.links
    assert "Jump" in guide.text
    assert sections[2].links == ()
    assert sections[3].links == ("https://example.org/linux",)


def test_html_sections_links_and_dropped_elements(tmp_path: Path) -> None:
    (tmp_path / "page.html").write_text(
        """<!doctype html><html><head><title>  The   Page </title>
        <style>p { color: red }</style><script>var secret = 1;</script></head>
        <body><nav><a href="/home">Home</a> | <a href="/about">About</a></nav>
        <p>Lead with <a href="https://x.org/a">an
           anchor</a>.</p>
        <h1>Top</h1><p>First para.<br>Second line &amp; more.</p><p>Next para.</p>
        <h2>Sub <a href="sub.html">here</a></h2>
        <ul><li>one <a href="#frag">same page</a></li><li>two <a href="b.html">bee</a></li></ul>
        <h3>Deeper</h3><div>deep text</div>
        <h2>Other</h2><p>other text</p><script>alert(1)</script>
        </body></html>"""
    )
    doc = only_doc(tmp_path / "page.html")
    assert doc.title == "The Page"
    assert [s.path for s in doc.sections] == [
        (),
        ("Top",),
        ("Top", "Sub here"),
        ("Top", "Sub here", "Deeper"),
        ("Top", "Other"),
    ]
    assert doc.sections[0].text == "Lead with an anchor."
    assert linked(doc.sections[0]) == [("an anchor", "https://x.org/a")]
    assert doc.sections[1].text == "First para.\nSecond line & more.\n\nNext para."
    assert doc.sections[2].text == "one same page\ntwo bee"
    assert doc.sections[2].links == ("b.html", "sub.html")
    assert linked(doc.sections[2]) == [("bee", "b.html")]
    for banned in ("secret", "alert", "Home", "About", "color"):
        assert banned not in doc.text


def test_html_title_falls_back_to_h1(tmp_path: Path) -> None:
    (tmp_path / "p.htm").write_text("<h1>Heading One</h1><p>text</p>")
    assert only_doc(tmp_path / "p.htm").title == "Heading One"


def test_text_file_single_section_and_normalisation(tmp_path: Path) -> None:
    raw = "Cafe\u0301 line one.   \r\nline two\t \r\n\r\n\r\n\r\nSee https://ex.org/p.\r\n"
    (tmp_path / "notes.txt").write_bytes(raw.encode("utf-8"))
    doc = only_doc(tmp_path / "notes.txt")
    assert doc.title == "notes"
    assert len(doc.sections) == 1 and doc.sections[0].path == ()
    assert doc.text == "Café line one.\nline two\n\nSee https://ex.org/p."
    assert unicodedata.is_normalized("NFC", doc.text)
    assert doc.sections[0].links == ("https://ex.org/p",)


def test_utf8_bom_and_utf16_are_decoded(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"\xef\xbb\xbfhello bom")
    (tmp_path / "b.txt").write_bytes("hello utf16".encode("utf-16"))
    docs, skipped = load(tmp_path)
    assert skipped == []
    assert [d.text for d in docs] == ["hello bom", "hello utf16"]


def test_jsonl_malformed_lines_are_skipped_with_line_numbers(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "\n".join(
            [
                '{"id": "a", "title": "Alpha", "text": "First passage."}',
                '{"id": "b", "text": "No title here."}',
                '{"id": "c", "title": "Broken", "text": ',
                '{"title": "No id", "text": "orphan"}',
                '{"id": 7, "text": "numeric id"}',
                '{"id": "d"}',
                "",
                '["not", "an", "object"]',
                '{"id": "e", "text": "   "}',
                '{"id": "a", "text": "Duplicate id."}',
                '{"id": "f", "title": "Foxtrot", "text": "Last good line."}',
            ]
        )
    )
    docs, skipped = load(corpus)
    assert [(d.id, d.title, d.text) for d in docs] == [
        ("a", "Alpha", "First passage."),
        ("b", "b", "No title here."),
        ("f", "Foxtrot", "Last good line."),
    ]
    assert all(d.source == str(corpus) for d in docs)
    by_line = {int(s.source.rsplit(":", 1)[1]): s.reason for s in skipped}
    assert sorted(by_line) == [3, 4, 5, 6, 8, 9, 10]
    assert by_line[3].startswith("line 3: malformed JSON")
    assert by_line[4] == "line 4: missing 'id'"
    assert by_line[5] == "line 5: 'id' must be a string, got int"
    assert by_line[6] == "line 6: missing 'text'"
    assert by_line[8] == "line 8: expected a JSON object, got list"
    assert by_line[9] == "line 9: empty 'text'"
    assert by_line[10].startswith("duplicate document id 'a'")


def test_jsonl_without_any_good_record_is_one_report(tmp_path: Path) -> None:
    questions = tmp_path / "questions.jsonl"
    questions.write_text("\n".join(f'{{"id": "q{i}", "question": "?"}}' for i in range(50)))
    docs, skipped = load(questions)
    assert docs == []
    assert len(skipped) == 1
    assert skipped[0].source == str(questions)
    assert skipped[0].reason.startswith("no valid records (50 bad lines; first: line 1: missing")


def test_jsonl_size_limit_applies_per_record(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    good = [f'{{"id": "p{i}", "text": "{"word " * 30}"}}' for i in range(100)]
    huge = '{"id": "big", "text": "' + "x" * 5000 + '"}'
    corpus.write_text("\n".join([*good[:50], huge, *good[50:]]) + "\n")
    assert corpus.stat().st_size > 4 * 2048
    docs, skipped = load(corpus, limit=2048)
    assert len(docs) == 100 and docs[50].id == "p50"
    assert len(skipped) == 1
    assert skipped[0].source == f"{corpus}:51"
    assert skipped[0].reason == "line 51: record too large (4.9 KB > 2.0 KB limit)"


def test_bad_files_are_skipped_with_reasons(tmp_path: Path) -> None:
    (tmp_path / "binary.txt").write_bytes(b"PK\x03\x04\x00\x00binary\x00stuff")
    (tmp_path / "empty.md").write_bytes(b"")
    (tmp_path / "blank.txt").write_text("  \n\t\n  ")
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9 ok" + b"!" * 10)
    (tmp_path / "big.txt").write_text("word " * 1000)
    (tmp_path / "headings-only.md").write_text("# Title\n\n## Sub\n")
    (tmp_path / "good.txt").write_text("fine")
    docs, skipped = load(tmp_path, limit=2048)
    assert [d.id for d in docs] == ["good.txt"]
    reasons = {Path(s.source).name: s.reason for s in skipped}
    assert reasons == {
        "big.txt": "too large (4.9 KB > 2.0 KB limit)",
        "binary.txt": "binary file",
        "blank.txt": "empty file (whitespace only)",
        "empty.md": "empty file",
        "headings-only.md": "no text content",
        "latin1.txt": "invalid UTF-8 at byte 3",
    }
    assert all(os.path.isabs(s.source) for s in skipped)


def test_size_is_checked_before_reading(tmp_path: Path) -> None:
    """A sparse 5 GB file would take minutes (and all memory) to read; the size check
    must reject it from its metadata alone."""
    huge = tmp_path / "huge.txt"
    with huge.open("wb") as handle:
        handle.truncate(5 * 1024**3)
    started = time.perf_counter()
    _, skipped = load(huge, limit=20 * 1024 * 1024)
    assert time.perf_counter() - started < 1.0
    assert skipped[0].reason == "too large (5.0 GB > 20.0 MB limit)"


def test_permission_denied_is_reported(tmp_path: Path) -> None:
    """Real chmod 000. Root reads such files anyway, so as root the scan runs in a child
    process without the DAC capabilities (setpriv), which makes the permission real."""
    locked = tmp_path / "locked.md"
    locked.write_text("secret")
    locked.chmod(0)
    code = (
        "import json, sys; from ingest.loaders import scan, SkippedFile; "
        "print(json.dumps([[type(i).__name__, getattr(i, 'source', ''), "
        "getattr(i, 'reason', '')] for i in scan(sys.argv[1], 1 << 20)]))"
    )
    cmd = [sys.executable, "-c", code, str(tmp_path)]
    if os.geteuid() == 0:
        caps = "-dac_override,-dac_read_search"
        cmd = ["setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}", "--", *cmd]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=60)
    finally:
        locked.chmod(0o644)
    items = json.loads(out.stdout)
    assert [(kind, Path(src).name, reason) for kind, src, reason in items] == [
        ("SkippedFile", "locked.md", "permission denied")
    ]


def test_unsupported_extension_reported_in_folders_and_when_named(tmp_path: Path) -> None:
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    (tmp_path / "data.csv").write_text("a,b\n")
    (tmp_path / "README").write_text("no extension")
    (tmp_path / "note.md").write_text("kept")
    docs, skipped = load(tmp_path)
    assert [d.id for d in docs] == ["note.md"]
    assert [(Path(s.source).name, s.reason[:22], s.kind) for s in skipped] == [
        ("README", "no file extension (sup", "unsupported"),
        ("data.csv", "unsupported extension ", "unsupported"),
        ("image.png", "unsupported extension ", "unsupported"),
    ]
    _, named = load(tmp_path / "data.csv")
    assert [s.reason for s in named] == ["unsupported extension .csv"]
    _, no_ext = load(tmp_path / "README")
    assert no_ext[0].reason.startswith("no file extension")


def test_missing_path_raises_immediately(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        scan(tmp_path / "nope", LIMIT)
    with pytest.raises(FileNotFoundError):
        scanned_sources(tmp_path / "nope")


def test_walk_is_sorted_recursive_and_skips_hidden(tmp_path: Path) -> None:
    for rel in ["b.txt", "a/z.md", "a/b/c.txt", ".hidden.txt", ".git/x.md", "a/.cache/y.txt"]:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"text of {rel}")
    docs, skipped = load(tmp_path)
    # hidden names are reported as met, not walked: a hidden folder once, not its files
    assert sorted((str(Path(s.source).relative_to(tmp_path)), s.kind) for s in skipped) == [
        (".git", "hidden"),
        (".hidden.txt", "hidden"),
        ("a/.cache", "hidden"),
    ]
    assert [d.id for d in docs] == ["a/b/c.txt", "a/z.md", "b.txt"]
    assert docs[0].source == str(tmp_path / "a/b/c.txt")
    assert [p.name for p in scanned_sources(tmp_path)] == ["c.txt", "z.md", "b.txt"]
    assert only_doc(tmp_path / ".hidden.txt").id == ".hidden.txt"


def test_symlink_loops_terminate(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "doc.txt").write_text("only once")
    os.symlink(root, root / "sub" / "loop")
    os.symlink(root / "sub", root / "again")
    os.symlink(tmp_path / "missing.txt", root / "dangling.txt")
    docs, skipped = load(root)
    # "again" sorts first, so the file is reached through the link; "sub" is then known.
    assert [d.id for d in docs] == ["again/doc.txt"]
    assert [(Path(s.source).name, s.reason) for s in skipped] == [
        ("dangling.txt", "broken symbolic link")
    ]


def test_a_linked_file_is_named_by_its_target_and_read_by_its_link_name(tmp_path: Path) -> None:
    """`guide.md` links to an extensionless `README` outside the folder: found under its
    link's name (a Markdown file), stored under the path it resolves to."""
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "README").write_text("# Guide\n\nStart the Kell service.\n")
    root = tmp_path / "docs"
    root.mkdir()
    os.symlink(tmp_path / "shared" / "README", root / "guide.md")
    docs, skipped = load(root)
    assert not skipped
    assert [(d.key, d.title) for d in docs] == [(str(tmp_path / "shared" / "README"), "Guide")]


def test_equal_names_from_different_sources_are_different_documents(tmp_path: Path) -> None:
    """A record named like a file, the same passage id in two corpus files and the same
    relative path under two folders: every one is its own document (its key)."""
    (tmp_path / "a.txt").write_text("file a")
    (tmp_path / "b.jsonl").write_text('{"id": "a.txt", "text": "record named like a file"}\n')
    for corpus in ("one", "two"):
        (tmp_path / corpus).mkdir()
        (tmp_path / corpus / "corpus.jsonl").write_text(f'{{"id": "p0", "text": "{corpus}"}}\n')
        (tmp_path / corpus / "notes.md").write_text(f"# Notes\n\nfrom {corpus}\n")
    docs, skipped = load(tmp_path)
    assert skipped == []
    keys = [d.key for d in docs]
    assert len(set(keys)) == len(keys) == 6
    assert f"{tmp_path / 'b.jsonl'}#a.txt" in keys and str(tmp_path / "a.txt") in keys
    assert {d.key for d in docs if d.id == "p0"} == {
        f"{tmp_path / c / 'corpus.jsonl'}#p0" for c in ("one", "two")
    }


def test_duplicate_record_ids_in_one_corpus_keep_the_first(tmp_path: Path) -> None:
    (tmp_path / "b.jsonl").write_text(
        '{"id": "x", "text": "first"}\n{"id": "x", "text": "again"}\n'
    )
    docs, skipped = load(tmp_path)
    assert [d.text for d in docs] == ["first"]
    assert skipped[0].source == f"{tmp_path / 'b.jsonl'}:2"
    assert skipped[0].reason.startswith("duplicate document id 'x' (first loaded from ")


def test_content_hash_is_stable_and_content_derived(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    (tmp_path / "one" / "g.md").write_text(MARKDOWN)
    shutil.copy(tmp_path / "one" / "g.md", tmp_path / "two" / "g.md")
    first = only_doc(tmp_path / "one" / "g.md")
    again = only_doc(tmp_path / "one" / "g.md")
    moved = only_doc(tmp_path / "two" / "g.md")
    assert first.content_hash == again.content_hash == moved.content_hash
    assert len(first.content_hash) == 64
    (tmp_path / "two" / "g.md").write_text(MARKDOWN.replace("Use WSL.", "Use WSL2."))
    assert only_doc(tmp_path / "two" / "g.md").content_hash != first.content_hash
    (tmp_path / "two" / "g.md").write_text(MARKDOWN.replace("/v1", "/v2"))
    assert only_doc(tmp_path / "two" / "g.md").content_hash != first.content_hash


def _pdf(pages: list[str], title: str | None = None) -> bytes:
    """A minimal valid PDF: one Helvetica text line per page, a link annotation on page 1."""
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [{}] /Count {} >>".format(
            " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages))), len(pages)
        ),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for index, text in enumerate(pages):
        annots = (
            "/Annots [<< /Type /Annot /Subtype /Link /Rect [0 0 10 10] "
            "/A << /S /URI /URI (https://pdf.example/ref) >> >>]"
            if index == 0
            else ""
        )
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET"
        objects.append(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * index} 0 R {annots}>>"
        )
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
    if title is not None:
        objects.append(f"<< /Title ({title}) >>")
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{offset:010d} 00000 n \n" for offset in offsets).encode()
    info = f" /Info {len(objects)} 0 R" if title is not None else ""
    trailer = f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info} >>\n"
    out += f"{trailer}startxref\n{xref}\n%%EOF\n".encode()
    return out


def test_pdf_one_section_per_page(tmp_path: Path) -> None:
    (tmp_path / "paper.pdf").write_bytes(_pdf(["Hello first page.", "Second page text."]))
    doc = only_doc(tmp_path / "paper.pdf")
    assert doc.title == "paper"
    assert [s.path for s in doc.sections] == [("page 1",), ("page 2",)]
    assert doc.sections[0].text == "Hello first page."
    assert doc.sections[1].text == "Second page text."
    assert doc.sections[0].links == ("https://pdf.example/ref",)
    (tmp_path / "titled.pdf").write_bytes(_pdf(["Body."], title="A Titled Paper"))
    assert only_doc(tmp_path / "titled.pdf").title == "A Titled Paper"


def test_broken_pdf_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not really a pdf\n%%EOF")
    (tmp_path / "truncated.pdf").write_bytes(_pdf(["Some text."])[:60])
    docs, skipped = load(tmp_path)
    assert docs == []
    assert [Path(s.source).name for s in skipped] == ["broken.pdf", "truncated.pdf"]
    for item in skipped:
        assert item.reason.startswith(("PDF parse failure", "no extractable text"))


def test_real_2wiki_lines_load(tmp_path: Path) -> None:
    dataset_file("2wiki-dev", "corpus.jsonl")
    with CORPUS_2WIKI.open(encoding="utf-8") as handle:
        lines = [next(handle) for _ in range(5)]
    (tmp_path / "corpus.jsonl").write_text("".join(lines))
    docs, skipped = load(tmp_path)
    assert skipped == []
    assert [d.id for d in docs] == ["p0", "p1", "p2", "p3", "p4"]
    assert docs[0].title == "Teutberga"
    assert docs[0].text.startswith("Teutberga( died 11 November 875) was a queen of Lotharingia")
    assert len({d.content_hash for d in docs}) == 5
