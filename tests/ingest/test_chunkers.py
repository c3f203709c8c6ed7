"""Chunkers and sentence splitting: window arithmetic, limits, links, stable ids, speed."""

from __future__ import annotations

import re
from itertools import pairwise
from math import ceil

import pytest

from ingest.chunkers import ChunkText, cached_token_counter, chunk_document, chunk_id
from ingest.config import ChunkingConfig
from ingest.loaders import LinkSpan, LoadedDocument, Section, parse_markdown, scan
from ingest.sentences import sentence_spans, split_sentences
from tests.conftest import DATASETS, dataset_file

CORPUS_2WIKI = DATASETS / "2wiki-dev" / "corpus.jsonl"
NAMES = [
    "Alder", "Birch", "Cedar", "Dogwood", "Elm", "Fir", "Ginkgo", "Hazel", "Ironwood",
    "Juniper", "Kapok", "Larch", "Maple", "Nutmeg", "Oak", "Pine", "Quince", "Rowan",
    "Spruce", "Teak", "Upas", "Walnut", "Yew", "Zelkova",
]  # fmt: skip


def words(text: str) -> int:
    return len(text.split())


def sentences(n: int) -> list[str]:
    return [f"The {NAMES[i % len(NAMES)]} tree number {i} grows tall." for i in range(n)]


def doc_of(*sections: Section, doc_id: str = "doc") -> LoadedDocument:
    return LoadedDocument(doc_id, "/tmp/doc", "Doc", list(sections))


def sentence_indices(chunk: ChunkText, source: list[str]) -> list[int]:
    return [i for i, sentence in enumerate(source) if sentence in chunk.text]


def sentence_cfg(s: int = 6, o: int = 2) -> ChunkingConfig:
    return ChunkingConfig(strategy="sentences", sentences_per_chunk=s, sentence_overlap=o)


# --------------------------------------------------------------------------- sentences


def test_split_sentences_handles_abbreviations_and_paragraphs() -> None:
    text = (
        "Dr. Smith went to Washington. He arrived at 5 p.m. on Monday.\n\n"
        "A heading without a full stop\n\n"
        "The album peaked at No. 7 on the chart. Born c. 1900, e.g. in Spain!"
    )
    assert split_sentences(text) == [
        "Dr. Smith went to Washington.",
        "He arrived at 5 p.m. on Monday.",
        "A heading without a full stop",
        "The album peaked at No. 7 on the chart.",
        "Born c. 1900, e.g. in Spain!",
    ]


def test_hard_wrapped_lines_stay_one_sentence() -> None:
    assert split_sentences("This sentence is wrapped\nacross two lines. Next one.") == [
        "This sentence is wrapped\nacross two lines.",
        "Next one.",
    ]


def test_sentence_spans_are_trimmed_offsets_and_long_runs_are_cut() -> None:
    text = "  First one.   Second one.  "
    assert [text[a:b] for a, b in sentence_spans(text)] == ["First one.", "Second one."]
    wall = " ".join(["word"] * 1000)
    pieces = split_sentences(wall, max_chars=100)
    assert all(len(p) <= 100 for p in pieces)
    assert " ".join(pieces) == wall
    assert split_sentences("   \n\n  ") == []


# --------------------------------------------------------------------------- sentence windows


def test_ten_sentences_six_and_two_give_two_windows() -> None:
    source = sentences(10)
    assert len(split_sentences(" ".join(source))) == 10
    chunks = chunk_document(doc_of(Section((), " ".join(source))), sentence_cfg(), words)
    assert [sentence_indices(c, source) for c in chunks] == [
        [0, 1, 2, 3, 4, 5],
        [4, 5, 6, 7, 8, 9],
    ]
    assert [c.ordinal for c in chunks] == [0, 1]
    assert [c.n_tokens for c in chunks] == [words(c.text) for c in chunks]


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (1, [[0]]),
        (6, [[0, 1, 2, 3, 4, 5]]),
        (7, [[0, 1, 2, 3, 4, 5], [4, 5, 6]]),
        (14, [[0, 1, 2, 3, 4, 5], [4, 5, 6, 7, 8, 9], [8, 9, 10, 11, 12, 13]]),
        (15, [list(range(0, 6)), list(range(4, 10)), list(range(8, 14)), [12, 13, 14]]),
    ],
)
def test_sentence_window_counts(n: int, expected: list[list[int]]) -> None:
    source = sentences(n)
    chunks = chunk_document(doc_of(Section((), " ".join(source))), sentence_cfg(), words)
    assert [sentence_indices(c, source) for c in chunks] == expected


