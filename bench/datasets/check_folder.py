"""Validate a documentation-corpus set (bench/datasets/<name>/: pages/, questions.jsonl,
meta.json): exit 0 and print counts when it is sound, else list every problem and exit 1.
Each set's own check.py calls this on its folder:

    .venv/bin/python bench/datasets/sqlite-docs/check.py
    .venv/bin/python bench/datasets/check_folder.py bench/datasets/git-docs

Checks: every line of questions.jsonl is a JSON object with the fields the README names;
ids and questions are unique; every gold page exists under pages/ and loads with neorag's
own loader; a `two-page` question has two or more distinct gold pages and a `single` one
exactly one; every answer string occurs (case-insensitive, whitespace-normalised) in the
text the loader extracts from at least one of its gold pages; at least half the questions
are `two-page`; and meta.json's counts match the files.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from ingest.loaders import LoadedDocument, scan  # noqa: E402

TYPES = ("single", "two-page")
MIN_QUESTIONS = 40
MIN_TWO_PAGE_SHARE = 0.5
MAX_FILE_BYTES = 20_000_000
_SPACE = re.compile(r"\s+")


def normalised(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def load_pages(root: Path) -> tuple[dict[str, str], list[str]]:
    """Page path relative to `root` (posix) -> normalised text as neorag's loader extracts
    it; and the files the loader skipped, with its reason. Keyed by source path, not by
    document id, whose format is not this set's business."""
    texts: dict[str, str] = {}
    skipped: list[str] = []
    for item in scan(root, MAX_FILE_BYTES):
        if isinstance(item, LoadedDocument):
            relative = Path(item.source).resolve().relative_to(root.resolve()).as_posix()
            texts[relative] = normalised(item.text)
        else:
            skipped.append(f"{item.source}: {item.reason}")
    return texts, skipped


def read_questions(path: Path, problems: list[str]) -> list[dict[str, Any]]:
    questions = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"line {n}: malformed JSON ({exc.msg})")
            continue
        if not isinstance(record, dict):
            problems.append(f"line {n}: not a JSON object")
            continue
        questions.append(record)
    return questions


def field_problems(q: dict[str, Any]) -> list[str]:
    out = []
    for name in ("id", "question", "type"):
        if not isinstance(q.get(name), str) or not q[name].strip():
            out.append(f"{name} must be a non-empty string")
    for name in ("answers", "gold_pages"):
        value = q.get(name)
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(v, str) and v.strip() for v in value)
        ):
            out.append(f"{name} must be a non-empty list of non-empty strings")
    if q.get("type") not in TYPES:
        out.append(f"type must be one of {', '.join(TYPES)}")
    return out


def question_problems(q: dict[str, Any], pages: dict[str, str], root: Path) -> list[str]:
    out = field_problems(q)
    if out:
        return out
    gold = q["gold_pages"]
    if len(set(gold)) != len(gold):
        out.append("a gold page is listed twice")
    if q["type"] == "two-page" and len(set(gold)) < 2:
        out.append("a two-page question needs at least two gold pages")
    if q["type"] == "single" and len(gold) != 1:
        out.append("a single question has exactly one gold page")
    missing = [g for g in gold if g not in pages]
    for page in missing:
        reason = "does not load" if (root / page).is_file() else "does not exist"
        out.append(f"gold page {page} {reason}")
    present = [pages[g] for g in gold if g in pages]
    for answer in q["answers"]:
        if present and not any(normalised(answer) in text for text in present):
            out.append(f"answer {answer!r} is in none of its gold pages")
    return out


def check(folder: Path) -> list[str]:
    problems: list[str] = []
    pages, skipped = load_pages(folder / "pages")
    problems += [f"page skipped by the loader: {s}" for s in skipped]
    questions = read_questions(folder / "questions.jsonl", problems)
    seen_ids: set[str] = set()
    seen_questions: set[str] = set()
    for q in questions:
        label = q.get("id", "?")
        for problem in question_problems(q, pages, folder / "pages"):
            problems.append(f"{label}: {problem}")
        if label in seen_ids:
            problems.append(f"{label}: duplicate id")
        seen_ids.add(label)
        text = normalised(str(q.get("question", "")))
        if text in seen_questions:
            problems.append(f"{label}: duplicate question")
        seen_questions.add(text)
    two_page = sum(q.get("type") == "two-page" for q in questions)
    if len(questions) < MIN_QUESTIONS:
        problems.append(f"{len(questions)} questions; at least {MIN_QUESTIONS} are needed")
    if questions and two_page / len(questions) < MIN_TWO_PAGE_SHARE:
        problems.append(f"only {two_page} of {len(questions)} questions are two-page")
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    expected = {"pages": len(pages), "questions": len(questions), "two_page": two_page}
    for key, value in expected.items():
        if meta.get("counts", {}).get(key) != value:
            problems.append(
                f"meta.json counts.{key} is {meta.get('counts', {}).get(key)}, "
                f"the files give {value}"
            )
    if meta.get("kind") != "folder":
        problems.append('meta.json kind must be "folder"')
    return problems


def main(folder: Path | None = None) -> None:
    folder = folder or Path(sys.argv[1])
    problems = check(folder)
    if problems:
        print("\n".join(problems))
        raise SystemExit(1)
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    counts = meta["counts"]
    print(
        f"{meta['name']}: {counts['pages']} pages, {counts['questions']} questions "
        f"({counts['two_page']} two-page): ok"
    )


if __name__ == "__main__":
    main()
