"""Ctrl-C (SIGINT) and SIGTERM stop `neorag ingest` within two seconds, even in the middle
of one large file whose entity analysis runs in a thread beside the embedding, and the
next run completes the ingest exactly (the graph equals an uninterrupted ingest's), as after
a kill -9. The signal is sent at a named point (tests/ingest/killpoints.py): right after a
model batch of the large file's chunks is embedded, with more chunks and their NER to go."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graph.embedded.store import EmbeddedStore
from tests.conftest import DATASETS
from tests.ingest.graph_compare import assert_same_graph, uninterrupted_snapshot
from tests.ingest.test_crash import REPO, base_env, embedded_counter, finish

pytestmark = [pytest.mark.slow, pytest.mark.exclusive]  # a wall-clock bound: run alone
STOP_WITHIN_SECONDS = 2.0
LARGE_FILE_PASSAGES = 120  # one text file of ~90 chunks: more than one model batch (64)


def large_file_corpus(tmp_path: Path) -> Path:
    lines = (DATASETS / "2wiki-dev" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    root = tmp_path / "corpus"
    root.mkdir()
    texts = [json.loads(line)["text"] for line in lines[:LARGE_FILE_PASSAGES]]
    (root / "large.txt").write_text("\n\n".join(texts) + "\n", encoding="utf-8")
    (root / "small.jsonl").write_text("\n".join(lines[-6:]) + "\n", encoding="utf-8")
    return root


def signalled_run(
    root: Path, env: dict[str, str], sig: str, tmp_path: Path
) -> tuple[int, str, float]:
    """One ingest that gets `sig` mid-file; its exit code, stderr, and seconds from the
    signal to the process's end."""
    stamp = tmp_path / f"signalled-{sig}"
    command = ["chunks-embedded", "--signal", sig, "--stamp", str(stamp), "ingest", str(root)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.ingest.killpoints", *command],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        # SIGINT's default handler, as in a terminal's foreground job (a shell starts
        # background jobs with SIGINT ignored, and the child would inherit that).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    while proc.poll() is None:
        time.sleep(0.01)
    ended = time.time()
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    assert stamp.exists(), f"the signal point was never reached: {err[-2000:]}"
    return proc.returncode, err, ended - float(stamp.read_text())


def test_sigint_and_sigterm_stop_an_ingest_mid_file_and_a_rerun_completes_it(
    tmp_path: Path,
) -> None:
    root = large_file_corpus(tmp_path)
    env = base_env(tmp_path, "embedded", "default")
    db, count = embedded_counter(tmp_path)

    code, err, seconds = signalled_run(root, env, "INT", tmp_path)
    assert code == 130, err[-2000:]
    assert "interrupted" in err and "Traceback" not in err
    assert seconds < STOP_WITHIN_SECONDS, f"Ctrl-C took {seconds:.1f} s to stop the ingest"
    interrupted = count()

    code, err, seconds = signalled_run(root, env, "TERM", tmp_path)
    assert code in (-signal.SIGTERM, 128 + signal.SIGTERM), err[-2000:]
    assert "Traceback" not in err
    assert seconds < STOP_WITHIN_SECONDS, f"SIGTERM took {seconds:.1f} s to stop the ingest"
    assert count() == interrupted  # the large file's batch was never half-written

    finish(root, env)
    with EmbeddedStore(db) as store:
        assert_same_graph(store.snapshot(), uninterrupted_snapshot(root, tmp_path, "default"))