def test_no_tail_window_is_contained_in_the_previous_one() -> None:
    for s, o in [(6, 2), (3, 1), (4, 3), (2, 0), (1, 0)]:
        for n in range(1, 30):
            source = sentences(n)
            chunks = chunk_document(
                doc_of(Section((), " ".join(source))), sentence_cfg(s, o), words
            )
            windows = [sentence_indices(c, source) for c in chunks]
            assert sorted({i for w in windows for i in w}) == list(range(n))
            assert all(len(w) <= s for w in windows)
            for before, after in pairwise(windows):
                assert not set(after) <= set(before), (s, o, n, windows)
                assert after[0] == before[0] + s - o


def test_windows_never_cross_sections_and_ordinals_are_contiguous() -> None:
    first, second = sentences(8)[:4], sentences(8)[4:]
    doc = doc_of(
        Section(("A",), " ".join(first)),
        Section(("A", "B"), " ".join(second)),
    )
    chunks = chunk_document(doc, sentence_cfg(3, 1), words)
    assert [(c.ordinal, c.section_path) for c in chunks] == [
        (0, ("A",)),
        (1, ("A",)),
        (2, ("A", "B")),
        (3, ("A", "B")),
    ]
    assert [sentence_indices(c, first + second) for c in chunks] == [
        [0, 1, 2],
        [2, 3],
        [4, 5, 6],
        [6, 7],
    ]


def test_paragraph_breaks_survive_inside_chunks() -> None:
    text = "One short line.\n\nA second paragraph here."
    (chunk,) = chunk_document(doc_of(Section((), text)), sentence_cfg(), words)
    assert chunk.text == text


def test_overlap_not_smaller_than_window_is_rejected() -> None:
    doc = doc_of(Section((), "One. Two."))
    with pytest.raises(ValueError, match="sentence_overlap"):
        chunk_document(doc, sentence_cfg(3, 3), words)
    bad_tokens = ChunkingConfig(strategy="tokens", window_tokens=32, window_overlap=32)
    with pytest.raises(ValueError, match="window_overlap"):
        chunk_document(doc, bad_tokens, words)


# --------------------------------------------------------------------------- token windows


def token_cfg(window: int, overlap: int) -> ChunkingConfig:
    return ChunkingConfig(strategy="tokens", window_tokens=window, window_overlap=overlap)


def test_token_windows_size_and_overlap_on_plain_words() -> None:
    text = " ".join(f"w{i}" for i in range(100))
    chunks = chunk_document(doc_of(Section((), text)), token_cfg(20, 5), words)
    spans = [(int(c.text.split()[0][1:]), int(c.text.split()[-1][1:])) for c in chunks]
    assert spans == [(0, 19), (15, 34), (30, 49), (45, 64), (60, 79), (75, 94), (90, 99)]
    assert all(c.n_tokens == words(c.text) <= 20 for c in chunks)


def test_token_windows_prefer_sentence_ends() -> None:
    source = [f"{NAMES[i]} " + " ".join(["word"] * 6) + "." for i in range(12)]
    chunks = chunk_document(doc_of(Section((), " ".join(source))), token_cfg(20, 8), words)
    assert all(c.text.endswith(".") for c in chunks)
    assert all(c.n_tokens <= 20 for c in chunks)
    windows = [sentence_indices(c, source) for c in chunks]
    assert windows[0] == [0, 1]
    for before, after in pairwise(windows):
        assert after[0] == before[-1]  # overlap = the last sentence (7 words ≤ 8)
    assert windows[-1][-1] == 11


def test_token_windows_respect_limit_with_special_tokens_and_long_words() -> None:
    def count(text: str) -> int:  # two special tokens + ~4 characters per token
        return 2 + sum(ceil(len(w) / 4) for w in text.split())

    text = "short words " * 30 + "x" * 400 + " tail words here. " + "more " * 40
    chunks = chunk_document(doc_of(Section((), text)), token_cfg(24, 6), count)
    assert all(c.n_tokens == count(c.text) <= 24 for c in chunks)
    assert "".join(c.text for c in chunks).count("x") >= 400


def test_token_windows_cover_the_2wiki_sample_without_cutting_words() -> None:
    text = (
        "Lambert( died after 938) was the second son of Adalbert II of Tuscany and Bertha. "
        "He succeeded his elder brother, Guy, as count and duke of Lucca and margrave of "
        "Tuscany on his death in 928 or 929 without heirs. In 931, before 17 October, Hugh, "
        "King of Italy, disowned and removed Lambert."
    )
    chunks = chunk_document(doc_of(Section((), text)), token_cfg(16, 4), words)
    vocabulary = set(text.split())
    assert all(set(c.text.split()) <= vocabulary for c in chunks)
    assert text.startswith(chunks[0].text) and text.endswith(chunks[-1].text)


