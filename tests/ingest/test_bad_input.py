"""Bad input through the real CLI: each bad file is reported with its reason and skipped,
everything else ingests, and the exit status says something was skipped. The run that
must not read an unreadable file as root is a process of its own (without the
capabilities that let root read it); the rest runs the command in this process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import app
from tests.ids import names

pytestmark = pytest.mark.slow
EXIT_SKIPPED = 1


def cli(
    args: list[str], env: dict[str, str], drop_root: bool = False
) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "app.cli", *args]
    if drop_root and os.geteuid() == 0:
        # Root reads chmod-000 files; without these capabilities it cannot, like any user.
        setpriv = shutil.which("setpriv")
        assert setpriv, "setpriv (util-linux) is needed to test unreadable files as root"
        caps = "-dac_override,-dac_read_search"
        cmd = [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}", "--", *cmd]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)


def test_bad_files_are_reported_and_the_rest_ingests(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Good\n\nMarie Curie discovered radium in Paris.\n")
    (docs / "also_good.txt").write_text("Pierre Curie worked with Marie Curie on radioactivity.\n")
    (docs / "binary.txt").write_bytes(b"\x00\x01\x02PNG\x00" * 100)
    (docs / "empty.md").write_text("   \n\n")
    (docs / "latin1.txt").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    with (docs / "huge.txt").open("wb") as f:
        f.truncate(50 * 1024 * 1024)  # 50 MB, over the 20 MB default limit
    locked = docs / "locked.md"
    locked.write_text("# Secret\n\nUnreadable.\n")
    locked.chmod(0)
    (docs / "corpus.jsonl").write_text(
        json.dumps({"id": "w1", "title": "Radium", "text": "Radium is a chemical element."})
        + "\n{not json\n"
        + json.dumps({"title": "no id"})
        + "\n"
        + json.dumps({"id": "w2", "title": "Polonium", "text": "Polonium was named after Poland."})
        + "\n"
    )
    docs.chmod(0o755)
    tmp_path.chmod(0o755)
    env = dict(os.environ, NEORAG_DATA_DIR=str(tmp_path / "data"), NEORAG_BACKEND="embedded")
    (tmp_path / "data").mkdir()

    run = cli(["ingest", str(docs), "--json"], env, drop_root=True)
    assert run.returncode == EXIT_SKIPPED, run.stderr[-2000:]
    report = json.loads(run.stdout)
    reasons = {Path(s["source"]).name: s["reason"] for s in report["skipped"]}
    assert "binary" in reasons["binary.txt"]
    assert "empty" in reasons["empty.md"]
    assert "UTF-8" in reasons["latin1.txt"]
    assert "too large" in reasons["huge.txt"]
    assert "permission denied" in reasons["locked.md"].lower()
    assert "line 2" in reasons["corpus.jsonl:2"] and "line 3" in reasons["corpus.jsonl:3"]
    assert sorted(names(report["new"])) == ["also_good.txt", "good.md", "w1", "w2"]
    assert report["documents"]["skipped"] == 7

    # Fixing a file and re-running picks it up; nothing already stored is lost.
    locked.chmod(0o644)
    again = CliRunner().invoke(app, ["ingest", str(docs), "--json"], env=env)
    report2 = json.loads(again.stdout)
    assert names(report2["new"]) == ["locked.md"] and report2["unchanged"] == 4
    assert report2["removed"] == []
    status = json.loads(CliRunner().invoke(app, ["status", "--json"], env=env).stdout)
    assert status["documents"] == 5


def test_clean_ingest_exits_zero_and_reports_stages(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(
        "# A\n\n## Part\n\nAda Lovelace wrote the first program. See [b](b.md).\n"
    )
    (docs / "b.md").write_text("# B\n\nCharles Babbage designed the Analytical Engine.\n")
    env = dict(os.environ, NEORAG_DATA_DIR=str(tmp_path / "data"), NEORAG_BACKEND="embedded")
    run = CliRunner().invoke(app, ["ingest", str(docs), "--json"], env=env)
    assert run.exit_code == 0, run.output[-2000:]
    report = json.loads(run.stdout)
    assert report["ok"] and report["chunks"] >= 2
    assert {"scan", "chunk", "analyze", "embed", "write", "edges", "indexes"} <= set(
        report["seconds"]
    )
    assert report["edges"]["CITES"] == 1  # a links to b
    missing = CliRunner().invoke(app, ["ingest", str(tmp_path / "nope")], env=env)
    assert missing.exit_code == 2 and "does not exist" in missing.stderr
    assert isinstance(missing.exception, SystemExit)  # a message, not an exception
