"""The offline reader over technical documentation: a how-to question is answered with the
thing to type (a setting, a function, a flag), found by its shape (`app.reader.code`),
while factoid questions over prose keep their names and dates. spaCy is a model: slow."""

from __future__ import annotations

import pytest

from app.reader import Evidence, Reader, scoring
from app.reader.code import code_in, code_spans
from app.reader.context import Context
from app.reader.question import analyse, in_context

pytestmark = pytest.mark.slow


def shapes(reader: Reader, text: str) -> dict[str, str]:
    [doc] = reader.parse([text])
    return {span: label for span, label, _, _ in code_spans(doc)}


def test_code_shapes_are_found_as_written(reader: Reader) -> None:
    found = shapes(
        reader,
        "Set PRAGMA journal_size_limit or call sqlite3_busy_timeout(), open "
        "file::memory:?cache=shared with immutable=1, run .eqp on or import with --skip 1, "
        "compile with -DSQLITE_ENABLE_MATH_FUNCTIONS, use BEGIN IMMEDIATE (since 3.35.0).",
    )
    assert found["journal_size_limit"] == "CODE"
    assert found["sqlite3_busy_timeout()"] == "CODE"
    assert found["file::memory:?cache=shared"] == "CODE"
    assert found["immutable=1"] == "CODE"
    assert found[".eqp on"] == "CODE"
    assert found["--skip 1"] == "CODE"
    assert found["SQLITE_ENABLE_MATH_FUNCTIONS"] == "CODE"  # the option, not "-D…"
    assert found["BEGIN IMMEDIATE"] == "CODE"
    assert found["3.35.0"] == "VERSION"
    dotted = shapes(
        reader,
        "Set core.autocrlf, or submodule.<name>.shallow, or call os.path.join; "
        "see git-config(1) and printf(3), e.g. in the U.S. version 1.7.0.",
    )
    assert dotted["core.autocrlf"] == "CODE"
    assert dotted["submodule.<name>.shallow"] == "CODE"
    assert dotted["os.path.join"] == "CODE"
    # a manual-page reference is no call, and abbreviations are no dotted names
    assert not {"config(1)", "git-config(1)", "printf(3)", "e.g", "U.S"} & dotted.keys()
    assert dotted["1.7.0"] == "VERSION"
    # plain prose has none of these shapes
    assert shapes(reader, "The film was released in 1952 by a studio in Los Angeles.") == {}


@pytest.mark.parametrize(
    ("question", "technical"),
    [
        ("How can I make the connection wait for the lock instead of failing?", True),
        ("What do I add to CREATE TABLE so such inserts are rejected?", True),
        ("Which URI parameter tells SQLite the file can never change?", True),
        ("Why does journal_mode=WAL stay after I reconnect?", True),  # quotes code
        ("Who directed the film that won the award?", False),
        ("How did the band get its name?", False),
        ("What actor had the role of the narrator of How I Met Your Mother?", False),
        ("Which American band was formed the earliest, CKY or Violent Femmes?", False),
    ],
)
def test_how_to_questions_ask_for_something_to_type(
    reader: Reader, question: str, technical: bool
) -> None:
    [doc] = reader.parse([question])
    analysis = analyse(doc)
    assert analysis.technical is technical
    assert (analysis.labels.get("CODE", 0.0) == 1.0) is technical


def test_a_how_to_question_is_answered_with_the_setting(reader: Reader) -> None:
    evidence = [
        Evidence(
            1,
            "Result and Error Codes",
            "The SQLITE_BUSY result code indicates that the database file could not be "
            "written because of concurrent activity by some other database connection.",
            0.4,
            0,
        ),
        Evidence(
            2,
            "Pragma statements supported by SQLite",
            "PRAGMA busy_timeout = milliseconds; Query or change the setting of the busy "
            "timeout, which makes a connection wait for a lock instead of failing.",
            0.6,
            0,
        ),
        Evidence(
            2,
            "Pragma statements supported by SQLite",
            "Each database connection can only have a single busy handler.",
            0.2,
            1,
        ),
    ]
    question = (
        'A second process gets "database is locked" straight away. How can I make the '
        "connection wait for the lock for a while instead of failing, using only SQL?"
    )
    reading = reader.read(question, evidence)
    assert reading.short == "busy_timeout"
    assert reading.evidence[0].passage == 2