# --------------------------------------------------------------------------- markdown


def markdown_cfg(limit: int) -> ChunkingConfig:
    return ChunkingConfig(strategy="markdown", max_section_tokens=limit)


def test_markdown_one_chunk_per_section_and_long_sections_split() -> None:
    long_body = " ".join(sentences(20))  # 20 sentences × 7 words = 140 tokens
    text = f"# Guide\n\nShort intro.\n\n## Install\n\nTwo lines.\n\n## Reference\n\n{long_body}\n"
    _, sections = parse_markdown(text, "guide")
    chunks = chunk_document(doc_of(*sections), markdown_cfg(64), words)
    assert [(c.section_path, c.text) for c in chunks[:2]] == [
        (("Guide",), "Short intro."),
        (("Guide", "Install"), "Two lines."),
    ]
    pieces = chunks[2:]
    assert [c.n_tokens for c in pieces] == [49, 49, 42]  # balanced, not 63 + 63 + 14
    assert all(c.section_path == ("Guide", "Reference") for c in pieces)
    assert all(c.text.endswith("grows tall.") for c in pieces)
    assert " ".join(c.text for c in pieces) == long_body
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))


# --------------------------------------------------------------------------- links and ids


def test_chunks_carry_only_the_links_they_contain() -> None:
    text = (
        "# Top [x](top.md)\n\nAlpha cites [Beta](beta.md). Gamma is plain. Delta cites [[Eps]].\n"
    )
    _, sections = parse_markdown(text, "t")
    assert sections[0].links == ("beta.md", "Eps", "top.md")
    chunks = chunk_document(doc_of(*sections), sentence_cfg(1, 0), words)
    assert [c.links for c in chunks] == [
        ("beta.md", "top.md"),
        ("top.md",),
        ("Eps", "top.md"),
    ]


def test_sections_without_link_offsets_share_their_links() -> None:
    section = Section((), " ".join(sentences(4)), links=("a", "b"))
    chunks = chunk_document(doc_of(section), sentence_cfg(2, 0), words)
    assert [c.links for c in chunks] == [("a", "b"), ("a", "b")]
    located = Section((), "One here. Two there.", ("t",), (LinkSpan(10, 13, "t"),))
    assert [c.links for c in chunk_document(doc_of(located), sentence_cfg(1, 0), words)] == [
        (),
        ("t",),
    ]


def test_chunk_ids_are_stable_and_content_derived() -> None:
    assert chunk_id("doc.md", 3, "hello") == "doc.md#3-aaf4c61d"
    assert chunk_id("doc.md", 3, "hello") == chunk_id("doc.md", 3, "hello")
    assert chunk_id("doc.md", 3, "hello!") != chunk_id("doc.md", 3, "hello")
    assert re.fullmatch(r"p7#0-[0-9a-f]{8}", chunk_id("p7", 0, "text"))
    doc = doc_of(Section(("A",), " ".join(sentences(13))))
    for cfg in (sentence_cfg(), token_cfg(20, 5), markdown_cfg(40)):
        first = [chunk_id("doc", c.ordinal, c.text) for c in chunk_document(doc, cfg, words)]
        again = [chunk_id("doc", c.ordinal, c.text) for c in chunk_document(doc, cfg, words)]
        assert first == again and len(set(first)) == len(first)


def test_cached_counter_gives_identical_chunks() -> None:
    doc = doc_of(Section((), " ".join(sentences(30))))
    cfg = token_cfg(32, 8)
    assert chunk_document(doc, cfg, cached_token_counter(words)) == chunk_document(doc, cfg, words)


# --------------------------------------------------------------------------- the real corpus


def test_2wiki_corpus_chunks_with_sentence_windows() -> None:
    """Every passage of a real corpus chunks, with unique ids (its speed is measured by
    `make bench`, not asserted here: timed tests fail on a busy machine)."""
    dataset_file("2wiki-dev", "corpus.jsonl")
    docs = [d for d in scan(CORPUS_2WIKI, 20 * 1024 * 1024) if isinstance(d, LoadedDocument)]
    assert len(docs) == 6119
    chunked = [chunk_document(d, ChunkingConfig(), words) for d in docs]
    assert all(chunks and all(c.text for c in chunks) for chunks in chunked)
    ids = [
        chunk_id(d.id, c.ordinal, c.text) for d, cs in zip(docs, chunked, strict=True) for c in cs
    ]
    assert len(set(ids)) == len(ids)
