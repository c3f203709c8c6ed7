"""`make run`'s first step, as the Makefile spells it: index the bundled sample corpus into
a fresh embedded store, then again (a second `make run` must be a quick no-op, exit 0)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run_recipe() -> list[str]:
    out = subprocess.run(
        ["make", "-n", "--no-print-directory", "run"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.replace("\\\n", " ").splitlines()


def test_make_run_indexes_the_sample_corpus_once(tmp_path: Path) -> None:
    lines = [line for line in _run_recipe() if "app.cli ingest" in line]
    assert len(lines) == 1, lines
    argv = shlex.split(lines[0].split(" -m app.cli ", 1)[1])
    env = {**os.environ, "NEORAG_DATA_DIR": str(tmp_path / "data"), "NEORAG_BACKEND": "embedded"}
    cmd = [sys.executable, "-m", "app.cli", *argv, "--json"]
    first = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr[-2000:]
    report = json.loads(first.stdout)
    assert report["ok"] and report["skipped"] == [] and len(report["new"]) >= 100
    assert report["chunks"] > 0 and all(report["edges"][k] > 0 for k in ("SEMANTIC", "CITES"))
    again = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    repeat = json.loads(again.stdout)
    assert repeat["new"] == [] and repeat["unchanged"] == len(report["new"])
    assert repeat["graph_version"] == report["graph_version"]

    # the chat and the CLI share one data dir and collection: `neorag ask` sees the corpus
    assert not any("NEORAG_DATA_DIR" in x or "NEORAG_COLLECTION" in x for x in _run_recipe())
    ask = [sys.executable, "-m", "app.cli", "ask", "What is the graph model?", "--json"]
    answered = subprocess.run(ask, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert answered.returncode == 0, answered.stderr[-2000:]
    assert json.loads(answered.stdout)["citations"]


def test_make_run_serves_the_chat_on_localhost() -> None:
    line = next((x for x in _run_recipe() if "streamlit run" in x), None)
    if line is None:
        pytest.fail("make run does not start Streamlit")
    args = shlex.split(line.split(" -m streamlit ", 1)[1])
    assert args[:2] == ["run", "streamlit_app.py"] and (ROOT / "streamlit_app.py").is_file()
    assert args[args.index("--server.address") + 1] == "127.0.0.1"
    assert args[args.index("--server.port") + 1] == "8501"