def test_the_setting_named_after_what_the_question_asks_for_wins(reader: Reader) -> None:
    """Code words in the evidence, all equally typed; the question's words are in one's
    name (`mirror`), which decides: without it the acronym wins."""
    page = "Pragma statements supported by SQLite"
    evidence = [
        Evidence(
            1,
            page,
            "The LIKE operator is not case sensitive by default for ASCII characters.",
            0.6,
            0,
        ),
        Evidence(1, page, "PRAGMA case_sensitive_like = boolean; changes the default.", 0.5, 1),
    ]
    question = "Is LIKE case-sensitive in SQLite? I need WHERE name LIKE 'A%' to not match 'apple'."
    assert reader.read(question, evidence).short == "case_sensitive_like"
    [doc] = reader.parse([question])
    analysis = in_context(analyse(doc), [e.text for e in evidence])
    parsed = list(zip(evidence, reader.parse([e.text for e in evidence]), strict=True))
    context = Context(analysis, evidence)
    without = scoring.score_spans(context, parsed, dict(scoring.WEIGHTS, mirror=0.0))
    assert without[0].text == "ASCII"


def test_over_documentation_an_upper_case_word_is_a_keyword(reader: Reader) -> None:
    [doc] = reader.parse(["Why does ON DELETE CASCADE do nothing right after BEGIN?"])
    analysis = analyse(doc)
    assert not analysis.technical  # an acronym, as far as the question alone says
    prose = ["The band was formed in 1987 in Ohio.", "It signed with a label in 1990."]
    assert not in_context(analysis, prose).technical
    docs = [
        "PRAGMA foreign_keys = boolean; Query, set, or clear the enforcement of constraints.",
        "This pragma is a no-op within a transaction.",
        "Use sqlite3_db_config() to change it.",
    ]
    assert in_context(analysis, docs).technical
    assert in_context(analysis, docs).labels["CODE"] == 1.0


def test_code_the_question_writes_is_not_its_answer(reader: Reader) -> None:
    """The developer quotes what they use ("want synchronous=NORMAL") and asks for what
    documentation adds to it; the quoted code repeats the question however often the
    evidence says it (sqlite-docs sq33). Without the rule it wins."""
    page, options = "Pragma statements supported by SQLite", "Compile-time Options"
    evidence = [
        Evidence(1, page, "WAL mode is safe from corruption with synchronous=NORMAL.", 0.4, 0),
        Evidence(1, page, "The synchronous=NORMAL setting is a good choice in WAL mode.", 0.35, 1),
        Evidence(2, options, "SQLITE_DEFAULT_WAL_SYNCHRONOUS=1.", 0.25, 0),
        Evidence(
            2,
            options,
            "If SQLITE_DEFAULT_WAL_SYNCHRONOUS differs from SQLITE_DEFAULT_SYNCHRONOUS, the "
            "synchronous setting is changed to its value when the connection switches into "
            "WAL mode for the first time.",
            0.45,
            1,
        ),
    ]
    question = (
        "We run in WAL mode and want synchronous=NORMAL without every application "
        "remembering the pragma. Can the build make it the default for WAL databases only?"
    )
    assert reader.read(question, evidence).short == "SQLITE_DEFAULT_WAL_SYNCHRONOUS"
    [doc] = reader.parse([question])
    analysis = in_context(analyse(doc), [e.text for e in evidence])
    parsed = list(zip(evidence, reader.parse([e.text for e in evidence]), strict=True))
    kept = scoring.score_spans(Context(analysis, evidence), parsed)
    assert not {"synchronous=NORMAL", "synchronous="} & {s.text for s in kept}
    assert "synchronous=NORMAL" in code_in(question)
    assert code_in("is `git push --force-with-lease` unsafe?") == {"--force-with-lease"}
    assert not scoring._quoted_by(".git", code_in("the same .gitignore file"))
    assert scoring._quoted_by("synchronous=", {"synchronous=NORMAL"})
