"""Every file an ingest meets is accounted for: indexed, unchanged, or skipped with its
reason and kind, in the CLI's summary, in `--json` and in a job's result. A run that
indexes nothing exits non-zero and says why; files of other types beside indexed ones are
listed without failing the run (a notes folder also holds images)."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import app
from app.jobs import read_job, start_job
from app.settings import Settings
from ingest.loaders import SkippedFile, scan
from tests.conftest import shared_models

NOTE = "# Kelp\n\nKelp syncs notes between machines; its cache holds 512 MB.\n"
GUIDE_RST = "Kelp guide\n==========\n\nRun ``kelp sync`` to upload notes.\n"


def mixed_folder(root: Path) -> Path:
    """Two readable documents (.md, .rst) among files of every kind that is not one."""
    (root / "sub").mkdir(parents=True)
    (root / "note.md").write_text(NOTE)
    (root / "guide.rst").write_text(GUIDE_RST)
    (root / "tool.exe").write_bytes(b"MZ\x90\x00\x03\x00binary")
    (root / "blob.bin").write_bytes(b"\x00\x01\x02\x03")
    (root / "data.xyz").write_text("no reader for this")
    (root / "README").write_text("no extension")
    (root / "empty.md").write_bytes(b"")
    (root / "sub" / "fake.txt").write_bytes(b"text\x00with a NUL")
    (root / "big.txt").write_text("x" * 5000)
    (root / "dangling.md").symlink_to(root / "gone.md")
    os.mkfifo(root / "pipe.txt")
    (root / ".hidden.xyz").write_text("hidden names are not walked")
    return root


def kinds_of(skipped: list[dict[str, str]] | list[SkippedFile]) -> dict[str, str]:
    pairs = [
        (s["source"], s["kind"]) if isinstance(s, dict) else (s.source, s.kind) for s in skipped
    ]
    return {Path(source).name: kind for source, kind in pairs}


EXPECTED_KINDS = {
    "tool.exe": "unsupported",
    "blob.bin": "unsupported",
    "data.xyz": "unsupported",
    "README": "unsupported",
    "pipe.txt": "unsupported",
    "empty.md": "empty",
    "fake.txt": "binary",
    "big.txt": "too_large",
    "dangling.md": "unreadable",
    ".hidden.xyz": "hidden",
}


def test_the_scan_reports_every_file_it_meets(tmp_path: Path) -> None:
    root = mixed_folder(tmp_path / "docs")
    items = list(scan(root, 4096))
    skipped = [i for i in items if isinstance(i, SkippedFile)]
    loaded = sorted(i.id for i in items if not isinstance(i, SkippedFile))
    assert loaded == ["guide.rst", "note.md"]
    assert kinds_of(skipped) == EXPECTED_KINDS
    reasons = {Path(s.source).name: s.reason for s in skipped}
    assert reasons["tool.exe"] == "unsupported extension .exe"
    assert reasons["pipe.txt"] == "not a regular file"
    assert reasons["README"].startswith("no file extension (supported: .txt, .md")
    assert reasons["big.txt"].startswith("too large (4.9 KB > 4.0 KB limit)")


def test_outside_the_roots_is_a_kind(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.md").write_text(NOTE)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "link.md").symlink_to(tmp_path / "outside" / "secret.md")
    [item] = scan(tmp_path / "docs", 4096, allowed_roots=[tmp_path / "docs"])
    assert isinstance(item, SkippedFile) and item.kind == "outside_roots"


@pytest.fixture()
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "NEORAG_BACKEND": "embedded",
        "NEORAG_DATA_DIR": str(tmp_path / "data"),
        "NEORAG_INGEST__MAX_FILE_BYTES": "4096",
    }


def neorag(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.slow
def test_the_summary_and_json_name_every_skipped_file(tmp_path: Path, env: dict[str, str]) -> None:
    shared_models()  # the in-process ingest below reuses the session's loaded models
    root = mixed_folder(tmp_path / "docs")
    code, out, _ = neorag(env, "ingest", str(root))
    assert code == 1  # a binary .txt, an empty .md, ...: files of readable types left out
    assert "skipped 1 file, unsupported extension .exe: tool.exe" in out
    assert "skipped 1 file, not a regular file: pipe.txt" in out
    assert "skipped 1 file, hidden name (not walked): .hidden.xyz" in out
    assert f"{root / 'sub' / 'fake.txt'}: binary file" in out
    assert f"{root / 'empty.md'}: empty file" in out
    assert "dangling.md: broken symbolic link" in out and "big.txt: too large" in out
    assert "(neorag reads .txt .md" in out and ".rst" in out
    assert "nothing could be indexed" not in out

    code, out, _ = neorag(env, "ingest", str(root), "--json")
    report = json.loads(out)
    assert code == 1 and report["ok"] is False and report["nothing_indexed"] == ""
    assert report["documents"]["unchanged"] == 2  # the .md and the .rst
    assert kinds_of(report["skipped"]) == EXPECTED_KINDS
    assert report["documents"]["skipped"] == len(EXPECTED_KINDS)
    assert report["documents"]["skipped_by_kind"] == {
        "unsupported": 5,
        "hidden": 1,
        "empty": 1,
        "binary": 1,
        "too_large": 1,
        "unreadable": 1,
    }


@pytest.mark.slow
def test_other_types_beside_documents_do_not_fail_the_run(
    tmp_path: Path, env: dict[str, str]
) -> None:
    shared_models()
    root = tmp_path / "notes"
    root.mkdir()
    (root / "note.md").write_text(NOTE)
    (root / "diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    code, out, _ = neorag(env, "ingest", str(root), "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"] and len(report["new"]) == 1
    assert [(Path(s["source"]).name, s["kind"]) for s in report["skipped"]] == [
        ("diagram.png", "unsupported")
    ]


def test_nothing_indexed_exits_non_zero_and_says_why(tmp_path: Path, env: dict[str, str]) -> None:
    root = tmp_path / "only-others"
    root.mkdir()
    (root / "tool.exe").write_bytes(b"MZ\x90\x00")
    (root / "data.xyz").write_text("?")
    (root / "empty.txt").write_text("  \n")
    code, out, _ = neorag(env, "ingest", str(root))
    assert code == 1
    assert (
        f"nothing could be indexed under {root}: 3 files skipped (2 unsupported type "
        "(.exe, .xyz), 1 empty)"
    ) in out.replace("\n", "")
    assert "tool.exe" in out and "data.xyz" in out and "empty.txt: empty file" in out

    code, out, err = neorag(env, "ingest", str(root), "--json")
    report = json.loads(out)
    assert code == 1 and report["ok"] is False
    assert report["nothing_indexed"].startswith(f"nothing could be indexed under {root}")
    assert report["nothing_indexed"] in err.replace("\n", "")

    (tmp_path / "empty-folder").mkdir()
    code, out, _ = neorag(env, "ingest", str(tmp_path / "empty-folder"))
    assert code == 1 and "nothing to index under" in out and "no files" in out

    code, out, _ = neorag(env, "ingest", str(root / "data.xyz"))
    assert code == 1 and "1 file skipped (unsupported extension .xyz)" in out.replace("\n", "")


def test_a_job_that_indexes_nothing_fails_with_the_reason(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "tool.exe").write_bytes(b"MZ\x90\x00")
    settings = Settings(backend="embedded", data_dir=tmp_path / "data")
    job = start_job(settings, "ingest", {"path": str(root), "bounded": False})
    deadline = time.monotonic() + 120
    while (job := read_job(settings, job["id"]))["state"] in ("queued", "running"):
        assert time.monotonic() < deadline, job
        time.sleep(0.2)
    assert job["state"] == "failed", job
    assert job["error"] == (
        f"nothing could be indexed under {root}: 1 file skipped (unsupported extension .exe)"
    )
    assert [(Path(s["source"]).name, s["kind"]) for s in job["report"]["skipped"]] == [
        ("tool.exe", "unsupported")
    ]


@dataclass
class FakeUpload:
    """What the chat reads of Streamlit's UploadedFile."""

    name: str
    data: bytes

    def getvalue(self) -> bytes:
        return self.data


def test_the_chat_refuses_an_unsupported_upload_and_keeps_nothing(tmp_path: Path) -> None:
    from app.ui.ingest import save_uploads
    from app.uploads import UnsupportedUpload

    settings = Settings(backend="embedded", data_dir=tmp_path / "data")
    good = FakeUpload("good.md", b"# Good\n\nKept only with the rest.\n")
    files = [good, FakeUpload("x.exe", b"MZ")]
    with pytest.raises(UnsupportedUpload, match=r"x\.exe: unsupported type \(extension \.exe\)"):
        save_uploads(settings, files)
    assert not settings.uploads_dir.exists() or not any(settings.uploads_dir.rglob("*.*"))
    assert save_uploads(settings, files[:1]) == settings.uploads_dir
    assert [p.name for p in settings.uploads_dir.rglob("*.md")] == ["good.md"]
